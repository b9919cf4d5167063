package remote

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/store"
)

// HostConfig is one host's settings (agency.host.<name>.*).
type HostConfig struct {
	Name string
	SSH  string
	// MaxActive is "auto" (the smaller of the host's cores and its free
	// memory divided by 2 GiB) or a number.
	MaxActive string
	LostAfter time.Duration
}

// Host settings' defaults.
const (
	defaultLostAfter = 24 * time.Hour
	// hostAnswerWithin bounds every look at a host a view makes: a host
	// that does not answer reads as unreachable, never waited on (the
	// command itself, started and ended, stays within 5 s under load).
	hostAnswerWithin = 3500 * time.Millisecond
)

// hostNames are the configured hosts, sorted.
func (a *Remote) hostNames() []string {
	var out []string
	for _, n := range a.Config.Subsections("agency.host") {
		if _, ok := a.Config.Get("agency.host." + n + ".ssh"); ok && validHostName(n) {
			out = append(out, n)
		}
	}

	sort.Strings(out)
	return out
}

// validHostName: a host's name names files here (<repo dir>/hosts/<name>.*,
// <data dir>/hosts/<name>.json): letters, digits, '.', '_' and '-', not
// beginning with '.' or '-'.
func validHostName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '.' || name[0] == '-' {
		return false
	}
	return strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

// hostConfigOf reads one host's settings; an unknown host or a destination
// ssh would read as an option is refused.
func (a *Remote) hostConfigOf(name string) (HostConfig, error) {
	if !validHostName(name) {
		return HostConfig{}, errs.HostBadName(name)
	}
	dest, ok := a.Config.Get("agency.host." + name + ".ssh")
	if !ok || dest == "" {
		return HostConfig{}, errs.HostUnknown(name, a.hostNames())
	}
	if err := host.CheckDest(dest); err != nil {
		return HostConfig{}, errs.HostBadDest(name, dest)
	}

	c := HostConfig{Name: name, SSH: dest, MaxActive: "auto", LostAfter: defaultLostAfter}
	if v, ok := a.Config.Get("agency.host." + name + ".maxActive"); ok && v != "auto" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			return HostConfig{}, errs.New(errs.EConfig, "set it to auto or a number of at least 1", "agency.host.%s.maxActive=%q is not auto or a positive number", name, v)
		}
		c.MaxActive = v
	}

	if d, ok := a.Config.Duration("agency.host."+name+".lostAfter", defaultLostAfter); !ok {
		return HostConfig{}, errs.New(errs.EConfig, "set it to a Go duration such as 24h", "agency.host.%s.lostAfter is not a duration", name)
	} else {
		c.LostAfter = d
	}

	return c, nil
}

// DefaultHost is the host a start on worktree goes to without --host:
// agency.worktree.<name>.host, else agency.host.default, else none.
func (a *Remote) DefaultHost(worktreeName string) string {
	if v, ok := a.Config.Get("agency.worktree." + worktreeName + ".host"); ok {
		return v
	}
	v, _ := a.Config.Get("agency.host.default")
	return v
}

// hostOf is the ssh door to the named host.
func (a *Remote) hostOf(name string) (*host.Host, HostConfig, error) {
	c, err := a.hostConfigOf(name)
	if err != nil {
		return nil, c, err
	}
	cfgFile, _ := a.Config.Get("agency.host.sshConfig")
	return &host.Host{Name: name, Dest: c.SSH, ConfigFile: cfgFile, ControlDir: host.ControlDirFor(a.Store.DataDir)}, c, nil
}

// HostHello is what a host's git-agency says of itself (`host-serve hello`).
type HostHello struct {
	Version  string          `json:"version"`
	OS       string          `json:"os"`
	Arch     string          `json:"arch"`
	Cores    int             `json:"cores"`
	MemFree  int64           `json:"mem_free_bytes"`
	Git      string          `json:"git"`
	Tmux     bool            `json:"tmux"`
	Bwrap    bool            `json:"bwrap"`
	Wall     string          `json:"wall"` // "" when it works, else why not
	Runners  map[string]bool `json:"runners"`
	DataDir  string          `json:"data_dir"`
	Running  int             `json:"running"`
	Queued   int             `json:"queued"`
	Mirror   string          `json:"mirror,omitempty"`
	MaxAuto  int             `json:"max_active_auto"`
	HostName string          `json:"hostname"`
}

// HostState is the last known state of a host, kept in
// <data dir>/hosts/<name>.json (a cache: views read it, any look at the
// host rewrites it).
type HostState struct {
	Name      string     `json:"name"`
	Reachable bool       `json:"reachable"`
	CheckedAt string     `json:"checked_at"`
	LastOK    string     `json:"last_ok,omitempty"`
	Since     string     `json:"unreachable_since,omitempty"`
	Error     string     `json:"error,omitempty"`
	Hello     *HostHello `json:"hello,omitempty"`
}

func (a *Remote) hostStatePath(name string) string {
	return filepath.Join(a.Store.DataDir, "hosts", name+".json")
}

