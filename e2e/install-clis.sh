#!/usr/bin/env bash
# Installs the real Claude Code (@anthropic-ai/claude-code) and Codex
# (@openai/codex) CLIs with npm into a cache directory and prints the bin
# directory to put on PATH. Re-running is a no-op once both are there.
#   AGENCY_E2E_CLIS   the cache directory (default ~/.cache/agency-real-clis)
#   CLAUDE_VERSION / CODEX_VERSION   npm versions (default: latest)
set -eu
dir=${AGENCY_E2E_CLIS:-$HOME/.cache/agency-real-clis}
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/claude" ] || [ ! -x "$dir/node_modules/.bin/codex" ]; then
  command -v npm >/dev/null || { echo "e2e: npm is needed to install the real CLIs" >&2; exit 1; }
  echo "e2e: installing the claude and codex CLIs into $dir (about 640 MB)" >&2
  (cd "$dir" && npm install --silent --no-audit --no-fund \
    "@anthropic-ai/claude-code@${CLAUDE_VERSION:-latest}" "@openai/codex@${CODEX_VERSION:-latest}" >&2)
fi
echo "$dir/node_modules/.bin"
