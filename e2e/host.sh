# Sourced by e2e/real.sh (its environment, mock, repository and helpers):
# a loopback host. A private sshd on 127.0.0.1 (its own keys; the host's
# own HOME, data directory and CLI logins, given by sshd's SetEnv) receives
# this build by `git agency host install`; one real claude and one real
# codex run there, walled, offline (the same mock model server), commit
# by their shell tools, and their work comes back as refs and lands here.
#   AGENCY_E2E_ONLY=host   run only this case

host_setup() {
  command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || { fail "no sshd (apt-get install openssh-server)"; return 1; }
  local sshd_bin; sshd_bin=$(command -v sshd || echo /usr/sbin/sshd)
  H=$work/host
  mkdir -p "$H/home/claude" "$H/home/codex" "$H/client"
  [ "$(id -u)" = 0 ] && mkdir -p /run/sshd
  ssh-keygen -q -t ed25519 -N '' -f "$H/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$H/client/id" || return 1
  cp "$H/client/id.pub" "$H/authorized_keys"
  hport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cp "$GIT_CONFIG_GLOBAL" "$H/home/gitconfig"
  cp "$CODEX_HOME/config.toml" "$H/home/codex/config.toml"
  cat >"$H/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port $hport
HostKey $H/host_key
PidFile $H/sshd.pid
AuthorizedKeysFile $H/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
MaxSessions 100
MaxStartups 100
SetEnv HOME=$H/home PATH=$PATH GIT_CONFIG_GLOBAL=$H/home/gitconfig GIT_CONFIG_NOSYSTEM=1 AGENCY_DATA_DIR=$H/data ANTHROPIC_BASE_URL=$ANTHROPIC_BASE_URL ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY CLAUDE_CONFIG_DIR=$H/home/claude CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_MAX_RETRIES=0 API_TIMEOUT_MS=60000 CODEX_HOME=$H/home/codex MOCK_API_KEY=$MOCK_API_KEY
CFG
  echo "[127.0.0.1]:$hport $(cut -d' ' -f1,2 "$H/host_key.pub")" >"$H/client/known_hosts"
  cat >"$H/client/config" <<CFG
Host loopback
  HostName 127.0.0.1
  Port $hport
  User $(id -un)
  IdentityFile $H/client/id
  IdentitiesOnly yes
  UserKnownHostsFile $H/client/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  LogLevel ERROR
CFG
  "$sshd_bin" -D -f "$H/sshd_config" -E "$H/sshd.log" &
  hsshd=$!
  local i
  for i in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$hport))" 2>/dev/null && break; sleep 0.05; done
  git config agency.host.box.ssh loopback
  git config agency.host.sshConfig "$H/client/config"
  expect "host install box" git agency host install box
  git agency host check box >"$work/host-check.out" 2>&1
  expect "host check box: all ok" sh -c "! grep -q FAIL '$work/host-check.out'"
  if grep -q FAIL "$work/host-check.out"; then sed 's/^/    /' "$work/host-check.out"; fi
  return 0
}

host_teardown() {
  local p
  for p in "$AGENCY_DATA_DIR"/repos/*/hosts/*.fetcher; do
    [ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null
  done
  for p in "$AGENCY_DATA_DIR"/cm/* /tmp/agency-cm-"$(id -u)"-*/*; do
    [ -S "$p" ] && ssh -F "$H/client/config" -o ControlPath="$p" -O exit loopback 2>/dev/null
  done
  [ -n "${hsshd:-}" ] && kill "$hsshd" 2>/dev/null && wait "$hsshd" 2>/dev/null
  git config --unset agency.host.box.ssh
}

# host_run RUNNER: a walled agent on the host commits by shell; its branch
# comes back here and lands.
host_run() {
  local r=$1
  echo "== $r: on a loopback host, walled, offline"
  local inv
  inv=$(git agency agent start -w feat --host box --runner "$r" --headless \
    --prompt "@@SHELL@@ echo from-host-$r > host-$r.txt && git add host-$r.txt && git commit -qm 'agent: host-$r'" </dev/null) ||
    { fail "agent start --host box"; return; }
  wait_done "$inv" 180 || { fail "did not end"; return; }
  show_json "$inv" "$work/host-$r.json"
  expect "status finished" test "$(jval "$work/host-$r.json" record.status)" = finished
  expect "it ran on box" test "$(jval "$work/host-$r.json" record.host)" = box
  expect "isolation bwrap there" test "$(jval "$work/host-$r.json" record.isolation)" = bwrap
  expect "its commit came back as agency/sandbox-$inv" test "$(git log -1 --format=%s "agency/sandbox-$inv")" = "agent: host-$r"
  expect "agent land (here)" git agency agent land "$inv"
  local tree; tree=$(git agency worktree path feat)
  expect "the host's work landed in the integration tree" grep -qx "from-host-$r" "$tree/host-$r.txt"
}

case ${AGENCY_E2E_ONLY:-host} in host)
  if host_setup; then
    host_run claude
    host_run codex
  fi
  host_teardown;;
esac
