#!/usr/bin/env bash
# make e2e-real: the built-in claude and codex runners end to end with the
# REAL CLIs, fully offline.
#
# Installs @anthropic-ai/claude-code and @openai/codex with npm into a cache
# directory (install-clis.sh), starts the project's mock model server
# (internal/mockllm/cmd/agency-mockllm, 127.0.0.1 only), and in a temporary
# repository runs `git agency agent start --runner claude|codex --headless`,
# checking the file the agent wrote, raw.jsonl, stream.jsonl, the status, the
# usage summary, that a model server that never answers (the mock's
# /hang/ prefix) ends in exit_reason timeout instead of a hang, (e2e/send.sh)
# that `agent send` continues a finished run's conversation in its sandbox
# with the usage counted once, and a claude permission denial, and
# (e2e/wall.sh) that inside the wall, with no permission flag from the user,
# both commit from their shell tools and a write by absolute path changes
# nothing outside the sandbox, and (e2e/projects.sh) that a Python and a
# JavaScript project made ready with docs/ready-sandboxes.md's setups hold
# a test-breaking claude back at verify and land the fixed one. Every agent
# runs walled (agency.isolate bwrap).
#
# Nothing here talks to the network except npm (once, to install). HOME,
# the CLIs' config dirs and the data dir are all inside a temp directory.
#   AGENCY_E2E_CLIS   where the CLIs are installed (default ~/.cache/agency-real-clis)
#   AGENCY_E2E_KEEP=1 keep the temp directory for inspection
#   AGENCY_E2E_ONLY=claude|codex|headed|projects|host   run one runner (or the
#                     headed checks, the Python and JavaScript projects, or
#                     both runners on a loopback ssh host: e2e/host.sh) only
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
clis=$("$root/e2e/install-clis.sh") || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/agency-e2e.XXXXXX")
mock=
cleanup() {
  [ -n "$mock" ] && kill "$mock" 2>/dev/null && wait "$mock" 2>/dev/null
  if [ "${AGENCY_E2E_KEEP:-}" = 1 ]; then echo "e2e: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$work/bin" "$work/home"
(cd "$root" && go build -o "$work/bin/git-agency" ./cmd/git-agency &&
  go build -o "$work/bin/agency-mockllm" ./internal/mockllm/cmd/agency-mockllm) || exit 1

"$work/bin/agency-mockllm" -addr 127.0.0.1:0 -portfile "$work/port" -hang-for 5m \
  >"$work/mock.log" 2>&1 </dev/null &
mock=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "e2e: the mock did not start:"; cat "$work/mock.log"; exit 1; }
port=$(cat "$work/port")

# --- the offline environment -------------------------------------------
export PATH="$work/bin:$clis:$PATH"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config"
export GIT_CONFIG_GLOBAL="$work/home/gitconfig" GIT_CONFIG_NOSYSTEM=1
git config --global user.name "Agency E2E"
git config --global user.email e2e@example.com
git config --global init.defaultBranch main
export AGENCY_DATA_DIR="$work/data"
# claude: everything through the environment
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=sk-mock-key
export CLAUDE_CONFIG_DIR="$work/home/claude" CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export CLAUDE_CODE_MAX_RETRIES=0 API_TIMEOUT_MS=60000
# codex: a model provider in $CODEX_HOME/config.toml (OPENAI_BASE_URL is ignored)
export CODEX_HOME="$work/home/codex" MOCK_API_KEY=sk-mock-key
mkdir -p "$CLAUDE_CONFIG_DIR" "$CODEX_HOME"
cat >"$CODEX_HOME/config.toml" <<TOML
model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$port/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
TOML

echo "e2e: $(claude --version 2>&1), $(codex --version 2>/dev/null), mock on 127.0.0.1:$port, in $work"

# --- the repository -----------------------------------------------------
repo=$work/repo
git init -q "$repo" && cd "$repo" && git commit -q --allow-empty -m init || exit 1
git agency worktree create --name feat >/dev/null || exit 1
# Every agent runs inside the wall (a start without it fails), and no
# permission flag is given: inside the wall the built-ins work alone.
git config agency.isolate bwrap
# codex, offline: no plugins, no endless retries.
for a in --disable plugins --disable remote_plugin --disable apps \
  --disable unbounded_connection_retries; do
  git config --add agency.runner.codex.headlessArg "$a"
