package wall

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// Isolation modes (agency.isolate) and what a record says was used.
const (
	IsolateAuto  = "auto"
	IsolateBwrap = "bwrap"
	IsolateOff   = "off"
	// IsolationNone is a record's isolation when no wall was used.
	IsolationNone = "none"
)

// Settings are the agency.isolate settings.
type Settings struct {
	// Mode is auto, bwrap or off.
	Mode string
	// NoNetwork: agency.isolate.network none.
	NoNetwork bool
	// Writable and Hide: agency.isolate.writable and agency.isolate.hide.
	Writable, Hide []string
	// Readable: agency.isolate.readable (read-only paths shown inside,
	// even in /tmp); Sockets: agency.isolate.sockets (sockets reachable
	// under network none); MaxProcs: agency.isolate.maxProcs.
	Readable, Sockets []string
	MaxProcs          int
}

// SettingsFromConfig reads agency.isolate, agency.isolate.network,
// agency.isolate.writable and agency.isolate.hide.
func SettingsFromConfig(cfg *gitcore.Config) (Settings, error) {
	ws := Settings{Mode: IsolateAuto}
	if v, ok := cfg.Get("agency.isolate"); ok {
		ws.Mode = strings.ToLower(strings.TrimSpace(v))
	}

	switch ws.Mode {
	case IsolateAuto, IsolateBwrap, IsolateOff:
	default:
		return ws, errs.New(errs.EConfig, "set it to auto, bwrap or off: git config agency.isolate auto",
			"agency.isolate is %q: want auto, bwrap or off", ws.Mode)
	}

	if v, ok := cfg.Get("agency.isolate.network"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "none":
			ws.NoNetwork = true
		case "shared", "":
		default:
			return ws, errs.New(errs.EConfig, "set it to shared or none: git config agency.isolate.network none",
				"agency.isolate.network is %q: want shared or none", v)
		}
	}

	ws.Writable = expandHome(cfg.GetAll("agency.isolate.writable"))
	ws.Hide = expandHome(cfg.GetAll("agency.isolate.hide"))
	return ws, hygieneSettings(cfg, &ws)
}

// hygieneSettings reads agency.isolate.readable, agency.isolate.sockets
// and agency.isolate.maxProcs into ws.
func hygieneSettings(cfg *gitcore.Config, ws *Settings) error {
	ws.Readable = expandHome(cfg.GetAll("agency.isolate.readable"))
	ws.Sockets = expandHome(cfg.GetAll("agency.isolate.sockets"))
	if v, ok := cfg.Get("agency.isolate.maxProcs"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return errs.New(errs.EConfig, "set it to a number of processes, or 0 for no limit: git config agency.isolate.maxProcs 512",
				"agency.isolate.maxProcs is %q: want a number", v)
		}
		ws.MaxProcs = n
	}
	return nil
}

// runtimeDirs are the user's runtime directories: $XDG_RUNTIME_DIR and
// /run/user/<uid> (the same one, most often).
func runtimeDirs(getenv func(string) string) []string {
	out := []string{filepath.Join("/run/user", strconv.Itoa(os.Getuid()))}
	if d := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) && realPath(d) != realPath(out[0]) {
		out = append(out, d)
	}
	return out
}

