package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/tmux"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// This file is the host side: what `git-agency host-serve …` does when
// another machine's git-agency calls it over ssh.

// mirrorsDir is where a host keeps the mirrors of the repositories whose
// agents run on it: <data dir>/mirrors/<the caller's repo id>.
func mirrorsDir(dataDir string) string { return filepath.Join(dataDir, "mirrors") }

// hostDataDir is this machine's data directory, as a command outside any
// repository finds it.
func hostDataDir() (string, error) {
	configured := ""
	if v, err := gitcore.GlobalConfigValue(context.Background(), "agency.dataDir"); err == nil {
		configured = v
	}
	return store.DataDir(os.Getenv, configured)
}

// ServeHello is `host-serve hello`: this machine as a host. With repoID,
// the mirror of that repository is made when missing.
func ServeHello(ctx context.Context, version, repoID string) (*HostHello, error) {
	dataDir, err := hostDataDir()
	if err != nil {
		return nil, err
	}

	h := &HostHello{Version: version, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(), DataDir: dataDir, Runners: map[string]bool{}}
	h.HostName, _ = os.Hostname()
	h.MemFree = memAvailable()
	h.MaxAuto = maxActiveAuto(h.Cores, h.MemFree)
	h.Git, _ = gitcore.Version(ctx, nil)
	_, terr := tmux.Available()
	h.Tmux = terr == nil
	w := wall.Probe(ctx)
	h.Bwrap, h.Wall = w.Bwrap != "", w.Cause
	for _, name := range []string{"claude", "codex"} {
		if spec, err := runner.Lookup(nil, name); err == nil {
			_, ferr := spec.Find()
			h.Runners[name] = ferr == nil
		}
	}

	h.Running, h.Queued = countHostAgents(dataDir)
	if repoID != "" {
		if h.Mirror, err = ensureMirror(ctx, dataDir, repoID); err != nil {
			return nil, err
		}
	}

	return h, nil
}

// maxActiveAuto is maxActive "auto" on a machine with cores and memFree
// bytes free: the smaller of the cores and the free memory / 2 GiB, at
// least 1.
func maxActiveAuto(cores int, memFree int64) int {
	return max(1, min(cores, int(memFree/(2<<30))))
}

// hostMaxActive is the limit a start on this host goes by: the caller's
// number, or for auto (or none) this machine's.
func hostMaxActive(v string) int {
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return n
	}
	return maxActiveAuto(runtime.NumCPU(), memAvailable())
}

// ensureMirror makes <data dir>/mirrors/<repoID> a repository when it is
// not one yet, and returns its path.
func ensureMirror(ctx context.Context, dataDir, repoID string) (string, error) {
	if len(repoID) != 16 || strings.Trim(repoID, "0123456789abcdef") != "" {
		return "", errs.New(errs.EUsage, "", "bad repository id %q", repoID)
	}

	dir := filepath.Join(mirrorsDir(dataDir), repoID)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", errs.IO("create", dir, err)
	}
	if err := gitcore.Init(ctx, nil, dir); err != nil {
		return "", core.GitErr(err)
	}

	return dir, nil
}

// memAvailable is the free memory Linux reports (MemAvailable), 0 elsewhere.
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}

	return 0
}

// countHostAgents counts this machine's running and queued agents over
// every repository of its data directory.
func countHostAgents(dataDir string) (running, queued int) {
	metas, _ := filepath.Glob(filepath.Join(dataDir, "repos", "*", "invocations", "*", "meta.json"))
	for _, m := range metas {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}

		var r struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(b, &r) != nil {
			continue
		}

		switch r.Status {
		case store.StatusRunning, store.StatusStarting:
			running++
		case store.StatusQueued:
			queued++
		}
	}

	return running, queued
}

// HostStartRequest is what `agent start --host` sends the host (JSON on
// the stdin of `host-serve start`).
type HostStartRequest struct {
	RepoID   string `json:"repo_id"`
	Worktree string `json:"worktree"`
	Base     string `json:"base"`
	// Config: the caller's agency.runner.* (and agency.isolate*)
	// settings, written into the mirror's own configuration.
	Config  map[string][]string `json:"config"`
	Runner  string              `json:"runner"`
	Head    bool                `json:"headed"`
	Prompt  string              `json:"prompt"`
	Args    []string            `json:"runner_args"`
	NoUntr  bool                `json:"no_include_untracked"`
	Full    bool                `json:"full"`
	Queue   bool                `json:"queue"`
	Version string              `json:"version"`
	// MaxActive is the caller's agency.host.<name>.maxActive: "auto" (the
	// smaller of this host's cores and its free memory / 2 GiB) or a
	// number. Starts beyond it wait in the host's queue.
	MaxActive string `json:"max_active,omitempty"`
	// LineageBase: the run continues another's branch (Base is its tip)
	// and counts its work from this commit (StartOptions.LineageBase).
	LineageBase string `json:"lineage_base,omitempty"`
	// StartKey is the caller's key of this start, kept in the record: a
	// caller that died before writing its own record finds it by the key.
	StartKey string `json:"start_key,omitempty"`
}

