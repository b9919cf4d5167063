package agency

import (
	"reflect"
	"testing"

	"github.com/git-agency/git-agency/errs"
)

func TestIncludePaths(t *testing.T) {
	matched := []string{".env", "node_modules/", "notes.txt", "cache/", "build/out.bin", ".agency/"}
	ignored := []string{".env", "node_modules/", "cache/x.tmp", "cache/sub/", "build/", ".agency/", "a.log"}
	got := IncludePaths(matched, ignored)
	want := []string{".env", "build/out.bin", "cache/sub/", "cache/x.tmp", "node_modules/"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("IncludePaths = %q, want %q", got, want)
	}
	// A path inside a directory copied whole is not copied twice.
	got = IncludePaths([]string{"dist/", "dist/a b.js"}, []string{"dist/"})
	if !reflect.DeepEqual(got, []string{"dist/"}) {
		t.Fatalf("IncludePaths nested = %q", got)
	}
}

func TestParseIncludePatterns(t *testing.T) {
	got, err := ParseIncludePatterns("f", "# comment\n\n.env\r\n!keep\nname\\ with\\ space\\ \n/dist/\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".env", "!keep", `name\ with\ space\ `, "/dist/"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("patterns = %q, want %q", got, want)
	}
	bad := map[string]errs.Code{
		"../x":          errs.EIncludeOutside,
		"/a/../../etc":  errs.EIncludeOutside,
		"!../x":         errs.EIncludeOutside,
		"~/.ssh":        errs.EIncludeOutside,
		"x\\":           errs.EIncludeInvalid,
		"!":             errs.EIncludeInvalid,
		"a\x01b":        errs.EIncludeInvalid,
		"\xff\xfe":      errs.EIncludeInvalid,
		"ok\nbad\\\nok": errs.EIncludeInvalid,
	}
	for text, code := range bad {
		_, err := ParseIncludePatterns("f", text)
		if e := errs.As(err); e == nil || e.Code != code {
			t.Errorf("%q: got %v, want %s", text, err, code)
		}
	}
}
