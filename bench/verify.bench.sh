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
