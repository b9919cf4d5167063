package agency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/git-agency/git-agency/agency/internal/core"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// Project setups declared for other agent tools, in the order they run when
// both are present: Cursor's worktree setup first (it prepares the tree,
// typically copying files from ROOT_WORKTREE_PATH), then Codex's
// environment setup (typically installing dependencies).
const (
	CursorSetupFile = ".cursor/worktrees.json"
	CodexSetupFile  = ".codex/environments/environment.toml"
)

// SetupConfigKey is the user's own setup; it needs no approval.
const SetupConfigKey = core.SetupConfigKey

// SetupApprovedKey holds, in local git config, the sha256 of every project
// setup content the user approved.
const SetupApprovedKey = "agency.setupApproved"

// SetupPart is one declared setup.
type SetupPart struct {
	File   string `json:"file"`
	Script string `json:"script"`
}

// SetupPlan is what runs in a new sandbox before its agent.
type SetupPlan struct {
	// Source: "agency.setup", or the project files, comma-separated.
	Source string      `json:"source"`
	Parts  []SetupPart `json:"parts,omitempty"`
	// Script is exactly what runs (the parts joined), SHA256 its hash.
	Script string `json:"script"`
	SHA256 string `json:"sha256,omitempty"`
	// NeedsApproval: a committed project setup; Approved: its exact
	// content was approved (always true for agency.setup).
	NeedsApproval bool `json:"needs_approval"`
	Approved      bool `json:"approved"`
	// WorkingDiffers lists the setup files whose working copy in the tree
	// read is not what its HEAD commit holds (uncommitted edits): the
	// plan is the committed content, which is what sandboxes get.
	WorkingDiffers []string `json:"working_differs,omitempty"`
}

// ResolveSetup finds the setup for a sandbox made from tree: agency.setup
// when set, else the project's declared setups as tree's HEAD commit holds
// them (what a sandbox made from it gets). nil means none. A malformed
// setup file is E_SETUP_INVALID.
func (a *App) ResolveSetup(ctx context.Context, tree string) (*SetupPlan, error) {
	if v, ok := a.Config.Get(SetupConfigKey); ok && v != "" {
		return &SetupPlan{Source: SetupConfigKey, Script: v, Approved: true}, nil
	}

	var parts []SetupPart
	var differs []string
	t := a.Repo.Tree(tree)
	head, err := a.treeHead(ctx, tree)
	if err != nil {
		return nil, gitErr(err)
	}

	src := setupFiles{ctx: ctx, dir: tree, rev: head, tree: t, differs: &differs}
	if head != "" {
		// Most commits hold neither file: one ls-tree says so for both.
		if src.held, err = t.CommittedPaths(ctx, head, CursorSetupFile, CodexSetupFile); err != nil {
			return nil, gitErr(err)
		}
	}

	for _, read := range []func(setupFiles) (*SetupPart, error){readCursorSetup, readCodexSetup} {
		p, err := read(src)
		if err != nil {
			return nil, err
		}
		if p != nil {
			parts = append(parts, *p)
		}
	}

	if len(parts) == 0 {
		return nil, nil
	}

	plan := &SetupPlan{Parts: parts, NeedsApproval: true, WorkingDiffers: differs}
	var files []string
	var script strings.Builder
	for _, p := range parts {
		files = append(files, p.File)
		if len(parts) > 1 {
			fmt.Fprintf(&script, "# from %s\n", p.File)
		}
		script.WriteString(shellPart(p.Script))
	}

	plan.Source = strings.Join(files, ", ")
	plan.Script = script.String()
	sum := sha256.Sum256([]byte(plan.Script))
	plan.SHA256 = hex.EncodeToString(sum[:])
	approved, err := a.Repo.LocalConfigValues(ctx, SetupApprovedKey)
	if err != nil {
		return nil, gitErr(err)
	}

	plan.Approved = slices.Contains(approved, plan.SHA256)
	return plan, nil
}

// shellPart is one part of the combined /bin/sh setup script. A script
// with its own interpreter line ("#!/usr/bin/env bash") runs as a file
// with that interpreter, as Cursor and Codex would run it; its exact text
// is inside the combined script, so an approval still covers it.
func shellPart(script string) string {
	if !strings.HasSuffix(script, "\n") {
		script += "\n"
	}

	if !strings.HasPrefix(script, "#!") {
		return script
	}

	sum := sha256.Sum256([]byte(script))
	eof := "AGENCY_SETUP_" + hex.EncodeToString(sum[:8])
	return "f=$(mktemp) && cat > \"$f\" <<'" + eof + "'\n" + script + eof + "\n" +
		"chmod 700 \"$f\" && \"$f\"; s=$?; rm -f \"$f\"; [ \"$s\" -eq 0 ] || exit \"$s\"\n"
}

