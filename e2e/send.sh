# Sourced by e2e/real.sh (after its setup, in the test repository): agent
# send with the real CLIs, offline. Kept in its own file so the other e2e
# sections change independently. Uses real.sh's expect, field, wait_done,
# pass, fail, $work and $AGENCY_DATA_DIR.

# jsonl FILE JS: evaluates JS over the JSON lines of FILE (as `lines`, the
# parsed objects) and prints the result. node is there: the CLIs run on it.
jsonl() {
  node -e 'const fs=require("fs");const lines=fs.readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean).map(l=>{try{return JSON.parse(l)}catch(e){return {}}});const v=(function(){return eval(process.argv[2])})();console.log(v===undefined?"":v)' "$1" "$2"
}

# has VALUE REGEX: VALUE matches the extended REGEX.
has() { printf '%s\n' "$1" | grep -Eq -- "$2"; }

# show_json INV FILE: agent show --json INV into FILE.
show_json() { git agency agent show "$1" --json >"$2" 2>/dev/null; }
# jval FILE EXPR: one value of a JSON object file ("record.usage.cost_usd").
jval() { node -e 'const record=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const v=eval(process.argv[2]);console.log(v===undefined||v===null?"":v)' "$1" "$2"; }

send_case() { # RUNNER
  local r=$1
  echo "== $r: agent send, a follow-up in the same conversation"
  local inv
  inv=$(git agency agent start -w feat --runner "$r" --headless -d --prompt "Create hello.txt" </dev/null) ||
    { fail "agent start"; return; }
  wait_done "$inv" 120 || { fail "the first turn did not end"; return; }
  show_json "$inv" "$work/send-$r.1.json"
  local sid sb
  sid=$(jval "$work/send-$r.1.json" record.session_id)
  sb=$(jval "$work/send-$r.1.json" record.sandbox_path)
  [ -n "$sid" ] && pass "turn 1: session_id $sid" || fail "turn 1: a session_id"
  local logs; logs=$(dirname "$sb")/logs
  if [ "$r" = claude ]; then
    expect "claude got the session id up front (--session-id)" grep -q "\"session_id\":\"$sid\"" "$logs/raw.jsonl"
  fi

  git agency agent send "$inv" --prompt "@@RECALL@@ What was my first prompt?" >"$work/send-$r.out" 2>"$work/send-$r.err" </dev/null
  local rc=$?
  [ "$rc" = 0 ] && pass "agent send exits 0 (followed the turn)" || { fail "agent send exits 0 (got $rc)"; sed 's/^/    /' "$work/send-$r.err"; }
  expect "following printed only the new turn" sh -c "! grep -q 'Done: wrote the file' '$work/send-$r.out'"
  show_json "$inv" "$work/send-$r.2.json"
  expect "turns 2" test "$(jval "$work/send-$r.2.json" record.turns)" = 2
  expect "usage counts the same 2 turns" test "$(jval "$work/send-$r.2.json" record.usage.turns)" = 2
  expect "agent show: 'usage: 2 turns'" sh -c "git agency agent show '$inv' | grep -Eq '^usage: +2 turns, '"
  expect "status finished" test "$(jval "$work/send-$r.2.json" record.status)" = finished
  expect "the same sandbox" test "$(jval "$work/send-$r.2.json" record.sandbox_path)" = "$sb"
  expect "the same session id" test "$(jval "$work/send-$r.2.json" record.session_id)" = "$sid"
  expect "the answer recalls the first prompt" has "$(jval "$work/send-$r.2.json" record.semantic_summary)" \
    'RECALL: first prompt was <<Create hello.txt>>; 2 user prompts in history'
  expect "the runner was told to resume $sid" has "$(jval "$work/send-$r.2.json" 'record.command.join(" ")')" " $sid "
  expect "raw.jsonl holds both turns" test "$(jsonl "$logs/raw.jsonl" 'lines.filter(l=>l.type==="system"&&l.subtype==="init"||l.type==="thread.started").length')" = 2
  expect "stream.jsonl holds both turns" test "$(grep -c '"kind":"session_start"' "$logs/stream.jsonl")" = 2
  expect "hello.txt still in the sandbox" test -f "$sb/hello.txt"

  # Usage: the CLIs' totals on a resumed conversation are cumulative; the
  # record takes the latest once.
  if [ "$r" = claude ]; then
    local c1 c2 last tokens
    c1=$(jval "$work/send-$r.1.json" record.usage.cost_usd)
    c2=$(jval "$work/send-$r.2.json" record.usage.cost_usd)
    last=$(jsonl "$logs/raw.jsonl" 'lines.filter(l=>l.type==="result").pop().total_cost_usd')
    tokens=$(jsonl "$logs/raw.jsonl" 'Object.values(lines.filter(l=>l.type==="result").pop().modelUsage).reduce((s,m)=>s+m.inputTokens+(m.cacheReadInputTokens||0)+(m.cacheCreationInputTokens||0),0)')
    expect "usage: cost is the session's total_cost_usd ($last), counted once" awk -v a="$c2" -v b="$last" 'BEGIN{exit !(a==b)}'
    expect "usage: cost grew over turn 1 ($c1 < $c2)" awk -v a="$c1" -v b="$c2" 'BEGIN{exit !(a<b)}'
    expect "usage: input tokens are modelUsage's total ($tokens)" test "$(jval "$work/send-$r.2.json" record.usage.input_tokens)" = "$tokens"
  else
    local i1 i2 last
    i1=$(jval "$work/send-$r.1.json" record.usage.input_tokens)
    i2=$(jval "$work/send-$r.2.json" record.usage.input_tokens)
    last=$(jsonl "$logs/raw.jsonl" 'lines.filter(l=>l.type==="turn.completed").pop().usage.input_tokens')
    expect "usage: input tokens are the thread's ($last), counted once" test "$i2" = "$last"
    expect "usage: input tokens grew over turn 1 ($i1 < $i2)" test "$i1" -lt "$i2"
  fi
}

