# Sourced by e2e/real.sh (its environment, mock, repository and helpers):
# HEADED real claude and codex in tmux, offline. headed_claude:
#   - the trust question → needs input (read from the screen); Enter trusts;
#   - a permission prompt (--permission-mode default) → needs input, via
#     the injected hooks; "1" approves → hello.txt is written;
#   - the turn ends → needs input at its prompt, with its last message;
#   - /exit → finished, with claude's session id;
#   - agency.notify.command hears needs_input and finished.
# Its own tmux server (TMUX_TMPDIR in the work directory), killed at the end.

# wait_show KEY REGEX SECONDS: `agent show $inv --json` has "KEY": REGEX
# (inv and pane are the caller's).
wait_show() {
  local i
  for i in $(seq $(($3 * 5))); do
    git agency agent show "$inv" --json >"$work/show.json" 2>/dev/null
    field "$work/show.json" "$1" "$2" && return 0
    sleep 0.2
  done
  return 1
}
screen() { tmux capture-pane -p -t "$pane" 2>/dev/null; }

# waiting SUMMARY-REGEX SECONDS DESC: the run comes to show needs input with
# that summary (else the check fails and the screen is printed).
waiting() {
  if wait_show semantic_summary "$1" "$2"; then
    pass "$3"
    expect "  … display_status needs input" field "$work/show.json" display_status '"needs input"'
    return 0
  fi
  fail "$3"; screen | sed 's/^/    /'
  return 1
}

# start_headed RUNNER: a headed run of "Create hello.txt" on a tmux server
# of its own, with a notify command appending to notify.jsonl; sets the
# caller's inv, pane and sb.
start_headed() {
  export TMUX_TMPDIR="$work/tmux"
  unset TMUX TMUX_PANE
  mkdir -p "$TMUX_TMPDIR"
  git config agency.notify.command "cat >> '$work/notify.jsonl'"
  inv=$(git agency agent start -w feat --runner "$1" -d --prompt "Create hello.txt" </dev/null) ||
    { fail "headed $1: agent start"; return 1; }
  pane="=agency-$inv:"
  sb="$AGENCY_DATA_DIR/repos/*/sandboxes/$inv"
  echo "  ($inv)"
}

# end_headed: the notify command and the tmux server go.
end_headed() {
  git config --unset agency.notify.command
  tmux kill-server 2>/dev/null
  unset TMUX_TMPDIR
}

