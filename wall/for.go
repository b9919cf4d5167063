package wall

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	return ws, nil
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
		Branch:     strings.TrimPrefix(rec.SandboxBranch, "refs/heads/"),
		Logs:       st.SandboxLogsDir(rec.InvocationID),
		Caches:     buildCaches(home),
		AgentState: agentState(home),
		Extra:      ws.Writable,
		Hide:       append(append([]string(nil), ws.Hide...), tmuxSocketDir()),
		NoNetwork:  ws.NoNetwork,
		Bwrap:      bwrap, Self: self,
	}
	w.Visible = visibleRoots(st, commonDir, home, self, rec)
	return w, nil
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
		if p, err := exec.LookPath(rec.Command[0]); err == nil {
			roots = append(roots, filepath.Dir(realPath(p)))
		}
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) {
			roots = append(roots, d)
		}
	}
	return roots
}

// buildCaches are the user's build caches: a second sandbox's build
// reuses the first one's work. XDG's cache directory (~/.cache, Go's
// default GOCACHE) is made if missing.
func buildCaches(home string) []string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(home, ".cache")
	}
	os.MkdirAll(cache, 0o700)
	out := []string{cache, os.Getenv("GOCACHE"), os.Getenv("GOMODCACHE")}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = filepath.Join(home, "go")
	}
	for _, p := range filepath.SplitList(gopath) {
		out = append(out, filepath.Join(p, "pkg", "mod"))
	}
	for _, p := range []string{".npm", ".yarn", ".pnpm-store", ".bun/install/cache", ".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches"} {
		out = append(out, filepath.Join(home, p))
	}
	return out
}

// agentState is the agent CLIs' own state: sessions, resume and hooks
// keep working inside the wall.
func agentState(home string) []string {
	out := []string{filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"), filepath.Join(home, ".codex")}
	return append(out, os.Getenv("CLAUDE_CONFIG_DIR"), os.Getenv("CODEX_HOME"))
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
