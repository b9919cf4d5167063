package gitcore

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
)

// Worktree is one entry of `git worktree list --porcelain -z`.
type Worktree struct {
	Path     string
	Head     string
	Branch   string // full ref name, "" when detached
	Bare     bool
	Detached bool
	Locked   bool
	Prunable bool
}

// parseWorktreeList parses `git worktree list --porcelain -z`: attribute
// lines terminated by NUL, records separated by an empty line.
func parseWorktreeList(out []byte) []Worktree {
	var list []Worktree
	var cur *Worktree
	for _, field := range strings.Split(string(out), "\x00") {
		if field == "" {
			if cur != nil {
				list = append(list, *cur)
				cur = nil
			}
			continue
		}

		key, val, _ := strings.Cut(field, " ")
		if key == "worktree" {
			if cur != nil {
				list = append(list, *cur)
			}
			cur = &Worktree{Path: val}
			continue
		}

		if cur == nil {
			continue
		}

		switch key {
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = val
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}

	if cur != nil {
		list = append(list, *cur)
	}

	return list
}

// StatusKind classifies a porcelain v2 entry.
type StatusKind int

const (
	StatusChanged StatusKind = iota + 1
	StatusRenamed
	StatusUnmerged
	StatusUntracked
	StatusIgnored
)

// StatusEntry is one path of `git status --porcelain=v2 -z`.
type StatusEntry struct {
	Kind StatusKind
	XY   string // two status letters; "??" for untracked
	Path string
	Orig string // the source path of a rename or copy
	// NotInHead: a changed entry whose path is not in HEAD (added to the
	// index, or intent-to-add): its content was never committed.
	NotInHead bool
	// Sub is a changed entry's submodule state ("N..." when it is none);
	// IndexMode and IndexOID its index side ("000000" when the index has
	// no entry).
	Sub, IndexMode, IndexOID string
}

// parseStatusV2 parses `git status --porcelain=v2 -z` output. Header lines
// (`# …`) are skipped.
func parseStatusV2(out []byte) ([]StatusEntry, error) {
	var list []StatusEntry
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := string(fields[i])
		if f == "" || f[0] == '#' {
			continue
		}

		switch f[0] {
		case '1':
			parts := strings.SplitN(f, " ", 9)
			if len(parts) != 9 {
				return nil, fmt.Errorf("status: malformed entry %q", f)
			}
			list = append(list, StatusEntry{Kind: StatusChanged, XY: parts[1], Path: parts[8], NotInHead: parts[3] == "000000",
				Sub: parts[2], IndexMode: parts[4], IndexOID: parts[7]})
		case '2':
			parts := strings.SplitN(f, " ", 10)
			if len(parts) != 10 || i+1 >= len(fields) {
				return nil, fmt.Errorf("status: malformed entry %q", f)
			}
			i++
			list = append(list, StatusEntry{Kind: StatusRenamed, XY: parts[1], Path: parts[9], Orig: string(fields[i]), NotInHead: true})
		case 'u':
			parts := strings.SplitN(f, " ", 11)
			if len(parts) != 11 {
				return nil, fmt.Errorf("status: malformed entry %q", f)
			}
			list = append(list, StatusEntry{Kind: StatusUnmerged, XY: parts[1], Path: parts[10]})
		case '?':
			list = append(list, StatusEntry{Kind: StatusUntracked, XY: "??", Path: f[2:]})
		case '!':
			list = append(list, StatusEntry{Kind: StatusIgnored, XY: "!!", Path: f[2:]})
		default:
			return nil, fmt.Errorf("status: unknown entry %q", f)
		}
	}

	return list, nil
}

// ConfigEntry is one key/value of `git config -z --get-regexp`, or of a
// configuration file read by gitcore/internal/configfile.
type ConfigEntry = configfile.Entry

// parseConfigZ parses `git config -z` listings: "key\nvalue\0" (a key
// without a value has no newline).
func parseConfigZ(out []byte) []ConfigEntry {
	var list []ConfigEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		k, v, _ := strings.Cut(rec, "\n")
		list = append(list, ConfigEntry{Key: k, Value: v})
	}
	return list
}