headed_claude() {
  echo "== claude headed: trust, permission prompt, its prompt, /exit, notify"
  command -v tmux >/dev/null || { echo "  skip (no tmux)"; return; }
  # Onboarding done and the mock key approved; the repository NOT trusted.
  cat >"$CLAUDE_CONFIG_DIR/.claude.json" <<JSON
{"hasCompletedOnboarding": true, "customApiKeyResponses": {"approved": ["sk-mock-key"]}}
JSON
  git config --add agency.runner.claude.headedArg --permission-mode
  git config --add agency.runner.claude.headedArg default
  local inv pane sb
  start_headed claude || return

  if waiting '"claude asks whether to trust this folder.*' 30 "trust question → needs input"; then
    # 2.1.330 selects "No, exit" first: move to "Yes, I trust this folder".
    if screen | grep -q '❯ No, exit'; then tmux send-keys -t "$pane" Down; sleep 0.3; fi
    tmux send-keys -t "$pane" Enter
  fi

  if waiting '"permission: Write hello.txt"' 30 "permission prompt → needs input (PermissionRequest hook)"; then
    expect "  … nothing written yet" sh -c "! test -e $sb/tree/hello.txt"
    tmux send-keys -t "$pane" 1
  fi

  if waiting '"Done: wrote the file."' 30 "turn done → needs input at its prompt (Stop hook, last message)"; then
    expect "  … hello.txt written after approval" sh -c "grep -qx 'hello from mock' $sb/tree/hello.txt"
    tmux send-keys -t "$pane" -l /exit
    sleep 0.5 # the slash-command menu opens on "/"; Enter picks /exit
    tmux send-keys -t "$pane" Enter
  fi

  if wait_done "$inv" 30; then
    pass "/exit → ended"
    expect "  … status finished" field "$work/show.json" status '"finished"'
    expect "  … exit_code 0" field "$work/show.json" exit_code 0
    expect "  … semantic_status ready_for_review" field "$work/show.json" semantic_status '"ready_for_review"'
    expect "  … session_id from its hooks" field "$work/show.json" session_id '"[0-9a-f-]{36}"'
  else
    fail "/exit → ended"; screen | sed 's/^/    /'
    git agency agent kill "$inv" >/dev/null 2>&1
  fi
  expect "notify: needs_input (permission)" grep -q '"event":"needs_input","invocation_id":"'"$inv"'".*"summary":"permission: Write' "$work/notify.jsonl"
  expect "notify: finished" grep -q '"event":"finished","invocation_id":"'"$inv"'"' "$work/notify.jsonl"
  expect "notify: one needs_input per entry (trust, permission, turn end)" \
    test "$(grep -c '"event":"needs_input","invocation_id":"'"$inv"'"' "$work/notify.jsonl")" = 3

  # The trust answered in a walled claude stays in its own copy of the
  # claude state (the user's is never written by an agent). Trusted once in
  # the user's own claude (as `claude` run in the checkout records it), the
  # repository's next sandbox asks no trust question and goes straight to
  # its permission prompt: each invocation's copy starts from the user's.
  expect "the sandbox's trust is not in the user's claude state" \
    sh -c "! grep -q hasTrustDialogAccepted '$CLAUDE_CONFIG_DIR/.claude.json'"
  node -e 'const fs=require("fs"),[f,r]=process.argv.slice(1),j=JSON.parse(fs.readFileSync(f,"utf8"));
    j.projects=j.projects||{}; j.projects[r]={...(j.projects[r]||{}),hasTrustDialogAccepted:true};
    fs.writeFileSync(f,JSON.stringify(j))' "$CLAUDE_CONFIG_DIR/.claude.json" "$repo"
  inv=$(git agency agent start -w feat --runner claude -d --prompt "Create hello.txt" </dev/null) ||
    { fail "second headed agent start"; return; }
  pane="=agency-$inv:"
  if wait_show semantic_summary '"permission: Write hello.txt"' 30; then
    pass "trusted once: the next sandbox goes straight to work"
    expect "  … no trust question" sh -c "! grep '\"invocation_id\":\"$inv\"' '$work/notify.jsonl' | grep -q trust"
  else
    fail "trusted once: the next sandbox goes straight to work"; screen | sed 's/^/    /'
  fi
  # agent stop at its permission prompt: C-c does nothing there, and Enter
  # would approve, so no /exit is typed: the session is killed; it ends,
  # recorded stopped, and nothing was approved.
  if git agency agent stop "$inv" >"$work/stop.out" 2>&1 && grep -q ": finished (stopped)$" "$work/stop.out"; then
    pass "agent stop ends a headed claude at its permission prompt"
    git agency agent show "$inv" --json >"$work/show.json"
    expect "  … exit_reason stopped" field "$work/show.json" exit_reason '"stopped"'
    expect "  … display_status stopped" field "$work/show.json" display_status '"stopped"'
    expect "  … nothing approved (no hello.txt)" sh -c "! test -e $AGENCY_DATA_DIR/repos/*/sandboxes/$inv/tree/hello.txt"
  else
    fail "agent stop ends a headed claude at its permission prompt"; sed 's/^/    /' "$work/stop.out"; screen | sed 's/^/    /'
    git agency agent kill "$inv" >/dev/null 2>&1
  fi
  wait_done "$inv" 30 >/dev/null
  # logs of a headed agent: its screen as text, no terminal query
  git agency agent logs "$inv" >"$work/hlogs.out" 2>&1
  expect "agent logs: the screen as text" grep -q 'Create hello.txt' "$work/hlogs.out"
  expect "agent logs: no escape sequence" sh -c "! grep -q \"$(printf '\033')\" '$work/hlogs.out'"

  git config --unset-all agency.runner.claude.headedArg
  end_headed
}

