#!/usr/bin/env bash
# Kill -9 sweep: every command that changes state is
# SIGKILLed before each of its git calls in turn (a `git` wrapper first on
# PATH counts the calls of the command under test and, at call K, kills its
# parent: the git-agency process, or the supervisor it started). After each
# kill:
#   - `doctor` runs (it must not fail with anything but E_UNHEALTHY);
#   - ONE `gc --yes` must leave zero residue: `doctor` then says
#     "no problems found", no temp file is left in the data directory or the
#     git directory, every git worktree registration has its directory;
#   - nothing that existed before the kill is lost: every commit reachable
#     before (branches, refs/agency/*, HEADs of every worktree) is still
#     reachable, and every uncommitted file content is still in a tree on
#     disk or in an object reachable from a ref.
# A scenario with failpoints (AGENCY_FAILPOINT=kill:<step>) is also killed
# at each of them, and inside each of its record writes
# (AGENCY_FAILPOINT=kill:record-write:<n>: the temp file written and
# fsynced, not renamed), with the same checks after.
# Run: make e2e-killsweep (or e2e/killsweep.sh [SCENARIO...]). Takes minutes:
# each (scenario, K) pair makes a fresh repository.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/agency-killsweep-XXXXXX")
trap 'rm -rf "$work"' EXIT
bin="$work/bin"
mkdir -p "$bin"
(cd "$root" && go build -o "$bin/git-agency" ./cmd/git-agency && go build -o "$bin/git-sandbox" ./cmd/git-sandbox &&
  go build -o "$bin/fakeagent" ./internal/fakeagent) || exit 1
realgit=$(command -v git)
cat >"$bin/git" <<EOF
#!/bin/sh
if [ -n "\${SWEEP_COUNT:-}" ]; then
  n=\$(( \$(cat "\$SWEEP_COUNT" 2>/dev/null || echo 0) + 1 ))
  echo \$n > "\$SWEEP_COUNT"
  if [ "\$n" = "\${SWEEP_KILL_AT:-0}" ]; then
    echo "\$PPID \$*" > "\$SWEEP_COUNT.killed"
    kill -9 \$PPID
    exit 137
  fi
fi
exec "$realgit" "\$@"
EOF
chmod +x "$bin/git"
export PATH="$bin:$PATH"
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
export TMUX_TMPDIR="$work/tmux"
# (fakeagent keeps its conversations, for -resume, under $TMPDIR)
export TMPDIR="$work/tmp"
unset TMUX TMUX_PANE
mkdir -p "$HOME" "$TMUX_TMPDIR" "$TMPDIR"
fails=0 runs=0

