#!/usr/bin/env bash
# Installs the real Claude Code (@anthropic-ai/claude-code) and Codex
# (@openai/codex) CLIs with npm into a cache directory and prints the bin
# directory to put on PATH. The versions are pinned to the ones the e2e
# checks were written against; re-running is a no-op once exactly those are
# installed, and installs them again otherwise.
#   AGENCY_E2E_CLIS   the cache directory (default ~/.cache/agency-real-clis)
#   CLAUDE_VERSION    npm version of @anthropic-ai/claude-code (default 2.1.330)
#   CODEX_VERSION     npm version of @openai/codex (default 0.169.0)
set -eu
dir=${AGENCY_E2E_CLIS:-$HOME/.cache/agency-real-clis}
claude_version=${CLAUDE_VERSION:-2.1.330}
codex_version=${CODEX_VERSION:-0.169.0}
# installed PACKAGE: the version of PACKAGE in the cache ("" when absent).
installed() {
  sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$dir/node_modules/$1/package.json" 2>/dev/null | head -1
}
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/claude" ] || [ ! -x "$dir/node_modules/.bin/codex" ] ||
  [ "$(installed @anthropic-ai/claude-code)" != "$claude_version" ] ||
  [ "$(installed @openai/codex)" != "$codex_version" ]; then
  command -v npm >/dev/null || { echo "e2e: npm is needed to install the real CLIs" >&2; exit 1; }
  echo "e2e: installing claude $claude_version and codex $codex_version into $dir (about 640 MB)" >&2
  (cd "$dir" && npm install --silent --no-audit --no-fund --save-exact \
    "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version" >&2)
fi
for p in "@anthropic-ai/claude-code $claude_version" "@openai/codex $codex_version"; do
  set -- $p
  [ "$(installed "$1")" = "$2" ] || { echo "e2e: $1 is $(installed "$1"), not $2" >&2; exit 1; }
done
echo "$dir/node_modules/.bin"
