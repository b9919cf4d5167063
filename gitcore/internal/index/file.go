package index

// File is an index file held in memory (Map), and its modification time:
// git's "index stamp", against which an entry's file is racily clean
// (modified in the same instant the index was written, or later).
type File struct {
	Data                []byte
	MtimeSec, MtimeNsec int64
	// Stamp names this version of the file: its size, times and inode
	// (another file renamed over it, or a write, changes it).
	Stamp  string
	mapped bool
}

// Close releases the file's memory; the entries' Path and OID (slices of
// it) are no longer valid.
func (f *File) Close() {
	if f.mapped {
		f.unmap()
		f.mapped = false
	}
	f.Data = nil
}
