package agency

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

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
	got, err := parseIncludePatterns("f", "# comment\n\n.env\r\n!keep\nname\\ with\\ space\\ \n/dist/\n")
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
		_, err := parseIncludePatterns("f", text)
		if e := errs.As(err); e == nil || e.Code != code {
			t.Errorf("%q: got %v, want %s", text, err, code)
		}
	}
}

func TestCopierKeepsModesSymlinksTimes(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 50 {
		p := filepath.Join(src, "nm", fmt.Sprintf("p%d", i%5), fmt.Sprintf("f%d.js", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprint(i)), 0o644)
	}
	tool := filepath.Join(src, "nm", ".bin", "tool")
	os.MkdirAll(filepath.Dir(tool), 0o750)
	os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755)
	os.Chtimes(tool, mt, mt)
	os.Symlink("../p0/f0.js", filepath.Join(src, "nm", ".bin", "link"))
	os.WriteFile(filepath.Join(dst, "keep"), []byte("checkout"), 0o644)
	os.WriteFile(filepath.Join(src, "keep"), []byte("source"), 0o644)

	c := &copier{}
	c.start()
	err := c.copyPath(filepath.Join(src, "nm"), filepath.Join(dst, "nm"))
	if err == nil {
		err = c.copyPath(filepath.Join(src, "keep"), filepath.Join(dst, "keep"))
	}
	if ferr := c.finish(); err == nil {
		err = ferr
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := c.files.Load(); n != 52 {
		t.Errorf("copied %d files, want 52", n)
	}
	fi, err := os.Stat(filepath.Join(dst, "nm", ".bin", "tool"))
	if err != nil || fi.Mode().Perm() != 0o755 || !fi.ModTime().Equal(mt) {
		t.Errorf("tool: %v %v %v", err, fi.Mode(), fi.ModTime())
	}
	if di, _ := os.Stat(filepath.Join(dst, "nm", ".bin")); di.Mode().Perm() != 0o750 {
		t.Errorf(".bin mode %v", di.Mode())
	}
	if l, err := os.Readlink(filepath.Join(dst, "nm", ".bin", "link")); err != nil || l != "../p0/f0.js" {
		t.Errorf("link: %q %v", l, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "keep")); string(b) != "checkout" {
		t.Errorf("an existing file was overwritten: %q", b)
	}
	// A copy, not a link: writing the copy leaves the source alone.
	os.WriteFile(filepath.Join(dst, "nm", "p0", "f0.js"), []byte("changed"), 0o644)
	if b, _ := os.ReadFile(filepath.Join(src, "nm", "p0", "f0.js")); string(b) != "0" {
		t.Errorf("source changed: %q", b)
	}
}

// A copy into a full file system fails with E_COPY_FAILED (a real ENOSPC
// on a 64 KiB tmpfs; skipped where tmpfs cannot be mounted).
func TestCopierDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	src, dst := t.TempDir(), t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dst).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dst).Run() })
	for i := range 20 {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), make([]byte, 16<<10), 0o644)
	}
	c := &copier{}
	c.start()
	err := c.copyPath(src, filepath.Join(dst, "nm"))
	if ferr := c.finish(); err == nil {
		err = ferr
	}
	if e := errs.As(err); e == nil || e.Code != errs.ECopyFailed {
		t.Fatalf("got %v, want E_COPY_FAILED", err)
	}
}