# setup SCENARIO: a fresh repository $repo with data directory $AGENCY_DATA_DIR
# in the state the scenario's command starts from; sets inv (an invocation).
setup() {
  local d="$work/r"
  rm -rf "$d"; mkdir -p "$d"
  tmux kill-server 2>/dev/null
  export AGENCY_DATA_DIR="$d/data"
  repo="$d/repo"
  git init -q -b main "$repo" && cd "$repo" || return 1
  echo base >a.txt && git add a.txt && git commit -qm base
  git config agency.runner.sh.command sh
  git config agency.runner.sh.headlessArg -c
  git config agency.runner.sh.headedArg -c
  # fk: a runner that can be resumed (agent send), claude's stream with a
  # session id
  git config agency.runner.fk.command fakeagent
  git config agency.runner.fk.format claude
  git config --add agency.runner.fk.headlessArg -stream
  git config --add agency.runner.fk.headlessArg claude
  git config --add agency.runner.fk.resumeArg -resume
  git config --add agency.runner.fk.resumeArg '{session_id}'
  git-agency worktree create --name feat >/dev/null || return 1
  inv=
  case $1 in
  create | start-headless | start-headed) ;;
  start-walled | start-walled-headed) git config agency.isolate bwrap ;;
  send)
    # (unwalled: fakeagent keeps its conversations in $TMPDIR, which a
    # wall makes private to each turn, so -resume would find none)
    git config agency.isolate off
    # each turn appends to c.txt and commits everything (the turn before's
    # u.txt with it), then leaves u.txt uncommitted
    # (detached: a followed start would print the stream after the id)
    inv=$(git-agency agent start -w feat --runner fk --headless -d \
      --runner-arg=-append --runner-arg='c.txt=c\n' --runner-arg=-commit --runner-arg=c \
      --runner-arg=-append --runner-arg='u.txt=uncommitted-work\n' --prompt first) || return 1
    waitquiet
    ;;
  *)
    inv=$(git-agency agent start -w feat --runner sh --headless --prompt \
      'echo c1 > c.txt; git add c.txt; git commit -qm c1; echo uncommitted-work > u.txt') || return 1
    ;;
  esac
  case $1 in
  ckpt-apply) git-agency checkpoint create --invocation "$inv" >/dev/null &&
    echo later-work >"$(sandbox)/u.txt" ;;
  # (the agent's exit checkpoint holds u.txt: new work for the checkpoint)
  ckpt-create) echo later-work >"$(sandbox)/u2.txt" ;;
  # a plain land refuses uncommitted work: commit it in the sandbox
  land) (cd "$(sandbox)" && git add u.txt && git commit -qm u) ;;
  # a verified land: the check runs on the candidate (with AGENCY_FAILPOINT
  # kill:check it kills the land that runs it, mid-verify)
  land-verify)
    (cd "$(sandbox)" && git add u.txt && git commit -qm u)
    git config agency.verify 'test -f c.txt && test -f u.txt; if [ "${AGENCY_FAILPOINT:-}" = kill:check ]; then kill -9 $PPID; fi' ;;
  land-detached | discard-detached)
    (cd "$(sandbox)" && git checkout -q --detach && echo d >d.txt && git add d.txt && git commit -qm detached-commit) ;;
  rm-force) echo wt-work >"$(git-agency worktree path feat)/w.txt" ;;
  undo-discard) git-agency agent discard "$inv" >/dev/null ;;
  adopt) git worktree add -q -b mine "$d/mine" ;;
  # gc of finished work: a landed invocation (its branch and snapshot refs
  # are on other branches) and a discarded one
  gc)
    git-agency agent land --apply "$inv" >/dev/null &&
      git-agency agent discard "$(git-agency agent start -w feat --runner sh --headless --prompt 'echo d > d.txt')" >/dev/null ;;
  rm-detached)
    (cd "$(git-agency worktree path feat)" && git checkout -q --detach && git commit -q --allow-empty -m wt-detached) ;;
  esac
}
sandbox() { git-agency agent show "$inv" --json | sed -n 's/.*"sandbox_path": *"\([^"]*\)".*/\1/p'; }

# the command under test
cmd() {
  case $1 in
  create) git-agency worktree create --name kk ;;
  start-headless) git-agency agent start -w feat --runner sh --headless --prompt 'echo s > s.txt' ;;
  start-headed) git-agency agent start -w feat --runner sh -d --prompt 'echo h > h.txt' ;;
  # walled: the agent leaves a setsid daemon behind, which must not
  # outlive it
  start-walled) git-agency agent start -w feat --runner sh --headless --prompt 'echo w > w.txt; setsid sleep 4321 & git add w.txt; git commit -qm w' ;;
  start-walled-headed) git-agency agent start -w feat --runner sh -d --prompt 'echo w > w.txt; setsid sleep 4321 & git add w.txt; git commit -qm w' ;;
  ckpt-create) git-agency checkpoint create --invocation "$inv" ;;
  ckpt-apply) git-agency checkpoint apply --invocation "$inv" 1 ;;
  land | land-detached | land-verify) git-agency agent land "$inv" ;;
  land-apply) git-agency agent land --apply "$inv" ;;
  discard | discard-detached) git-agency agent discard "$inv" ;;
  rm-force | rm-detached) git-agency worktree rm --force feat ;;
  undo-discard) git-agency undo ;;
  gc) git-agency gc --yes --older-than 0s ;;
  adopt) git-agency worktree adopt "$repo/../mine" ;;
  send) git-agency agent send "$inv" --prompt 'and more' ;;
  esac
}

