# A monorepo-sized repository: 100k files in 5k directories, 1,000
# commits of history and 200 branches, generated with fast-import. Each
# figure is a ratio against its floor, both measured in this one run
# (interleaved where the measure repeats), printed with its goal:
#   worktree create / agent start (full)  vs git worktree add -b        <= 1.05
#   a sandbox inheriting a 1/20 cone       vs git's own sparse add       <= 1.5
#   automatic / manual checkpoint          vs git status                 <= 0.3 / 1.5
#   land of 20 commits                     vs git cherry-pick            <= 1.1
#   agent ls after an integration commit, 16 pending, vs the merge-tree floor <= 2
#   gc --dry-run --include-pending, 10 sandboxes, vs its floor           <= 3
#   supervisor peak RSS while checkpointing                              <= 20 MiB
# BENCH_FILES, BENCH_RUNS change the size and the number of rounds.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-100000}
runs=${BENCH_RUNS:-3}
med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
row() { printf '%-58s %9s ms vs %9s ms  ratio %5s  (goal <= %s)\n' "$1" "$(ms $2)" "$(ms $3)" "$(ratio $2 $3)" "$4"; }

# --- the repository ------------------------------------------------------
git init -q "$BENCH_TMP/repo"
cd "$BENCH_TMP/repo" || exit 1
python3 - "$N" <<'PY' | git fast-import --quiet
import sys
n = int(sys.argv[1])
per_dir = 20
dirs = max(1, n // per_dir)              # 5k directories for 100k files
tops = 100                               # t00..t99, each with dirs/100 below
def path(i):
    d = i // per_dir
    return "t%02d/s%03d/f%06d.txt" % (d % tops, d // tops, i)
t = 1700000000
print("commit refs/heads/main\nmark :1\ncommitter b <b@example.com> %d +0000\ndata 9\ngenerated" % t)
for i in range(n):
    body = "file %d\n" % i
    print("M 100644 inline %s\ndata %d\n%s" % (path(i), len(body), body))
print()
for c in range(2, 1001):
    body = "edit %d\n" % c
    print("commit refs/heads/main\nmark :%d\ncommitter b <b@example.com> %d +0000\ndata 6\nedit %d" % (c, t + c, c % 10))
    print("from :%d" % (c - 1))
    print("M 100644 inline history/h%03d.txt\ndata %d\n%s\n" % (c % 500, len(body), body))
    if c % 5 == 0:
        print("reset refs/heads/topic-%03d\nfrom :%d\n" % (c // 5, c))
PY
gen_t0=$(now_ns)
git checkout -q -f main
gen_t1=$(now_ns)
git config agency.runner.sh.command sh
git config agency.runner.sh.headlessArg -c
echo "repository: $(git ls-files | wc -l) files, $(git rev-list --count main) commits, $(git for-each-ref refs/heads | wc -l) branches; its first checkout took $(ms $((gen_t1 - gen_t0))) ms"

# --- worktree create and agent start, full ------------------------------
git agency worktree create --name full >/dev/null
git_t=() create_t=() start_t=() ids=()
for i in $(seq "$runs"); do
	t0=$(now_ns)
	git worktree add -q -b plain-$i "$BENCH_TMP/plain-$i" HEAD
	t1=$(now_ns)
	git agency worktree create --name created-$i >/dev/null
	t2=$(now_ns)
	ids+=("$(git agency agent start -w full --runner sh --headless -d --prompt 'true')")
	t3=$(now_ns)
	git_t+=($((t1 - t0))) create_t+=($((t2 - t1))) start_t+=($((t3 - t2)))
done
row "worktree create vs git worktree add -b" "$(med "${create_t[@]}")" "$(med "${git_t[@]}")" 1.05
row "agent start (full) vs git worktree add -b" "$(med "${start_t[@]}")" "$(med "${git_t[@]}")" 1.05
wait_status finished "${ids[@]}"
for i in $(seq "$runs"); do
	git worktree remove --force "$BENCH_TMP/plain-$i"
	git agency worktree rm --force created-$i >/dev/null 2>&1
done
for id in "${ids[@]}"; do git agency agent discard "$id" </dev/null >/dev/null 2>&1; done

# --- a sandbox inheriting a 1/20 cone ----------------------------------
cone="t00 t01 t02 t03 t04"
sparse_add() { # git's own sparse add, the floor
	git worktree add -q --no-checkout -b "$1" "$BENCH_TMP/$1" HEAD &&
		git -C "$BENCH_TMP/$1" sparse-checkout set --cone $cone &&
		git -C "$BENCH_TMP/$1" checkout -q "$1"
}
git sparse-checkout set --cone $cone
git agency worktree create --name sparse >/dev/null
git_t=() ours_t=()
for i in $(seq "$runs"); do
	t0=$(now_ns)
	sparse_add sparse-plain-$i
	t1=$(now_ns)
	git agency agent start -w sparse --runner sh --headless -d --prompt 'true' >/dev/null
	t2=$(now_ns)
	git_t+=($((t1 - t0))) ours_t+=($((t2 - t1)))
done
row "sandbox inheriting a 1/20 cone vs git's own sparse add" "$(med "${ours_t[@]}")" "$(med "${git_t[@]}")" 1.5

# --- agent ls after an integration commit, 16 pending -------------------
# The pending sandboxes come from the sparse worktree (16 full checkouts
# of 100k files would measure the disk); the forecast's cost is the
# merges, which do not depend on the checkout. Two of them change the file
# the integration commit changes.
wt=$(git agency worktree path sparse)
pend=()
for i in $(seq 16); do
	f=t0$((i % 5))/s000/f$(printf %06d $(( (i % 5) * 20 + i )) ).txt
	[ "$i" -le 2 ] && f=t00/s000/f000000.txt
	pend+=("$(git agency agent start -w sparse --runner sh --headless -d --prompt "echo agent$i >> $f; git add -A; git commit -qm c$i")")
done
wait_status finished "${pend[@]}"
git agency agent ls --json >/dev/null # what each would land, judged once
ls_t=() floor_t=() quiet_t=()
for i in $(seq "$runs"); do
	echo "integration $i" >> "$wt/t00/s000/f000000.txt"
	git -C "$wt" commit -qam "integration $i"
	head=$(git -C "$wt" rev-parse HEAD)
	t0=$(now_ns)
	git agency agent ls --json > "$BENCH_TMP/ls.json"
	t1=$(now_ns)
	git agency agent ls --json >/dev/null
	t2=$(now_ns)
	for id in "${pend[@]}"; do echo "$head agency/sandbox-$id"; done |
		xargs -P 4 -L 1 git merge-tree --write-tree --name-only >/dev/null 2>&1
	t3=$(now_ns)
	ls_t+=($((t1 - t0))) quiet_t+=($((t2 - t1))) floor_t+=($((t3 - t2)))
done
conflicting=$(python3 -c 'import json,sys; print(sum(1 for r in json.load(open(sys.argv[1])) if r.get("lands_cleanly") is False))' "$BENCH_TMP/ls.json")
row "agent ls --json after an integration commit (16 pending)" "$(med "${ls_t[@]}")" "$(med "${floor_t[@]}")" 2
echo "  the floor is 16 git merge-tree --write-tree, four at a time; $conflicting sandboxes say they conflict (2 do); a quiet ls took $(ms "$(med "${quiet_t[@]}")") ms (goal <= 60)"

# --- gc --dry-run --include-pending, 10 sandboxes -----------------------
trees=()
for id in "${pend[@]:0:10}"; do trees+=("$(git agency agent path "$id" 2>/dev/null || ls -d "$AGENCY_DATA_DIR"/repos/*/sandboxes/"$id"/tree)"); done
floor() { for t in "${trees[@]}"; do git -C "$t" status --porcelain >/dev/null; done; }
row "gc --dry-run --include-pending vs git status of each sandbox" "$(median_ns git agency gc --dry-run --include-pending)" "$(median_ns floor)" 3

# --- land of 20 commits against git cherry-pick --------------------------
land_id=$(git agency agent start -w full --runner sh --headless -d --prompt 'mkdir -p landed; for i in $(seq 20); do echo "land $i" >> landed/l$i.txt; git add -A; git commit -qm "land $i"; done')
wait_status finished "$land_id"
full=$(git agency worktree path full)
git -C "$full" commit -q --allow-empty -m "moved"
base=$(git agency agent show "$land_id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["base_commit"])')
git worktree add -q -b pick "$BENCH_TMP/pick" "$(git -C "$full" rev-parse HEAD)"
t0=$(now_ns)
git -C "$BENCH_TMP/pick" cherry-pick "$base..agency/sandbox-$land_id" >/dev/null
t1=$(now_ns)
git agency agent land "$land_id" >/dev/null
t2=$(now_ns)
row "land of 20 commits vs git cherry-pick of the same (one run)" $((t2 - t1)) $((t1 - t0)) 1.1

# --- supervisor RSS while checkpointing --------------------------------
# An automatic checkpoint waits for a quiet spell (agency.checkpoint.debounce,
# 3 s) and comes at most once per rateLimit (10 s): an agent writing every
# 0.2 s is never quiet, and only its exit checkpoint would be measured. So
# this agent writes every 1.5 s with a 1 s debounce and a 2 s rate limit
# (set until it ends): automatic checkpoints after each write or two, then
# the exit one, all of the 100k-file tree.
git config agency.checkpoint.debounce 1s
git config agency.checkpoint.rateLimit 2s
rss_id=$(git agency agent start -w full --runner sh --headless -d --prompt 'mkdir -p rss; for i in $(seq 8); do echo "rss $i" >> rss/r$i.txt; sleep 1.5; done')
sup=$(git agency agent show "$rss_id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("supervisor_pid") or "")')
peak=0
while kill -0 "$sup" 2>/dev/null; do
	kb=$(awk '/VmHWM/ {print $2}' "/proc/$sup/status" 2>/dev/null)
	[ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
	sleep 0.5
done
git config --unset agency.checkpoint.debounce
git config --unset agency.checkpoint.rateLimit
cps=$(git agency checkpoint ls -i "$rss_id" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["checkpoints"]))')
echo "supervisor peak RSS while checkpointing: $((peak / 1024)) MiB over $cps checkpoints (goal <= 20 MiB)"

# --- checkpoints (their own generated repository of the same size) -----
cd "$BENCH_ROOT" && go run ./bench/checkpoint -files "$N" -runs 9
echo "(goals at $N files: automatic <= 0.3, manual <= 1.5)"
