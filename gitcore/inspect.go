package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// Location is where a directory sits in some repository.
type Location struct {
	Toplevel  string // the worktree's root
	CommonDir string // absolute, symlinks resolved
	Bare      bool
}

// locate tells which repository and worktree dir belongs to, ignoring what
// git exported to us (GIT_DIR and friends): it looks at dir only. ok is
// false when dir is in no repository (or inside a .git directory).
func locate(ctx context.Context, r CommandRunner, dir string) (loc Location, ok bool, err error) {
	if r == nil {
		r = ExecRunner{}
	}

	res, err := r.Run(ctx, Cmd{Dir: dir, Env: cleanEnv(os.Environ(), "GIT_OPTIONAL_LOCKS=0"),
		Args: []string{"rev-parse", "--is-bare-repository", "--git-common-dir", "--show-toplevel"}})
	if err != nil {
		if exitCode(err) == 128 {
			return loc, false, nil
		}
		return loc, false, err
	}

	lines := strings.Split(strings.TrimRight(string(res.Stdout), "\n"), "\n")
	if len(lines) < 2 {
		return loc, false, nil
	}

	loc.Bare = lines[0] == "true"
	common := lines[1]
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	if resolved, err := filepath.EvalSymlinks(common); err == nil {
		common = resolved
	}

	loc.CommonDir = filepath.Clean(common)
	if len(lines) < 3 || lines[2] == "" {
		return loc, false, nil
	}

	loc.Toplevel = lines[2]
	return loc, true, nil
}
