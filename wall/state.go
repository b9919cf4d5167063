package wall

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/store"
)

// An agent CLI's state (claude's settings, hooks, commands, agents,
// plugins, CLAUDE.md, MCP servers; codex's config.toml, hooks.json,
// AGENTS.md) is code the user's next claude or codex runs, outside any
// wall. So no agent writes the user's: each invocation gets a copy of
// its own, seeded from the user's when its wall first goes up, kept with
// its sandbox (an `agent send` resumes the conversation it holds), and
// named to the agent by CLAUDE_CONFIG_DIR and CODEX_HOME. The user's own
// directories stay readable and are read-only.

// StateDir is invocation inv's own agent state.
func StateDir(st *store.Store, inv string) string {
	return filepath.Join(st.SandboxDir(inv), "agent-state")
}

// claudeStateDir and CodexDir are the agent's CLAUDE_CONFIG_DIR and
// CODEX_HOME in its state directory.
func claudeStateDir(state string) string { return filepath.Join(state, "claude") }

// CodexDir: see claudeStateDir.
func CodexDir(state string) string { return filepath.Join(state, "codex") }

// claudeSkip and codexSkip are what is not copied of the user's state:
// the CLIs' histories, logs, caches and sessions (large, and nothing the
// agent needs: it writes its own), and claude's own local installation.
var (
	claudeSkip = []string{"projects", "todos", "shell-snapshots", "statsig", "file-history", "debug",
		"logs", "ide", "session-env", "paste-cache", "telemetry", "history.jsonl", "cache",
		"downloads", "local", "backups"}
	codexSkip = []string{"sessions", "archived_sessions", "log", "logs", "history.jsonl", "cache",
		"tmp", ".tmp", "worktrees", "shell_snapshots"}
)

// userState is where the user's claude and codex keep their state, as
// getenv names it: claude's configuration directory and global file,
// codex's home.
func userState(home string, getenv func(string) string) (claudeDir, claudeJSON, codexDir string) {
	claudeDir, claudeJSON = getenv("CLAUDE_CONFIG_DIR"), ""
	if claudeDir == "" {
		// Without CLAUDE_CONFIG_DIR claude's global file is ~/.claude.json;
		// with it, <dir>/.claude.json (copied with the directory).
		claudeDir, claudeJSON = filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json")
	}
	codexDir = getenv("CODEX_HOME")
	if codexDir == "" {
		codexDir = filepath.Join(home, ".codex")
	}
	return claudeDir, claudeJSON, codexDir
}

// seedState makes the invocation's state directory, once: a copy of the
// user's claude and codex state (without histories and sessions). Later
// calls (a follow-up turn) keep what the agent made of it. A copy that
// fails leaves no directory behind, and the next wall tries again.
func seedState(state, home string, getenv func(string) string) error {
	if _, err := os.Lstat(state); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		return err
	}

	tmp, err := os.MkdirTemp(filepath.Dir(state), ".agent-state-")
	if err != nil {
		return err
	}

	claudeDir, claudeJSON, codexDir := userState(home, getenv)
	err = copyTree(claudeDir, claudeStateDir(tmp), claudeSkip)
	if err == nil && claudeJSON != "" {
		err = copyFile(claudeJSON, filepath.Join(claudeStateDir(tmp), ".claude.json"))
	}
	if err == nil {
		err = copyTree(codexDir, CodexDir(tmp), codexSkip)
	}
	if err == nil {
		err = os.Rename(tmp, state)
	}
	if err != nil {
		os.RemoveAll(tmp)
	}

	return err
}

// stateEnv is the environment that names the invocation's own state to
// the agent CLIs.
func stateEnv(state string) []string {
	return []string{"CLAUDE_CONFIG_DIR=" + claudeStateDir(state), "CODEX_HOME=" + CodexDir(state)}
}

// copyTree copies the directory src to dst (made 0700), leaving out the
// top-level entries named in skip: regular files with their permissions,
// symbolic links as links (what they name stays where it is, and as
// writable as it was), nothing else (sockets, pipes). A src that does not
// exist gives an empty dst.
func copyTree(src, dst string, skip []string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}

	fi, err := os.Stat(src)
	if err != nil || !fi.IsDir() {
		return nil
	}

	src = realPath(src)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return nil // an unreadable entry is left out
		}

		if top, _, _ := strings.Cut(rel, string(filepath.Separator)); contains(skip, top) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}

		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}

		return nil
	})
}

// copyFile copies a regular file with its permission bits (a missing src
// copies nothing). It never links: a write through a link would change
// the user's file.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return nil
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}

	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, fi.Mode().Perm()&0o700)
	if err != nil {
		return err
	}

	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}

	return out.Close()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