# failpoints SCENARIO: the steps its command can be killed at by
# AGENCY_FAILPOINT=kill:<step>, besides its git calls.
failpoints() {
  case $1 in
  # (record-fsync: the first meta.json is written and fsynced, not renamed)
  create) echo worktree-create:record-fsync ;;
  start-headless | start-headed) echo agent-start:record-fsync ;;
  send) echo agent-send:spawn ;;
  start-walled) echo agent-start:after-sandbox agent-start:wall agent-start:spawn agent-start:wall-report ;;
  start-walled-headed) echo agent-start:after-sandbox agent-start:wall agent-start:spawn ;;
  land-verify) echo check verify:tree-made verify:running verify:passed land:before-update land:after-update land:after-remove ;;
  land | land-apply) echo land:before-update land:after-update land:after-remove ;;
  discard | discard-detached) echo discard:after-log ;;
  ckpt-apply) echo checkpoint-apply:after-log ;;
  rm-force | rm-detached) echo worktree-rm:after-log ;;
  adopt) echo worktree-adopt:after-marker ;;
  undo-discard) echo undo:after-start undo:after-ref undo:after-branch undo:after-tree undo:after-record ;;
  esac
}

# inventory: every commit reachable from any ref or worktree HEAD, and the
# blob ids of every uncommitted file in every worktree.
commits() {
  { git for-each-ref --format='%(refname) %(objectname)' | grep -v "^$skipref" | cut -d' ' -f2; git worktree list --porcelain | sed -n 's/^HEAD //p'; } |
    sort -u | git rev-list --stdin 2>/dev/null | sort -u
}
dirtyblobs() {
  git worktree list --porcelain | sed -n 's/^worktree //p' | while read -r t; do
    [ -d "$t" ] || continue
    (cd "$t" && git status --porcelain -uall | grep -v '^D' | cut -c4- | grep -v '^\.agency/' |
      while read -r f; do [ -f "$f" ] && git hash-object "$f"; done)
  done | sort -u
}
allobjects() {
  { git for-each-ref --format='%(objectname)'; git worktree list --porcelain | sed -n 's/^HEAD //p'; } |
    sort -u | git rev-list --objects --stdin 2>/dev/null | cut -d' ' -f1
  # blobs in any tree on disk, tracked or not
  find "$repo/.." -path '*/.git' -prune -o -type f ! -path '*/.agency/*' -print0 2>/dev/null |
    xargs -0 git hash-object 2>/dev/null
}

fail() { echo "FAIL $scenario K=$k: $*"; fails=$((fails + 1)); }

# waitquiet: no invocation of the repository is starting or running (the
# supervisor of a killed start may still be finishing its agent).
waitquiet() {
  local i
  for i in $(seq 100); do
    git-agency agent ls --json 2>/dev/null | grep -q '"status": *"\(running\|starting\)"' || return 0
    sleep 0.1
  done
}

