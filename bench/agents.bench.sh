# Fifty concurrent headless agents on this machine: each prints LINES lines
# at once; every log must be complete, and each supervisor's peak RSS
# stays within 15 MiB. Prints the counts and the RSS figures.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
AGENTS=${BENCH_AGENTS:-50}
LINES=${BENCH_LINES:-20000}
make_repo "$BENCH_TMP/repo" 200
cd "$BENCH_TMP/repo"
git config agency.runner.sh.command sh
git config agency.runner.sh.headlessArg -c
git agency worktree create --name bench >/dev/null
GO="$BENCH_TMP/go" DONE="$BENCH_TMP/done"
ids=()
for i in $(seq "$AGENTS"); do
	ids+=("$(git agency agent start -w bench --runner sh --headless --detached --prompt \
		"while [ ! -e '$GO' ]; do sleep 0.2; done; seq 1 $LINES | sed 's/^/agent-$i-line-/'; while [ ! -e '$DONE' ]; do sleep 0.2; done")")
done
logs=()
for id in "${ids[@]}"; do logs+=("$(ls -d "$AGENCY_DATA_DIR"/repos/*/sandboxes/"$id")/logs/raw.jsonl"); done
# All of them running before any prints.
wait_status running "${ids[@]}"
t0=$(now_ns)
touch "$GO"
# Every agent has printed everything (or two minutes have passed).
for _ in $(seq 1200); do
	n=0
	for l in "${logs[@]}"; do [ "$({ wc -l < "$l"; } 2>/dev/null)" = "$LINES" ] && n=$((n + 1)); done
	[ "$n" = "$AGENTS" ] && break
	sleep 0.1
done
t1=$(now_ns)
# Peak RSS of every supervisor, while they still run.
rss=$(for id in "${ids[@]}"; do
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("supervisor_pid") or "")' "$(ls -d "$AGENCY_DATA_DIR"/repos/*/invocations/"$id")/meta.json")
	awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null
done)
touch "$DONE"
wait_status finished "${ids[@]}"
complete=0
for i in $(seq "$AGENTS"); do
	l=${logs[$((i - 1))]}
	[ "$(wc -l < "$l")" = "$LINES" ] && [ "$(tail -n1 "$l")" = "agent-$i-line-$LINES" ] && complete=$((complete + 1))
done
echo "agents: $AGENTS headless, $LINES lines each, on $(nproc) cores; output took $(ms $((t1 - t0))) ms"
echo "logs complete: $complete/$AGENTS"
echo "$rss" | python3 -c '
import sys
v = [int(x) for x in sys.stdin.read().split()]
if not v:
    print("supervisor peak RSS: n/a"); sys.exit()
print("supervisor peak RSS (VmHWM) over %d supervisors: max %.1f MiB, mean %.1f MiB (goal <= 15 MiB each)" % (len(v), max(v) / 1024, sum(v) / len(v) / 1024))'
