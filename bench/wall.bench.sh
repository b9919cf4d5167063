# The wall's cost: start to finish of a trivial headless agent (a shell
# runner that writes one file) with agency.isolate bwrap against the same
# with agency.isolate off, in interleaved rounds, as a ratio of medians
# (goal <= 1.2 on a quiet machine, <= 1.3 on a busy one). Skipped when
# bubblewrap cannot run here.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-1000}
sh_repo "$N"
git agency worktree create --name bench >/dev/null
if ! bwrap --ro-bind / / --unshare-pid true 2>/dev/null; then
	echo "bubblewrap does not run here: skipped"
	exit 0
fi

# trivial MODE: one agent, started and followed to its end.
trivial() {
	git -c agency.isolate="$1" agency agent start -w bench --runner sh --headless \
		--prompt 'echo hi > hi.txt' >/dev/null 2>&1 </dev/null
}
trivial off
trivial bwrap
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
runs=${BENCH_RUNS:-7}
off_t=() wall_t=()
for _ in $(seq "$runs"); do
	t0=$(now_ns)
	trivial off
	t1=$(now_ns)
	trivial bwrap
	t2=$(now_ns)
	off_t+=($((t1 - t0))) wall_t+=($((t2 - t1)))
done
med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
off_m=$(med "${off_t[@]}") wall_m=$(med "${wall_t[@]}")
walled=$(git agency agent ls --json 2>/dev/null | grep -c '"isolation": "bwrap"')
echo "files:                                  $N"
echo "trivial agent, unwalled (median of $runs): $(ms $off_m) ms"
echo "trivial agent, walled (median of $runs):   $(ms $wall_m) ms"
echo "ratio walled / unwalled:                $(ratio $wall_m $off_m) (goal <= 1.2 quiet, <= 1.3 busy)"
echo "load average at the start:              $load0"
echo "load average at the end:                $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "runs recorded isolation bwrap:          $walled"
