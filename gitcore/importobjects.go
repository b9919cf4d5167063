package gitcore

import (
	"bytes"
	"context"
	"os"
	"strings"
)

// unpackLimit is how many objects an import writes loose; more go into one
// pack (git's own transfer.unpackLimit default).
const unpackLimit = 100

// MissingObjects are the objects of ids the repository does not have.
func (r *Repo) MissingObjects(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}

	in := strings.Join(ids, "\n") + "\n"
	out, err := r.exec(ctx, r.Toplevel, []string{"GIT_OPTIONAL_LOCKS=0"}, []byte(in),
		"cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, err
	}

	var missing []string
	for _, line := range strings.Split(string(out), "\n") {
		if id, ok := strings.CutSuffix(line, " missing"); ok {
			missing = append(missing, id)
		}
	}

	return missing, nil
}

// PackIndexIDs are the object ids a pack index file lists (git
// show-index reading it, already opened by the caller, on its stdin).
func (r *Repo) PackIndexIDs(ctx context.Context, idx *os.File) ([]string, error) {
	res, err := r.runner.Run(ctx, Cmd{Dir: r.Toplevel, Args: []string{"show-index"},
		Env: cleanEnv(os.Environ()), Stdin: idx})
	if err != nil {
		return nil, err
	}

	var ids []string
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			ids = append(ids, f[1])
		}
	}

	return ids, nil
}

// ImportObjects copies the objects ids from the object directory objects
// (another store, such as a walled agent's) into this repository through
// a pack: git pack-objects reads them there, and unpack-objects (or, for
// many, index-pack) writes them here, hashing every object again. So an
// object stored there under a name that is not its content's arrives
// under its true name, or not at all; nothing in that store is trusted.
func (r *Repo) ImportObjects(ctx context.Context, objects string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}

	env := []string{"GIT_OBJECT_DIRECTORY=" + objects, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + r.ObjectsDir()}
	pack, err := r.exec(ctx, r.Toplevel, env, []byte(strings.Join(ids, "\n")+"\n"),
		"pack-objects", "--stdout", "-q", "--no-reuse-object")
	if err != nil {
		return err
	}

	args := []string{"unpack-objects", "-q"}
	if len(ids) > unpackLimit {
		args = []string{"index-pack", "--stdin", "--fix-thin"}
	}

	_, err = r.exec(ctx, r.Toplevel, nil, pack, args...)
	return err
}

// ObjectsDir is the repository's object directory.
func (r *Repo) ObjectsDir() string {
	return r.CommonDir + string(os.PathSeparator) + "objects"
}

// Connected fails unless every object reachable from tip but not from
// old (when not "") is in the repository.
func (r *Repo) Connected(ctx context.Context, tip, old string) error {
	args := []string{"rev-list", "--quiet", "--objects", tip}
	if old != "" {
		args = append(args, "--not", old)
	}
	_, err := r.query(ctx, args...)
	return err
}

// MoveRef points ref at to if it still points at from (a compare and
// swap, "" for a ref that must not exist yet), logging why.
func (r *Repo) MoveRef(ctx context.Context, ref, to, from, why string) error {
	_, err := r.run(ctx, "update-ref", "-m", why, ref, to, from)
	return err
}

// RefSeed is every ref outside the prefixes skip, as the lines of a
// packed-refs file ("<object> <name>\n", sorted by name).
func (r *Repo) RefSeed(ctx context.Context, skip ...string) ([]byte, error) {
	out, err := r.query(ctx, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, err
	}

	var b bytes.Buffer
	for _, line := range strings.SplitAfter(string(out), "\n") {
		_, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if !ok || hasAnyPrefix(name, skip) {
			continue
		}
		b.WriteString(line)
	}

	return b.Bytes(), nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// FsckConnectivity runs `git fsck --connectivity-only`: whether every
// object the refs, reflogs and indexes reach is there. It returns what
// fsck said when it failed.
func (r *Repo) FsckConnectivity(ctx context.Context) (string, error) {
	res, err := r.runner.Run(ctx, Cmd{Dir: r.Toplevel, Pin: pinned, Env: cleanEnv(os.Environ(), "GIT_OPTIONAL_LOCKS=0"),
		Args: []string{"--git-dir=" + r.GitDir, "fsck", "--connectivity-only", "--no-dangling", "--no-progress"}})
	return strings.TrimSpace(string(res.Stderr) + string(res.Stdout)), err
}
