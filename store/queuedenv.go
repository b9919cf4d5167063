package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/errs"
)

// QueuedEnvFile is the environment of the `agent start --queue` that
// queued an invocation, in its invocation directory: NUL-separated
// NAME=value entries, mode 0600. The supervisor that starts the queued
// invocation runs with it, not with the environment of whichever process
// drains the queue. It can hold secrets (API keys, tokens), so it lives
// only as long as the invocation is queued: starting it or discarding it
// removes it, and doctor reports (gc removes) one left beside a record
// that is no longer queued. Never part of a record or of any view.
const QueuedEnvFile = "queued-env"

// QueuedEnvPath is the queued environment file of an invocation.
func (s *Store) QueuedEnvPath(inv string) string {
	return filepath.Join(s.InvocationDir(inv), QueuedEnvFile)
}

// WriteQueuedEnv keeps env for a queued invocation (0600, atomically).
func (s *Store) WriteQueuedEnv(inv string, env []string) error {
	var b bytes.Buffer
	for _, kv := range env {
		if bytes.IndexByte([]byte(kv), 0) >= 0 {
			continue
		}
		b.WriteString(kv)
		b.WriteByte(0)
	}
	return WriteFileAtomic(s.QueuedEnvPath(inv), b.Bytes(), 0o600)
}

// ReadQueuedEnv is the kept environment of a queued invocation; ok is
// false when there is none (a record queued by an older release).
func (s *Store) ReadQueuedEnv(inv string) (env []string, ok bool, err error) {
	data, err := os.ReadFile(s.QueuedEnvPath(inv))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, errs.IO("read", s.QueuedEnvPath(inv), err)
	}

	for _, kv := range bytes.Split(data, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}

	return env, true, nil
}

// RemoveQueuedEnv removes the kept environment of an invocation (none is
// not an error).
func (s *Store) RemoveQueuedEnv(inv string) error {
	if err := os.Remove(s.QueuedEnvPath(inv)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.IO("remove", s.QueuedEnvPath(inv), err)
	}
	return nil
}
