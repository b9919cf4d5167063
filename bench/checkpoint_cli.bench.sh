# `git agency checkpoint create` of a one-file change in a finished
# sandbox of a 20k-file repository, the whole command as a user runs it,
# against `git status --porcelain` in the same sandbox, as a ratio (goal
# ≤ 1.5; bench/checkpoint measures the checkpoint alone, and the
# automatic one).
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-20000}
sh_repo "$N"
git agency worktree create --name bench >/dev/null
id=$(git agency agent start -w bench --runner sh --headless --detached --prompt 'true')
wait_status finished "$id"
sb=$(git agency agent show "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sandbox_path"])')
target="$sb/src/d000/e00/f00000.txt"
git -C "$sb" status --porcelain >/dev/null # the index as an agent leaves it

runs=${BENCH_RUNS:-9}
st=() cp=()
for i in $(seq 0 "$runs"); do
	echo "status $i" >> "$target"
	t0=$(now_ns)
	GIT_OPTIONAL_LOCKS=0 git -C "$sb" status --porcelain >/dev/null
	t1=$(now_ns)
	echo "checkpoint $i" >> "$target"
	t2=$(now_ns)
	git agency checkpoint create -i "$id" >/dev/null
	t3=$(now_ns)
	[ "$i" = 0 ] && continue # warm-up
	st+=($((t1 - t0))) cp+=($((t3 - t2)))
done
med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
st_m=$(med "${st[@]}") cp_m=$(med "${cp[@]}")
echo "files:                                   $N"
echo "git status --porcelain (median of $runs):   $(ms $st_m) ms"
echo "git agency checkpoint create (median):   $(ms $cp_m) ms"
echo "ratio checkpoint create / git status:    $(ratio $cp_m $st_m) (goal <= 1.5)"