// hostStateOf is the cached state of a host (empty when never looked at).
func (a *Remote) hostStateOf(name string) HostState {
	var s HostState
	if err := store.ReadJSON(a.hostStatePath(name), &s); err != nil {
		return HostState{Name: name}
	}
	return s
}

// noteHost records the outcome of a look at a host.
func (a *Remote) noteHost(name string, hello *HostHello, err error) HostState {
	s := a.hostStateOf(name)
	s.Name = name
	now := a.Stamp()
	s.CheckedAt = now
	if err == nil {
		s.Reachable, s.LastOK, s.Since, s.Error = true, now, "", ""
		if hello != nil {
			if hello.Mirror == "" && s.Hello != nil {
				hello.Mirror = s.Hello.Mirror
			}
			s.Hello = hello
		}
	} else {
		if s.Reachable || s.Since == "" {
			s.Since = now
		}
		s.Reachable, s.Error = false, err.Error()
	}

	if os.MkdirAll(filepath.Dir(a.hostStatePath(name)), 0o700) == nil {
		_ = store.WriteJSONCache(a.hostStatePath(name), s)
	}

	return s
}

// hostCall runs the host's git-agency with args (stdin given), bounded by
// hostAnswerWithin unless ctx has a sooner deadline; the state cache
// follows what happened.
func (a *Remote) hostCall(ctx context.Context, h *host.Host, stdin []byte, args ...string) ([]byte, error) {
	res, err := h.Run(ctx, host.RemoteProgram(args...), stdin)
	if err != nil {
		a.noteHost(h.Name, nil, err)
		return nil, err
	}

	if res.ExitCode == 127 {
		return nil, errs.HostNoAgency(h.Name)
	}
	if res.ExitCode != 0 {
		return res.Stdout, errs.HostFailed(h.Name, strings.Join(args, " "), res.ExitCode, string(res.Stderr))
	}

	return res.Stdout, nil
}

// HostRow is one line of `host ls`.
type HostRow struct {
	Config HostConfig
	State  HostState
	// Live: the host answered this time (else State is what was last known).
	Live bool
}

// ListHosts asks every host at once, each bounded by hostAnswerWithin:
// a host that does not answer reads `unreachable since T` from what was
// last known. A read: nothing is written (the fetchers and the commands
// that act keep <data dir>/hosts/<name>.json).
func (a *Remote) ListHosts(ctx context.Context) ([]HostRow, error) {
	names := a.hostNames()
	rows := make([]HostRow, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		c, err := a.hostConfigOf(n)
		if err != nil {
			return nil, err
		}

		rows[i].Config = c
		wg.Add(1)
		go func(i int, n string) {
			defer wg.Done()
			hello, err := a.askHello(ctx, n, hostAnswerWithin)
			st := a.hostStateOf(n)
			rows[i].Live = err == nil && hello != nil
			if rows[i].Live {
				if hello.Mirror == "" && st.Hello != nil {
					hello.Mirror = st.Hello.Mirror
				}
				st.Reachable, st.Since, st.Error, st.Hello = true, "", "", hello
			} else {
				st.Since = unreachableSince(st, a.Stamp())
				st.Reachable = false
			}

			rows[i].State = st
		}(i, n)
	}

	wg.Wait()
	return rows, nil
}

// Hello asks a host's git-agency about itself, bounded by
// hostAnswerWithin; the answer is cached.
func (a *Remote) Hello(ctx context.Context, name string) (*HostHello, error) {
	return a.helloWithin(ctx, name, hostAnswerWithin)
}

// helloWithin is Hello bounded by within: a start or an action, which
// must reach the host anyway, waits longer than a view.
func (a *Remote) helloWithin(ctx context.Context, name string, within time.Duration) (*HostHello, error) {
	hello, err := a.askHello(ctx, name, within)
	a.noteHost(name, hello, err)
	return hello, err
}

// askHello is `host-serve hello`, bounded by within, writing nothing here.
func (a *Remote) askHello(ctx context.Context, name string, within time.Duration) (*HostHello, error) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	res, err := h.Run(ctx, host.RemoteProgram("host-serve", "hello", "--repo-id", a.Store.RepoID), nil)
	switch {
	case err != nil:
		return nil, err
	case res.ExitCode == 127:
		return nil, errs.HostNoAgency(name)
	case res.ExitCode != 0:
		return nil, errs.HostFailed(name, "host-serve hello", res.ExitCode, string(res.Stderr))
	}

	var hello HostHello
	if err := jsonDecode(res.Stdout, &hello); err != nil {
		return nil, errs.HostFailed(name, "host-serve hello", 0, err.Error())
	}

	return &hello, nil
}

// MaxActiveOn is a host's agent limit: its agency.host.<name>.maxActive,
// or for auto what the host computed.
func (c HostConfig) MaxActiveOn(hello *HostHello) int {
	if n, err := strconv.Atoi(c.MaxActive); err == nil {
		return n
	}
	if hello == nil || hello.MaxAuto < 1 {
		return 1
	}
	return hello.MaxAuto
}