done

fails=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
# expect DESC CMD...: CMD must succeed.
expect() { local d=$1; shift; if "$@" >/dev/null 2>&1; then pass "$d"; else fail "$d"; fi; }
# field FILE KEY REGEX: the pretty-printed JSON in FILE has "KEY": <match>.
field() { grep -Eq "^ *\"$2\": $3,?\$" "$1"; }

# wait_done INV SECONDS: poll until the invocation is no longer running.
wait_done() {
  local i
  for i in $(seq $(($2 * 5))); do
    git agency agent show "$1" --json >"$work/show.json" 2>/dev/null
    field "$work/show.json" status '"(finished|failed)"' && return 0
    sleep 0.2
  done
  return 1
}

run_ok() { # RUNNER RAWTYPE STREAMKIND LOGLINE
  local r=$1
  echo "== $r: a successful run"
  local t0=$SECONDS
  git agency agent start -w feat --runner "$r" --headless --prompt "Create hello.txt" \
    >"$work/$r.out" 2>"$work/$r.err" </dev/null
  local rc=$?
  local inv; inv=$(head -1 "$work/$r.out")
  echo "  ($inv, exit $rc, $((SECONDS - t0)) s)"
  [ "$rc" = 0 ] && pass "agent start exits 0" || { fail "agent start exits 0 (got $rc)"; sed 's/^/    /' "$work/$r.err"; }
  git agency agent show "$inv" --json >"$work/$r.json"
  local sb; sb=$(sed -n 's/^ *"sandbox_path": "\(.*\)",$/\1/p' "$work/$r.json")
  local logs; logs=$(dirname "$sb")/logs
  expect "status finished" field "$work/$r.json" status '"finished"'
  expect "exit_reason exited" field "$work/$r.json" exit_reason '"exited"'
  # hello.txt is uncommitted (agents rarely commit): only land --apply takes it
  expect "display_status ready to land (--apply)" field "$work/$r.json" display_status '"ready to land \(--apply\)"'
  expect "semantic_status ready_for_review" field "$work/$r.json" semantic_status '"ready_for_review"'
  expect "usage: turns" field "$work/$r.json" turns '[1-9][0-9]*'
  expect "usage: input tokens" field "$work/$r.json" input_tokens '[1-9][0-9]*'
  expect "usage: output tokens" field "$work/$r.json" output_tokens '[1-9][0-9]*'
  if [ "$r" = claude ]; then
    expect "usage: cost" field "$work/$r.json" cost_usd '[0-9.e-]+'
  fi
  expect "the agent wrote hello.txt in its sandbox" grep -qx "hello from mock" "$sb/hello.txt"
  expect "nothing written in the integration tree" test ! -e "$repo/hello.txt"
  expect "raw.jsonl has the runner's $2" grep -q "\"type\":\"$2\"" "$logs/raw.jsonl"
  expect "following printed the readable events (not a terminal)" cmp -s <(tail -n +2 "$work/$r.out") <(git agency agent logs "$inv")
  expect "stream.jsonl has a session_start" grep -q '"kind":"session_start"' "$logs/stream.jsonl"
  expect "stream.jsonl has a $3" grep -q "\"kind\":\"$3\".*hello.txt" "$logs/stream.jsonl"
  expect "stream.jsonl has no unknown events" sh -c "! grep -q '\"kind\":\"unknown\"' '$logs/stream.jsonl'"
  git agency agent logs "$inv" >"$work/$r.logs"
  expect "agent logs: readable '$4'" grep -Eq "^[0-9:]{8} $3 +.*hello.txt" "$work/$r.logs"
  git agency agent show "$inv" >"$work/$r.show"
  expect "agent show: usage line" grep -Eq '^usage: +[1-9][0-9]* turns?, [1-9][0-9]* input / [1-9][0-9]* output tokens' "$work/$r.show"
}

