package wall

import (
	"os"
	"os/exec"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// ForProgram is a wall with no sandbox, for checking that program runs
// inside a wall as an agent's would (doctor runs each runner's --version
// in it): the same read-only roots (the program's whole installation,
// agency.isolate.readable), private /tmp, hidden paths, network, sockets
// and build cache; no git directory, branch or agent state writable. It
// runs in the current directory.
func ForProgram(st *store.Store, commonDir string, ws Settings, self, program string) (*Wall, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errs.WallFailed(errs.WallWhy(errs.WallMissing, ""))
	}

	home, _ := os.UserHomeDir()
	w := &Wall{
		Hide:      append(append([]string(nil), ws.Hide...), tmuxSocketDir()),
		NoNetwork: ws.NoNetwork, Bwrap: bwrap, Self: self,
		Sockets: socketsAllowed(ws.Sockets, os.Getenv), NoTerminal: true, MaxProcs: ws.MaxProcs,
	}
	env, err := prepareCaches(st.DataDir, home, os.Getenv)
	if err != nil {
		return nil, errs.WallFailed(err.Error())
	}

	w.Caches, w.Env = []string{cacheDir(st.DataDir)}, env
	w.Visible = visibleRoots(st, commonDir, home, self, &store.InvocationRecord{Command: []string{program}})
	w.Visible = append(append(w.Visible, ws.Readable...), w.Sockets...)
	return w, nil
}
