#!/bin/sh
# make demo: git-agency in two minutes, no API key needed.
#
# Builds and installs git-agency into a temporary directory, makes a
# throwaway repository there with its own data directory, runs three agents
# at once (the bundled demo agent, internal/demoagent, which edits files and
# prints Claude-style JSONL), shows them and one's diff, lands two, shows a conflict refused
# by 'land --check', discards the third, prints the integration log, and
# deletes everything it made. Your repositories, your data directory and
# your installed binaries are never touched.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEMO_TMP=$(mktemp -d "${TMPDIR:-/tmp}/git-agency-demo.XXXXXX")
case "$DEMO_TMP" in
*/git-agency-demo.*) ;;
*) echo "demo: unexpected temp dir $DEMO_TMP" >&2; exit 1 ;;
esac

cleanup() {
	status=$?
	if [ -n "${REPO:-}" ] && [ -d "$REPO" ]; then
		for id in ${IDS:-}; do git -C "$REPO" agency agent kill "$id" >/dev/null 2>&1 || true; done
	fi
	if [ -n "${DEMO_KEEP:-}" ]; then
		echo "demo: kept $DEMO_TMP (DEMO_KEEP is set)"
	else
		chmod -R u+w "$DEMO_TMP" 2>/dev/null || true
		rm -rf "$DEMO_TMP"
	fi
	exit $status
}
trap cleanup EXIT INT TERM

if [ -t 1 ]; then
	step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	step() { printf '\n== %s\n' "$*"; }
fi
run() { printf '$ %s\n' "$*"; "$@"; }

# Everything the demo does lives under $DEMO_TMP: binaries, data, config.
export AGENCY_DATA_DIR="$DEMO_TMP/data"
export GIT_CONFIG_GLOBAL="$DEMO_TMP/gitconfig"
export GIT_CONFIG_NOSYSTEM=1
export TMUX_TMPDIR="$DEMO_TMP"
export DEMO_DELAY="${DEMO_DELAY:-200ms}"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE 2>/dev/null || true
git config --global user.name "Demo User"
git config --global user.email demo@example.com
git config --global init.defaultBranch main
git config --global commit.gpgsign false

step "build and install into $DEMO_TMP/bin"
make -s -C "$ROOT" install GOBIN="$DEMO_TMP/bin" BUILD="$DEMO_TMP/build" >/dev/null
(cd "$ROOT" && go build -o "$DEMO_TMP/bin/demoagent" ./internal/demoagent)
PATH="$DEMO_TMP/bin:$PATH"
export PATH
run git agency --version

step "a throwaway repository"
REPO="$DEMO_TMP/shop"
mkdir -p "$REPO"
cd "$REPO"
git init -q
printf '# Shop\n\nA tiny shop.\n' > README.md
printf 'price = 10\ncurrency = EUR\n' > config.txt
git add -A
git commit -qm "initial commit"
git config agency.runner.demo.command demoagent
git config agency.runner.demo.format claude
run git log --oneline

step "an integration worktree: your branch, in its own directory"
run git agency worktree create --name checkout
TREE=$(git agency worktree path checkout)

step "three agents at once, each in its own sandbox"
A=$(git agency agent start -w checkout --runner demo --headless --detached --prompt "say Adding a greeting page.
write greeting.txt: Welcome to the shop!
commit Add a greeting page")
B=$(git agency agent start -w checkout --runner demo --headless --detached --prompt "say Raising the price.
replace config.txt: price = 10 => price = 12
commit Raise the price to 12")
C=$(git agency agent start -w checkout --runner demo --headless --detached --prompt "say Lowering the price.
replace config.txt: price = 10 => price = 8
commit Lower the price to 8")
IDS="$A $B $C"
echo "started $A $B $C"
for id in $IDS; do
	n=0
	until git agency agent show "$id" --json | grep -q '"status": "\(finished\|failed\)"'; do
		n=$((n + 1))
		if [ $n -gt 600 ]; then echo "demo: agent $id did not finish" >&2; exit 1; fi
		sleep 0.1
	done
done
run git agency agent ls

step "what agent $A did"
run git agency agent logs "$A" | head -n 4
run git agency agent diff --no-pager "$A"

step "land two"
run git agency agent land "$A"
run git agency agent land "$B"

step "the third conflicts with what just landed: land --check refuses"
if git agency agent land --check "$C"; then
	echo "demo: expected a conflict" >&2
	exit 1
fi

step "discard it"
run git agency agent discard "$C"

step "the integration log"
run git -C "$TREE" --no-pager log --oneline --graph

step "clean up"
echo "removing $DEMO_TMP (the repository, its worktrees, sandboxes and data)"
