// Package houserules holds no code: its test parses every Go file of the
// module and fails when one breaks a rule of the house that a parser can
// see (ARCHITECTURE.md): no init(), no package-level function variables,
// subprocesses only through gitcore, runner, runner/tmux and
// internal/subproc (git only in gitcore, tmux only in runner/tmux),
// printing only in cli and watch.
package houserules