sweep() {
  scenario=$1
  skipref='^$'
  # (gc deletes finished invocations' branches and refs by design: their
  # work is on the integration branch, or was discarded)
  case $scenario in discard*) skipref=refs/agency/snapshots/ ;; gc) skipref='refs/\(agency/\|heads/agency/sandbox-\)' ;; esac
  # count the command's git calls once, unkilled
  setup "$scenario" >/dev/null 2>&1 || { echo "setup $scenario failed"; fails=$((fails + 1)); return; }
  export SWEEP_COUNT="$work/count"
  rm -f "$SWEEP_COUNT"
  # (it must succeed unkilled, or the sweep would only kill a refusal;
  # land-detached is the refusal of a HEAD off its branch, by design)
  local rc
  cmd "$scenario" >"$work/out" 2>&1
  rc=$?
  case $scenario in
  land-detached) [ "$rc" != 0 ] || { echo "FAIL $scenario: not refused unkilled"; fails=$((fails + 1)); } ;;
  *) [ "$rc" = 0 ] || { echo "FAIL $scenario: fails unkilled: $(tail -3 "$work/out")"; fails=$((fails + 1)); } ;;
  esac
  waitquiet
  unset SWEEP_COUNT
  local total
  total=$(cat "$work/count" 2>/dev/null || echo 0)
  echo "== $scenario: $total git calls"
  # (KILLSWEEP_GIT=0 skips the kills at git calls: failpoints and record
  # writes only)
  [ "${KILLSWEEP_GIT:-1}" = 0 ] && total=0
  for k in $(seq "$total"); do
    killrun "$scenario" || continue
    export SWEEP_COUNT="$work/count" SWEEP_KILL_AT=$k
    rm -f "$SWEEP_COUNT" "$SWEEP_COUNT.killed"
    cmd "$scenario" >"$work/out" 2>&1
    waitquiet
    unset SWEEP_COUNT SWEEP_KILL_AT
    killed=$(cat "$work/count.killed" 2>/dev/null)
    check
  done
  # every record write (temp file written and fsynced, not renamed): the
  # nth write of the command (or of a supervisor it started), n = 1, 2, …
  # until a run leaves no temp file, i.e. made fewer writes
  local n
  for n in $(seq 1 100); do
    k=record-write:$n
    killrun "$scenario" || continue
    AGENCY_FAILPOINT=kill:record-write:$n cmd "$scenario" >"$work/out" 2>&1
    rc=$?
    waitquiet
    # (killed: the command died of SIGKILL, or a supervisor it started
    # left the temp file of its killed write)
    killed="record write $n: $(find "$AGENCY_DATA_DIR" "$repo/.git" "$repo/../mine" -name '*.tmp-*' 2>/dev/null | sed "s|^$AGENCY_DATA_DIR/||" | tr '\n' ' ')"
    check
    [ "$rc" = 137 ] || [ "$killed" != "record write $n: " ] || break
  done
  echo "   $scenario: killed in each of $((n - 1)) record writes"
  local fp
  for fp in $(failpoints "$scenario"); do
    k=$fp
    killrun "$scenario" || continue
    AGENCY_FAILPOINT=kill:$fp cmd "$scenario" >"$work/out" 2>&1
    waitquiet
    killed="failpoint $fp"
    check
  done
}

# killrun SCENARIO: a fresh repository for one kill, and the inventory
# (before, blobs) that check compares with.
killrun() {
  runs=$((runs + 1))
  setup "$1" >/dev/null 2>&1 || { fail "setup"; return 1; }
  waitquiet
  before=$(commits)
  blobs=$(dirtyblobs)
  # a discard drops uncommitted work and checkpoints by the user's word;
  # its commits (a detached HEAD's included) must stay
  # (so does worktree rm --force, for its tree's)
  case $1 in discard* | rm-*) blobs= ;; esac
}

