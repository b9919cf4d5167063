// Package sshdtest starts a real OpenSSH server for tests: its own host key,
// one authorized test key, 127.0.0.1 on a free port, and a HOME of its own
// for the "host" side (its own data directory and git-agency install). The
// client side gets an ssh config file (for `ssh -F`) with its own known
// hosts and identity: no test ever reads or writes the user's ~/.ssh.
package sshdtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-agency/git-agency/internal/testenv"
)

// Sshd is a running test server.
type Sshd struct {
	Dir string // everything the server and the client use
	// HostHome is the host side's HOME (sessions run with it, cd there).
	HostHome string
	// ClientConfig is the ssh config file a client passes with -F; Alias
	// is its Host entry for this server.
	ClientConfig string
	Alias        string
	Port         int

	t        *testing.T
	cmd      *exec.Cmd
	done     chan struct{}
	sshdCfg  string
	sshdPath string
}

// Start starts a server; the test's cleanup stops it.
func Start(t *testing.T) *Sshd {
	t.Helper()

	// Missing, these skip the test; under CI=true they fail it.
	sshd := testenv.Need(t, "sshd")
	testenv.Need(t, "ssh")
	testenv.Need(t, "ssh-keygen")

	// A short directory: ControlPath sockets and sun_path are 108 bytes.
	dir, err := os.MkdirTemp("", "sshd-")
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { removeDir(dir) })
	s := &Sshd{Dir: dir, HostHome: filepath.Join(dir, "hosthome"), Alias: "testhost", t: t, sshdPath: sshd}
	for _, d := range []string{s.HostHome, filepath.Join(dir, "client"), s.TmuxDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}

	keygen(t, filepath.Join(dir, "host_key"))
	keygen(t, filepath.Join(dir, "client", "id"))
	pub, err := os.ReadFile(filepath.Join(dir, "client", "id.pub"))
	if err != nil {
		t.Fatal(err)
	}

	writeFile(t, filepath.Join(dir, "authorized_keys"), string(pub), 0o600)

	if os.Getuid() == 0 {
		// sshd started as root needs its privilege separation directory
		// (Debian's service makes it at boot).
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}

	s.Port = freePort(t)
	s.writeServerConfig()
	s.Restart()
	hostPub, err := os.ReadFile(filepath.Join(dir, "host_key.pub"))
	if err != nil {
		t.Fatal(err)
	}

	f := strings.Fields(string(hostPub))
	writeFile(t, filepath.Join(dir, "client", "known_hosts"), fmt.Sprintf("[127.0.0.1]:%d %s %s\n", s.Port, f[0], f[1]), 0o600)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}

	s.ClientConfig = filepath.Join(dir, "client", "config")
	writeFile(t, s.ClientConfig, fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  LogLevel ERROR
`, s.Alias, s.Port, u.Username, filepath.Join(dir, "client", "id"), filepath.Join(dir, "client", "known_hosts")), 0o600)
	return s
}

func (s *Sshd) writeServerConfig() {
	s.sshdCfg = filepath.Join(s.Dir, "sshd_config")
	writeFile(s.t, s.sshdCfg, fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PrintMotd no
PermitUserEnvironment no
SetEnv HOME=%s AGENCY_TEST_HOST=1 TMUX_TMPDIR=%s
AcceptEnv none
LogLevel ERROR
MaxStartups 100
MaxSessions 100
`, s.Port, filepath.Join(s.Dir, "host_key"), filepath.Join(s.Dir, "sshd.pid"), filepath.Join(s.Dir, "authorized_keys"), s.HostHome, s.TmuxDir()), 0o600)
}

// Restart starts the server again after Stop (the same port and keys).
func (s *Sshd) Restart() {
	t := s.t
	t.Helper()
	cmd := exec.Command(s.sshdPath, "-D", "-e", "-f", s.sshdCfg)

	// A file, not a pipe: the sessions sshd starts keep its stderr.
	logf, err := os.OpenFile(filepath.Join(s.Dir, "sshd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	errb := logText{filepath.Join(s.Dir, "sshd.log")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}

	s.cmd, s.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(s.done)
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.Port), time.Second)
		if err == nil {
			c.Close()
			return
		}

		select {
		case <-s.done:
			t.Fatalf("sshd exited: %s", errb.String())
		default:
		}

		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on %d: %s", s.Port, errb.String())
		}

		// Polling a port another process opens: no event to wait on.
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the server and drops every connection it holds, as a host
// that goes away does: the listener and each connection's sshd processes
// (they run in sessions of their own) are killed. What the sessions
// started in sessions of their own (a supervisor) lives on.
func (s *Sshd) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}

	select {
	case <-s.done:
		return
	default:
	}

	pids := sshdDescendants(s.cmd.Process.Pid)
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}

	<-s.done
}

// sshdDescendants are the sshd processes below pid (from /proc).
func sshdDescendants(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	name := map[int]string{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}

		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}

		i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if i < 0 || j < i {
			continue
		}

		f := strings.Fields(string(b[j+1:]))
		if len(f) < 2 {
			continue
		}

		pp, _ := strconv.Atoi(f[1])
		parent[p], name[p] = pp, string(b[i+1:j])
	}

	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				if strings.HasPrefix(name[p], "sshd") {
					out = append(out, p)
				}
				break
			}
		}
	}

	return out
}

// removeDir ends the host side's tmux server (headed agents there), if
// any, then every process the host side left (its supervisors and
// fetchers live on by design, in sessions of their own: a test ends what
// it started), and removes the server's directory.
func removeDir(dir string) {
	kill := exec.Command("tmux", "kill-server")
	kill.Env = append(os.Environ(), "TMUX=", "TMUX_TMPDIR="+filepath.Join(dir, "tmux"))
	_ = kill.Run()

	for _, p := range processesUnder(dir) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}

	os.RemoveAll(dir)
}

// processesUnder are the processes whose program or working directory is
// below dir (from /proc).
func processesUnder(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == os.Getpid() {
			continue
		}

		for _, link := range []string{"exe", "cwd"} {
			target, err := os.Readlink(filepath.Join("/proc", e.Name(), link))
			if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
				out = append(out, p)
				break
			}
		}
	}

	return out
}

// logText reads sshd's log for a failure message.
type logText struct{ path string }

func (l logText) String() string {
	b, _ := os.ReadFile(l.path)
	return string(b)
}

// Env is the environment a command on the host side would get: its HOME
// and its own tmux server.
func (s *Sshd) Env() []string {
	return []string{"HOME=" + s.HostHome, "TMUX_TMPDIR=" + s.TmuxDir()}
}

// TmuxDir is the host side's TMUX_TMPDIR: its own tmux server, not the
// machine's, which Stop's cleanup ends.
func (s *Sshd) TmuxDir() string { return filepath.Join(s.Dir, "tmux") }

func keygen(t *testing.T, path string) {
	t.Helper()
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshdtest", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
