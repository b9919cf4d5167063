package gitcore

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// A checkpoint's last git processes (reading HEAD's trees, creating the
// ref, the diffstat) each wait for what the status before them says; a
// process started only then costs its whole start-up, one level after the
// other. Started ahead instead, while the status runs, each reads what it
// is asked on its standard input and answers at once. A started process
// holds nothing (no lock, no object) until its input comes; one that is
// never asked is given an empty input (git ends at once on it) and waited
// for, so that none is left behind.

// started is a git process started ahead of its input.
type started struct {
	w    *io.PipeWriter
	done chan startedResult
	// used: finish or abandon was called.
	used bool
}

type startedResult struct {
	out []byte
	err error
}

// errStartedEnded is what a write to a started process that has already
// ended gets.
var errStartedEnded = errors.New("git ended before its input")

// startCmd starts c with a pipe as its standard input; c.Stdin is set here.
func startCmd(ctx context.Context, runner CommandRunner, c Cmd) *started {
	pr, pw := io.Pipe()
	c.Stdin = pr
	s := &started{w: pw, done: make(chan startedResult, 1)}
	go func() {
		res, err := runner.Run(ctx, c)
		// A write still waiting (git ended early) fails instead of
		// blocking.
		pr.CloseWithError(errStartedEnded)
		s.done <- startedResult{res.Stdout, err}
	}()
	return s
}

// start is exec (the repository's) started ahead of its input.
func (r *Repo) start(ctx context.Context, extra []string, args ...string) *started {
	full := append([]string{"--git-dir=" + r.GitDir}, args...)
	return startCmd(ctx, r.runner, Cmd{Dir: r.Toplevel, Args: full, Pin: pinned, Env: cleanEnv(os.Environ(), extra...)})
}

// start is exec (the tree's) started ahead of its input.
func (t *Tree) start(ctx context.Context, extra []string, args ...string) *started {
	return startCmd(ctx, t.repo.runner, Cmd{Dir: t.Path, Args: args, Pin: treePinned, Env: cleanEnv(os.Environ(), extra...)})
}

// finish gives the process its whole input and returns its output. It
// may be called once; a nil started is an error.
func (s *started) finish(input []byte) ([]byte, error) {
	if s == nil || s.used {
		return nil, errors.New("no started git process to ask")
	}
	s.used = true
	_, werr := s.w.Write(input)
	s.w.Close()
	res := <-s.done
	if res.err == nil && werr != nil {
		res.err = werr
	}
	return res.out, res.err
}

// abandon ends a process that was not asked (an empty input) and waits
// for it; nothing when it was asked, or s is nil.
func (s *started) abandon() {
	if s == nil || s.used {
		return
	}
	s.used = true
	s.w.Close()
	<-s.done
}

// RefCreation is a `git update-ref --stdin` started ahead of the ref it
// will create (StartRefCreation). Close it whether or not it was used.
type RefCreation struct {
	r *Repo
	p *started
}

// StartRefCreation starts the process that Create will use.
func (r *Repo) StartRefCreation(ctx context.Context) *RefCreation {
	return &RefCreation{r: r, p: r.start(ctx, nil, "update-ref", "--stdin")}
}

// Create is CreateRef through the started process: it creates ref
// pointing at commit, or fails with ErrRefExists when the ref is there
// (never overwriting). Once only; CreateRef for any other.
func (c *RefCreation) Create(ctx context.Context, ref, commit string) error {
	if strings.ContainsAny(ref+commit, " \n\x00") {
		return errors.New("bad ref or object name")
	}
	_, err := c.p.finish([]byte("option no-deref\ncreate " + ref + " " + commit + "\n"))
	if err != nil {
		// update-ref says why only in words: ask whether the ref is there.
		if exists, xerr := c.r.refExists(ctx, ref); xerr == nil && exists {
			return ErrRefExists
		}
	}
	return err
}

// Close ends the process when Create was not called.
func (c *RefCreation) Close() { c.p.abandon() }

// ShortstatQuery is a `git diff-tree --stdin --shortstat` started ahead
// of the trees it will compare (StartShortstat). Close it whether or not
// it was used.
type ShortstatQuery struct {
	p *started
}

// StartShortstat starts the process that Diff will use.
func (r *Repo) StartShortstat(ctx context.Context) *ShortstatQuery {
	return &ShortstatQuery{p: r.start(ctx, []string{"GIT_OPTIONAL_LOCKS=0"},
		"diff-tree", "--stdin", "-r", "--no-renames", "--ignore-submodules=none", "--no-ext-diff", "--shortstat")}
}

// Diff is DiffShortstat of two trees (from "" for the empty tree) through
// the started process. Once only.
func (q *ShortstatQuery) Diff(from, to string) (Shortstat, error) {
	if from == "" {
		from = emptyTree
	}
	if repofiles.HexOID(from) == "" || repofiles.HexOID(to) == "" {
		return Shortstat{}, errors.New("diff-tree: not an object id")
	}
	out, err := q.p.finish([]byte(from + " " + to + "\n"))
	if err != nil {
		return Shortstat{}, err
	}
	// diff-tree --stdin repeats each line it reads before its answer.
	_, stat, _ := strings.Cut(string(out), "\n")
	return parseShortstat(stat), nil
}

// Close ends the process when Diff was not called.
func (q *ShortstatQuery) Close() { q.p.abandon() }

// startTreeReader starts the `cat-file --batch` that reads HEAD's trees
// for a spliced snapshot, unless HEAD's commit and root tree are loose
// objects (readTreesFromFiles then reads them without git): nil then.
func (t *Tree) startTreeReader(ctx context.Context) *started {
	if head := t.HeadFromFiles(); head != "" {
		if tree, _, ok := t.repo.CommitFromFiles(head); ok {
			if _, err := os.Lstat(filepath.Join(t.repo.ObjectsDir(), tree[:2], tree[2:])); err == nil {
				return nil
			}
		}
	}
	return t.start(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, "cat-file", "--batch")
}
