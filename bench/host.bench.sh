# agent start --host to the agent's first output, against a local agent
# start to its first output (goal: at most +150 ms, warm connection and
# mirror), and agent ls with 2 hosts of 20 agents each: from what the
# hosts' fetchers last fetched (goal ≤ 100 ms) and live, the hosts asked in
# parallel, with no fetcher at work (goal ≤ one ssh round trip + 250 ms).
# The two hosts are two names (two connections) for one private sshd.
# The host is a private sshd on 127.0.0.1 with its own keys and HOME.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
. "$BENCH_ROOT/bench/host_lib.sh"
make_repo "$BENCH_TMP/repo" 200
cd "$BENCH_TMP/repo"
git config agency.runner.sh.command sh
git config agency.runner.sh.headlessArg -c
git config agency.host.box.ssh box
git config agency.host.box2.ssh box2
# 20 agents each, none queued behind auto's limit on a small machine
# (both names share one mirror there, whose limit is the last start's).
git config agency.host.box.maxActive 50
git config agency.host.box2.maxActive 50
git config agency.host.sshConfig "$S/client/config"
git agency worktree create --name bench >/dev/null
# Warm: the connection, the hello, the mirror.
git agency agent start -w bench --host box --runner sh --headless --prompt true >/dev/null

first_output_local() {
	local t0 id raw
	t0=$(now_ns)
	id=$(git agency agent start -w bench --runner sh --headless -d --prompt 'echo first-output; sleep 30')
	raw=$(ls -d "$AGENCY_DATA_DIR"/repos/*/sandboxes/"$id")/logs/raw.jsonl
	for _ in $(seq 2000); do grep -q first-output "$raw" 2>/dev/null && break; sleep 0.005; done
	echo $(( $(now_ns) - t0 ))
}
first_output_host() {
	local t0 id raw
	t0=$(now_ns)
	id=$(git agency agent start -w bench --host box --runner sh --headless --prompt 'echo first-output; sleep 30')
	raw=$(ls -d "$S"/hosthome/.local/share/agency/repos/*/sandboxes/"$id")/logs/raw.jsonl
	for _ in $(seq 2000); do grep -q first-output "$raw" 2>/dev/null && break; sleep 0.005; done
	echo $(( $(now_ns) - t0 ))
}
runs=${BENCH_RUNS:-5}
loc=() rem=()
for _ in $(seq "$runs"); do
	loc+=("$(first_output_local)")
	rem+=("$(first_output_host)")
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
l=$(med "${loc[@]}") r=$(med "${rem[@]}")
echo "start to first output: local $(ms "$l") ms, --host $(ms "$r") ms (+$(ms $((r - l))) ms; goal ≤ +150 ms)"
# ls with 2 hosts × 20 agents: the starts spawned the hosts' fetchers.
AGENTS=
for h in box box2; do
	for _ in $(seq 20); do
		AGENTS="$AGENTS $(git agency agent start -w bench --host $h --runner sh --headless --prompt 'sleep 300')"
	done
done
for _ in $(seq 100); do [ "$(ls "$BENCH_TMP"/data/repos/*/hosts/box*.json 2>/dev/null | grep -vc fetcher)" -ge 4 ] && break; sleep 0.1; done
# "From what was last fetched": once the fetchers' first round over the 40
# new agents is written (their caches unchanged for a second), as a view
# finds them between turn ends; at most 30 s.
settled() { stat -c %Y.%y "$BENCH_TMP"/data/repos/*/hosts/box*.json 2>/dev/null | md5sum; }
prev=$(settled)
for _ in $(seq 30); do sleep 1; cur=$(settled); [ "$cur" = "$prev" ] && break; prev=$cur; done
# Timed with bash's own clock: a `date` process on each side would add
# its start-up to a figure of tens of milliseconds.
lsrun() {
	local t0=${EPOCHREALTIME/./} t1
	git agency agent ls >/dev/null
	t1=${EPOCHREALTIME/./}
	echo $(( (10#$t1 - 10#$t0) * 1000 ))
}
cached=() live=() rtt=()
for _ in $(seq "$runs"); do cached+=("$(lsrun)"); done
for p in "$AGENCY_DATA_DIR"/repos/*/hosts/*.fetcher; do [ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
sleep 0.5
for _ in $(seq "$runs"); do
	live+=("$(lsrun)")
	cm=$(ls -d "$AGENCY_DATA_DIR"/cm/* /tmp/agency-cm-"$(id -u)"-*/* 2>/dev/null | head -1)
	t0=${EPOCHREALTIME/./}
	ssh -F "$S/client/config" -o ControlPath="$cm" box true
	t1=${EPOCHREALTIME/./}
	rtt+=($(( (10#$t1 - 10#$t0) * 1000 )))
done
c=$(med "${cached[@]}") lv=$(med "${live[@]}") rt=$(med "${rtt[@]}")
echo "agent ls, 2 hosts × 20 agents: cached $(ms "$c") ms (goal ≤ 100 ms), live $(ms "$lv") ms (ssh round trip $(ms "$rt") ms; goal ≤ RTT + 250 ms = $(ms $((rt + 250000000))) ms)"
t0=$(now_ns); git agency host ls >/dev/null; t1=$(now_ns)
echo "host ls: $(ms $((t1 - t0))) ms"