// MinSetupHashPrefix is the shortest --sha256 prefix approve takes: a
// shorter one could be matched by changed content found by trial.
const MinSetupHashPrefix = 12

// ApproveSetup records the sha256 of the setup content tree declares in
// local git config. It returns the plan (nil: nothing to approve).
func (a *App) ApproveSetup(ctx context.Context, tree string, wantSHA string) (*SetupPlan, error) {
	plan, err := a.ResolveSetup(ctx, tree)
	if err != nil || plan == nil || !plan.NeedsApproval {
		return plan, err
	}
	if wantSHA != "" && (len(wantSHA) < MinSetupHashPrefix || strings.Trim(strings.ToLower(wantSHA), "0123456789abcdef") != "") {
		return nil, errs.SetupHashTooShort(wantSHA, MinSetupHashPrefix)
	}
	if wantSHA != "" && !strings.HasPrefix(plan.SHA256, strings.ToLower(wantSHA)) {
		return nil, errs.SetupChanged(plan.SHA256, wantSHA)
	}

	if !plan.Approved {
		if err := a.Repo.LocalConfigAdd(ctx, SetupApprovedKey, plan.SHA256); err != nil {
			return nil, gitErr(err)
		}
		plan.Approved = true
	}

	return plan, nil
}

// sandboxSetup decides what the supervisor runs before the agent: the
// record gets the script and its source, or, for a project setup nobody
// approved, only the note that it did not run.
func (a *App) sandboxSetup(ctx context.Context, rec *store.InvocationRecord) error {
	plan, err := a.ResolveSetup(ctx, rec.SandboxPath)
	if err != nil || plan == nil {
		return err
	}

	if !plan.Approved {
		rec.SetupUnapproved = plan.Source
		return nil
	}

	rec.SetupSource, rec.SetupScript = plan.Source, plan.Script
	return nil
}

// setupFiles reads a tree's setup files as its HEAD commit holds them:
// a sandbox is checked out from that commit, so this is exactly what runs
// in it, whatever uncommitted edits the tree has (and whatever
// sparse-checkout left out of it). A symlink is followed inside the
// commit only; one that leads out of the repository is E_SETUP_INVALID.
// differs collects the files whose working copy in dir is not what the
// commit holds, for `setup show` to say so.
type setupFiles struct {
	ctx     context.Context
	dir     string
	rev     string
	tree    *gitcore.Tree
	differs *[]string
	// held tells, of the setup files asked about at once, whether the
	// commit holds each; one it does not hold is not looked up again.
	held map[string]bool
}

// maxSetupLinks bounds how many symlinks one setup path may go through.
const maxSetupLinks = 8

// read reads rel (slash-separated, from the tree's top); a missing file is
// nil data and no error. file names the setup file the errors are about.
func (f setupFiles) read(file, rel string) ([]byte, error) {
	if f.rev == "" {
		return nil, nil
	}

	name := rel
	for range maxSetupLinks {
		if held, asked := f.held[name]; asked && !held {
			f.noteDiffers(rel, nil)
			return nil, nil
		}

		data, link, ok, err := f.tree.CommittedFile(f.ctx, f.rev, name)
		if err != nil {
			return nil, gitErr(err)
		}

		if !ok {
			if name != rel {
				return nil, errs.SetupInvalid(file, fmt.Errorf("%s is a symlink to %s, which the commit does not hold", rel, name))
			}
			f.noteDiffers(rel, nil)
			return nil, nil
		}

		if !link {
			f.noteDiffers(rel, data)
			return data, nil
		}

		target := string(data)
		next := path.Clean(path.Join(path.Dir(name), target))
		if path.IsAbs(target) || next == ".." || strings.HasPrefix(next, "../") {
			return nil, errs.SetupInvalid(file, fmt.Errorf("%s is a symlink to %s, outside the repository", rel, target))
		}

		name = next
	}

	return nil, errs.SetupInvalid(file, fmt.Errorf("%s: too many levels of symlinks", rel))
}

// noteDiffers records rel when the tree's working copy of it is not data
// (nil: the commit has no such file). The working copy is only compared,
// never run or shown.
func (f setupFiles) noteDiffers(rel string, data []byte) {
	if f.differs == nil {
		return
	}

	work, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(rel)))
	missing := errors.Is(err, fs.ErrNotExist)
	if data == nil && missing || err == nil && data != nil && bytes.Equal(work, data) {
		return
	}
	if _, sparse, _ := f.tree.SparseFile(f.ctx, rel); sparse && missing {
		return // left out by sparse-checkout, not edited
	}

	*f.differs = append(*f.differs, rel)
}