deny_case() { # claude, --permission-mode default, a Bash call the mock asks for
  echo "== claude: a permission denial (headless, --permission-mode default)"
  local inv
  inv=$(git agency agent start -w feat --runner claude --headless -d \
    --runner-arg=--permission-mode --runner-arg=default --prompt "@@BASH@@ run the command" </dev/null) ||
    { fail "agent start"; return; }
  wait_done "$inv" 120 || { fail "did not end"; return; }
  show_json "$inv" "$work/deny.json"
  local sb; sb=$(jval "$work/deny.json" record.sandbox_path)
  local logs; logs=$(dirname "$sb")/logs
  expect "raw.jsonl has system/permission_denied for Bash" test "$(jsonl "$logs/raw.jsonl" 'lines.filter(l=>l.type==="system"&&l.subtype==="permission_denied"&&l.tool_name==="Bash").length')" -ge 1
  expect "the command did not run (no bash.txt)" test ! -e "$sb/bash.txt"
  # Nothing changed: the run is blocked on the denial, not ready to land.
  expect "semantic_status blocked" test "$(jval "$work/deny.json" record.semantic_status)" = blocked
  expect "display_status needs input" test "$(jval "$work/deny.json" record.display_status)" = "needs input"
  expect "the summary names the denied Bash" has "$(jval "$work/deny.json" record.semantic_summary)" 'Bash'
  expect "the denial is parsed (no unknown events)" sh -c "! grep -q '\"kind\":\"unknown\"' '$logs/stream.jsonl'"
}

# pane_has INV REGEX SECONDS: waits until the agent's pane shows REGEX.
pane_has() {
  local i
  for i in $(seq $(($3 * 5))); do
    tmux capture-pane -p -t "agency-$1" 2>/dev/null | grep -Eq -- "$2" && return 0
    sleep 0.2
  done
  return 1
}

