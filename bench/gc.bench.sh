# gc --dry-run --include-pending on a repository with a long history,
# hundreds of branches and 10 finished sandboxes, against its floor: the
# `git status` of each sandbox tree that any check for uncommitted work
# needs (goal ≤ 3x). gc decides all sandboxes' HEADs with one
# reachability walk and measures only what it would remove.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-5000}
COMMITS=${BENCH_COMMITS:-5000}
BRANCHES=${BENCH_BRANCHES:-300}
make_repo "$BENCH_TMP/repo" "$N"
cd "$BENCH_TMP/repo"
# History and branches, generated with fast-import.
python3 - "$COMMITS" "$BRANCHES" <<'PY' | git fast-import --quiet
import sys
commits, branches = int(sys.argv[1]), int(sys.argv[2])
every = max(1, commits // branches)
t = 1700000000
print("reset refs/heads/main\nfrom refs/heads/main^0\n")
for i in range(1, commits + 1):
    body = "history %d\n" % i
    msg = "commit %d" % i
    print("commit refs/heads/main\nmark :%d\ncommitter b <b@example.com> %d +0000" % (i, t + i))
    print("data %d\n%s" % (len(msg), msg))
    if i == 1:
        print("from refs/heads/main^0")
    print("M 100644 inline history/h%03d.txt\ndata %d\n%s" % (i % 500, len(body), body))
    if i % every == 0:
        print("reset refs/heads/topic-%d\nfrom :%d\n" % (i // every, i))
PY
git reset -q --hard main
git config agency.runner.sh.command sh
git config agency.runner.sh.headlessArg -c
git agency worktree create --name bench >/dev/null
ids=()
for i in $(seq 10); do
	ids+=("$(git agency agent start -w bench --runner sh --headless --detached --prompt "echo $i > agent-$i.txt; git add -A; git commit -qm agent-$i")")
done
wait_status finished "${ids[@]}"
trees=()
for id in "${ids[@]}"; do trees+=("$(ls -d "$AGENCY_DATA_DIR"/repos/*/sandboxes/"$id"/tree)"); done
floor() { for t in "${trees[@]}"; do git -C "$t" status --porcelain >/dev/null; done; }
floor_ns=$(median_ns floor)
gc_ns=$(median_ns git agency gc --dry-run --include-pending)
decided=$(git agency gc --dry-run --include-pending | grep -c 'sandbox_tree')
echo "history: $COMMITS commits, $(git for-each-ref refs/heads | wc -l) branches, $N files; 10 finished sandboxes ($decided decided)"
echo "floor (git status in each sandbox, median of 7): $(ms $floor_ns) ms"
echo "gc --dry-run --include-pending (median of 7):    $(ms $gc_ns) ms"
echo "ratio gc dry run / floor: $(ratio $gc_ns $floor_ns) (goal <= 3)"