# check: after the kill ($killed says where), doctor, one gc, and the
# checks of the header.
check() {
  git-agency doctor >"$work/doctor1" 2>&1
  git-agency gc --yes >"$work/gc" 2>&1 || fail "gc failed after kill at [$killed]: $(cat "$work/gc")"
  if ! git-agency doctor >"$work/doctor2" 2>&1; then
    # an undo killed half-way is finished by the next undo, as doctor's
    # hint says (gc leaves it alone)
    # (and a worktree rm killed after its tree went, by the next rm)
    local finish=
    if grep -q 'was interrupted: it is half done' "$work/doctor2" && grep -q "hint: run 'git agency undo' to finish it" "$work/doctor2"; then
      finish="undo"
    elif grep -q 'worktree "feat": its directory is gone' "$work/doctor2" && grep -q "hint: 'git agency worktree rm feat' archives the record" "$work/doctor2"; then
      finish="worktree rm feat"
    fi
    if [ -n "$finish" ]; then
      # shellcheck disable=SC2086
      git-agency $finish >"$work/undo2" 2>&1 || fail "'$finish', which doctor says finishes it, failed (kill at [$killed]): $(tail -3 "$work/undo2")"
      git-agency doctor >"$work/doctor2" 2>&1 || fail "doctor after '$finish' (kill at [$killed]): $(grep -v '^ok' "$work/doctor2" | head -5)"
    else
      fail "doctor after one gc (kill at [$killed]): $(grep -v '^ok' "$work/doctor2" | head -5)"
    fi
  fi
  local leftover
  # (a temp file whose writer, named in it, still runs is a write in
  # progress: a supervisor that outlived the kill)
  leftover=$(find "$AGENCY_DATA_DIR" "$repo/.git" \( -name '*.tmp-*' -o -name 'agency-snapshot-index-*' \) 2>/dev/null |
    while read -r f; do
      pid=$(basename "$f" | sed -n 's/.*\(tmp\|index\)-\([0-9]*\)-[0-9]*$/\2/p')
      [ -n "$pid" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != "" ] &&
        [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ] && continue
      echo "$f"
    done)
  [ -z "$leftover" ] || fail "temp files left (kill at [$killed]): $leftover"
  git worktree list --porcelain | sed -n 's/^worktree //p' | while read -r t; do
    [ -d "$t" ] || echo "FAIL $scenario K=$k: registration without directory: $t"
  done
  # a walled agent's setsid daemon ends with its wall
  case $scenario in start-walled*)
    local i=0
    while pgrep -f 'sleep 4321' >/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    pgrep -f 'sleep 4321' >/dev/null && fail "a walled agent's setsid daemon outlived it (kill at [$killed])" ;;
  esac
  local after lost
  after=$(commits)
  lost=$(comm -23 <(echo "$before") <(echo "$after"))
  [ -z "$lost" ] || fail "commits lost (kill at [$killed]): $(echo "$lost" | tr '\n' ' ')"
  if [ -n "$blobs" ]; then
    local objs
    objs=$(allobjects | sort -u)
    lost=$(comm -23 <(echo "$blobs") <(echo "$objs"))
    [ -z "$lost" ] || fail "uncommitted work lost (kill at [$killed]): $lost"
  fi
  [ "$scenario" = land-verify ] && landverified
  # a killed adopt leaves the user's tree as it was
  if [ "$scenario" = adopt ] && ! git-agency worktree ls | grep -q '^mine'; then
    [ ! -e "$repo/../mine/.agency" ] || fail "a killed adopt left .agency/ in the user's tree (kill at [$killed])"
  fi
}

# landverified: after a killed verified land, the integration branch is
# either where it was or at a candidate that passed the check, and the next
# land finishes the work (doctor clean after it).
landverified() {
  local wt head
  wt=$(git-agency worktree path feat)
  head=$(git -C "$wt" rev-parse HEAD)
  if [ "$head" != "$(git rev-parse main)" ]; then
    git -C "$wt" cat-file -e "$head:c.txt" 2>/dev/null && git -C "$wt" cat-file -e "$head:u.txt" 2>/dev/null ||
      fail "the branch moved to a candidate the check did not pass (kill at [$killed])"
  fi
  if ! git-agency agent land "$inv" >"$work/land2" 2>&1 && ! grep -q E_ALREADY_LANDED "$work/land2"; then
    fail "the next land did not finish (kill at [$killed]): $(tail -3 "$work/land2")"
  fi
  git -C "$wt" cat-file -e HEAD:u.txt 2>/dev/null || fail "not landed after the next land (kill at [$killed])"
  git-agency doctor >"$work/doctor3" 2>&1 || fail "doctor after the next land (kill at [$killed]): $(grep -v '^ok' "$work/doctor3" | head -5)"
}

scenarios=${*:-create start-headless start-headed start-walled start-walled-headed ckpt-create ckpt-apply land land-verify land-apply land-detached discard discard-detached rm-force rm-detached undo-discard send gc adopt}
for s in $scenarios; do sweep "$s"; done
tmux kill-server 2>/dev/null
echo "killsweep: $runs kills, $fails failures"
[ "$fails" = 0 ]
