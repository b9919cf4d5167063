# agent start --host to the agent's first output, against a local agent
# start to its first output (goal: at most +150 ms, warm connection and
# mirror), and agent ls with a host's agents, from the cache and live.
# The host is a private sshd on 127.0.0.1 with its own keys and HOME.
. "$BENCH_ROOT/bench/lib.sh"
bench_setup
[ -x /usr/sbin/sshd ] || { echo "host: skipped (no /usr/sbin/sshd)"; exit 0; }
S="$BENCH_TMP/sshd"
mkdir -p "$S/hosthome/.local/bin" "$S/client"
[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$S/client/id"
cp "$S/client/id.pub" "$S/authorized_keys"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$S/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port $PORT
HostKey $S/host_key
PidFile $S/sshd.pid
AuthorizedKeysFile $S/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
SetEnv HOME=$S/hosthome
MaxSessions 100
MaxStartups 100
CFG
echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$S/host_key.pub")" > "$S/client/known_hosts"
cat > "$S/client/config" <<CFG
Host box
  HostName 127.0.0.1
  Port $PORT
  User $(id -un)
  IdentityFile $S/client/id
  IdentitiesOnly yes
  UserKnownHostsFile $S/client/known_hosts
  StrictHostKeyChecking yes
  LogLevel ERROR
CFG
/usr/sbin/sshd -D -f "$S/sshd_config" -E "$S/sshd.log" &
SSHD=$!
trap 'kill $SSHD 2>/dev/null; ssh -F "$S/client/config" -o ControlPath="$AGENCY_DATA_DIR/cm/*" -O exit box 2>/dev/null; bench_cleanup' EXIT
cp "$BENCH_TMP/bin/git-agency" "$S/hosthome/.local/bin/"
cp "$HOME/.gitconfig" "$S/hosthome/.gitconfig"
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$PORT))" 2>/dev/null && break; sleep 0.05; done

make_repo "$BENCH_TMP/repo" 200
cd "$BENCH_TMP/repo"
git config agency.runner.sh.command sh
git config agency.runner.sh.headlessArg -c
git config agency.host.box.ssh box
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
# ls: live (the host asked, refs fetched), then from the cache (within 2 s).
t0=$(now_ns); git agency agent ls >/dev/null; t1=$(now_ns); git agency agent ls >/dev/null; t2=$(now_ns)
echo "agent ls with $((runs * 2 + 1)) agents on box: live $(ms $((t1 - t0))) ms, cached $(ms $((t2 - t1))) ms"
t0=$(now_ns); git agency host ls >/dev/null; t1=$(now_ns)
echo "host ls: $(ms $((t1 - t0))) ms"
