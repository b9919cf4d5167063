# Shared by the host benchmarks (sourced after lib.sh's bench_setup):
# a private sshd on 127.0.0.1 with its own keys and HOME, which every
# name of HOST_NAMES reaches (one connection per name), and its cleanup.
HOST_NAMES=${HOST_NAMES:-box box2}
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
Host $HOST_NAMES
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
host_cleanup() {
	local p
	for p in "$AGENCY_DATA_DIR"/repos/*/hosts/*.fetcher; do [ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
	for p in ${AGENTS:-}; do git -C "$BENCH_TMP/repo" agency agent kill "$p" >/dev/null 2>&1; done
	for p in "$AGENCY_DATA_DIR"/cm/* /tmp/agency-cm-"$(id -u)"-*/*; do
		[ -S "$p" ] && ssh -F "$S/client/config" -o ControlPath="$p" -O exit box 2>/dev/null
	done
	kill $SSHD 2>/dev/null
	bench_cleanup
}
trap host_cleanup EXIT
cp "$BENCH_TMP/bin/git-agency" "$S/hosthome/.local/bin/"
cp "$HOME/.gitconfig" "$S/hosthome/.gitconfig"
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$PORT))" 2>/dev/null && break; sleep 0.05; done