// ExitNeedBase is host-serve start's exit status when the mirror lacks the
// base commit: the caller pushes it and asks again.
const ExitNeedBase = 3

// ErrNeedBase is ServeStart's answer when the base must be pushed first.
var ErrNeedBase = errs.New(errs.EHost, "", "the host's mirror lacks the base commit")

// ServeStart is `host-serve start`: the start of an agent another
// machine asked for, in this machine's mirror of its repository, made and
// supervised here as any local start.
func ServeStart(ctx context.Context, open Opener, version string, in []byte) (*store.InvocationRecord, error) {
	var req HostStartRequest
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, errs.New(errs.EUsage, "", "host-serve start: %v", err)
	}
	if req.Version != version {
		return nil, errs.New(errs.EHostVersion, "copy the caller's build here: git agency host install <this host>, run on the caller",
			"this host runs git-agency %s, the caller %s: a start needs the same version on both sides", version, req.Version)
	}

	mirror, err := servedMirror(ctx, req.RepoID)
	if err != nil {
		return nil, err
	}

	a, err := open(ctx, mirror)
	if err != nil {
		return nil, err
	}
	if !a.Repo.HasCommit(ctx, req.Base) {
		return nil, ErrNeedBase
	}
	if err := a.mirrorConfig(ctx, req.Config); err != nil {
		return nil, err
	}

	// The host's limit, enforced by its own queue: a start beyond it waits
	// there, and starts when an agent of the mirror ends.
	if err := a.Repo.LocalConfigReplace(ctx, "agency.maxActive", []string{strconv.Itoa(hostMaxActive(req.MaxActive))}); err != nil {
		return nil, core.GitErr(err)
	}
	if a, err = open(ctx, mirror); err != nil {
		return nil, err
	}

	wt, err := a.mirrorWorktree(ctx, req.Worktree)
	if err != nil {
		return nil, err
	}

	return a.Agency.StartInvocation(ctx, core.StartOptions{
		Worktree: wt.WorktreeID, Runner: req.Runner, Headless: !req.Head, Prompt: req.Prompt, PromptSource: "host",
		RunnerArgs: req.Args, NoIncludeUntracked: req.NoUntr, Full: req.Full, Queue: true, Base: req.Base,
		LineageBase: req.LineageBase, HostStartKey: validStartKey(req.StartKey),
	})
}

// mirrorConfig replaces the mirror's agency.runner.* (and wall) settings
// with the caller's.
//
// Only what differs is written, under the mirror's repo lock: the checks
// of one land spread over two host names of one machine run side by side
// in one mirror, and an unset-then-add of the one would fail on the
// other's config lock, or show it the setting missing for a moment.
func (a *Remote) mirrorConfig(ctx context.Context, cfg map[string][]string) error {
	ctx, unlock, err := a.LockWork(ctx)
	if err != nil {
		return err
	}
	defer unlock()

	for k, vals := range cfg {
		if !travels(k) || slices.Equal(a.Config.GetAll(k), vals) {
			continue
		}
		if err := a.Repo.LocalConfigReplace(ctx, k, vals); err != nil {
			return core.GitErr(err)
		}
	}

	return nil
}

// travels says which settings go with a start to a host.
func travels(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "agency.runner.") || k == "agency.defaultrunner" ||
		strings.HasPrefix(k, "agency.isolate") || strings.HasPrefix(k, "agency.checkpoint.") ||
		k == "agency.timeout" || k == "agency.idletimeout" || k == "agency.setup"
}

// mirrorWorktree is the mirror's integration worktree standing for the
// caller's worktree name (made on first use from the pushed base branch).
func (a *Remote) mirrorWorktree(ctx context.Context, name string) (*store.WorktreeRecord, error) {
	list, err := a.Store.ScanWorktrees()
	if err != nil {
		return nil, errs.IO("scan", a.Store.IntegrationWorktreesDir(), err)
	}

	for _, e := range list {
		if e.Record != nil && e.Record.Name == name && e.Record.State == store.StatePresent {
			return e.Record, nil
		}
	}

	return a.Agency.CreateWorktree(ctx, name, hostBaseBranch(name), true)
}

// hostBaseBranch is the mirror branch a worktree's base commits are
// pushed to.
func hostBaseBranch(worktree string) string { return "agency-base/" + worktree }

func jsonDecode(b []byte, v any) error {
	return json.NewDecoder(bytes.NewReader(b)).Decode(v)
}
