package wall

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A unix socket is a door to whatever listens on it: a Docker daemon runs
// containers for anyone who reaches its socket, an ssh agent signs for
// them. A read-only mount does not close it (connecting is not writing a
// file). Abstract sockets live in the network namespace, which
// agency.isolate.network none replaces; sockets bound to a path are
// listed by the kernel in /proc/net/unix, and under network none the wall
// binds /dev/null over each one that lies outside the sandbox and that the
// user did not allow (agency.isolate.sockets). A socket bound after the
// wall went up is in no list: the user's runtime directories, where the
// user's own daemons bind theirs, are private to the wall under network
// none (Wall.RuntimeDirs); /tmp always is. What is left are the system's
// directories (/run, /var/run), whose daemons' sockets are root's.

// procNetUnix is the kernel's list of unix sockets.
const procNetUnix = "/proc/net/unix"

// boundSockets are the paths of the unix sockets bound in this network
// namespace that still exist as sockets, as read from r (/proc/net/unix).
func boundSockets(r io.Reader) []string {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		if first { // the header
			first = false
			continue
		}

		f := strings.Fields(sc.Text())
		if len(f) < 8 || !strings.HasPrefix(f[7], "/") || seen[f[7]] {
			continue // unbound, or abstract (@name)
		}

		seen[f[7]] = true

		if fi, err := os.Lstat(f[7]); err == nil && fi.Mode().Type() == fs.ModeSocket {
			out = append(out, f[7])
		}
	}

	return out
}

// socketsAllowed resolves agency.isolate.sockets: an absolute path is a
// socket, anything else names an environment variable holding one
// (SSH_AUTH_SOCK).
func socketsAllowed(names []string, getenv func(string) string) []string {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !filepath.IsAbs(n) {
			n = getenv(n)
		}
		if filepath.IsAbs(n) {
			out = append(out, filepath.Clean(n))
		}
	}
	return out
}

// socketMasks are the sockets the wall covers: every bound socket the
// agent could reach (not in a private directory unless a grant shows it)
// outside its sandbox tree and not allowed.
func (w *Wall) socketMasks(grants []Grant) []string {
	if !w.NoNetwork {
		return nil
	}

	f, err := os.Open(procNetUnix)
	if err != nil {
		return nil
	}
	defer f.Close()
	allowed := map[string]bool{}
	for _, p := range w.Sockets {
		allowed[realPath(p)] = true
	}

	var out []string
	for _, s := range boundSockets(f) {
		p := realPath(s)
		if allowed[p] || allowed[s] || inside(p, realPath(w.Sandbox)) || !reachable(p, grants) {
			continue
		}
		out = append(out, p)
	}

	return out
}

// reachable reports whether p is seen inside the wall: outside the
// private directories, or inside a grant that shows it again, and not
// under a hidden grant.
func reachable(p string, grants []Grant) bool {
	seen := true
	for _, d := range privateDirs {
		if inside(p, d) {
			seen = false
		}
	}

	// grants are ordered parents first: the deepest one containing p wins.
	for _, g := range grants {
		if inside(p, g.Path) {
			seen = g.Access != Hidden && g.Access != Private
		}
	}

	return seen
}
