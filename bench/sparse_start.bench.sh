# What a user waits for when an agent starts in a sparse integration tree
# (1/20 of a 100k-file repository, cone mode): from `git agency agent
# start` to the agent's first write (the file's modification time), against
# git's own `git worktree add` from that tree (which copies its sparse
# patterns) and a first write after it, as a ratio (goal ≤ 2). Prints
# numbers; never fails.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_SPARSE_FILES:-100000}
sh_repo "$N"
# make_repo spreads files over src/d000..d199: 10 of them are 1/20.
git sparse-checkout set --cone $(seq -f 'src/d%03g' 0 9)
git agency worktree create --name sparse >/dev/null
integ=$(git agency worktree path sparse)

mtime_ns() { python3 -c 'import os,sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$1"; }
runs=${BENCH_RUNS:-3}
agency=() own=()
for i in $(seq 0 "$runs"); do
	t0=$(now_ns)
	id=$(git agency agent start -w sparse --runner sh --headless -d --prompt 'echo first > first-write.txt')
	sb=$(git agency agent path "$id")
	for _ in $(seq 3000); do [ -e "$sb/first-write.txt" ] && break; sleep 0.01; done
	t1=$(mtime_ns "$sb/first-write.txt")
	wait_status finished "$id"

	t2=$(now_ns)
	(cd "$integ" && git worktree add -q -b "own-$i" "$BENCH_TMP/own-$i" HEAD && echo first > "$BENCH_TMP/own-$i/first-write.txt")
	t3=$(mtime_ns "$BENCH_TMP/own-$i/first-write.txt")
	[ "$i" = 0 ] && continue # warm-up
	agency+=($((t1 - t0))) own+=($((t3 - t2)))
done
med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
a=$(med "${agency[@]}") o=$(med "${own[@]}")
echo "files:                                     $N (sparse: 1/20, cone)"
echo "checked out:                               $(git -C "$BENCH_TMP/own-1" ls-files -t | grep -vc '^S ') files"
echo "agent start to its first write (median):   $(ms $a) ms"
echo "git worktree add, then a write (median):   $(ms $o) ms"
echo "ratio agent start / git worktree add:      $(ratio $a $o) (goal <= 2)"
