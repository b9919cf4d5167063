# Shared helpers for the benchmark scripts (sourced). Benchmarks print
# numbers and ratios; they never fail a build.
set -u

# bench_setup: a private data dir, HOME and PATH with freshly built binaries.
bench_setup() {
	BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/agency-bench.XXXXXX")
	# Keep Go's caches where they are when HOME moves.
	export GOPATH=$(go env GOPATH) GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE)
	trap 'bench_cleanup' EXIT
	export HOME="$BENCH_TMP/home" AGENCY_DATA_DIR="$BENCH_TMP/data" GIT_CONFIG_NOSYSTEM=1
	mkdir -p "$HOME" "$BENCH_TMP/bin"
	git config --global user.name bench
	git config --global user.email bench@example.com
	git config --global init.defaultBranch main
	(cd "$BENCH_ROOT" && go build -o "$BENCH_TMP/bin/" ./cmd/git-agency ./cmd/git-sandbox ./cmd/git-agency-watch) || exit 1
	export PATH="$BENCH_TMP/bin:$PATH"
}

# bench_cleanup ends what the benchmark started, by process id (the
# records name every supervisor and runner; a pid counts only while its
# environment still names this benchmark's data directory), then removes
# its files.
bench_cleanup() {
	python3 - "$AGENCY_DATA_DIR" <<'PY'
import glob, json, os, signal, sys
data = sys.argv[1]
for p in glob.glob(data + "/repos/*/invocations/*/meta.json"):
    try:
        r = json.load(open(p))
    except Exception:
        continue
    for k in ("pid", "supervisor_pid"):
        pid = r.get(k)
        try:
            if not pid or ("AGENCY_DATA_DIR=" + data).encode() not in open("/proc/%d/environ" % pid, "rb").read():
                continue
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
PY
	rm -rf "$BENCH_TMP"
}

# wait_status STATUS ID...: waits (two minutes at most each) until every
# invocation's record has that status.
wait_status() {
	local want=$1 id
	shift
	for id in "$@"; do
		for _ in $(seq 1200); do
			git agency agent show "$id" --json | grep -q "\"status\": \"$want\"" && break
			sleep 0.1
		done
	done
}

# median_ns CMD...: runs CMD 7 times (after one warm-up) and prints the
# median wall time in nanoseconds.
median_ns() {
	local times=() t0 t1
	"$@" >/dev/null 2>&1
	for _ in 1 2 3 4 5 6 7; do
		t0=$(now_ns)
		"$@" >/dev/null 2>&1
		t1=$(now_ns)
		times+=($((t1 - t0)))
	done
	printf '%s\n' "${times[@]}" | sort -n | sed -n 4p
}

# make_repo DIR NFILES: a repository with NFILES files in nested dirs.
make_repo() {
	local dir=$1 n=$2
	git init -q "$dir"
	(cd "$dir" && python3 - "$n" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = "src/d%03d/e%02d" % (i % 200, (i // 200) % 50)
    os.makedirs(d, exist_ok=True)
    with open("%s/f%05d.txt" % (d, i), "w") as f:
        f.write("file %d\n" % i * 3)
PY
	git add -A && git commit -qm "generated $n files")
}

# sh_repo N: a generated repository of N files (make_repo) in
# $BENCH_TMP/repo, made the current directory, with a runner "sh" whose
# prompt is a shell script.
sh_repo() {
	make_repo "$BENCH_TMP/repo" "$1"
	cd "$BENCH_TMP/repo" || exit 1
	git config agency.runner.sh.command sh
	git config agency.runner.sh.headlessArg -c
}

# now_ns: monotonic-enough wall clock in nanoseconds.
now_ns() { date +%s%N; }

# ratio A B: A/B with two decimals.
ratio() { python3 -c "print('%.2f' % ($1 / max($2, 1)))"; }

# ms NS: nanoseconds as milliseconds.
ms() { python3 -c "print('%.1f' % ($1 / 1e6))"; }
