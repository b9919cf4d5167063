# A sparse sandbox (1/10 of a 20k-file tree, inherited from a sparse
# integration worktree) against a full one (`agent start --full`): goal
# ≤ 0.2×. Prints numbers; never fails.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-20000}
sh_repo "$N"
# make_repo spreads files over src/d000..d199: 20 of them are 1/10.
git sparse-checkout set --cone $(seq -f 'src/d%03g' 0 19)
git agency worktree create --name sparse >/dev/null

runs=5
time_start() {
	local total=0 t0 t1
	for i in $(seq $runs); do
		t0=$(now_ns)
		git agency agent start -w sparse --runner sh --headless -d "$@" --prompt 'true' >/dev/null
		t1=$(now_ns)
		total=$((total + t1 - t0))
	done
	echo $total
}
full=$(time_start --full)
sparse=$(time_start)

echo "files:                         $N (sparse: 1/10)"
echo "full sandbox (mean):           $(ms $((full / runs))) ms"
echo "sparse sandbox (mean):         $(ms $((sparse / runs))) ms"
echo "ratio sparse / full:           $(ratio $sparse $full)  (goal <= 0.2)"
