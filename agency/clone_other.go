//go:build !linux

package agency

import (
	"os"
	"time"
)

// cloneFile: no copy-on-write clone on this platform; copy the bytes.
func cloneFile(out, in *os.File) bool { return false }

// lchtimes: a symlink keeps the time it was made at.
func lchtimes(path string, t time.Time) {}
