package wall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSeedStateCopiesOnceWithoutHistories(t *testing.T) {
	home := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(home, ".claude", "projects", "p"), 0o755))
	must(t, os.MkdirAll(filepath.Join(home, ".claude", "hooks"), 0o755))
	must(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte("{}"), 0o644))
	must(t, os.WriteFile(filepath.Join(home, ".claude", "hooks", "h.sh"), []byte("#!/bin/sh"), 0o755))
	must(t, os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte("secret"), 0o600))
	must(t, os.WriteFile(filepath.Join(home, ".claude", "projects", "p", "s.jsonl"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"a":1}`), 0o644))
	must(t, os.MkdirAll(filepath.Join(home, ".codex", "sessions"), 0o755))
	must(t, os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("x=1"), 0o644))
	env := func(string) string { return "" }
	state := filepath.Join(t.TempDir(), "sb", "agent-state")
	must(t, seedState(state, home, env))
	for path, mode := range map[string]os.FileMode{
		"claude/settings.json": 0o600, "claude/hooks/h.sh": 0o700, "claude/.credentials.json": 0o600,
		"claude/.claude.json": 0o600, "codex/config.toml": 0o600,
	} {
		fi, err := os.Stat(filepath.Join(state, path))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v, mode %v, want %v", path, err, fi, mode)
		}
	}
	for _, path := range []string{"claude/projects", "codex/sessions"} {
		if _, err := os.Stat(filepath.Join(state, path)); err == nil {
			t.Errorf("%s was copied", path)
		}
	}
	// what the agent made of it stays: a second wall does not seed again
	must(t, os.WriteFile(filepath.Join(state, "claude", "settings.json"), []byte("mine"), 0o600))
	must(t, seedState(state, home, env))
	if b, _ := os.ReadFile(filepath.Join(state, "claude", "settings.json")); string(b) != "mine" {
		t.Errorf("seeded again: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json")); string(b) != "{}" {
		t.Errorf("the user's settings changed: %q", b)
	}
}

func TestSeedStateFollowsConfigDirs(t *testing.T) {
	home, cfg, codex := t.TempDir(), t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(cfg, ".claude.json"), []byte("mine"), 0o600))
	must(t, os.WriteFile(filepath.Join(codex, "auth.json"), []byte("a"), 0o600))
	env := func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": cfg, "CODEX_HOME": codex}[k]
	}
	state := filepath.Join(t.TempDir(), "agent-state")
	must(t, seedState(state, home, env))
	if b, _ := os.ReadFile(filepath.Join(state, "claude", ".claude.json")); string(b) != "mine" {
		t.Errorf(".claude.json = %q", b)
	}
	if _, err := os.Stat(filepath.Join(state, "codex", "auth.json")); err != nil {
		t.Error(err)
	}
	if got := strings.Join(stateEnv(state), " "); !strings.Contains(got, "CLAUDE_CONFIG_DIR="+state+"/claude") {
		t.Errorf("env %s", got)
	}
}

func TestBoundSockets(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln := listenUnix(t, sock)
	defer ln.Close()
	list := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000: 00000002 00000000 00010000 0001 01 1 " + sock + "\n" +
		"0000: 00000002 00000000 00010000 0001 01 2 @abstract\n" +
		"0000: 00000002 00000000 00010000 0001 01 3 " + filepath.Join(dir, "gone.sock") + "\n" +
		"0000: 00000002 00000000 00010000 0001 01 4\n"
	got := boundSockets(strings.NewReader(list))
	if len(got) != 1 || got[0] != sock {
		t.Errorf("boundSockets = %q, want [%s]", got, sock)
	}
	allowed := socketsAllowed([]string{"SSH_AUTH_SOCK", "/run/x.sock", "relative"}, func(k string) string {
		return map[string]string{"SSH_AUTH_SOCK": "/tmp/ssh/agent"}[k]
	})
	if strings.Join(allowed, " ") != "/tmp/ssh/agent /run/x.sock" {
		t.Errorf("socketsAllowed = %q", allowed)
	}
}

func TestPackageRoot(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(root, p)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o755))
		return p
	}
	npm := mk("prefix/lib/node_modules/@openai/codex/bin/codex.js")
	mk("prefix/lib/node_modules/@openai/codex/node_modules/x/index.js")
	bin := filepath.Join(root, "prefix", "bin")
	must(t, os.MkdirAll(bin, 0o755))
	venv := mk("venv/bin/aider")
	mk("venv/pyvenv.cfg")
	for path, want := range map[string]string{
		npm:                               filepath.Join(root, "prefix", "lib"),
		filepath.Join(bin, "codex"):       filepath.Join(root, "prefix"),
		venv:                              filepath.Join(root, "venv"),
		mk("loose/tool"):                  "",
		"/tmp/tool":                       "",
		filepath.Join(root, "x/bin/tool"): "",
	} {
		if got := packageRoot(path); got != want {
			t.Errorf("packageRoot(%s) = %q, want %q", path, got, want)
		}
	}
}

func TestGoProxyPutsTheUsersDownloadsFirst(t *testing.T) {
	home := t.TempDir()
	if p := goProxy(home, func(string) string { return "" }); p != "" {
		t.Errorf("no download cache: %q", p)
	}
	dl := filepath.Join(home, "go", "pkg", "mod", "cache", "download")
	must(t, os.MkdirAll(dl, 0o755))
	if p := goProxy(home, func(string) string { return "" }); p != "file://"+dl+",https://proxy.golang.org,direct" {
		t.Errorf("default: %q", p)
	}
	if p := goProxy(home, func(k string) string { return map[string]string{"GOPROXY": "off"}[k] }); p != "file://"+dl+",off" {
		t.Errorf("off: %q", p)
	}
}
