package agency

import (
	"context"
	"errors"
	"fmt"
	"github.com/git-agency/git-agency/agency/internal/core"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// IncludeFile is the file at a repository's root that lists, in gitignore
// syntax, the ignored files to copy into every new tree (core.IncludeFile).
const IncludeFile = core.IncludeFile

// FPIncludeCopy fails a .worktreeinclude copy after its first file (tests
// use it to check that a copy failing halfway leaves nothing).
const FPIncludeCopy = "include:after-first-file"

// IncludeSpec is what a new tree copies: the patterns, and where they came
// from (".worktreeinclude", "git config agency.include"), for the user.
type IncludeSpec = core.IncludeSpec

// includePatterns returns the patterns of the first .worktreeinclude found
// in trees (the source tree, then fallbacks such as the main worktree, for
// a file the user never committed), followed by git config agency.include,
// each checked: a malformed line is E_INCLUDE_INVALID, one naming a path
// outside the repository E_INCLUDE_OUTSIDE. No patterns is no error.
func (a *App) includePatterns(trees ...string) (IncludeSpec, error) {
	var spec IncludeSpec
	var data []byte
	for _, tree := range trees {
		if tree == "" {
			continue
		}

		d, err := os.ReadFile(filepath.Join(tree, IncludeFile))
		if err == nil {
			data = d
			break
		}

		if !errors.Is(err, fs.ErrNotExist) {
			return spec, errs.IO("read", filepath.Join(tree, IncludeFile), err)
		}
	}

	p, err := parseIncludePatterns(IncludeFile, string(data))
	if err != nil {
		return spec, err
	}

	if len(p) > 0 {
		spec.Patterns, spec.Sources = p, []string{IncludeFile}
	}

	fromConfig := false
	for i, v := range a.Config.GetAll("agency.include") {
		p, err := parseIncludePatterns("agency.include", v)
		if err != nil {
			var e *errs.Error
			if errors.As(err, &e) {
				// Report the value's position among agency.include values.
				e.Msg = strings.Replace(e.Msg, "agency.include:1:", fmt.Sprintf("agency.include (value %d):", i+1), 1)
			}
			return spec, err
		}

		spec.Patterns = append(spec.Patterns, p...)
		fromConfig = fromConfig || len(p) > 0
	}

	if fromConfig {
		spec.Sources = append(spec.Sources, "git config agency.include")
	}

	return spec, nil
}

// parseIncludePatterns checks gitignore-syntax text and returns its
// patterns (comments and blank lines dropped). source names it in errors.
func parseIncludePatterns(source, text string) ([]string, error) {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		if !utf8.ValidString(line) {
			return nil, errs.IncludeInvalid(source, n, "not valid UTF-8")
		}

		for _, r := range line {
			if r < 0x20 && r != '\t' || r == 0x7f {
				return nil, errs.IncludeInvalid(source, n, fmt.Sprintf("control character %q in pattern", r))
			}
		}

		trimmed := strings.TrimRight(line, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if trailing := len(trimmed) - len(strings.TrimRight(trimmed, `\`)); trailing%2 == 1 && !strings.HasSuffix(line, `\ `) {
			return nil, errs.IncludeInvalid(source, n, "pattern ends with a lone backslash")
		}

		body := strings.TrimPrefix(trimmed, "!")
		if body == "" || body == "/" && trimmed != "/" {
			return nil, errs.IncludeInvalid(source, n, fmt.Sprintf("empty pattern %q", trimmed))
		}
		if outsideRepo(body) {
			return nil, errs.IncludeOutside(source, n, trimmed)
		}

		out = append(out, line)
	}

	return out, nil
}

// outsideRepo reports whether a pattern tries to leave the repository: a
// ".." component, or a home directory ("~/…").
func outsideRepo(p string) bool {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return true
	}

	for _, c := range strings.Split(strings.Trim(p, "/"), "/") {
		if c == ".." {
			return true
		}
	}

	return false
}

// IncludePaths intersects what the patterns match with what git ignores
// (both from gitcore's IncludeCandidates): a matched path is copied when
// it, or a directory above it, is ignored. A matched directory that is not
// ignored as a whole gives the ignored paths inside it. Our own .agency/
// never comes along. The result is sorted and holds no path twice.
func IncludePaths(matched, ignored []string) []string {
	ign := map[string]bool{}
	for _, p := range ignored {
		ign[p] = true
	}

	covered := func(p string) bool {
		p = strings.TrimSuffix(p, "/")
		for {
			if ign[p] || ign[p+"/"] {
				return true
			}

			i := strings.LastIndex(p, "/")
			if i < 0 {
				return false
			}

			p = p[:i]
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p == store.AgencyDir+"/" || strings.HasPrefix(p, store.AgencyDir+"/") || seen[p] {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	for _, m := range matched {
		switch {
		case covered(m):
			add(m)
		case strings.HasSuffix(m, "/"):
			for _, g := range ignored {
				if strings.HasPrefix(g, m) {
					add(g)
				}
			}
		}
	}

	sort.Strings(out)

	// Drop paths inside a directory that is copied whole.
	kept := out[:0]
	for _, p := range out {
		if n := len(kept); n > 0 && strings.HasSuffix(kept[n-1], "/") && strings.HasPrefix(p, kept[n-1]) {
			continue
		}
		kept = append(kept, p)
	}

	return kept
}

// mainWorktree is the repository's main worktree ("" if bare or unknown).
// git lists it first. With a separate git directory (`git init
// --separate-git-dir`: the tree holds a .git file pointing elsewhere) git
// does not know where the main worktree is and lists the git directory
// itself: then it is the tree we run in when that is the main one, and
// unknown otherwise.
func (a *App) mainWorktree(ctx context.Context) string {
	a.mainTree.Lock()
	defer a.mainTree.Unlock()
	if a.mainTree.dir == "" {
		a.mainTree.dir = a.findMainWorktree(ctx)
	}
	return a.mainTree.dir
}

func (a *App) findMainWorktree(ctx context.Context) string {
	wts, err := a.Repo.Worktrees(ctx)
	if err != nil || len(wts) == 0 || wts[0].Bare {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(wts[0].Path, ".git")); err == nil {
		return wts[0].Path
	}
	if canonical(a.Repo.GitDir) == a.Repo.CommonDir {
		return a.Repo.Toplevel
	}

	return ""
}

// includeIntoTree copies the ignored files the patterns name from source
// into the new tree dst. log, when not nil, receives one line per step.
// A failure returns E_COPY_FAILED; the caller removes the new tree.
func (a *App) includeIntoTree(ctx context.Context, spec IncludeSpec, source, dst string, log io.Writer) (*store.IncludeStats, error) {
	if len(spec.Patterns) == 0 {
		return nil, nil
	}

	start := time.Now()
	matched, ignored, err := a.Repo.Tree(source).IncludeCandidatesFor(ctx, spec.Patterns)
	if err != nil {
		return nil, gitErr(err)
	}

	paths := IncludePaths(matched, ignored)

	// A path ignored here only by a rule that is not committed (a changed
	// .gitignore, an untracked nested one) would not be ignored in the new
	// tree, and checkpoints and land --apply would take it: not copied.
	paths, skipped, err := a.ignoredIn(ctx, dst, paths)
	if err != nil {
		return nil, err
	}

	if len(skipped) > 0 && log != nil {
		fmt.Fprintf(log, "include: %s: %s\n", NotIgnoredNote, strings.Join(skipped, " "))
	}

	c := &copier{fail: a.fail}
	c.start()
	for _, p := range paths {
		if err = c.copyPath(filepath.Join(source, filepath.FromSlash(p)), filepath.Join(dst, filepath.FromSlash(p))); err != nil {
			break
		}
	}

	if ferr := c.finish(); err == nil {
		err = ferr
	}

	if err != nil {
		if log != nil {
			fmt.Fprintf(log, "include: failed: %v\n", err)
		}
		return nil, err
	}

	st := &store.IncludeStats{Files: int(c.files.Load()), Bytes: c.bytes.Load(), Cloned: int(c.cloned.Load()), DurationMS: time.Since(start).Milliseconds(), Skipped: skipped,
		Sources: spec.Sources, Outside: outsideEnvs(dst, paths)}
	if log != nil {
		fmt.Fprintf(log, "include: copied %d files (%d bytes, %d as copy-on-write clones) from %s in %dms (%s)\n",
			st.Files, st.Bytes, st.Cloned, source, st.DurationMS, strings.Join(paths, " "))
		for _, o := range st.Outside {
			fmt.Fprintf(log, "include: warning: %s\n", o)
		}
	}

	return st, nil
}

// NotIgnoredNote introduces the include paths left out of a new tree
// because it would not ignore them.
const NotIgnoredNote = "not copied, not ignored in the new tree (commit the ignore rule)"

// ignoredIn splits paths into those the tree dst ignores and those it does
// not (tracked there, or no committed rule ignores them).
func (a *App) ignoredIn(ctx context.Context, dst string, paths []string) (keep, skipped []string, err error) {
	ign, err := a.Repo.Tree(dst).CheckIgnored(ctx, paths)
	if err != nil {
		return nil, nil, gitErr(err)
	}

	for _, p := range paths {
		if ign[p] || ign[strings.TrimSuffix(p, "/")] {
			keep = append(keep, p)
		} else {
			skipped = append(skipped, p)
		}
	}

	return keep, skipped, nil
}

// copyWorkers is how many files are copied at once: a copy waits on the
// disk more than on the CPU.
const copyWorkers = 4

// copier copies files, directories and symlinks, keeping modes and times.
// It never links: every file is a copy (a copy-on-write clone where the
// file system has them). Files are copied by copyWorkers goroutines;
// directories are made, in order, before their files are queued.
type copier struct {
	files, cloned atomic.Int64
	bytes         atomic.Int64
	noClone       atomic.Bool // the file system refused a clone once
	fail          func(string) error
	dirs          []dirTimes

	jobs chan copyJob
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
}

type copyJob struct {
	src, dst string
	fi       fs.FileInfo
}

type dirTimes struct {
	path string
	mode fs.FileMode
	mt   time.Time
}

func (c *copier) start() {
	c.jobs = make(chan copyJob, 256)
	for range copyWorkers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for j := range c.jobs {
				if c.failed() != nil {
					continue
				}
				if err := c.copyOne(j.src, j.dst, j.fi); err != nil {
					c.setErr(err)
				}
			}
		}()
	}
}

// finish waits for the queued copies, then sets the directories' modes and
// times (writing into a directory changes both), deepest first.
func (c *copier) finish() error {
	close(c.jobs)
	c.wg.Wait()
	if err := c.failed(); err != nil {
		return err
	}

	for i := len(c.dirs) - 1; i >= 0; i-- {
		d := c.dirs[i]
		if err := os.Chmod(d.path, d.mode.Perm()|d.mode&(fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return errs.CopyFailed(d.path, err)
		}
		// A directory's time is cosmetic (git never reads it): best effort.
		_ = os.Chtimes(d.path, d.mt, d.mt)
	}

	return nil
}

func (c *copier) setErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

func (c *copier) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *copier) queue(src, dst string, fi fs.FileInfo) error {
	if err := c.failed(); err != nil {
		return err
	}
	c.jobs <- copyJob{src, dst, fi}
	return nil
}

func (c *copier) copyPath(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since git listed it
		}
		return errs.CopyFailed(src, err)
	}

	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return errs.CopyFailed(src, err)
	}
	if !fi.IsDir() {
		return c.queue(src, dst, fi)
	}

	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return errs.CopyFailed(p, err)
		}

		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return errs.CopyFailed(p, err)
		}

		if d.IsDir() {
			if err := os.Mkdir(target, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return errs.CopyFailed(p, err)
			}
			c.dirs = append(c.dirs, dirTimes{target, info.Mode(), info.ModTime()})
			return nil
		}

		return c.queue(p, target, info)
	})
}

