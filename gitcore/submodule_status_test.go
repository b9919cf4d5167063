package gitcore

import (
	"reflect"
	"testing"
)

// A submodule's status (porcelain v2 "<sub>" field): its files changed
// inside (S.M., S..U) are dirt no snapshot holds; a new commit (SC..) or a
// staged gitlink is something a snapshot takes.
func TestSubmoduleDirt(t *testing.T) {
	st, err := parseStatusV2([]byte(
		"1 .M S.MU 160000 160000 160000 aaaa aaaa dirty\x00" +
			"1 .M SC.. 160000 160000 160000 aaaa aaaa bumped\x00" +
			"1 .M SCM. 160000 160000 160000 aaaa aaaa both\x00" +
			"1 MM S..U 160000 160000 160000 aaaa bbbb staged\x00" +
			"1 .M N... 100644 100644 100644 aaaa aaaa file\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DirtySubmodules(st), []string{"dirty", "both", "staged"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DirtySubmodules = %v, want %v", got, want)
	}
	var only []string
	for _, e := range st {
		if OnlySubmoduleDirt(e) {
			only = append(only, e.Path)
		}
	}
	if want := []string{"dirty"}; !reflect.DeepEqual(only, want) {
		t.Errorf("OnlySubmoduleDirt: %v, want %v", only, want)
	}
}
