package tidy

import (
	"context"
	"path/filepath"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/wall"
)

// runnerWall is the wall doctor runs each runner's --version in (for
// program, see wall.ForProgram), nil when agents run unwalled here.
func (a *Tidier) runnerWall(ctx context.Context) func(program string) *wall.Wall {
	ws, err := wall.SettingsFromConfig(a.Config)
	if err != nil || ws.Mode == wall.IsolateOff || !wall.Probe(ctx).OK() {
		return nil
	}

	return func(program string) *wall.Wall {
		w, err := wall.ForProgram(a.Store, a.Repo.CommonDir, ws, runner.SelfExe(), program)
		if err != nil {
			return nil
		}
		return w
	}
}

// checkRunnerRuns: the runner's program, found at p, answers --version,
// and, when agents are walled (inWall), answers it inside the wall too: a
// runner whose installation the wall does not show (a package under
// /tmp) is a problem doctor names, not a start that fails later.
func (a *Tidier) checkRunnerRuns(ctx context.Context, add addFinding, inWall func(string) *wall.Wall, name string, spec runner.Spec, p string) {
	outside := spec.Version(ctx, p)
	if outside == "" || inWall == nil {
		if outside == "" {
			outside = filepath.Base(p) + " (version unknown)"
		}
		add("runner", LevelOK, "", p, "runner %s: %s", name, outside)
		return
	}

	inside := ""
	if w := inWall(p); w != nil {
		inside = spec.VersionInside(ctx, p, w)
	}

	if inside == "" {
		add("runner", LevelProblem, "show the rest of its installation to the wall: git config --add agency.isolate.readable <its directory>", p,
			"runner %s: %s, but its --version fails inside the wall: walled agents cannot run it", name, outside)
		return
	}

	add("runner", LevelOK, "", p, "runner %s: %s (inside the wall)", name, inside)
}
