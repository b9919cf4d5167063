package gitcore

import (
	"path"
	"strings"
)

// Denied reports whether a repository-relative path matches a denylist
// pattern; the list itself is checkpoint's policy (checkpoint.FullDenylist).
// A pattern without '/' matches the file's base name at any depth; one with
// '/' matches the whole path; one ending in '/' names a directory ("secrets/" at any depth, "conf/keys/" from the root). Globs
// are path.Match's. Matching ignores case: on the case-insensitive
// filesystems of macOS and Windows `.ENV` is `.env`, and a secret named
// `Credentials.JSON` is as secret as `credentials.json`.
func Denied(p string, patterns []string) bool {
	p = strings.ToLower(p)
	base := path.Base(p)
	for _, pat := range patterns {
		pat = strings.ToLower(strings.TrimSpace(pat))
		if pat == "" {
			continue
		}

		if dir, ok := strings.CutSuffix(pat, "/"); ok {
			if deniedDir(p, dir) {
				return true
			}
			continue
		}

		// With a '/' anywhere (a leading one included) it is anchored.
		subject := base
		if strings.Contains(pat, "/") {
			subject = p
		}

		pat = strings.TrimPrefix(pat, "/")
		if ok, _ := path.Match(pat, subject); ok {
			return true
		}
	}

	return false
}

// deniedDir reports whether one of p's leading directories matches dir.
func deniedDir(p, dir string) bool {
	anchored := strings.Contains(dir, "/")
	dir = strings.Trim(dir, "/")
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		cand := parts[i-1]
		if anchored {
			cand = strings.Join(parts[:i], "/")
		}
		if ok, _ := path.Match(dir, cand); ok {
			return true
		}
	}

	return false
}
