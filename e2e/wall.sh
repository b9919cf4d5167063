# Sourced by e2e/real.sh (after send.sh: its environment, mock, repository
# and helpers): the real claude and codex inside the wall, with no
# permission flag from the user.
#   - headless claude and codex run a shell command that writes a file and
#     commits it on the sandbox's branch; the commit is owned by the user;
#   - a claude told to write into the integration tree and the user's
#     checkout by absolute path (its Write tool, then its Bash tool) leaves
#     both unchanged;
#   - agency.runner.claude.unattended false gives claude's own prompts back:
#     the same command is denied;
#   - a headed codex with its own sandbox (unattended false) asks to make
#     an edit without it: needs input; approved, the file is written.
# The headed checks (e2e/headed.sh, e2e/send.sh) run inside the same wall.

# walled_commit RUNNER: a headless run that writes and commits by shell.
walled_commit() {
  local r=$1
  echo "== $r: inside the wall, unattended: a shell command writes a file and commits it"
  local inv
  inv=$(git agency agent start -w feat --runner "$r" --headless -d \
    --prompt "@@SHELL@@ echo from-$r > shell-$r.txt && git add shell-$r.txt && git commit -qm 'agent: shell-$r'" </dev/null) ||
    { fail "agent start"; return; }
  wait_done "$inv" 120 || { fail "did not end"; return; }
  show_json "$inv" "$work/wall-$r.json"
  local sb branch; sb=$(jval "$work/wall-$r.json" record.sandbox_path)
  branch=$(jval "$work/wall-$r.json" record.sandbox_branch)
  expect "status finished" test "$(jval "$work/wall-$r.json" record.status)" = finished
  expect "isolation bwrap" test "$(jval "$work/wall-$r.json" record.isolation)" = bwrap
  expect "no permission flag from the user" test -z "$(jval "$work/wall-$r.json" '(record.runner_args||[]).join(" ")')"
  expect "the runner was told to work alone" has "$(jval "$work/wall-$r.json" 'record.command.join(" ")')" \
    '--permission-mode bypassPermissions|--dangerously-bypass-approvals-and-sandbox'
  expect "the file is in the sandbox" grep -qx "from-$r" "$sb/shell-$r.txt"
  expect "the commit is on the sandbox's branch" test "$(git log -1 --format=%s "$branch")" = "agent: shell-$r"
  expect "it holds the file" test "$(git show "$branch:shell-$r.txt")" = "from-$r"
  expect "the sandbox is clean after it" test -z "$(git -C "$sb" status --porcelain)"
  expect "the file and the branch's ref are the user's" test "$(stat -c %u "$sb/shell-$r.txt" "$(git rev-parse --git-common-dir)/refs/heads/$branch" | sort -u)" = "$(id -u)"
}

# escape_case: a claude aims its Write and Bash tools at the integration
# tree and the user's checkout by absolute path.
escape_case() {
  echo "== claude: inside the wall, told to write into the integration tree and the checkout by absolute path"
  local tree; tree=$(git agency worktree path feat)
  local head_tree head_repo
  head_tree=$(git -C "$tree" rev-parse HEAD) head_repo=$(git rev-parse HEAD)
  local inv p
  for p in "@@WRITE@@ $tree/escaped.txt" "@@WRITE@@ $repo/escaped.txt" \
    "@@SHELL@@ echo x > '$tree/escaped.txt'; echo x > '$repo/escaped.txt'; git -C '$tree' commit -q --allow-empty -m escaped"; do
    inv=$(git agency agent start -w feat --runner claude --headless -d --prompt "$p" </dev/null) || { fail "agent start"; continue; }
    wait_done "$inv" 120 || fail "did not end: $p"
    # It tried: the tool ran and failed (nothing was refused before).
    expect "claude's tool ran and failed: ${p%% *}" grep -q '"is_error":true' \
      "$(dirname "$(jval "$work/show.json" record.sandbox_path)")/logs/raw.jsonl"
  done
  expect "the integration tree has no escaped.txt" test ! -e "$tree/escaped.txt"
  expect "the checkout has no escaped.txt" test ! -e "$repo/escaped.txt"
  expect "the integration tree is clean" test -z "$(git -C "$tree" status --porcelain)"
  expect "the integration branch did not move" test "$(git -C "$tree" rev-parse HEAD)" = "$head_tree"
  expect "the checkout's branch did not move" test "$(git rev-parse HEAD)" = "$head_repo"
}

