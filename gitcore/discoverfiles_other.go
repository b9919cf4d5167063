//go:build !linux

package gitcore

// ownedByUs is not implemented here: discovery asks git.
func ownedByUs(string) bool { return false }

// deviceOf is not implemented here: discovery asks git.
func deviceOf(string) (uint64, bool) { return 0, false }
