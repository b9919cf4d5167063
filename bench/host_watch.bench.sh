# watch with 4 hosts × 25 agents: how long a key takes to show on screen
# (goal: a median of 50 ms or less). watch runs in a real terminal (a
# private tmux server, 200×50); each `j` is sent with tmux send-keys and
# timed until the line the screen marks selected ("> ") changes, while
# watch refreshes every second and the hosts' fetchers run. The four hosts
# are four names (four connections) for one private sshd on 127.0.0.1.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
command -v tmux >/dev/null || { echo "host watch: skipped (no tmux)"; exit 0; }
HOST_NAMES="box box2 box3 box4"
. "$BENCH_ROOT/bench/host_lib.sh"
TS="$BENCH_TMP/tmux.sock"
trap 'tmux -S "$TS" kill-server 2>/dev/null; host_cleanup' EXIT

make_repo "$BENCH_TMP/repo" 200
cd "$BENCH_TMP/repo"
git config agency.runner.sh.command sh
git config agency.runner.sh.headlessArg -c
git config agency.host.sshConfig "$S/client/config"
git agency worktree create --name bench >/dev/null
AGENTS=
per=${BENCH_HOST_AGENTS:-25}
for h in $HOST_NAMES; do
	git config agency.host.$h.ssh $h
	# The four names share one mirror on the host: none queued.
	git config agency.host.$h.maxActive 200
	for _ in $(seq "$per"); do
		AGENTS="$AGENTS $(git agency agent start -w bench --host $h --runner sh --headless --prompt 'sleep 900')"
	done
done

tmux -S "$TS" -f /dev/null new-session -d -x 200 -y 50 -e "PATH=$PATH" -e "HOME=$HOME" \
	-e "AGENCY_DATA_DIR=$AGENCY_DATA_DIR" -e GIT_CONFIG_NOSYSTEM=1 -c "$BENCH_TMP/repo" "git agency watch --interval 1s"
python3 - "$TS" "${BENCH_KEYS:-30}" $((per * 4)) <<'PY'
import statistics, subprocess, sys, time
sock, n, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def tmux(*a):
    return subprocess.run(["tmux", "-S", sock, *a], capture_output=True, text=True).stdout
def selected():
    # watch marks the selected row with a "> " gutter (and reverse video
    # where the terminal has it).
    for line in tmux("capture-pane", "-p").splitlines():
        if line.startswith("> "):
            return line
    return None
def wait(cond, within):
    end = time.monotonic() + within
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.002)
    return False
if not wait(lambda: tmux("capture-pane", "-p").count("@box") >= min(rows, 40) and selected(), 60):
    print("host watch: the rows did not show in 60 s")
    sys.exit(0)
time.sleep(2)  # past the first loads and the fetchers' first rounds
times = []
for i in range(n):
    if i and i % 40 == 0:
        tmux("send-keys", "g")
        time.sleep(0.3)
    before = selected()
    t0 = time.monotonic()
    tmux("send-keys", "j")
    if not wait(lambda: selected() != before, 5):
        print("host watch: a key did not show in 5 s")
        sys.exit(0)
    times.append((time.monotonic() - t0) * 1000)
    time.sleep(0.15)
times.sort()
print("watch, 4 hosts × %d agents: key to screen median %.1f ms (p90 %.1f ms, max %.1f ms, %d keys; goal ≤ 50 ms)"
      % (rows // 4, statistics.median(times), times[int(len(times) * 0.9) - 1], times[-1], len(times)))
PY