# attended_case: unattended false, the same kind of command is claude's to ask.
attended_case() {
  echo "== claude: agency.runner.claude.unattended false gives its own prompts back"
  git config agency.runner.claude.unattended false
  local inv
  inv=$(git agency agent start -w feat --runner claude --headless -d \
    --prompt "@@SHELL@@ echo x > asked.txt && git add asked.txt && git commit -qm asked" </dev/null) ||
    { fail "agent start"; git config --unset agency.runner.claude.unattended; return; }
  git config --unset agency.runner.claude.unattended
  wait_done "$inv" 120 || { fail "did not end"; return; }
  show_json "$inv" "$work/attended.json"
  local sb; sb=$(jval "$work/attended.json" record.sandbox_path)
  expect "isolation bwrap" test "$(jval "$work/attended.json" record.isolation)" = bwrap
  expect "no unattended argument" sh -c "! printf '%s' '$(jval "$work/attended.json" 'record.command.join(" ")')' | grep -q bypassPermissions"
  expect "the command was denied (no asked.txt)" test ! -e "$sb/asked.txt"
  expect "display_status needs input" test "$(jval "$work/attended.json" record.display_status)" = "needs input"
}

# headed_codex_approval: a headed codex inside the wall with
# agency.runner.codex.unattended false keeps its own sandbox, which cannot
# work inside the wall: its edit fails there and codex asks to make it
# without; that approval screen is needs input, "y" approves, the file is
# written. (By default a headed codex inside the wall runs without its own
# sandbox, and so never needs to ask that.)
headed_codex_approval() {
  echo "== codex headed, inside the wall, unattended false: an approval"
  command -v tmux >/dev/null || { echo "  skip (no tmux)"; return; }
  export TMUX_TMPDIR="$work/tmux-xwall"
  unset TMUX TMUX_PANE
  mkdir -p "$TMUX_TMPDIR"
  git config agency.runner.codex.unattended false
  local inv pane
  inv=$(git agency agent start -w feat --runner codex -d \
    --prompt "@@WRITE@@ approved.txt" </dev/null)
  local rc=$?
  git config --unset agency.runner.codex.unattended
  [ "$rc" = 0 ] || { fail "agent start"; tmux kill-server 2>/dev/null; return; }
  pane="=agency-$inv:"
  if wait_show semantic_summary '"permission: .*"' 60; then
    pass "the approval screen → needs input"
    expect "  … display_status needs input" field "$work/show.json" display_status '"needs input"'
    expect "  … isolation bwrap" field "$work/show.json" isolation '"bwrap"'
    expect "  … nothing ran yet" sh -c "! test -e $AGENCY_DATA_DIR/repos/*/sandboxes/$inv/tree/approved.txt"
    tmux send-keys -t "$pane" y
  else
    fail "the approval screen → needs input"; tmux capture-pane -p -t "$pane" | tail -20 | sed 's/^/    /'
  fi
  if pane_has "$inv" 'Done: wrote the file' 60; then
    pass "approved: the turn ends"
    expect "  … the file is written" sh -c "grep -qx 'hello from mock' $AGENCY_DATA_DIR/repos/*/sandboxes/$inv/tree/approved.txt"
  else
    fail "approved: the turn ends"; tmux capture-pane -p -t "$pane" | tail -20 | sed 's/^/    /'
  fi
  git agency agent kill "$inv" >/dev/null 2>&1
  wait_done "$inv" 30 >/dev/null
  tmux kill-server 2>/dev/null
  local p
  for p in /proc/[0-9]*; do
    case $(readlink "$p/exe" 2>/dev/null) in "$CODEX_HOME"/*) kill "${p#/proc/}" 2>/dev/null;; esac
  done
}

# state_hook_case: a claude's Bash tool writes a SessionStart hook into the
# user's claude settings (by their path) and into its own. Walled, the
# user's settings stay as they were, and the user's next `claude -p`,
# outside any wall, runs no hook; the hook is in the agent's own copy.
# Unwalled, the same prompt changes the user's settings and the user's
# next claude runs the agent's command.
state_hook_case() {
  echo "== claude: a Bash tool writes a SessionStart hook into the user's settings"
  local settings=$CLAUDE_CONFIG_DIR/settings.json saved=$work/settings.saved
  [ -e "$settings" ] && cp "$settings" "$saved"
  local before; before=$(cat "$settings" 2>/dev/null; echo .)
  local hook='{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch '"$work"'/pwned"}]}]}}'
  local cmd="printf '%s' '$hook' > '$settings'; printf '%s' '$hook' > \"\$CLAUDE_CONFIG_DIR/settings.json\"; true"
  local inv
  inv=$(git agency agent start -w feat --runner claude --headless -d --prompt "@@SHELL@@ $cmd" </dev/null) ||
    { fail "agent start"; return; }
  wait_done "$inv" 120 || { fail "did not end"; return; }
  expect "the user's settings are unchanged" test "$(cat "$settings" 2>/dev/null; echo .)" = "$before"
  expect "the agent's own copy has its hook" grep -q SessionStart \
    "$(dirname "$(jval "$work/show.json" record.sandbox_path)")/agent-state/claude/settings.json"
  claude -p "hi" </dev/null >/dev/null 2>&1
  expect "the user's next claude -p ran no hook" test ! -e "$work/pwned"
  git config agency.isolate off
  # unwalled as root, claude bypasses its prompts only with IS_SANDBOX=1
  inv=$(IS_SANDBOX=1 git agency agent start -w feat --runner claude --headless -d \
    --runner-arg=--permission-mode --runner-arg=bypassPermissions --prompt "@@SHELL@@ $cmd" </dev/null)
  git config agency.isolate bwrap
  [ -n "$inv" ] && wait_done "$inv" 120
  expect "unwalled, the hook lands in the user's settings" grep -q SessionStart "$settings"
  claude -p "hi" </dev/null >/dev/null 2>&1
  expect "unwalled, the user's next claude -p runs the agent's hook" test -e "$work/pwned"
  rm -f "$work/pwned" "$settings"
  [ -e "$saved" ] && mv "$saved" "$settings"
}

# codex_tmp_case: codex installed with npm under /tmp (an npm prefix, as
# `npm install -g --prefix /tmp/p @openai/codex` lays it out, its platform
# binary in a sibling package) runs walled, and doctor runs its --version
# inside the wall.
codex_tmp_case() {
  echo "== codex: installed under /tmp (an npm prefix), inside the wall"
  local prefix=$work/prefix mods=$clis/..
  mkdir -p "$prefix/bin" "$prefix/lib/node_modules/@openai"
  # hard links: the same files, at a path under /tmp (never written)
  cp -al "$mods/@openai/codex" "$mods/@openai/codex-linux-x64" "$prefix/lib/node_modules/@openai/" 2>/dev/null ||
    cp -a "$mods/@openai/codex" "$mods/@openai/codex-linux-x64" "$prefix/lib/node_modules/@openai/"
  ln -sf ../lib/node_modules/@openai/codex/bin/codex.js "$prefix/bin/codex"
  git config agency.runner.codex.command "$prefix/bin/codex"
  git agency doctor >"$work/doctor-tmp.out" 2>&1
  expect "doctor runs its --version inside the wall" grep -Eq 'runner codex: codex-cli .* \(inside the wall\)' "$work/doctor-tmp.out"
  local inv
  inv=$(git agency agent start -w feat --runner codex --headless -d --prompt "Create hello.txt" </dev/null) ||
    { fail "agent start"; git config --unset agency.runner.codex.command; return; }
  wait_done "$inv" 120 || fail "did not end"
  git config --unset agency.runner.codex.command
  expect "status finished" field "$work/show.json" status '"finished"'
  expect "isolation bwrap" field "$work/show.json" isolation '"bwrap"'
  expect "the agent wrote hello.txt in its sandbox" grep -qx "hello from mock" "$(jval "$work/show.json" record.sandbox_path)/hello.txt"
}

case ${AGENCY_E2E_ONLY:-claude} in claude)
  walled_commit claude
  escape_case
  attended_case
  state_hook_case;;
esac
case ${AGENCY_E2E_ONLY:-codex} in codex)
  walled_commit codex
  codex_tmp_case;;
esac
case ${AGENCY_E2E_ONLY:-headed} in codex|headed)
  (headed_codex_approval) | tee "$work/xwall.out"
  fails=$((fails + $(grep -c '  FAIL' "$work/xwall.out")));;
esac
