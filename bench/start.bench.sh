# agent start --detached on a 20k-file repository, against git worktree add,
# and the supervisor's peak RSS.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-20000}
make_repo "$BENCH_TMP/repo" "$N"
cd "$BENCH_TMP/repo"
git config agency.runner.sh.command sh
git config agency.runner.sh.headlessArg -c
git agency worktree create --name bench >/dev/null

runs=5
git_total=0
for i in $(seq $runs); do
	t0=$(now_ns)
	git worktree add -q -b plain-$i "$BENCH_TMP/plain-$i" HEAD
	t1=$(now_ns)
	git_total=$((git_total + t1 - t0))
done

agency_total=0
ids=()
for i in $(seq $runs); do
	t0=$(now_ns)
	id=$(git agency agent start -w bench --runner sh --headless -d --prompt 'sleep 60')
	t1=$(now_ns)
	agency_total=$((agency_total + t1 - t0))
	ids+=("$id")
done

# Peak RSS of a supervisor while its agent runs.
sup=$(git agency agent show "${ids[0]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("supervisor_pid") or "")')
rss=$(awk '/VmHWM/ {print $2, $3}' "/proc/$sup/status" 2>/dev/null || echo "n/a")

echo "files:                         $N"
echo "git worktree add (mean):       $(ms $((git_total / runs))) ms"
echo "agent start --detached (mean): $(ms $((agency_total / runs))) ms"
echo "ratio agent start / worktree add: $(ratio $agency_total $git_total)"
echo "supervisor peak RSS:           $rss"
for id in "${ids[@]}"; do git agency agent kill "$id" >/dev/null 2>&1; done
