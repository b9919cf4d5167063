# Sourced by e2e/real.sh (after e2e/send.sh, in the test repository):
# verified landing with the real CLIs, offline. A red verify is sent back
# to the agent as a follow-up prompt (agent send), and its next finish is
# verified again by its own supervisor. Uses real.sh's expect, wait_done,
# pass, fail, $work and $AGENCY_DATA_DIR, and send.sh's show_json and jval.

# verify_events INV: how many verifies of INV began.
verify_events() { grep -c '"event":"verify_started"' "$AGENCY_DATA_DIR"/repos/*/invocations/"$1"/events.jsonl 2>/dev/null; }

verify_case() { # RUNNER
  local r=$1
  echo "== $r: a red verify reaches the agent as a follow-up; its next finish is verified again"
  # the agent writes hello.txt; the check wants a word it never writes
  git config agency.verify 'echo "checking hello.txt"; grep -q never-written hello.txt'
  git config agency.verify.maxRounds 1
  local inv
  inv=$(git agency agent start -w feat --runner "$r" --headless -d --prompt "Create hello.txt" </dev/null) ||
    { fail "agent start"; return; }
  wait_done "$inv" 120 || { fail "the first turn did not end"; return; }
  git agency agent land --apply --send-back "$inv" >"$work/verify-$r.out" 2>&1
  expect "land refuses: E_VERIFY_FAILED" grep -q 'E_VERIFY_FAILED' "$work/verify-$r.out"
  local dir; dir=$(ls -d "$AGENCY_DATA_DIR"/repos/*/invocations/"$inv")
  expect "the follow-up prompt gives the command" grep -q 'The check `echo "checking hello.txt"; grep -q never-written hello.txt` failed' "$dir/prompt-2.md"
  expect "the follow-up prompt gives the exit status" grep -q '(exit status 1)' "$dir/prompt-2.md"
  expect "the follow-up prompt quotes the log" grep -q '^checking hello.txt$' "$dir/prompt-2.md"
  # the second turn runs, then its supervisor verifies it again
  local i
  for i in $(seq 600); do
    [ "$(verify_events "$inv")" = 2 ] && git agency agent show "$inv" --json 2>/dev/null | grep -q '"verify_status": "failed"' && break
    sleep 0.2
  done
  show_json "$inv" "$work/verify-$r.json"
  expect "turns 2: the agent got the follow-up" test "$(jval "$work/verify-$r.json" record.turns)" = 2
  expect "the second turn finished" test "$(jval "$work/verify-$r.json" record.status)" = finished
  expect "verified again after the second turn" test "$(verify_events "$inv")" = 2
  expect "sent back once (maxRounds 1)" test "$(jval "$work/verify-$r.json" record.verify_rounds)" = 1
  expect "still red: verify_status failed, pending" test "$(jval "$work/verify-$r.json" 'record.verify_status + " " + record.landing_status')" = "failed pending"
  expect "the sandbox is kept" test -f "$(jval "$work/verify-$r.json" record.sandbox_path)/hello.txt"
  git config --unset agency.verify
  git config --unset agency.verify.maxRounds
  git agency agent discard "$inv" >/dev/null 2>&1
}

case ${AGENCY_E2E_ONLY:-claude} in claude) verify_case claude;; esac
case ${AGENCY_E2E_ONLY:-codex} in codex) verify_case codex;; esac
