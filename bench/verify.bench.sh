# Verified landing of 8 candidates, one of them red (the 5th), with a check
# that takes CHECK seconds: `land A B … H` (serial: each verified on top of
# the ones before, 8 checks) against `land --batch 8` (the stack's top is
# checked, a red top bisected: 5 checks). Two worktrees with the same 8
# agents each; the time of each land and how many checks ran.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
CHECK=${BENCH_CHECK:-0.5}
sh_repo "${BENCH_FILES:-2000}"
git config agency.verify "sleep $CHECK; test ! -f red.txt"
agents() {
	git agency worktree create --name "$1" >/dev/null
	local i ids=()
	for i in 1 2 3 4 5 6 7 8; do
		local red=""
		[ "$i" = 5 ] && red="echo r > red.txt;"
		ids+=("$(git agency agent start -w "$1" --runner sh --headless --detached --prompt "echo $i > agent-$i.txt; $red git add -A; git commit -qm agent-$i")")
		wait_status finished "${ids[-1]}"
	done
	echo "${ids[@]}"
}
serial=$(agents serial)
batched=$(agents batched)
checks() { cat "$AGENCY_DATA_DIR"/repos/*/invocations/*/events.jsonl | grep -c '"verify_started"'; }
t0=$(now_ns)
git agency agent land $serial >/dev/null 2>&1
t1=$(now_ns)
n_serial=$(checks)
git agency agent land --batch 8 $batched >/dev/null 2>&1
t2=$(now_ns)
n_batched=$(($(checks) - n_serial))
landed() { git -C "$(git agency worktree path "$1")" rev-list --count HEAD ^main; }
echo "8 candidates, 1 red, check ${CHECK}s + its verify tree ($(git ls-files | wc -l) files)"
echo "serial  (land A … H):        $(ms $((t1 - t0))) ms, $n_serial checks, $(landed serial) landed"
echo "batched (land --batch 8):    $(ms $((t2 - t1))) ms, $n_batched checks, $(landed batched) landed"
echo "ratio batched / serial: $(ratio $((t2 - t1)) $((t1 - t0)))"

# A land that reuses a pass (the same candidate, tip, check, setup and
# include patterns: land, undo, land again) against a land without verify
# (--no-verify, after the same undo): the reuse key costs next to nothing.
# Best of 3 each.
one_agent() {
	git agency worktree create --name "$1" >/dev/null
	local id
	id=$(git agency agent start -w "$1" --runner sh --headless --detached --prompt "echo $1 > $1.txt; git add -A; git commit -qm $1")
	wait_status finished "$id"
	echo "$id"
}
reuse_id=$(one_agent reuse)
plain_id=$(one_agent plain)
git agency agent land "$reuse_id" >/dev/null
git agency agent land --no-verify "$plain_id" >/dev/null
best_reuse=0 best_plain=0
for _ in 1 2 3; do
	git agency undo >/dev/null # the plain land
	git agency undo >/dev/null # the reused one
	a=$(now_ns)
	git agency agent land "$reuse_id" >/dev/null
	b=$(now_ns)
	git agency agent land --no-verify "$plain_id" >/dev/null
	c=$(now_ns)
	if [ "$best_reuse" = 0 ] || [ $((b - a)) -lt "$best_reuse" ]; then best_reuse=$((b - a)); fi
	if [ "$best_plain" = 0 ] || [ $((c - b)) -lt "$best_plain" ]; then best_plain=$((c - b)); fi
done
reused=$(cat "$AGENCY_DATA_DIR"/repos/*/invocations/"$reuse_id"/events.jsonl | grep -c '"verify_reused"')
echo "land reusing a pass:         $(ms "$best_reuse") ms ($reused reuses, best of 3)"
echo "land without verify:         $(ms "$best_plain") ms (best of 3)"
echo "ratio reuse / no verify: $(ratio "$best_reuse" "$best_plain") (target <= 1.1)"
