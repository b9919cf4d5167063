package store

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/git-agency/git-agency/errs"
)

// NewID returns an id of the form <yyyymmddhhmmss>-<4hex> (UTC), the hex
// part from crypto/rand.
func NewID(now time.Time) string {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return now.UTC().Format("20060102150405") + "-" + hex.EncodeToString(b[:])
}

// ValidID reports whether s has the id format, [0-9]{14}-[0-9a-f]{4}
// (without a regular expression: every scan of the records asks it of
// every directory name).
func ValidID(s string) bool {
	if len(s) != 19 || s[14] != '-' {
		return false
	}

	for i := 0; i < 19; i++ {
		c := s[i]
		switch {
		case i == 14:
		case c >= '0' && c <= '9':
		case i > 14 && c >= 'a' && c <= 'f':
		default:
			return false
		}
	}

	return true
}

// ShortID is the last four characters of an id.
func ShortID(id string) string {
	if len(id) < 4 {
		return id
	}
	return id[len(id)-4:]
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$`)

// ValidName reports whether name is a valid integration worktree name:
// [a-z0-9-]{2,40}, not starting or ending with '-'.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// MkdirID creates parent/<new id> exclusively (0700) and returns the id: a
// collision with an existing record is detected, never overwritten. parent
// is created first if needed.
func MkdirID(parent string, now time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", errs.IO("create", parent, err)
	}

	for attempt := 0; ; attempt++ {
		id := NewID(now)
		err := os.Mkdir(filepath.Join(parent, id), 0o700)
		if err == nil {
			return id, nil
		}
		if !os.IsExist(err) || attempt == 5 {
			return "", errs.IO("create", filepath.Join(parent, id), err)
		}
	}
}
