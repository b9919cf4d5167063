# worktree create and agent start --detached on a 20k-file repository,
# against git worktree add -b, as ratios (goal ≤ 1.05 each), the git
# commands each runs (strace -f -e execve, when strace is there), and the
# supervisor's peak RSS.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-20000}
sh_repo "$N"
git agency worktree create --name bench >/dev/null
# An untracked tree as a real one has: the dirty check must not walk it.
python3 - <<'PY'
import os
for i in range(2000):
    d = "scratch/u%02d" % (i % 40)
    os.makedirs(d, exist_ok=True)
    open("%s/u%04d.tmp" % (d, i), "w").write("x")
PY

# Interleaved rounds (plain git, then the two agency commands), medians:
# on a shared machine the load drifts between blocks of runs.
runs=${BENCH_RUNS:-5}
git_t=() create_t=() start_t=() ids=()
for i in $(seq $runs); do
	t0=$(now_ns)
	git worktree add -q -b plain-$i "$BENCH_TMP/plain-$i" HEAD
	t1=$(now_ns)
	git agency worktree create --name created-$i >/dev/null
	t2=$(now_ns)
	id=$(git agency agent start -w bench --runner sh --headless -d --prompt 'sleep 60')
	t3=$(now_ns)
	git_t+=($((t1 - t0))) create_t+=($((t2 - t1))) start_t+=($((t3 - t2))) ids+=("$id")
done
med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
git_m=$(med "${git_t[@]}") create_m=$(med "${create_t[@]}") start_m=$(med "${start_t[@]}")

# Peak RSS of a supervisor while its agent runs.
sup=$(git agency agent show "${ids[0]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("supervisor_pid") or "")')
rss=$(awk '/VmHWM/ {print $2, $3}' "/proc/$sup/status" 2>/dev/null || echo "n/a")

echo "files:                         $N (and 2000 untracked)"
echo "git worktree add -b (median of $runs):    $(ms $git_m) ms"
echo "worktree create (median):              $(ms $create_m) ms"
echo "agent start --detached (median):       $(ms $start_m) ms"
echo "ratio worktree create / worktree add: $(ratio $create_m $git_m) (goal <= 1.05)"
echo "ratio agent start / worktree add:     $(ratio $start_m $git_m) (goal <= 1.05)"
echo "supervisor peak RSS:           $rss"
if command -v strace >/dev/null; then
	strace -f -qq -e trace=execve -e signal=none -o "$BENCH_TMP/create.strace" git agency worktree create --name traced >/dev/null 2>&1
	echo "git commands of worktree create: $(grep -c 'execve("[^"]*/git", \["git", ' "$BENCH_TMP/create.strace")" \
		"($(grep -o 'execve("[^"]*/git", \["git", [^]]*' "$BENCH_TMP/create.strace" | sed 's/.*\["git", //' | grep -o '"[a-z-]*"' | grep -v -e '"--' | head -40 | tr -d '"' | awk '!s[$0]++' | tr '\n' ' '))"
fi
for id in "${ids[@]}"; do git agency agent kill "$id" >/dev/null 2>&1; done