# A HEADED real codex in tmux, offline: its folder-trust question and model
# notice (no state reported yet: read from the screen) → needs input; its
# OSC 7501 states → done is needs input at its prompt; /quit → finished,
# with the thread id and usage from its last screen.
headed_codex() {
  echo "== codex headed: folder trust, model notice, OSC states, /quit"
  command -v tmux >/dev/null || { echo "  skip (no tmux)"; return; }
  # The TUI's background server must see the features exec is given as flags.
  grep -q '^\[features\]' "$CODEX_HOME/config.toml" ||
    printf '\n[features]\nplugins = false\nremote_plugin = false\napps = false\n' >>"$CODEX_HOME/config.toml"
  local inv pane sb
  start_headed codex || return

  if waiting '"codex asks whether to trust this folder"' 40 "folder trust → needs input"; then
    tmux send-keys -t "$pane" Enter
  fi
  # The model notice comes with some versions only.
  if wait_show semantic_summary '"codex asks: .*"' 10; then
    pass "a dialog before any state (model notice) → needs input"
    if screen | grep -q 'Use existing model'; then tmux send-keys -t "$pane" Down; sleep 0.3; fi
    tmux send-keys -t "$pane" Enter
  fi
  if waiting '"Done: wrote the file."' 40 "OSC done → needs input at its prompt, with its last message"; then
    expect "  … hello.txt written" sh -c "grep -qx 'hello from mock' $sb/tree/hello.txt"
    tmux send-keys -t "$pane" -l /quit
    sleep 0.5
    tmux send-keys -t "$pane" Enter
  fi
  if wait_done "$inv" 30; then
    pass "/quit → ended"
    expect "  … status finished" field "$work/show.json" status '"finished"'
    expect "  … semantic_status ready_for_review" field "$work/show.json" semantic_status '"ready_for_review"'
    expect "  … session_id from 'codex resume <id>'" field "$work/show.json" session_id '"[0-9a-f-]{36}"'
    expect "  … usage from its Token usage line" field "$work/show.json" input_tokens '[1-9][0-9]*'
    expect "  … one turn" field "$work/show.json" turns 1
  else
    fail "/quit → ended"; screen | sed 's/^/    /'
    git agency agent kill "$inv" >/dev/null 2>&1
  fi
  expect "notify: needs_input then finished" grep -q '"event":"finished","invocation_id":"'"$inv"'"' "$work/notify.jsonl"
  headed_codex_refused
  headed_codex_bgserver
  end_headed
  # codex starts `codex app-server` daemons (setsid, cwd the sandbox): none
  # may outlive the run (by pid: a binary under our CODEX_HOME, or a cwd in
  # the sandbox). Whatever is left is listed, then killed by its pid.
  local p left=
  for p in /proc/[0-9]*; do
    case "$(readlink "$p/exe" 2>/dev/null) $(readlink "$p/cwd" 2>/dev/null)" in
    "$CODEX_HOME"/* | *" $AGENCY_DATA_DIR"/*/sandboxes/"$inv"/*) left="$left ${p#/proc/}" ;;
    esac
  done
  if [ -z "$left" ]; then
    pass "no codex process (app-server) outlives the run"
  else
    fail "codex processes outlive the run:$left"
    ps -o pid,args -p "${left# }" 2>/dev/null | sed 's/^/    /'
    for p in $left; do kill "$p" 2>/dev/null; done
  fi
}

# headed_codex_refused: a headed codex outside the wall, in its own
# read-only sandbox with no approvals (-s read-only -a never, and
# --no-daemon): its write is
# refused, its screen says nothing of it and its turn ends "Done: wrote the
# file.". The refusal is read from its session log: the turn's end says it
# before the claim, and the ended run is blocked, nothing changed (needs
# input), in show and in the finished notification.
headed_codex_refused() {
  local inv pane sb
  git config agency.isolate off
  # The walled runs before left a background server state this unwalled
  # one cannot take over ("File exists"): it runs without one.
  git config --add agency.runner.codex.headedArg --no-daemon
  git config --add agency.runner.codex.headedArg -s
  git config --add agency.runner.codex.headedArg read-only
  git config --add agency.runner.codex.headedArg -a
  git config --add agency.runner.codex.headedArg never
  inv=$(git agency agent start -w feat --runner codex -d --prompt "Create hello.txt" </dev/null) ||
    { fail "refused write: agent start"; git config agency.isolate bwrap; git config --unset-all agency.runner.codex.headedArg; return; }
  pane="=agency-$inv:"
  sb="$AGENCY_DATA_DIR/repos/*/sandboxes/$inv"
  echo "  ($inv, unwalled, --no-daemon -s read-only -a never)"
  # Outside the wall codex may ask its folder trust or model notice again.
  local i
  for i in 1 2 3; do
    wait_show semantic_summary '"codex asks.*"' 5 || break
    if screen | grep -q 'Use existing model'; then tmux send-keys -t "$pane" Down; sleep 0.3; fi
    tmux send-keys -t "$pane" Enter
    sleep 1
  done
  if waiting '"denied: patch rejected: .*; then: Done: wrote the file."' 40 "refused write → the turn's end says the refusal before the claim"; then
    expect "  … nothing written" sh -c "! test -e $sb/tree/hello.txt"
    tmux send-keys -t "$pane" -l /quit
    sleep 0.5
    tmux send-keys -t "$pane" Enter
  else
    grep -E '"(status|semantic_summary|exit_code|error)"' "$work/show.json" | sed 's/^/    /'
    cat $sb/logs/screen.txt 2>/dev/null | grep -v '^$' | tail -15 | sed 's/^/    /'
  fi
  if wait_done "$inv" 30; then
    expect "refused write: semantic_status blocked" field "$work/show.json" semantic_status '"blocked"'
    expect "  … summary: nothing changed, the refusal" field "$work/show.json" semantic_summary '"nothing changed: denied: patch rejected: .*"'
    expect "  … display_status needs input" field "$work/show.json" display_status '"needs input"'
    expect "  … notify: finished, needs input, nothing changed" grep -q '"event":"finished","invocation_id":"'"$inv"'".*"display_status":"needs input","summary":"nothing changed: denied: patch rejected' "$work/notify.jsonl"
  else
    fail "refused write: /quit → ended"; screen | sed 's/^/    /'
    git agency agent kill "$inv" >/dev/null 2>&1
  fi
  git config --unset-all agency.runner.codex.headedArg
  git config agency.isolate bwrap
}

