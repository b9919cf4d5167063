# .worktreeinclude: copying a 10k-file ignored node_modules into a new
# integration worktree, against `cp -a` of the same tree (goal ≤ 1.2×, less
# where the file system has reflinks). Prints numbers; never fails.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
N=${BENCH_FILES:-20000}
M=${BENCH_MODULES:-10000}
make_repo "$BENCH_TMP/repo" "$N"
cd "$BENCH_TMP/repo"
python3 - "$M" <<'PY'
import os, sys
m = int(sys.argv[1])
for i in range(m):
    d = "node_modules/p%03d/lib" % (i % 500)
    os.makedirs(d, exist_ok=True)
    with open("%s/m%05d.js" % (d, i), "w") as f:
        f.write("module.exports = %d;\n" % i * 20)
os.makedirs("node_modules/.bin", exist_ok=True)
os.symlink("../p000/lib/m00000.js", "node_modules/.bin/tool")
PY
printf 'node_modules/\n' > .gitignore
printf 'node_modules\n' > .worktreeinclude
git add .gitignore .worktreeinclude && git commit -qm include

runs=3
cp_total=0
for i in $(seq $runs); do
	sync
	t0=$(now_ns)
	cp -a node_modules "$BENCH_TMP/cp-$i"
	t1=$(now_ns)
	cp_total=$((cp_total + t1 - t0))
done

inc_total=0
cloned=0
for i in $(seq $runs); do
	sync
	out=$(git agency worktree create --name inc-$i --json)
	d=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["include"]["duration_ms"])')
	cloned=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["include"]["cloned"])')
	inc_total=$((inc_total + d * 1000000))
done

echo "ignored files copied:          $M (node_modules)"
echo "cp -a (mean):                  $(ms $((cp_total / runs))) ms"
echo ".worktreeinclude copy (mean):  $(ms $((inc_total / runs))) ms ($cloned files as reflinks)"
echo "ratio include copy / cp -a:    $(ratio $inc_total $cp_total)  (goal <= 1.2)"