// cursorWorktrees is .cursor/worktrees.json: each key a list of commands,
// or the path of a script (relative to .cursor/).
type cursorWorktrees struct {
	Unix    json.RawMessage `json:"setup-worktree-unix"`
	Default json.RawMessage `json:"setup-worktree"`
}

func readCursorSetup(files setupFiles) (*SetupPart, error) {
	data, err := files.read(CursorSetupFile, CursorSetupFile)
	if data == nil || err != nil {
		return nil, err
	}

	var cw cursorWorktrees
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&cw); err != nil {
		return nil, errs.SetupInvalid(CursorSetupFile, err)
	}

	raw := cw.Unix
	if len(raw) == 0 || string(raw) == "null" {
		raw = cw.Default
	}

	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}

	var cmds []string
	if err := json.Unmarshal(raw, &cmds); err == nil {
		if len(cmds) == 0 {
			return nil, nil
		}
		// Like Cursor: the commands run in order and the first failure
		// stops the setup.
		return &SetupPart{File: CursorSetupFile, Script: "set -e\n" + strings.Join(cmds, "\n") + "\n"}, nil
	}

	var script string
	if err := json.Unmarshal(raw, &script); err != nil || script == "" {
		return nil, errs.SetupInvalid(CursorSetupFile, errors.New("setup-worktree must be a list of commands or the path of a script"))
	}

	rel := path.Clean(path.Join(path.Dir(CursorSetupFile), filepath.ToSlash(script)))
	if filepath.IsAbs(script) || path.IsAbs(script) || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, errs.SetupInvalid(CursorSetupFile, fmt.Errorf("script %q is outside the repository", script))
	}

	body, err := files.read(CursorSetupFile, rel)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return nil, errs.SetupInvalid(CursorSetupFile, fmt.Errorf("script %q: %w (in the commit sandboxes get)", script, fs.ErrNotExist))
	}

	return &SetupPart{File: CursorSetupFile, Script: string(body)}, nil
}

// codexEnvironment is the part of .codex/environments/environment.toml we
// use.
type codexEnvironment struct {
	Setup struct {
		Script string `toml:"script"`
	} `toml:"setup"`
}

func readCodexSetup(files setupFiles) (*SetupPart, error) {
	data, err := files.read(CodexSetupFile, CodexSetupFile)
	if data == nil || err != nil {
		return nil, err
	}

	var env codexEnvironment
	if _, err := toml.Decode(string(data), &env); err != nil {
		return nil, errs.SetupInvalid(CodexSetupFile, err)
	}
	if strings.TrimSpace(env.Setup.Script) == "" {
		return nil, nil
	}

	return &SetupPart{File: CodexSetupFile, Script: env.Setup.Script}, nil
}

// unapprovedSetup reports, for doctor, a project setup in tree that would
// not run because its content was never approved (nil: none).
func (a *App) unapprovedSetup(ctx context.Context, tree string) (*SetupPlan, error) {
	plan, err := a.ResolveSetup(ctx, tree)
	if err != nil || plan == nil || plan.Approved {
		return nil, err
	}
	return plan, nil
}

// checkSetups is doctor's check of project setups: in the current tree and
// in every present integration worktree (where sandboxes are made from), a
// declared setup that is not approved (it will not run) or is malformed.
func (a *App) checkSetups(ctx context.Context, add func(check, level, hint, path, format string, args ...any), wts []store.WorktreeEntry) {
	trees := []string{a.Repo.Toplevel}
	for _, e := range wts {
		if e.Record != nil && e.Record.State == store.StatePresent {
			// (a tree that is gone is reported once, as such, by
			// checkWorktreeRecords)
			if _, err := os.Stat(e.Record.TreePath); err == nil {
				trees = append(trees, e.Record.TreePath)
			}
		}
	}

	seen := map[string]bool{}
	for _, tree := range trees {
		plan, err := a.unapprovedSetup(ctx, tree)
		if err != nil {
			add("setup", LevelProblem, errs.As(err).Hint, tree, "%s", errs.As(err).Msg)
			continue
		}

		if plan == nil || seen[plan.SHA256] {
			continue
		}

		seen[plan.SHA256] = true
		add("setup", LevelWarn, "review it with 'git agency setup show', then 'git agency setup approve'", tree,
			"the setup in %s is not approved: new sandboxes do not run it", plan.Source)
	}
}
