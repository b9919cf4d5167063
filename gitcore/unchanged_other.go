//go:build !linux

package gitcore

// statMatches is not implemented here: every tree is "not proven"
// unchanged, and callers ask git.
func statMatches(string, statEntry) (same, ok bool) { return false, false }
