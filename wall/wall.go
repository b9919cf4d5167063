package wall

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Access is what a process inside the wall may do with a path.
type Access string

// The accesses of a grant.
const (
	// ReadOnly keeps a path visible but unwritable (inside the private
	// /tmp, or over a file of a writable directory).
	ReadOnly Access = "ro"
	// Writable lets the agent change a path.
	Writable Access = "rw"
	// Hidden replaces a path with an empty one.
	Hidden Access = "hide"
	// Private replaces a directory with an empty one of the wall's own,
	// writable (as /tmp is): nothing made there outside after the wall
	// goes up is seen inside.
	Private Access = "private"
)

// Grant is one path of the wall and what may be done with it; Why says
// which rule made it (docs and the container recipe show it).
type Grant struct {
	Path   string `json:"path"`
	Access Access `json:"access"`
	Why    string `json:"why"`
	// From, when set, is what is mounted at Path (else Path itself).
	From string `json:"from,omitempty"`
}

// Wall is what every process of a walled invocation may touch. The host's
// `/` is read-only, /tmp is private, the processes have a PID namespace of
// their own; grants lists the rest. Only the fields are input: the grants
// are worked out from them by grants, the one list shared by the wall,
// the container recipe and the documentation.
type Wall struct {
	// Sandbox is the sandbox tree; GitDir its worktree's git directory
	// (<common>/worktrees/<id>); CommonDir the repository's common git
	// directory; Branch the sandbox's branch (without refs/heads/).
	Sandbox, GitDir, CommonDir, Branch string
	// Shadow, when set, is the sandbox's own git directory (ShadowDir),
	// mounted over CommonDir: see shadowGrants.
	Shadow string
	// Logs is the invocation's own logs directory (the claude hooks
	// append to it from inside).
	Logs string
	// Visible are read-only roots that must stay visible through the
	// private /tmp: the repository, the data directory, HOME, programs.
	Visible []string
	// Caches and AgentState are writable: the user's build caches and the
	// agent CLIs' own state. Extra is agency.isolate.writable.
	Caches, AgentState, Extra []string
	// Hide are paths replaced by empty ones (agency.isolate.hide, the tmux
	// server's socket directory).
	Hide []string
	// NoNetwork cuts the network (agency.isolate.network none).
	NoNetwork bool
	// RuntimeDirs are the user's runtime directories ($XDG_RUNTIME_DIR,
	// /run/user/<uid>), where the user's own daemons bind their sockets,
	// at any time; under NoNetwork each is Private, so that a socket
	// bound there after the wall went up is not reachable either.
	RuntimeDirs []string
	// Bwrap is the bubblewrap program; Self the program started inside
	// the wall before the agent (ExecCmd).
	Bwrap, Self string
	// ReadyFD, when not 0, is a descriptor the agent's process inherits
	// and writes one byte to just before the agent starts.
	ReadyFD int
	// Env is set inside the wall (NAME=value): the agent's own state
	// (CLAUDE_CONFIG_DIR, CODEX_HOME) and the agent cache.
	Env []string
	// Sockets are the unix sockets the user allows under NoNetwork
	// (agency.isolate.sockets); every other one outside the sandbox is
	// covered (see sockets.go).
	Sockets []string
	// NoTerminal takes the agent's controlling terminal away (no TIOCSTI
	// into the terminal it was started from, see Exec); a headed agent
	// keeps its pane.
	NoTerminal bool
	// MaxProcs, when not 0, is the agent's process limit
	// (agency.isolate.maxProcs, RLIMIT_NPROC inside the wall).
	MaxProcs int
}

// wallUID is the user and group id a root user's agent has inside the
// wall (any but 0 will do).
const wallUID = "1000"

// privateDirs are replaced by empty private directories inside the wall.
var privateDirs = []string{"/tmp"}