// copyOne copies a regular file or a symlink (as a symlink). Anything else
// (sockets, fifos) is skipped. An existing destination (the checkout's own
// file) is kept.
func (c *copier) copyOne(src, dst string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return errs.CopyFailed(src, err)
		}

		if err := os.Symlink(target, dst); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil
			}
			return errs.CopyFailed(src, err)
		}

		lchtimes(dst, fi.ModTime())
	case fi.Mode().IsRegular():
		cloned, err := c.copyFile(src, dst, fi)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}

		if err != nil {
			os.Remove(dst)
			return errs.CopyFailed(src, err)
		}

		c.bytes.Add(fi.Size())
		if cloned {
			c.cloned.Add(1)
		}
	default:
		return nil
	}

	if c.files.Add(1) == 1 && c.fail != nil {
		if err := c.fail(FPIncludeCopy); err != nil {
			return errs.CopyFailed(src, err)
		}
	}

	return nil
}

// copyFile copies one regular file: a copy-on-write clone where the file
// system has them, else its bytes. Mode and modification time are kept.
func (c *copier) copyFile(src, dst string, fi fs.FileInfo) (cloned bool, err error) {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, err
	}

	in, err := os.Open(src)
	if err != nil {
		out.Close()
		return false, err
	}
	defer in.Close()
	if !c.noClone.Load() {
		cloned = cloneFile(out, in)
		if !cloned {
			c.noClone.Store(true)
		}
	}

	if !cloned {
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return false, err
		}
	}

	if err := out.Chmod(fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		out.Close()
		return false, err
	}

	if err := out.Close(); err != nil {
		return false, err
	}

	return cloned, os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}
