package gitcore

import (
	"context"
	"os"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
)

// Init makes a repository at dir (`git init -q`): a host's mirror of a
// repository whose agents run there.
func Init(ctx context.Context, r CommandRunner, dir string) error {
	if r == nil {
		r = ExecRunner{}
	}
	_, err := r.Run(ctx, Cmd{Dir: dir, Args: []string{"init", "-q", "-b", "agency-mirror", dir}, Pin: pinned, Env: CleanEnv(os.Environ())})
	return err
}

// PushOver pushes refspecs to url with sshCommand as git's ssh
// (GIT_SSH_COMMAND): the host's one connection. git sends only what the
// other side lacks.
func (r *Repo) PushOver(ctx context.Context, sshCommand, url string, refspecs ...string) error {
	args := append([]string{"push", "--quiet", "--no-verify", url}, refspecs...)
	_, err := r.exec(ctx, r.Toplevel, []string{"GIT_SSH_COMMAND=" + sshCommand, "GIT_SSH_VARIANT=ssh"}, nil, args...)
	return err
}

// FetchOver fetches refspecs from url over sshCommand, without tags and
// without touching FETCH_HEAD; uploadPack, when not "", is the program run
// on the other side instead of git-upload-pack. Every object received is
// checked (fetch.fsckObjects): what a host sends is written by its agents,
// and a malformed object (a tree entry named .git, say) is refused before
// it enters the object store, whatever the user's configuration says.
func (r *Repo) FetchOver(ctx context.Context, sshCommand, url, uploadPack string, refspecs ...string) error {
	args := []string{"-c", "fetch.fsckObjects=true", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc"}
	if uploadPack != "" {
		args = append(args, "--upload-pack="+uploadPack)
	}
	args = append(append(args, url), refspecs...)
	_, err := r.exec(ctx, r.Toplevel, []string{"GIT_SSH_COMMAND=" + sshCommand, "GIT_SSH_VARIANT=ssh"}, nil, args...)
	return err
}

// LocalConfigReplace sets key in the local configuration to values
// (every old value removed first).
func (r *Repo) LocalConfigReplace(ctx context.Context, key string, values []string) error {
	if _, err := r.run(ctx, "config", "--local", "--unset-all", key); err != nil && ExitCode(err) != 5 {
		return err
	}
	for _, v := range values {
		if err := r.LocalConfigAdd(ctx, key, v); err != nil {
			return err
		}
	}
	return nil
}

// HasCommit reports whether rev names a commit in the object database.
func (r *Repo) HasCommit(ctx context.Context, rev string) bool {
	_, err := r.query(ctx, "cat-file", "-e", rev+"^{commit}")
	return err == nil
}

// GlobalConfigValue is key's value in the configuration outside any
// repository (global and system files); "" when unset.
func GlobalConfigValue(ctx context.Context, key string) (string, error) {
	// Read from git's files when they say it all (every host-serve call
	// asks: a git process is a tenth of a live view's answer).
	if entries, ok := configfile.User(); ok {
		v, _ := configfile.Last(entries, canonKey(key))
		return v, nil
	}

	res, err := ExecRunner{}.Run(ctx, Cmd{Dir: os.TempDir(), Args: []string{"config", "--get", key}, Env: CleanEnv(os.Environ())})
	if err != nil {
		if ExitCode(err) == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(res.Stdout)), nil
}

// Matching is every key the keep function accepts, with all its values
// in order (keys as git wrote them).
func (c *Config) Matching(keep func(key string) bool) map[string][]string {
	out := map[string][]string{}
	if c == nil {
		return out
	}
	for _, e := range c.entries {
		if keep(e.Key) {
			k := canonKey(e.Key)
			out[k] = append(out[k], e.Value)
		}
	}
	return out
}