// grants is the wall's list of paths, parents before children (the order
// in which they are mounted). Paths that do not exist are left out; so is
// a read-only root that is visible anyway.
func (w *Wall) grants() []Grant {
	var out []Grant
	add := func(p string, a Access, why string) {
		if p == "" {
			return
		}
		p = realPath(p)
		if _, err := os.Lstat(p); err != nil {
			return
		}
		out = append(out, Grant{Path: p, Access: a, Why: why})
	}
	for _, p := range w.Visible {
		add(p, ReadOnly, "visible")
	}

	if w.Shadow != "" {
		w.shadowGrants(func(p, from string, a Access, why string) {
			if _, err := os.Lstat(from); err == nil {
				out = append(out, Grant{Path: p, Access: a, Why: why, From: from})
			}
		})
	} else {
		w.gitGrants(add)
	}

	add(w.Sandbox, Writable, "sandbox tree")
	add(filepath.Join(w.Sandbox, ".git"), ReadOnly, "the sandbox's link to its git directory")
	add(w.Logs, Writable, "the invocation's logs")

	for _, p := range w.Caches {
		add(p, Writable, "build cache")
	}

	for _, p := range w.AgentState {
		add(p, Writable, "agent state")
	}

	for _, p := range w.Extra {
		add(p, Writable, "agency.isolate.writable")
	}

	for _, p := range w.Hide {
		add(p, Hidden, "hidden")
	}

	if w.NoNetwork {
		for _, p := range w.RuntimeDirs {
			add(p, Private, "runtime directory")
		}
	}

	return orderGrants(out)
}

// gitGrants are the git files a commit on the sandbox's own branch
// writes: its worktree's git directory (but not the files that tell git
// where the repository is), the object stores (git's, and Git LFS's when
// there is one), and its own loose ref and
// reflog. The directory of the ref is writable (git writes <ref>.lock
// there and renames it); every other entry in it is bound read-only over
// itself. The repository's config, hooks, info, packed-refs and every
// other ref stay read-only.
func (w *Wall) gitGrants(add func(string, Access, string)) {
	common := w.CommonDir
	add(common, ReadOnly, "repository")

	for _, name := range []string{"config", "hooks", "info", "packed-refs", "refs", "logs", "worktrees", "modules"} {
		add(filepath.Join(common, name), ReadOnly, "repository")
	}

	add(w.GitDir, Writable, "worktree git directory")

	for _, name := range []string{"commondir", "gitdir", "config.worktree"} {
		add(filepath.Join(w.GitDir, name), ReadOnly, "worktree git directory's links")
	}

	add(filepath.Join(common, "objects"), Writable, "object store")

	// git-lfs's clean filter (an agent's `git add` of a tracked file)
	// writes the file into it: content-addressed, as objects/ is.
	add(filepath.Join(common, "lfs"), Writable, "Git LFS object store")

	if w.Branch == "" {
		return
	}

	ref := filepath.Join(common, "refs", "heads", filepath.FromSlash(w.Branch))
	dir := filepath.Dir(ref)
	add(dir, Writable, "the sandbox branch's ref directory")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == filepath.Base(ref) || e.Name() == filepath.Base(ref)+".lock" {
			continue
		}
		add(filepath.Join(dir, e.Name()), ReadOnly, "another branch")
	}

	add(filepath.Join(common, "logs", "refs", "heads", filepath.FromSlash(w.Branch)), Writable, "the sandbox branch's reflog")
}

// orderGrants sorts grants by depth, so a path is mounted after every
// path that contains it, and drops read-only roots that need no mount:
// outside every private directory and every writable grant they are
// read-only already.
func orderGrants(in []Grant) []Grant {
	sort.SliceStable(in, func(i, j int) bool { return depth(in[i].Path) < depth(in[j].Path) })
	var out []Grant
	seen := map[Grant]bool{}
	for _, g := range in {
		key := Grant{Path: g.Path, Access: g.Access, From: g.From}
		if seen[key] || g.Access == ReadOnly && g.From == "" && !needsMount(g.Path, out) {
			continue
		}
		seen[key] = true
		out = append(out, g)
	}

	return out
}

// needsMount reports whether a read-only path would be hidden or writable
// without its own mount: it lies in a private directory or in a writable
// grant made before it.
func needsMount(p string, before []Grant) bool {
	for _, d := range privateDirs {
		if inside(p, d) {
			return true
		}
	}
	for _, g := range before {
		if (g.Access == Writable || g.Access == Private) && inside(p, g.Path) {
			return true
		}
	}
	return false
}

func depth(p string) int { return strings.Count(filepath.Clean(p), string(filepath.Separator)) }

