package gitagency_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-agency/git-agency/cli"
	"github.com/git-agency/git-agency/internal/entry"
	"github.com/git-agency/git-agency/internal/testenv"
	"github.com/git-agency/git-agency/internal/watchmain"
	"github.com/git-agency/git-agency/wall"
)

// binDir holds helper programs the scripts use (the fake agent), built once.
var binDir string

// hostGoCache is the Go build cache of the user running the tests: scripts
// that build Go code share it (AGENCY_TEST_GOCACHE), as sandboxes do.
var hostGoCache string

func TestMain(m *testing.M) {
	testscript.Main(removeBinDir{m}, map[string]func(){
		"git-agency":  func() { os.Exit(entry.Main(os.Args[1:], cli.MainAgency)) },
		"git-sandbox": func() { os.Exit(cli.MainSandbox(os.Args[1:])) },
		"git-agency-watch": func() {
			os.Exit(watchmain.Main(os.Args[1:]))
		},
	})
}

// removeBinDir runs the tests hermetically (testenv.Main) and removes the
// helper directory once every test has run.
type removeBinDir struct{ m *testing.M }

func (r removeBinDir) Run() int {
	code := testenv.Main(r.m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	return code
}

// buildHelpers builds the fake agent once per test binary.
func buildHelpers(t *testing.T) {
	if binDir != "" {
		return
	}
	dir, err := os.MkdirTemp("", "agency-bin-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		hostGoCache = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat("internal/fakeagent"); err == nil {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "fakeagent"), "./internal/fakeagent")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build fakeagent: %v\n%s", err, out)
		}
	}
	// The container recipe of docs/wall.md, as a user saves it.
	if err := saveContainerRecipe("docs/wall.md", filepath.Join(dir, "agency-container")); err != nil {
		t.Fatal(err)
	}
	binDir = dir
}

// saveContainerRecipe writes the script between the container-recipe
// markers of the markdown file doc (its fenced block) to the program out.
func saveContainerRecipe(doc, out string) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	_, rest, ok := strings.Cut(string(b), "<!-- container-recipe: begin -->")
	block, _, ok2 := strings.Cut(rest, "<!-- container-recipe: end -->")
	_, code, ok3 := strings.Cut(block, "```bash\n")
	code, _, ok4 := strings.Cut(code, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		return fmt.Errorf("%s: no container recipe between its markers", doc)
	}
	return os.WriteFile(out, []byte(code), 0o755)
}

func TestScripts(t *testing.T) {
	buildHelpers(t)
	testscript.Run(t, ScriptParams(t, "testdata/scripts"))
}

// ScriptParams is the testscript setup shared by every suite.
func ScriptParams(t *testing.T, dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: false,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup:               setupEnv,
		Condition:           scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"initrepo":   cmdInitrepo,
			"exitcode":   cmdExitcode,
			"jsonfield":  cmdJSONField,
			"waitfor":    cmdWaitfor,
			"stdout2env": cmdStdout2env,
			"chmodro":    cmdChmodRO,
			"httpserve":  cmdHTTPServe,
			"treehash":   cmdTreeHash,
			"unixserve":  cmdUnixServe,
		},
	}
}

func setupEnv(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	gitconfig := "[user]\n\tname = Agency Test\n\temail = test@example.com\n" +
		"[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n" +
		"[advice]\n\tdetachedHead = false\n" +
		// The suites check the host's view of agents (pids, gate files in
		// $WORK): they run unwalled; wall_*.txtar turn the wall on.
		"[agency]\n\tisolate = off\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		return err
	}
	// tmux sockets must have short paths: keep the private server in /tmp.
	tmuxDir, err := os.MkdirTemp("/tmp", "agt-")
	if err != nil {
		return err
	}
	env.Defer(func() {
		// Every server a script started under its private directory (the
		// default one, and any -L NAME), even when the script failed.
		socks, _ := filepath.Glob(filepath.Join(tmuxDir, "tmux-*", "*"))
		for _, sock := range socks {
			cmd := exec.Command("tmux", "-S", sock, "kill-server")
			cmd.Env = append(os.Environ(), "TMUX=")
			cmd.Run()
		}
		os.RemoveAll(tmuxDir)
	})
	// Runs before the tmux servers are killed (defers run in reverse).
	dataDir := filepath.Join(env.WorkDir, "data")
	env.Defer(func() { cleanupScript(env, dataDir) })
	env.Setenv("HOME", home)
	// testscript starts every script from an empty environment (no
	// GIT_CONFIG_GLOBAL or XDG_* of the developer's): HOME's .gitconfig
	// above is the global file, and the XDG directories are the script's.
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	env.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	env.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	env.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env.Setenv("LC_ALL", "C")
	env.Setenv("TZ", "UTC")
	env.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
	env.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
	env.Setenv("AGENCY_DATA_DIR", dataDir)
	env.Setenv("TMUX_TMPDIR", tmuxDir)
	env.Setenv("TMUX", "")
	env.Setenv("EDITOR", "")
	env.Setenv("VISUAL", "")
	env.Setenv("SHELL", "/bin/sh")
	env.Setenv("TERM", "xterm-256color")
	env.Setenv("AGENCY_BIN", binDir)
	env.Setenv("AGENCY_TEST_GOCACHE", hostGoCache)
	// The real CLIs' captured panes and screens, for scripts that replay them.
	if wd, err := os.Getwd(); err == nil {
		env.Setenv("CAPTURES", filepath.Join(wd, "runner", "testdata"))
	}
	env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
	var keys []string
	for _, kv := range env.Vars {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	env.Values["envkeys"] = keys
	return nil
}

