//go:build !linux

package repofiles

// OwnedByUs is not implemented here: discovery asks git.
func OwnedByUs(string) bool { return false }

// deviceOf is not implemented here: discovery asks git.
func deviceOf(string) (uint64, bool) { return 0, false }