// inside reports whether p is dir or lies below it.
func inside(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath is p absolute with its symlinks resolved (as far as it exists).
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// bwrapArgs are bubblewrap's arguments for the wall, up to the command.
func (w *Wall) bwrapArgs() []string {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--unshare-pid", "--unshare-ipc",
		"--die-with-parent",
		"--cap-drop", "ALL",
		"--setenv", "TMPDIR", "/tmp",
	}
	if os.Getuid() == 0 {
		// Root's agent runs as an unprivileged user of a user namespace
		// of its own, mapped to root outside: what it writes is root's,
		// it holds no root privileges inside, and claude will work alone
		// there (it refuses to bypass its permission prompts as root).
		args = append(args, "--unshare-user", "--uid", wallUID, "--gid", wallUID)
	}
	if w.NoNetwork {
		args = append(args, "--unshare-net")
	}

	for _, d := range privateDirs {
		args = append(args, "--tmpfs", d)
	}

	grants := w.grants()
	for _, g := range grants {
		args = append(args, mountArgs(g)...)
	}

	args = append(args, w.hygieneArgs(grants)...)
	return append(args, "--chdir", realPath(w.Sandbox))
}

// hygieneArgs are the wall's arguments past its grants: the sockets it
// covers, and its environment.
func (w *Wall) hygieneArgs(grants []Grant) []string {
	var args []string
	for _, s := range w.socketMasks(grants) {
		args = append(args, "--ro-bind", os.DevNull, s)
	}
	for _, kv := range w.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			args = append(args, "--setenv", k, v)
		}
	}
	return args
}

func mountArgs(g Grant) []string {
	if g.From != "" {
		if g.Access == Writable {
			return []string{"--bind", g.From, g.Path}
		}
		return []string{"--ro-bind", g.From, g.Path}
	}

	switch g.Access {
	case Writable:
		return []string{"--bind", g.Path, g.Path}
	case Private:
		return []string{"--tmpfs", g.Path}
	case Hidden:
		if fi, err := os.Stat(g.Path); err == nil && fi.IsDir() {
			return []string{"--tmpfs", g.Path, "--remount-ro", g.Path}
		}
		return []string{"--ro-bind", os.DevNull, g.Path}
	}

	return []string{"--ro-bind", g.Path, g.Path}
}

// wallShell ignores the signals a stop sends to the runner's process
// group in bubblewrap itself, which would otherwise die of them and take
// the agent with it before it could end on its own; ExecCmd gives the
// agent the default actions back.
const wallShell = `trap '' INT TERM HUP; exec "$@"`

// Command is argv run inside the wall: bubblewrap, then this program's
// ExecCmd, then argv. Started in a process group of its own, a signal
// to that group reaches the agent and everything it started; bubblewrap
// ends when the agent does, and everything left inside ends with it.
// With a process limit that a pids cgroup can enforce (ProcLimitBase),
// the shell first moves into a cgroup of its own (wallShellLimited).
func (w *Wall) Command(argv []string) []string {
	out := []string{"/bin/sh", "-c", wallShell, "sh", w.Bwrap}
	if base := w.procLimitBase(); base != "" {
		SweepProcLimits(base)
		out = []string{"/bin/sh", "-c", wallShellLimited, "sh", base, strconv.Itoa(w.MaxProcs), w.Bwrap}
	}

	out = append(out, w.bwrapArgs()...)
	out = append(out, "--", w.Self, ExecCmd)
	if w.ReadyFD > 2 {
		out = append(out, readyFDFlag, strconv.Itoa(w.ReadyFD))
	}
	if w.MaxProcs > 0 {
		out = append(out, maxProcsFlag, strconv.Itoa(w.MaxProcs))
	}
	if w.NoTerminal {
		out = append(out, noTTYFlag)
	}

	out = append(out, "--")
	return append(out, argv...)
}

// procLimitBase is where w's pids cgroup is made, "" when w has no
// process limit or no cgroup can be made.
func (w *Wall) procLimitBase() string {
	if w.MaxProcs <= 0 {
		return ""
	}
	return ProcLimitBase()
}

// ended removes what w's runs left behind once they are over: the pids
// cgroups of walls whose processes are all gone.
func (w *Wall) ended() {
	SweepProcLimits(w.procLimitBase())
}