func expandHome(paths []string) []string {
	home, _ := os.UserHomeDir()
	var out []string
	for _, p := range paths {
		if p == "~" || strings.HasPrefix(p, "~/") {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// For is the wall of invocation rec of the repository whose common
// git directory is commonDir, with self (the running git-agency) started
// inside it before the agent (ExecCmd). It reads a few files (the sandbox's .git
// link, the sandbox branch's ref directory) and runs nothing.
func For(st *store.Store, commonDir string, ws Settings, rec *store.InvocationRecord, self string) (*Wall, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errs.WallFailed(errs.WallWhy(errs.WallMissing, ""))
	}

	gitDir, err := SandboxGitDir(rec.SandboxPath, commonDir)
	if err != nil {
		return nil, err
	}

	home, _ := os.UserHomeDir()
	w := &Wall{
		Sandbox: rec.SandboxPath, GitDir: gitDir, CommonDir: commonDir,
		Branch:      strings.TrimPrefix(rec.SandboxBranch, "refs/heads/"),
		Logs:        st.SandboxLogsDir(rec.InvocationID),
		Extra:       ws.Writable,
		Hide:        append(append([]string(nil), ws.Hide...), tmuxSocketDir()),
		NoNetwork:   ws.NoNetwork,
		RuntimeDirs: runtimeDirs(os.Getenv),
		Bwrap:       bwrap, Self: self,
		Sockets:    socketsAllowed(ws.Sockets, os.Getenv),
		NoTerminal: true,
		MaxProcs:   ws.MaxProcs,
	}
	if err := w.ownStateAndCaches(st, rec, home); err != nil {
		return nil, errs.WallFailed(err.Error())
	}

	w.Visible = visibleRoots(st, commonDir, home, self, rec)
	w.Visible = append(append(w.Visible, ws.Readable...), w.Sockets...)
	return w, nil
}

// Prepare readies w, the wall of invocation inv about to go up, for its
// agent's git: the sandbox's own git directory is made, or refreshed
// after what its agent left there was imported (PrepareShadow), and w
// mounts it (Shadow). A nil w (unwalled) needs nothing.
func Prepare(ctx context.Context, st *store.Store, repo *gitcore.Repo, w *Wall, inv string) error {
	if w == nil {
		return nil
	}
	shadow := ShadowDir(st, inv)
	if err := PrepareShadow(ctx, repo, shadow, w.GitDir, w.Branch); err != nil {
		return err
	}
	w.Shadow = shadow
	return nil
}

// Unprepare removes what For and Prepare made for invocation inv's wall
// (its own git directory and agent state), when it runs unwalled after
// all: its trial wall failed where bubblewrap cannot make one.
func Unprepare(st *store.Store, inv string) {
	shadow := ShadowDir(st, inv)
	os.RemoveAll(shadow)
	os.Remove(importedPath(shadow))
	os.RemoveAll(StateDir(st, inv))
}

// ownStateAndCaches gives the wall the invocation's own agent state
// (seeded from the user's the first time, while its sandbox exists) and
// the agents' shared build cache, both writable and named by the
// environment; the user's own stay read-only.
func (w *Wall) ownStateAndCaches(st *store.Store, rec *store.InvocationRecord, home string) error {
	env, err := prepareCaches(st.DataDir, home, os.Getenv)
	if err != nil {
		return fmt.Errorf("cannot make the agent cache: %v", err)
	}

	w.Caches, w.Env = []string{cacheDir(st.DataDir)}, env
	state := StateDir(st, rec.InvocationID)

	if _, err := os.Stat(st.SandboxDir(rec.InvocationID)); err != nil {
		return nil
	}
	if err := seedState(state, home, os.Getenv); err != nil {
		return fmt.Errorf("cannot copy the agent state: %v", err)
	}

	w.AgentState = []string{state}
	w.Env = append(stateEnv(state), w.Env...)
	return nil
}

// SandboxGitDir is the git directory a sandbox's .git file names; it must
// be the sandbox's own worktree directory under commonDir/worktrees.
func SandboxGitDir(sandbox, commonDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(sandbox, ".git"))
	if err != nil {
		return "", errs.WallFailed(fmt.Sprintf("cannot read the sandbox's .git: %v", err))
	}

	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	dir = strings.TrimSpace(dir)
	if !ok || dir == "" {
		return "", errs.WallFailed("the sandbox's .git is not a worktree link")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(sandbox, dir)
	}

	dir = realPath(dir)
	if filepath.Dir(dir) != filepath.Join(realPath(commonDir), "worktrees") {
		return "", errs.WallFailed(fmt.Sprintf("the sandbox's .git names %s, not a worktree of this repository", dir))
	}

	return dir, nil
}

// visibleRoots are the read-only paths a walled agent must still see when
// they lie in /tmp: the repository, the data directory, HOME, the user's
// git and XDG configuration (git needs its identity), this program, the
// runner's program and every directory on PATH.
func visibleRoots(st *store.Store, commonDir, home, self string, rec *store.InvocationRecord) []string {
	roots := []string{commonDir, st.DataDir, home, filepath.Dir(self)}
	for _, v := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		roots = append(roots, os.Getenv(v))
	}

	// Only git's directory of XDG_CONFIG_HOME: binding all of it again
	// over a writable grant inside it broke headed claude's state.
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		roots = append(roots, filepath.Join(x, "git"))
	}
	if filepath.Base(commonDir) == ".git" {
		roots = append(roots, filepath.Dir(commonDir))
	}
	if len(rec.Command) > 0 {
		roots = append(roots, runnerRoots(rec.Command[0])...)
	}

	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) {
			roots = append(roots, d)
		}
	}

	return roots
}

// tmuxSocketDir is the directory of the user's tmux server sockets: an
// agent that reached them could end other agents' sessions.
func tmuxSocketDir() string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()))
}