run_tty() { # RUNNER: on a terminal, agent start follows readable events
  local r=$1
  command -v script >/dev/null || { echo "  skip (no script(1) for a terminal)"; return; }
  echo "== $r: following on a terminal"
  script -qec "git agency agent start -w feat --runner $r --headless --prompt 'Create hello.txt' </dev/null" \
    /dev/null >"$work/$r.tty" 2>&1
  expect "readable events, not JSON" grep -Eq "^[0-9:]{8} session_start " "$work/$r.tty"
  expect "no raw JSONL" sh -c "! grep -q '\"type\":' '$work/$r.tty'"
}

run_hang() { # RUNNER [RUNNER-ARGS...]
  local r=$1; shift
  echo "== $r: a model server that never answers"
  git config agency.runner."$r".timeout 5s
  local t0=$SECONDS
  local inv
  inv=$(git agency agent start -w feat --runner "$r" --headless -d "$@" --prompt "Create hello.txt" </dev/null) ||
    { fail "agent start"; return; }
  if wait_done "$inv" 60; then pass "ended by itself ($((SECONDS - t0)) s)"; else fail "still running after 60 s"; fi
  expect "exit_reason timeout" field "$work/show.json" exit_reason '"timeout"'
  expect "status failed" field "$work/show.json" status '"failed"'
  expect "a timeout event" grep -q '"event":"timeout"' "$AGENCY_DATA_DIR"/repos/*/invocations/"$inv"/events.jsonl
  git config --unset agency.runner."$r".timeout
}

run_fail() { # the model server answers HTTP 500: the run fails, one notification
  echo "== claude: a model server that fails (HTTP 500)"
  git config agency.notify.command "cat >> '$work/notify-fail.jsonl'"
  ANTHROPIC_BASE_URL="http://127.0.0.1:$port/fail500" git agency agent start -w feat --runner claude \
    --headless --prompt "Create hello.txt" >"$work/fail.out" 2>/dev/null </dev/null
  local rc=$? inv i
  inv=$(head -1 "$work/fail.out")
  [ "$rc" = 1 ] && pass "agent start exits 1 (claude exited 1)" || fail "agent start exits 1 (got $rc)"
  for i in $(seq 50); do grep -q '"event":"failed"' "$work/notify-fail.jsonl" 2>/dev/null && break; sleep 0.2; done
  expect "notify: failed" grep -q '"event":"failed","invocation_id":"'"$inv"'"' "$work/notify-fail.jsonl"
  # claude goes on for a moment after its failed result: no needs_input
  # for a wait nobody can answer, only the end
  expect "notify: no needs_input before it" sh -c "! grep -q '\"event\":\"needs_input\"' '$work/notify-fail.jsonl'"
  git config --unset agency.notify.command
}

case ${AGENCY_E2E_ONLY:-claude} in claude)
  run_ok claude result tool_call "tool_call Write hello.txt"
  run_tty claude
  run_fail
  (export ANTHROPIC_BASE_URL="http://127.0.0.1:$port/hang"; run_hang claude) | tee "$work/hang.out"
  fails=$((fails + $(grep -c '  FAIL' "$work/hang.out")));;
esac
case ${AGENCY_E2E_ONLY:-codex} in codex)
  run_ok codex turn.completed file_change "file_change add hello.txt"
  run_tty codex
  run_hang codex --runner-arg=-c --runner-arg="model_providers.mock.base_url=\"http://127.0.0.1:$port/hang/v1\"";;
esac

# Headed runs (e2e/headed.sh): needs input from hooks and the screen, notify.
. "$root/e2e/headed.sh"
case ${AGENCY_E2E_ONLY:-headed} in claude|headed) headed_claude;; esac
case ${AGENCY_E2E_ONLY:-headed} in codex|headed) headed_codex;; esac

# agent send: follow-ups in the same conversation, a permission denial.
. "$root/e2e/send.sh"

# The wall: commits from the agents' own shell tools, escapes by absolute path.
. "$root/e2e/wall.sh"

# verified landing: a red verify sent back to the agent (e2e/verify.sh).
. "$root/e2e/verify.sh"

# A loopback ssh host: a real claude and codex there, their work landed here.
. "$root/e2e/host.sh"

# A Python and a JavaScript project made ready with the documented setups;
# verify holds a test-breaking claude back (e2e/projects.sh).
. "$root/e2e/projects.sh"

if [ "$fails" -gt 0 ]; then echo "e2e-real: $fails check(s) failed"; exit 1; fi
echo "e2e-real: all checks passed"