// fullEnv is the script's current environment, for programs the harness
// runs itself.
func fullEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range ts.Value("envkeys").([]string) {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// initrepo [dir]: a git repository with one commit on main (README).
func cmdInitrepo(ts *testscript.TestScript, neg bool, args []string) {
	dir := ts.MkAbs(".")
	if len(args) > 0 {
		dir = ts.MkAbs(args[0])
	}
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644))
	for _, a := range [][]string{{"init", "-q"}, {"add", "README"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", a...)
		cmd.Dir = dir
		cmd.Env = fullEnv(ts)
		if out, err := cmd.CombinedOutput(); err != nil {
			ts.Fatalf("git %v: %v\n%s", a, err, out)
		}
	}
}

// exitcode N prog args...: run prog, expect exit status N (stdout and
// stderr are kept for the next stdout/stderr check).
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if (got == want) == neg {
		ts.Fatalf("%s exited %d, want %s%d", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// jsonfield FILE|stdout PATH VALUE: the JSON value at a dotted path
// (array indexes as numbers, "#" for length) equals VALUE (strings
// unquoted, null as "null"). VALUE may be ~regexp.
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonfield FILE|stdout PATH VALUE")
	}
	got, err := jsonLookup(ts, args[0], args[1])
	if err != nil {
		ts.Fatalf("%v", err)
	}
	if matchValue(args[2], got) == neg {
		ts.Fatalf("%s %s = %q, want %s%q", args[0], args[1], got, map[bool]string{true: "not ", false: ""}[neg], args[2])
	}
}

func matchValue(want, got string) bool {
	if strings.HasPrefix(want, "~") {
		return regexp.MustCompile("(?m)" + want[1:]).MatchString(got)
	}
	return want == got
}

func jsonLookup(ts *testscript.TestScript, src, path string) (string, error) {
	var data []byte
	if src == "stdout" {
		data = []byte(ts.ReadFile("stdout"))
	} else {
		b, err := os.ReadFile(ts.MkAbs(src))
		if err != nil {
			return "", err
		}
		data = b
	}
	v, err := jsonValue(data, path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", src, err)
	}
	return v, nil
}

// jsonValue returns the value at a dotted path of a JSON document.
func jsonValue(data []byte, path string) (string, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return "", err
	}
	if path != "." {
		for _, p := range strings.Split(path, ".") {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				if p == "#" {
					v = float64(len(x))
					continue
				}
				i, err := strconv.Atoi(p)
				if err != nil || i < 0 || i >= len(x) {
					return "", fmt.Errorf("%s: bad index %q", path, p)
				}
				v = x[i]
			default:
				v = nil
			}
		}
	}
	switch x := v.(type) {
	case nil:
		return "null", nil
	case string:
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	default:
		b, _ := json.Marshal(x)
		return string(b), nil
	}
}

