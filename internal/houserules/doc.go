// Package houserules holds no code: its test parses every Go file of the
// module and fails when one breaks a rule of the house that a parser can
// see (docs/architecture.md, CONTRIBUTING.md): imports in the drawn direction
// only, no init(), no package-level function variables,
// subprocesses only through gitcore, runner, runner/tmux, wall and
// internal/subproc (git only in gitcore, tmux only in runner/tmux),
// printing only in cli and watch, and sizes a reader can hold (no
// production file over 600 lines, no function over 60 lines or cyclomatic
// complexity 30 but those known_big_functions.txt lists).
package houserules
