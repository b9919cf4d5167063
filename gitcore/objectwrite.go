package gitcore

import (
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// A checkpoint writes a few small objects of its own (the trees along the
// changed paths and one commit): a `git mktree` and a `git commit-tree`
// each, one after the other on its way, for a write git makes as a loose
// object file. They are written here instead, as git writes a loose object
// (deflated "<type> <size>\0<body>" in a temporary file of the object's
// directory, read-only, linked to its name), when nothing in the
// repository's configuration changes how git would write one; otherwise
// (ok false) git writes them.

// looseWritable reports whether objects may be written as loose files
// here: the repository and its configuration were read from files, and
// its configuration has none of the settings that change a loose write
// (shared permissions, fsync) or a commit's bytes (an encoding header).
func (r *Repo) looseWritable() bool {
	if !r.fromFiles || r.CommonDir == "" {
		return false
	}
	all, ok := configfile.Files(r.GitDir, r.CommonDir)
	if !ok {
		return false
	}
	for _, e := range all {
		switch e.Key {
		case "core.sharedrepository", "core.fsyncobjectfiles", "core.fsync", "core.fsyncmethod",
			"i18n.commitencoding", "extensions.compatobjectformat":
			return false
		}
	}
	return true
}

// objectHash is the hash of the repository's object ids, by their length
// in bytes.
func objectHash(oidLen int) hash.Hash {
	if oidLen == sha256.Size {
		return sha256.New()
	}
	return sha1.New()
}

// objectID is the id of an object of kind with body.
func objectID(kind string, body []byte, oidLen int) string {
	h := objectHash(oidLen)
	h.Write([]byte(kind + " " + strconv.Itoa(len(body)) + "\x00"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// writeLoose writes an object of kind with body into the repository's
// object directory as a loose object, and returns its id. An object that
// is there already (loose) is left as it is, its time renewed as git
// does; one that is only packed is written loose again (git's gc drops
// the copy).
func (r *Repo) writeLoose(kind string, body []byte, oidLen int) (string, error) {
	id := objectID(kind, body, oidLen)
	final := filepath.Join(r.ObjectsDir(), id[:2], id[2:])
	if _, err := os.Lstat(final); err == nil {
		now := time.Now()
		_ = os.Chtimes(final, now, now)
		return id, nil
	}
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	// core.looseCompression's default: the fastest level, as git writes.
	z, _ := zlib.NewWriterLevel(f, zlib.BestSpeed)
	_, err = z.Write([]byte(kind + " " + strconv.Itoa(len(body)) + "\x00"))
	if err == nil {
		_, err = z.Write(body)
	}
	if err == nil {
		err = z.Close()
	}
	if err == nil {
		err = f.Chmod(0o444)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := os.Link(tmp, final); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return id, nil
}

// ownCommitBody is the body of one of git-agency's own commits (as
// ownIdentity, dated now in the local time zone, or as GIT_AUTHOR_DATE and
// GIT_COMMITTER_DATE say), as `git commit-tree` writes it; ok is false for
// a date in the environment that ownDate does not read as git does.
func ownCommitBody(tree, parent, msg string, now time.Time) ([]byte, bool) {
	author, ok1 := ownDate("GIT_AUTHOR_DATE", now)
	committer, ok2 := ownDate("GIT_COMMITTER_DATE", now)
	if !ok1 || !ok2 {
		return nil, false
	}
	var b strings.Builder
	b.WriteString("tree " + tree + "\n")
	if parent != "" {
		b.WriteString("parent " + parent + "\n")
	}
	b.WriteString("author " + ownIdent() + " " + author + "\ncommitter " + ownIdent() + " " + committer + "\n\n" + msg + "\n")
	return []byte(b.String()), true
}

// ownDate is a commit's date as git writes it ("<unix seconds> +hhmm"):
// now, or the date the environment variable key names in one of the
// forms read here as git reads them (RFC 3339, such as
// 2026-01-02T03:04:05Z, or git's own "@<seconds> +hhmm"); ok is false for
// any other.
func ownDate(key string, now time.Time) (string, bool) {
	v, set := os.LookupEnv(key)
	if !set {
		return strconv.FormatInt(now.Unix(), 10) + " " + now.Format("-0700"), true
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil && t.Nanosecond() == 0 {
		return strconv.FormatInt(t.Unix(), 10) + " " + t.Format("-0700"), true
	}
	secs, zone, ok := strings.Cut(strings.TrimPrefix(v, "@"), " ")
	if _, err := strconv.ParseUint(secs, 10, 63); err == nil && ok && strings.HasPrefix(v, "@") &&
		len(zone) == 5 && (zone[0] == '+' || zone[0] == '-') && strings.Trim(zone[1:], "0123456789") == "" {
		return secs + " " + zone, true
	}
	return "", false
}

// ownIdent is ownIdentity as a commit's header names it.
func ownIdent() string {
	var name, email string
	for _, kv := range ownIdentity {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_COMMITTER_NAME":
			name = v
		case "GIT_COMMITTER_EMAIL":
			email = v
		}
	}
	return name + " <" + email + ">"
}

// validIDs reports whether each id is a full object id (or "").
func validIDs(ids ...string) bool {
	for _, id := range ids {
		if id != "" && repofiles.HexOID(id) == "" {
			return false
		}
	}
	return true
}
