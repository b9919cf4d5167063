#!/bin/sh
# Writes FuzzIndex's seed corpus (seed/*.index): index files made by git,
# in every version and object format, with the entries and extensions git
# writes (skip-worktree, intent-to-add, assume-unchanged, conflict stages,
# a gitlink, a sparse index's directories, a path longer than 4095 bytes).
# Split index off. Run from this directory: sh mkseeds.sh
set -eu
out=$(pwd)/seed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$tmp/gitconfig"
git config --global user.email seed@example.com
git config --global user.name seed
git config --global init.defaultBranch main
git config --global core.splitIndex false

files() {
	mkdir -p d/e f g
	echo a >a; echo b >d/b; echo c >d/e/c; echo f >f/f1; echo g >g/g1
	ln -s a l
	chmod +x d/b
}

for fmt in sha1 sha256; do
	r="$tmp/$fmt"
	git init -q --object-format=$fmt "$r"
	cd "$r"
	files
	git add -A
	git commit -qm one
	for v in 2 3 4; do
		git update-index --index-version $v
		cp .git/index "$out/plain-v$v.$fmt.index"
	done
	git update-index --index-version 2
	# flags: intent-to-add (forces version 3), assume-unchanged
	echo n >new
	git add -N new
	git update-index --assume-unchanged a
	cp .git/index "$out/flags-v3.$fmt.index"
	git update-index --index-version 4
	cp .git/index "$out/flags-v4.$fmt.index"
	git update-index --no-assume-unchanged a
	git rm -q --cached new
	rm new
	git update-index --index-version 2
	# skip-worktree entries of a sparse checkout, then a sparse index
	git sparse-checkout set --cone d
	cp .git/index "$out/skipworktree.$fmt.index"
	git config index.sparse true
	git sparse-checkout reapply
	cp .git/index "$out/sparsedir.$fmt.index"
	git sparse-checkout disable
	git config index.sparse false
	cd /
done

# conflict stages, a gitlink, a long path (SHA-1)
r="$tmp/more"
git init -q "$r"
cd "$r"
echo base >c
git add c
git commit -qm base
git checkout -qb other
echo other >c
git commit -qam other
git checkout -q main
echo main >c
git commit -qam main
git merge -q other >/dev/null 2>&1 || true
cp .git/index "$out/conflict.sha1.index"
git reset -q --hard
git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub
cp .git/index "$out/gitlink.sha1.index"
git rm -q --cached sub
long=$(printf 'long-directory-name-%04d/' $(seq 1 200))x
git update-index --add --cacheinfo 100644,$(echo long | git hash-object -w --stdin),"$long"
for v in 2 4; do
	git update-index --index-version $v
	cp .git/index "$out/longpath-v$v.sha1.index"
done
