package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/runner"
)

// HostCheck is one line of `host check`.
type HostCheck struct {
	Name   string
	OK     bool
	Detail string
	Hint   string
}

// minHostGit is the oldest git a host may have (merge-tree --write-tree,
// worktree features the sandboxes use).
const minHostGit = "2.38"

// CheckHost is `host check NAME`: ssh, the host's git-agency and its
// version, git ≥ 2.38, bubblewrap, tmux and the runner programs; every
// failure with a hint that works.
func (a *Remote) CheckHost(ctx context.Context, name, version string) ([]HostCheck, error) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return nil, err
	}

	// A doctor, not a view: it waits as long as an action would.
	cctx, cancel := context.WithTimeout(ctx, hostActWithin)
	defer cancel()

	if _, err := h.Run(cctx, "true", nil); err != nil {
		a.noteHost(name, nil, err)
		ssh := "ssh " + h.Dest
		if h.ConfigFile != "" {
			ssh = "ssh -F " + h.ConfigFile + " " + h.Dest
		}
		return []HostCheck{{Name: "ssh", Detail: err.Error(),
			Hint: "make '" + ssh + " true' work without a prompt: the key in ssh-agent (ssh-add), the host in known_hosts (" + ssh + " once); BatchMode is on"}}, nil
	}

	out := []HostCheck{{Name: "ssh", OK: true, Detail: h.Dest}}
	hello, err := a.helloWithin(ctx, name, hostActWithin)
	if err != nil {
		return append(out, HostCheck{Name: "git-agency", Detail: err.Error(), Hint: "git agency host install " + name}), nil
	}

	out = append(out, HostCheck{Name: "version", OK: hello.Version == version, Detail: hello.Version + " there, " + version + " here", Hint: "git agency host install " + name})
	out = append(out, HostCheck{Name: "git", OK: versionAtLeast(hello.Git, minHostGit), Detail: hello.Git, Hint: "install git " + minHostGit + " or newer on the host (Debian 12: apt-get install -t bookworm-backports git)"})
	out = append(out, HostCheck{Name: "bubblewrap", OK: hello.Wall == "", Detail: wallDetail(hello), Hint: "on the host: apt-get install bubblewrap (and allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1); or run unwalled there with agency.isolate off"})
	out = append(out, HostCheck{Name: "tmux", OK: hello.Tmux, Detail: yesNo(hello.Tmux), Hint: "on the host: apt-get install tmux (headed agents need it; --headless ones do not)"})
	return append(out, a.runnerChecks(h, hello)...), nil
}

// runnerChecks are host check's lines for claude and codex: a missing one
// fails only when it is the runner an `agent start` here uses by default
// (agency.defaultRunner, else claude); otherwise the line says so and
// passes, since `--runner` names it only when the user means it.
func (a *Remote) runnerChecks(h *host.Host, hello *HostHello) []HostCheck {
	def := runner.DefaultRunner
	if v, ok := a.Config.Get("agency.defaultRunner"); ok && v != "" {
		def = v
	}

	var out []HostCheck
	for _, r := range []string{"claude", "codex"} {
		c := HostCheck{Name: r, OK: hello.Runners[r], Detail: yesNo(hello.Runners[r]),
			Hint: "install " + r + " on the host and log it in there once (ssh -t " + h.Dest + " " + r + "); see docs/hosts.md"}
		if !c.OK && r != def {
			c.OK, c.Detail = true, "missing (the default runner here is "+def+"; --runner "+r+" needs it there)"
		}
		out = append(out, c)
	}

	return out
}

func wallDetail(h *HostHello) string {
	if h.Wall == "" {
		return "the wall works"
	}
	return h.Wall
}

func yesNo(b bool) string {
	if b {
		return "found"
	}
	return "missing"
}

// versionAtLeast compares dotted versions ("2.39.5" ≥ "2.38").
func versionAtLeast(v, min string) bool {
	a, b := strings.Split(v, "."), strings.Split(min, ".")
	for i := range b {
		if i >= len(a) {
			return false
		}

		x, _ := strconv.Atoi(a[i])
		y, _ := strconv.Atoi(b[i])
		if x != y {
			return x > y
		}
	}

	return true
}

// hostInstallWithin bounds the copy of the program to a host.
const hostInstallWithin = 5 * time.Minute

// InstallOnHost is `host install NAME`: this build of git-agency copied to
// the host's ~/.local/bin/git-agency, only when the host's OS and
// architecture are this build's, written beside and renamed into place,
// then run there with --version, which must say version.
func (a *Remote) InstallOnHost(ctx context.Context, name, version string) (string, error) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return "", err
	}

	ctx, cancel := context.WithTimeout(ctx, hostInstallWithin)
	defer cancel()
	res, err := h.Run(ctx, "uname -sm", nil)
	if err != nil {
		st := a.noteHost(name, nil, err)
		return "", errs.HostUnreachable(name, st.Since, err.Error())
	}

	there := platformOf(string(res.Stdout))
	if here := runtime.GOOS + "/" + runtime.GOARCH; there != here {
		return "", errs.HostInstallMismatch(name, there, here)
	}

	self := runner.AgencyExe()
	bin, err := os.ReadFile(self)
	if err != nil {
		return "", errs.IO("read", self, err)
	}

	script := `set -e; d="$HOME/.local/bin"; mkdir -p "$d"; t="$d/.git-agency.$$"; trap 'rm -f "$t"' EXIT; cat > "$t"; chmod 755 "$t"; "$t" --version >/dev/null; mv -f "$t" "$d/git-agency"; trap - EXIT; "$d/git-agency" --version`
	res, err = h.Run(ctx, script, bin)
	if err != nil {
		st := a.noteHost(name, nil, err)
		return "", errs.HostUnreachable(name, st.Since, err.Error())
	}

	got := strings.TrimSpace(string(res.Stdout))
	if res.ExitCode != 0 || !strings.Contains(got, version) {
		return "", errs.HostFailed(name, "install", res.ExitCode, fmt.Sprintf("%s%s (want version %s)", res.Stderr, got, version))
	}

	a.noteHost(name, nil, nil)
	return "~/" + host.InstallPath, nil
}

// platformOf maps `uname -sm` to Go's GOOS/GOARCH.
func platformOf(uname string) string {
	f := strings.Fields(uname)
	if len(f) < 2 {
		return "unknown"
	}

	goos := strings.ToLower(f[0])
	arch := map[string]string{"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386", "armv7l": "arm"}[f[1]]
	if arch == "" {
		arch = f[1]
	}

	return goos + "/" + arch
}

// hostUnreachable reports whether err is a host that did not answer.
func hostUnreachable(err error) bool {
	var u *host.ErrUnreachable
	var e *errs.Error
	return errors.As(err, &u) || errors.As(err, &e) && e.Code == errs.EHostUnreachable
}
