package agency

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// DisplayRepoGone is the display status of every record of a repository
// that is no longer where its records say (moved or deleted).
const DisplayRepoGone = "repository gone"

// RepoEntry is one repository with records in the data directory
// (`--all-repos`).
type RepoEntry struct {
	RepoID string
	// Path is the repository: its main worktree (the parent of its .git
	// directory), else its git directory. Name is Path's last element.
	Path string
	Name string
	// Gone is set when the repository cannot be opened where its records
	// say it is (moved or deleted); Note says why.
	Gone bool
	Note string
	// App is the repository's App (nil when Gone); Store reads its records
	// either way.
	App   *App
	Store *store.Store
}

// AllRepos lists every repository with records in the data directory that
// dir's configuration names (dir need not be inside a repository), by path.
// It reads files and asks git about each repository; it takes no lock, and
// a repository that cannot be opened is listed Gone, never an error.
func AllRepos(ctx context.Context, dir string, runner gitcore.CommandRunner) ([]RepoEntry, error) {
	if runner == nil {
		runner = gitcore.ExecRunner{}
	}

	entries, _ := gitcore.UserConfig(ctx, runner, dir)
	configured, _ := gitcore.NewConfig(entries).Get("agency.dataDir")
	dataDir, err := store.DataDir(os.Getenv, configured)
	if err != nil {
		return nil, err
	}

	scans, err := store.ScanRepos(dataDir)
	if err != nil {
		return nil, errs.IO("scan", filepath.Join(dataDir, "repos"), err)
	}

	var out []RepoEntry
	for _, sc := range scans {
		out = append(out, openRepoEntry(ctx, runner, dataDir, sc))
	}

	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func openRepoEntry(ctx context.Context, runner gitcore.CommandRunner, dataDir string, sc store.RepoScan) RepoEntry {
	e := RepoEntry{RepoID: sc.ID, Path: sc.Dir, Name: sc.ID, Store: &store.Store{DataDir: dataDir, RepoID: sc.ID}}
	if sc.Record == nil {
		e.Gone, e.Note = true, "its repo.json is unreadable: "+errText(sc.Err)
		return e
	}

	common := sc.Record.CommonDir
	e.Path = common
	if filepath.Base(common) == ".git" {
		e.Path = filepath.Dir(common)
	}

	e.Name = filepath.Base(e.Path)
	if _, err := os.Stat(common); err != nil {
		e.Gone, e.Note = true, "the repository is gone from "+e.Path+" (moved or deleted); its records are kept"
		return e
	}

	repo, err := gitcore.Discover(ctx, runner, e.Path)
	if err != nil || repo.CommonDir != common {
		e.Gone, e.Note = true, "no repository at "+e.Path+" any more; its records are kept"
		return e
	}

	cfgEntries, err := repo.Config(ctx)
	if err != nil {
		e.Gone, e.Note = true, "cannot read its configuration: "+errText(gitErr(err))
		return e
	}

	app, err := newApp(repo, gitcore.NewConfig(cfgEntries), e.Store)
	if err != nil {
		e.Gone, e.Note = true, errText(err)
		return e
	}

	e.App = app
	return e
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	if e := (*errs.Error)(nil); errors.As(err, &e) {
		return e.Msg
	}
	return err.Error()
}

// Worktrees lists the repository's integration worktrees (all: archived
// and broken records too).
func (e *RepoEntry) Worktrees(all bool) ([]store.WorktreeEntry, error) {
	return (&App{Store: e.Store}).listWorktrees(all)
}

// Invocations lists the repository's invocations as ListInvocations does;
// those of a gone repository as recorded, each shown as DisplayRepoGone.
func (e *RepoEntry) Invocations(ctx context.Context) ([]InvocationView, error) {
	return e.ListInvocations(ctx, ListOptions{})
}

// ListInvocations is Invocations with opts (for a repository that is
// there; a gone one's records are listed as they are).
func (e *RepoEntry) ListInvocations(ctx context.Context, opts ListOptions) ([]InvocationView, error) {
	if e.App != nil {
		return e.App.ListInvocations(ctx, opts)
	}

	list, err := e.Store.ScanInvocations()
	if err != nil {
		return nil, errs.IO("scan", e.Store.InvocationsDir(), err)
	}

	var out []InvocationView
	for _, x := range list {
		out = append(out, InvocationView{Record: x.Record, ID: x.ID, Dir: x.Dir, Broken: x.Broken, Err: x.Err, Display: DisplayRepoGone})
	}

	return out, nil
}