# headed_codex_bgserver: without the same [features] as its flags, codex's
# TUI stops at "Background server has incompatible feature settings"
# before any state: needs input (from the screen); agent stop ends it.
headed_codex_bgserver() {
  # Inside the wall each run has its own background server, started and
  # ended with it, so there is never one with other features to ask about:
  # the dialog cannot come up. agent_headed_codex_dialogs.txtar replays its
  # real screen (runner/testdata/hx-bgserver.*) through tmux instead.
  if [ "$(git config agency.isolate)" = bwrap ]; then
    echo "  skip: background-server dialog (cannot appear inside the wall; replayed by agent_headed_codex_dialogs.txtar)"
    return
  fi
  cp "$CODEX_HOME/config.toml" "$work/codex-config.toml"
  sed -i -e '/^\[features\]$/d' -e '/^plugins = false$/d' -e '/^remote_plugin = false$/d' -e '/^apps = false$/d' "$CODEX_HOME/config.toml"
  local inv pane
  inv=$(git agency agent start -w feat --runner codex -d --prompt "Create hello.txt" </dev/null) ||
    { fail "background server dialog: agent start"; cp "$work/codex-config.toml" "$CODEX_HOME/config.toml"; return; }
  pane="=agency-$inv:"
  waiting '"codex asks: Background server has incompatible feature settings"' 40 \
    "background-server dialog → needs input"
  if git agency agent stop "$inv" >"$work/stop.out" 2>&1 && grep -q ": finished (stopped)$" "$work/stop.out"; then
    pass "agent stop ends a headed codex in a dialog"
  else
    fail "agent stop ends a headed codex in a dialog"; sed 's/^/    /' "$work/stop.out"; screen | sed 's/^/    /'
    git agency agent kill "$inv" >/dev/null 2>&1
  fi
  wait_done "$inv" 30 >/dev/null
  cp "$work/codex-config.toml" "$CODEX_HOME/config.toml"
}
