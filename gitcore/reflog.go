package gitcore

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// reflogTail is how much of a reflog's end ReflogBreak reads: its newest
// entries, with room to spare.
const reflogTail = 8192

// reflogKept is how long git keeps every reflog entry (gc's default
// gc.reflogExpireUnreachable): entries younger than this have no gaps.
const reflogKept = 30 * 24 * time.Hour

// reflogEntry is one line of a reflog: old and new value, and when.
type reflogEntry struct {
	old, new, msg string
	when          time.Time
}

// reflogAccept begins the message of a reflog entry that accepts a
// branch's value as it is: ReflogBreak looks no further back.
const reflogAccept = "agency: accept"

// ReflogBreak tells whether branch (without refs/heads/) was moved by
// something other than git: every update git makes to a branch with a
// reflog appends old and new value to it, so the newest entry's new
// value is the tip, and each recent entry starts where the one before
// ended (back to an entry reflogAccept wrote, or older than git keeps
// every entry). Where the chain breaks it returns the value the reflog
// expected and the one found (broken false: no break, or no reflog to
// tell). It reads the file's end only, and runs nothing.
func (r *Repo) ReflogBreak(branch, tip string, now time.Time) (expected, found string, broken bool) {
	entries := r.reflogTailEntries(branch)
	if len(entries) == 0 {
		return "", "", false
	}
	if last := entries[len(entries)-1]; last.new != tip {
		return last.new, tip, true
	}

	for i := len(entries) - 1; i > 0; i-- {
		prev, cur := entries[i-1], entries[i]
		if strings.HasPrefix(cur.msg, reflogAccept) || now.Sub(prev.when) > reflogKept {
			break
		}
		if cur.old != prev.new {
			return prev.new, cur.old, true
		}
	}

	return "", "", false
}

// reflogTailEntries are the whole entries in the last reflogTail bytes of
// branch's reflog, oldest first.
func (r *Repo) reflogTailEntries(branch string) []reflogEntry {
	path := filepath.Join(r.CommonDir, "logs", "refs", "heads", filepath.FromSlash(branch))
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	partial := false
	if fi, err := f.Stat(); err == nil && fi.Size() > reflogTail {
		f.Seek(fi.Size()-reflogTail, io.SeekStart)
		partial = true
	}

	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}

	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if partial && len(lines) > 0 {
		lines = lines[1:] // cut in the middle
	}

	var out []reflogEntry
	for _, l := range lines {
		if e, ok := parseReflogLine(l); ok {
			out = append(out, e)
		}
	}

	return out
}

// parseReflogLine reads "<old> <new> <name> <<email>> <unix time> <tz>\t<msg>".
func parseReflogLine(l string) (reflogEntry, bool) {
	head, msg, _ := strings.Cut(l, "\t")
	f := strings.Fields(head)
	if len(f) < 4 {
		return reflogEntry{}, false
	}
	e := reflogEntry{old: f[0], new: f[1], msg: msg}
	if sec, err := strconv.ParseInt(f[len(f)-2], 10, 64); err == nil {
		e.when = time.Unix(sec, 0)
	}
	return e, true
}
