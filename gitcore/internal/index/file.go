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

// Racy reports whether a file whose modification time is (sec, nsec) is
// racily clean against this index, as git decides it (is_racy_stat, built
// with USE_NSEC as on Linux): modified at or after the index was written,
// to the nanosecond. Its stat data may then match the entry's and its
// content still differ.
func (f *File) Racy(sec, nsec uint32) bool {
	is, in := uint32(f.MtimeSec), uint32(f.MtimeNsec)
	return is < sec || (is == sec && in <= nsec)
}
