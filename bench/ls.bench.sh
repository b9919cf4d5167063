# agent ls (--json and the table) and completion of invocation ids at 1000
# finished records against 1, as ratios (goal ≤ 2): landed and discarded
# records never change, so their cost must not grow with the history.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
sh_repo 100
git agency worktree create --name bench >/dev/null
id=$(git agency agent start -w bench --runner sh --headless --detached --prompt 'echo "{\"type\":\"result\"}"; echo done')
wait_status finished "$id"
git agency agent discard "$id" </dev/null >/dev/null
inv_dir=$(dirname "$(ls -d "$AGENCY_DATA_DIR"/repos/*/invocations/"$id")")

measure() {
	ls_json=$(median_ns git agency agent ls --json)
	ls_table=$(median_ns git agency agent ls)
	complete=$(median_ns git agency __complete invocations)
}
measure
one_json=$ls_json one_table=$ls_table one_complete=$complete

# 999 more discarded records: copies of the real one under new ids.
python3 - "$inv_dir" "$id" <<'PY'
import json, os, shutil, sys
root, src = sys.argv[1], sys.argv[2]
rec = json.load(open(os.path.join(root, src, "meta.json")))
stamp = src.split("-")[0]
for i in range(999):
    nid = "%s-%04x" % (str(int(stamp) - 1 - i // 4096).zfill(14), i % 4096)
    d = os.path.join(root, nid)
    os.makedirs(d, mode=0o700)
    r = dict(rec, invocation_id=nid)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(r, f, indent=2)
    shutil.copy(os.path.join(root, src, "events.jsonl"), d) if os.path.exists(os.path.join(root, src, "events.jsonl")) else None
PY
measure
echo "records: 1 and 1000 (landed or discarded), medians of 7"
printf 'agent ls --json:           %7.1f ms -> %7.1f ms, ratio %s (goal <= 2)\n' "$(ms $one_json)" "$(ms $ls_json)" "$(ratio $ls_json $one_json)"
printf 'agent ls:                  %7.1f ms -> %7.1f ms, ratio %s (goal <= 2)\n' "$(ms $one_table)" "$(ms $ls_table)" "$(ratio $ls_table $one_table)"
printf '__complete invocations:    %7.1f ms -> %7.1f ms, ratio %s (goal <= 2)\n' "$(ms $one_complete)" "$(ms $complete)" "$(ratio $complete $one_complete)"
