package filestamp

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A stamp changes with the file's size, time or inode; only a file older
// than the racy window is settled; a missing file has the zero stamp.
func TestStamp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if s, link, err := Lstat(path); err != nil || link || s != (Stamp{}) || !s.Settled(time.Now()) {
		t.Fatalf("missing file: %+v %v %v", s, link, err)
	}
	old := time.Now().Add(-time.Hour)
	write := func(content string, at time.Time) Stamp {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		s, _, err := Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := write("one", old)
	if !a.Exists || a.Size != 3 || a.MTime != old.UnixNano() {
		t.Fatalf("stamp %+v", a)
	}
	if write("two", old) != a {
		t.Fatal("same size, time and inode: the stamp should not change")
	}
	if write("two", old.Add(time.Nanosecond)) == a {
		t.Fatal("another time, same stamp")
	}
	if write("three", old) == a {
		t.Fatal("another size, same stamp")
	}
	other := filepath.Join(dir, "g")
	os.WriteFile(other, []byte("one"), 0o600)
	os.Chtimes(other, old, old)
	os.Rename(other, path)
	if s, _, _ := Lstat(path); s == a {
		t.Fatal("another inode, same stamp")
	}
	if !a.Settled(old.Add(RacyWindow)) || a.Settled(old.Add(RacyWindow-time.Nanosecond)) {
		t.Fatal("settled only RacyWindow after the file's time")
	}
	os.Symlink(path, filepath.Join(dir, "l"))
	if _, link, _ := Lstat(filepath.Join(dir, "l")); !link {
		t.Fatal("a symbolic link is not reported")
	}
}
