package gitcore

import (
	"path"
	"strings"
)

// DefaultDenylist are the untracked files never written into a snapshot
// tree (checkpoints, `land --apply`): the spec's built-in list. Users add
// globs with the multi-valued `agency.checkpoint.denylist`.
var DefaultDenylist = []string{".env", ".env.*", "*.key", "*.pem", "credentials.json", "secrets.json"}

// Denied reports whether a repository-relative path matches a denylist
// pattern. A pattern without '/' matches the file's base name at any
// depth; one with '/' matches the whole path. Globs are path.Match's.
func Denied(p string, patterns []string) bool {
	base := path.Base(p)
	for _, pat := range patterns {
		pat = strings.TrimPrefix(pat, "/")
		subject := base
		if strings.Contains(pat, "/") {
			subject = p
		}
		if ok, _ := path.Match(pat, subject); ok {
			return true
		}
	}
	return false
}
