package runner

import (
	"os"
	"time"

	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// walled is argv as the invocation runs it: inside its wall when the
// record says it is walled, else unchanged.
func (s *Supervisor) walled(rec *store.InvocationRecord, argv []string) ([]string, error) {
	w, err := s.wallOf(rec)
	if w == nil || err != nil {
		return argv, err
	}
	return w.Command(argv), nil
}

// wallOf is the invocation's wall, nil when it runs unwalled.
func (s *Supervisor) wallOf(rec *store.InvocationRecord) (*wall.Wall, error) {
	return wall.OfRecord(s.Store, s.Repo.CommonDir, s.Config, rec, SelfExe())
}

// readyWait bounds how long a walled headless agent may take to start.
const readyWait = 30 * time.Second

// headlessArgv is the headless runner's argv; walled, with a pipe the
// agent's process writes a byte to once its signals are its own (see
// wall.Exec): the caller gives cmd the returned write end as its first
// extra file, and waits with awaitReady.
func (s *Supervisor) headlessArgv(rec *store.InvocationRecord) (argv []string, ready, readyW *os.File, err error) {
	w, err := s.wallOf(rec)
	if w == nil || err != nil {
		return rec.Command, nil, nil, err
	}
	ready, readyW, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	w.ReadyFD = 3
	return w.Command(rec.Command), ready, readyW, nil
}

// awaitReady waits for the walled agent's byte (or the end of the wall,
// or readyWait), then closes the pipe.
func awaitReady(ready *os.File) {
	if ready == nil {
		return
	}
	ready.SetReadDeadline(time.Now().Add(readyWait))
	ready.Read(make([]byte, 1))
	ready.Close()
}