// waitfor [-t 30s] CONDITION: poll until it holds, with a deadline.
//
//	waitfor file PATH                 PATH exists
//	waitfor nofile PATH               PATH does not exist
//	waitfor grep REGEXP FILE          FILE's content matches
//	waitfor json FILE PATH VALUE      as jsonfield
//	waitfor run REGEXP prog args...   prog's stdout matches (prog from PATH)
//	waitfor status INV VALUE          `git-agency agent show INV --json` has
//	                                  status VALUE (json-status is an alias)
//	waitfor field INV PATH VALUE      the same for any field of that JSON
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	timeout := 30 * time.Second
	if len(args) > 1 && args[0] == "-t" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		timeout, args = d, args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: waitfor [-t D] file|nofile|grep|json|run ...")
	}
	check := func() (bool, string) {
		switch args[0] {
		case "file":
			_, err := os.Stat(globOne(ts, args[1]))
			return err == nil, "no " + args[1]
		case "nofile":
			_, err := os.Stat(ts.MkAbs(args[1]))
			return os.IsNotExist(err), args[1] + " exists"
		case "grep":
			b, _ := os.ReadFile(globOne(ts, args[2]))
			return regexp.MustCompile("(?m)" + args[1]).Match(b), fmt.Sprintf("%s does not match %q:\n%s", args[2], args[1], b)
		case "json":
			got, err := jsonLookup(ts, args[1], args[2])
			return err == nil && matchValue(args[3], got), fmt.Sprintf("%s %s = %q (%v)", args[1], args[2], got, err)
		case "status", "json-status", "field":
			path, want := "status", args[2]
			if args[0] == "field" {
				path, want = args[2], args[3]
			}
			cmd := exec.Command("git-agency", "agent", "show", args[1], "--json")
			cmd.Dir = ts.MkAbs(".")
			cmd.Env = fullEnv(ts)
			out, err := cmd.Output()
			if err != nil {
				return false, fmt.Sprintf("agent show %s: %v", args[1], err)
			}
			got, err := jsonValue(out, path)
			return err == nil && matchValue(want, got), fmt.Sprintf("%s = %q (%v)", path, got, err)
		case "run":
			cmd := exec.Command(args[2], args[3:]...)
			cmd.Dir = ts.MkAbs(".")
			cmd.Env = fullEnv(ts)
			var out bytes.Buffer
			cmd.Stdout = &out
			cmd.Run()
			return regexp.MustCompile("(?m)" + args[1]).Match(out.Bytes()), fmt.Sprintf("%s output does not match %q:\n%s", args[2], args[1], out.String())
		}
		ts.Fatalf("waitfor: unknown condition %q", args[0])
		return false, ""
	}
	deadline := time.Now().Add(timeout)
	for {
		ok, why := check()
		if ok != neg {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor %s: timed out after %s: %s", strings.Join(args, " "), timeout, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// globOne expands a path pattern to its first match (or the path itself).
func globOne(ts *testscript.TestScript, pattern string) string {
	p := ts.MkAbs(pattern)
	if m, _ := filepath.Glob(p); len(m) > 0 {
		return m[0]
	}
	return p
}

// stdout2env VAR [JSONPATH]: set VAR to the last command's stdout,
// trimmed, or to the value at JSONPATH of stdout parsed as JSON.
// stdout2env -first VAR takes the first line only.
func cmdStdout2env(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 2 && args[0] == "-first" {
		first, _, _ := strings.Cut(ts.ReadFile("stdout"), "\n")
		ts.Setenv(args[1], strings.TrimSpace(first))
		return
	}
	switch len(args) {
	case 1:
		ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
	case 2:
		v, err := jsonLookup(ts, "stdout", args[1])
		ts.Check(err)
		ts.Setenv(args[0], v)
	default:
		ts.Fatalf("usage: stdout2env VAR [JSONPATH]")
	}
}

// chmodro PATH: make a directory read-only (for fault injection).
func cmdChmodRO(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		mode := os.FileMode(0o555)
		if neg {
			mode = 0o755
		}
		ts.Check(os.Chmod(ts.MkAbs(a), mode))
	}
}

// scriptCondition adds [file:PATH] (PATH exists) to testscript's built-in
// conditions, [root] (running as root: permissions do not bind) and
// [proclimit] (a walled agent's process limit holds here, wall.ProcLimitEnforced),
// [stress] (AGENCY_STRESS is set: `make stress` runs the long variants), so a script can skip, with a reason, when a system file it
// needs (git's bash completion, say) is missing (as [need-file:PATH], a
// file CI installs: then it fails). [need:PROG] is PROG on
// PATH, for the tools CI installs (testenv.Tools): false when missing, so
// that the script skips, but under CI=true a missing PROG fails the script.
func scriptCondition(cond string) (bool, error) {
	if prog, ok := strings.CutPrefix(cond, "need:"); ok {
		p, err := testenv.Look(prog)
		return p != "", err
	}
	if path, ok := strings.CutPrefix(cond, "need-file:"); ok {
		return testenv.HaveFile(path)
	}
	if path, ok := strings.CutPrefix(cond, "file:"); ok {
		_, err := os.Stat(path)
		return err == nil, nil
	}
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	if cond == "stress" {
		return os.Getenv("AGENCY_STRESS") != "", nil
	}
	if cond == "proclimit" {
		return wall.ProcLimitEnforced(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
