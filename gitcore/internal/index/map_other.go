//go:build !linux

package index

import "os"

// Map reads the index file at path.
func Map(path string) (*File, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	t := fi.ModTime()
	return &File{Data: data, MtimeSec: t.Unix(), MtimeNsec: int64(t.Nanosecond())}, true
}

func (f *File) unmap() {}

// StampOf is "": no index file is named by a stamp here.
func StampOf(string) string { return "" }