headed_send_case() { # a headed claude: typed follow-ups, /exit, then a headed resume
  echo "== claude headed: agent send types into the pane, then resumes"
  command -v tmux >/dev/null || { echo "  skip (no tmux)"; return; }
  # Its own tmux server (killed at the end), as e2e/headed.sh does.
  export TMUX_TMPDIR="$work/tmux-send"
  unset TMUX TMUX_PANE
  mkdir -p "$TMUX_TMPDIR"
  # A config dir of its own, onboarded, with the repository trusted (its
  # sandboxes follow), so no first-run dialog stands in the way.
  export CLAUDE_CONFIG_DIR="$work/home/claude-send"
  mkdir -p "$CLAUDE_CONFIG_DIR"
  printf '{"hasCompletedOnboarding": true, "customApiKeyResponses": {"approved": ["sk-mock-key"], "rejected": []}, "projects": {"%s": {"hasTrustDialogAccepted": true}}}\n' \
    "$repo" >"$CLAUDE_CONFIG_DIR/.claude.json"
  local inv
  # Whatever permission mode the repository sets for headed claude, this
  # one may write (the last --permission-mode wins).
  inv=$(git agency agent start -w feat --runner claude -d --runner-arg=--permission-mode --runner-arg=acceptEdits \
    --prompt "Create hello.txt" </dev/null) || { fail "agent start"; tmux kill-server 2>/dev/null; return; }
  if pane_has "$inv" 'Done: wrote the file' 60; then pass "turn 1 done at its prompt"; else fail "turn 1 done at its prompt"; tmux capture-pane -p -t "agency-$inv" | tail -20 | sed 's/^/    /'; fi
  expect "send types a follow-up" git agency agent send "$inv" --prompt "@@RECALL@@ what was my first prompt?"
  if pane_has "$inv" 'RECALL: first prompt was <<Create hello.txt>>; 2 user prompts' 60; then pass "the typed prompt was answered in the same conversation"; else fail "the typed prompt was answered"; fi
  show_json "$inv" "$work/hsend.json"
  expect "turns 2, still running" test "$(jval "$work/hsend.json" 'record.turns + " " + record.status')" = "2 running"
  local sid; sid=$(jval "$work/hsend.json" record.session_id)
  expect "/exit typed: the run finishes" git agency agent send "$inv" -d --prompt /exit
  if wait_done "$inv" 60; then pass "finished after /exit"; else fail "finished after /exit"; fi
  local events n0; events=$(echo "$AGENCY_DATA_DIR"/repos/*/invocations/"$inv"/events.jsonl)
  n0=$(grep -c '"event":"needs_input"' "$events")
  expect "a finished headed run resumes" git agency agent send "$inv" -d --prompt "@@RECALL@@ and now?"
  if pane_has "$inv" 'RECALL: first prompt was <<Create hello.txt>>; 3 user prompts' 60; then pass "resumed headed with its history"; else fail "resumed headed with its history"; fi
  # One needs_input for the resumed turn (its Stop), not one more for the
  # earlier turn's end.
  local i; for i in $(seq 50); do [ "$(grep -c '"event":"needs_input"' "$events")" -gt "$n0" ] && break; sleep 0.2; done
  sleep 2
  expect "resumed: one needs_input for its turn" test "$(grep -c '"event":"needs_input"' "$events")" = $((n0 + 1))
  show_json "$inv" "$work/hsend.json"
  expect "resumed with --resume $sid" has "$(jval "$work/hsend.json" 'record.command.join(" ")')" "--resume $sid"
  expect "turns 3" test "$(jval "$work/hsend.json" record.turns)" = 3
  git agency agent send "$inv" -d --prompt /exit >/dev/null 2>&1
  wait_done "$inv" 60 || { fail "finished after the second /exit"; git agency agent kill "$inv" >/dev/null 2>&1; }
  tmux kill-server 2>/dev/null
}

headed_codex_send_case() { # a headed codex: pasted follow-ups, /quit; killed, then resume --last
  echo "== codex headed: agent send pastes into the pane; a killed run resumes with --last"
  command -v tmux >/dev/null || { echo "  skip (no tmux)"; return; }
  export TMUX_TMPDIR="$work/tmux-xsend"
  unset TMUX TMUX_PANE
  mkdir -p "$TMUX_TMPDIR"
  # The TUI's features, in the user's config. The folder trust and the
  # model notice e2e/headed.sh's headed_codex answered stay in that
  # invocation's own copy of the codex state: this one may ask them again.
  grep -q '^\[features\]' "$CODEX_HOME/config.toml" ||
    printf '\n[features]\nplugins = false\nremote_plugin = false\napps = false\n' >>"$CODEX_HOME/config.toml"
  local inv i
  inv=$(git agency agent start -w feat --runner codex -d --prompt "Create hello.txt" </dev/null) || { fail "agent start"; tmux kill-server 2>/dev/null; return; }
  pane="=agency-$inv:"
  for i in 1 2 3; do
    wait_show semantic_summary '"codex asks.*"' 5 || break
    if screen | grep -q 'Use existing model'; then tmux send-keys -t "$pane" Down; sleep 0.3; fi
    tmux send-keys -t "$pane" Enter
    sleep 1
  done
  if pane_has "$inv" 'Done: wrote the file' 60; then pass "turn 1 done at its prompt"; else fail "turn 1 done at its prompt"; tmux capture-pane -p -t "agency-$inv" | tail -20 | sed 's/^/    /'; fi
  expect "send pastes a follow-up" git agency agent send "$inv" -d --prompt "@@RECALL@@ what was my first prompt?"
  if pane_has "$inv" 'RECALL: first prompt was <<Create hello.txt>>; 2 user prompts' 30; then pass "the pasted prompt was submitted and answered"; else fail "the pasted prompt was submitted and answered"; tmux capture-pane -p -t "agency-$inv" | tail -8 | sed 's/^/    /'; fi
  show_json "$inv" "$work/xsend.json"
  expect "turns 2, usage turns agree" test "$(jval "$work/xsend.json" 'record.turns + " " + (record.usage ? record.usage.turns : 2)')" = "2 2"
  # killed at its prompt: codex never printed its thread id
  git agency agent kill "$inv" >/dev/null 2>&1
  wait_done "$inv" 30 || fail "killed"
  show_json "$inv" "$work/xsend.json"
  expect "no thread id after a kill" test -z "$(jval "$work/xsend.json" record.session_id)"
  expect "send resumes it anyway" git agency agent send "$inv" -d --prompt "@@RECALL@@ and now?"
  if pane_has "$inv" 'RECALL: first prompt was <<Create hello.txt>>; 3 user prompts' 60; then pass "resumed with its history (resume --last)"; else fail "resumed with its history (resume --last)"; fi
  show_json "$inv" "$work/xsend.json"
  expect "the command resumes --last" has "$(jval "$work/xsend.json" 'record.command.join(" ")')" "resume --last"
  expect "/quit sent: the run finishes" git agency agent send "$inv" -d --prompt /quit
  if wait_done "$inv" 30; then pass "finished after /quit"; else fail "finished after /quit"; git agency agent kill "$inv" >/dev/null 2>&1; fi
  show_json "$inv" "$work/xsend.json"
  expect "the thread id from its last screen" has "$(jval "$work/xsend.json" record.session_id)" '^[0-9a-f-]{36}$'
  expect "turns 3" test "$(jval "$work/xsend.json" record.turns)" = 3
  expect "the summary is the resumed turn's, not the first" has "$(jval "$work/xsend.json" record.semantic_summary)" '3 user prompts'
  if grep -q 'cached)' "$AGENCY_DATA_DIR"/repos/*/sandboxes/"$inv"/logs/screen.txt; then
    expect "usage keeps the cached tokens" has "$(jval "$work/xsend.json" record.usage.cached_input_tokens)" '^[1-9][0-9]*$'
  fi
  tmux kill-server 2>/dev/null
  # codex leaves its app-server daemons (binaries under our CODEX_HOME).
  local p
  for p in /proc/[0-9]*; do
    case $(readlink "$p/exe" 2>/dev/null) in "$CODEX_HOME"/*) kill "${p#/proc/}" 2>/dev/null;; esac
  done
}

case ${AGENCY_E2E_ONLY:-claude} in claude)
  send_case claude
  deny_case;;
esac
case ${AGENCY_E2E_ONLY:-headed} in claude|headed)
  (headed_send_case) | tee "$work/hsend.out"
  fails=$((fails + $(grep -c '  FAIL' "$work/hsend.out")));;
esac
case ${AGENCY_E2E_ONLY:-codex} in codex)
  send_case codex;;
esac
case ${AGENCY_E2E_ONLY:-headed} in codex|headed)
  (headed_codex_send_case) | tee "$work/xsend.out"
  fails=$((fails + $(grep -c '  FAIL' "$work/xsend.out")));;
esac
