# Sourced by e2e/real.sh (after e2e/verify.sh): a Python project and a
# JavaScript project, each made here, with the real claude, offline.
#   - Python: a package with a src/ layout, an editable install and
#     unittest tests. The user's own checkout has its venv; copying it with
#     agency.include is named as pointing outside the tree. The documented
#     setup (docs/ready-sandboxes.md) makes a venv per sandbox and per
#     verify tree, whose editable install imports that tree's code.
#   - JavaScript: an npm package with a file: dependency inside the tree, a
#     package-lock.json and a test script; the setup is `npm ci`.
#   In both, a claude (the mock's @@SHELL@@ scenario: its Bash tool runs
#   the command we give) commits a change that breaks a test: verify holds
#   it back (E_VERIFY_FAILED, the integration branch unchanged). A second
#   claude commits a correct change: it is verified and lands.
#   - pnpm and Yarn (installed with npm into the CLI cache, once): their
#     documented setups make a ready sandbox in the wall.
# Uses real.sh's expect, pass, fail, wait_done, $work, $clis and send.sh's
# has, show_json and jval.

# pm_bin: pnpm and yarn, installed once beside the CLIs ("" if npm cannot).
pm_bin() {
  local dir; dir=$(dirname "$(dirname "$clis")")/pm
  if [ ! -x "$dir/node_modules/.bin/pnpm" ] || [ ! -x "$dir/node_modules/.bin/yarn" ]; then
    mkdir -p "$dir" && (cd "$dir" && npm install --silent --no-audit --no-fund --save-exact pnpm@9.15.9 yarn@1.22.22 >&2) || return 1
  fi
  echo "$dir/node_modules/.bin"
}

# project_repo DIR: a git repository in DIR with the sh runner and the
# wall, its first commit made from the files already there.
project_repo() {
  cd "$1" || return 1
  git init -q && git add -A && git commit -qm init || return 1
  git config agency.isolate bwrap
  git config agency.runner.sh.command sh
  git config agency.runner.sh.headlessArg -c
}

# claude_commit TAG COMMAND: a headless claude in worktree feat runs
# COMMAND with its Bash tool (inside the wall); the invocation in $inv.
claude_commit() {
  inv=$(git agency agent start -w feat --runner claude --headless -d --prompt "@@SHELL@@ $2" </dev/null) ||
    { fail "$1: agent start"; return 1; }
  wait_done "$inv" 300 || { fail "$1: the agent did not end"; return 1; }
}

# held_then_landed PROJECT BROKEN_INV FIXED_INV CHECK: verify refuses the
# broken one (branch unchanged) and lands the fixed one.
held_then_landed() {
  local p=$1 bad=$2 good=$3 before
  before=$(git -C "$(git agency worktree path feat)" rev-parse HEAD)
  git agency agent land "$bad" >"$work/$p-land-bad.out" 2>&1
  expect "$p: verify holds the broken change back (E_VERIFY_FAILED)" grep -q E_VERIFY_FAILED "$work/$p-land-bad.out"
  expect "$p: the integration branch did not move" test "$(git -C "$(git agency worktree path feat)" rev-parse HEAD)" = "$before"
  git agency agent land "$good" >"$work/$p-land-good.out" 2>&1
  expect "$p: the fixed change is verified and lands" test "$(jval_show "$good" record.landing_status)" = landed
  expect "$p: the integration tree has it" sh -c "$4"
}

jval_show() { show_json "$1" "$work/js.json"; jval "$work/js.json" "$2"; }

python_project() {
  echo "== projects: a Python package (venv per sandbox, editable install, unittest)"
  local py=$work/pyproj
  mkdir -p "$py/src/calc" "$py/tests"
  cat >"$py/pyproject.toml" <<'EOF'
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"
EOF
  printf 'from setuptools import setup\n\nsetup()\n' >"$py/setup.py"
  printf 'def add(a, b):\n    return a + b\n' >"$py/src/calc/__init__.py"
  cat >"$py/tests/test_calc.py" <<'EOF'
import os
import unittest

import calc


class TestCalc(unittest.TestCase):
    def test_imports_this_tree(self):
        # an editable install made for another checkout imports that one
        self.assertTrue(os.path.realpath(calc.__file__).startswith(os.path.realpath(os.getcwd()) + os.sep), calc.__file__)

    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)


if __name__ == "__main__":
    unittest.main()
EOF
  printf '.venv/\n__pycache__/\n*.egg-info/\nbuild/\n' >"$py/.gitignore"
  project_repo "$py" || { fail "python: the repository"; return; }
  # The documented recipe. pip builds an editable install with setuptools'
  # bdist_wheel (setuptools 70.1+, or the wheel package): offline, with an
  # older setuptools and no wheel, setup.py develop is the same install.
  local setup='python3 -m venv .venv && { .venv/bin/pip install -q --no-build-isolation --no-deps -e . || .venv/bin/python setup.py -q develop; }'
  # the user's own checkout has its venv, made the same way
  sh -c "$setup" >"$work/py-venv.log" 2>&1 || { fail "python: a venv in the checkout"; sed 's/^/    /' "$work/py-venv.log"; return; }
  if grep -q "invalid command 'bdist_wheel'" "$work/py-venv.log"; then
    echo "  note: pip cannot build an editable install offline here (setuptools < 70.1, no wheel): setup.py develop made it"
  fi
  expect "python: the checkout's tests pass" .venv/bin/python -m unittest discover -s tests -q
  # copying that venv is named (the mistake the issue saw)
  git config agency.include .venv/
  git agency worktree create --name copied >/dev/null 2>"$work/py-copied.err"
  expect "python: a copied venv is named as pointing outside the tree" \
    grep -q "warning: .venv: a virtualenv that points outside this tree ($py/.venv" "$work/py-copied.err"
  git config --unset agency.include
  git agency worktree rm copied >/dev/null 2>&1
  # the documented way: a venv made in every sandbox and verify tree
  git config agency.setup "$setup"
  git config agency.verify '.venv/bin/python -m unittest discover -s tests -q'
  git agency worktree create --name feat >/dev/null 2>"$work/py-feat.err" || { fail "python: worktree create"; return; }
  expect "python: nothing copied, nothing said" test ! -s "$work/py-feat.err"
  local bad good inv
  claude_commit python "sed -i 's/a + b/a - b/' src/calc/__init__.py && git commit -qam 'agent: add subtracts'" || return
  bad=$inv
  show_json "$bad" "$work/py-bad.json"
  local sb; sb=$(jval "$work/py-bad.json" record.sandbox_path)
  expect "python: the agent ran walled" test "$(jval "$work/py-bad.json" record.isolation)" = bwrap
  expect "python: the setup made the sandbox's own venv" test -x "$sb/.venv/bin/python"
  expect "python: it imports the sandbox's code" has "$(cd "$sb" && .venv/bin/python -c 'import calc; print(calc.__file__)')" "^$sb/src/calc/__init__.py\$"
  expect "python: the agent's commit breaks a test there" sh -c "cd '$sb' && ! .venv/bin/python -m unittest discover -s tests -q 2>/dev/null"
  claude_commit python "printf '\\n\\ndef sub(a, b):\\n    return a - b\\n' >> src/calc/__init__.py && git commit -qam 'agent: add sub'" || return
  good=$inv
  held_then_landed python "$bad" "$good" "grep -q 'def sub' '$(git agency worktree path feat)/src/calc/__init__.py'"
  cd "$work" || return
}

js_project() {
  echo "== projects: an npm package (npm ci per sandbox, npm test)"
  local js=$work/jsproj
  mkdir -p "$js/vendor/pad"
  cat >"$js/package.json" <<'EOF'
{
  "name": "shout",
  "version": "1.0.0",
  "private": true,
  "scripts": { "test": "node test.js" },
  "dependencies": { "pad": "file:vendor/pad" }
}
EOF
  printf '{ "name": "pad", "version": "1.0.0", "main": "index.js" }\n' >"$js/vendor/pad/package.json"
  printf 'module.exports = (s, n) => s.padEnd(n, ".");\n' >"$js/vendor/pad/index.js"
  printf 'const pad = require("pad");\nexports.shout = (s) => pad(s.toUpperCase() + "!", 8);\n' >"$js/index.js"
  cat >"$js/test.js" <<'EOF'
const assert = require("assert");
const { shout } = require("./index");
assert.strictEqual(shout("hi"), "HI!.....");
console.log("1 passed, 0 failed");
EOF
  printf 'node_modules/\n' >"$js/.gitignore"
  (cd "$js" && npm install --silent --no-audit --no-fund >"$work/js-npm.log" 2>&1) || { fail "npm install in the checkout"; sed 's/^/    /' "$work/js-npm.log"; return; }
  project_repo "$js" || { fail "js: the repository"; return; }
  expect "js: package-lock.json is committed" git cat-file -e HEAD:package-lock.json
  expect "js: the checkout's tests pass" npm test --silent
  git config agency.setup 'npm ci --no-audit --no-fund'
  git config agency.verify 'npm test'
  git agency worktree create --name feat >/dev/null 2>"$work/js-feat.err" || { fail "js: worktree create"; return; }
  local bad good inv
  claude_commit js "sed -i 's/toUpperCase/toLowerCase/' index.js && git commit -qam 'agent: quieter'" || return
  bad=$inv
  show_json "$bad" "$work/js-bad.json"
  local sb; sb=$(jval "$work/js-bad.json" record.sandbox_path)
  expect "js: npm ci made the sandbox's node_modules" test -f "$sb/node_modules/pad/index.js"
  expect "js: the agent's commit breaks the test there" sh -c "cd '$sb' && ! npm test --silent >/dev/null 2>&1"
  claude_commit js "printf 'exports.whisper = (s) => s.toLowerCase();\\n' >> index.js && git commit -qam 'agent: whisper'" || return
  good=$inv
  held_then_landed js "$bad" "$good" "grep -q whisper '$(git agency worktree path feat)/index.js'"
  cd "$work" || return
}

# pm_case NAME LOCKFILE INSTALL-IN-CHECKOUT SETUP TEST: another package
# manager's documented setup makes a ready sandbox inside the wall.
pm_case() {
  local name=$1 dir=$work/$1proj
  echo "== projects: $name (its documented setup in the wall)"
  mkdir -p "$dir/vendor/pad"
  cp "$work/jsproj/package.json" "$work/jsproj/index.js" "$work/jsproj/test.js" "$work/jsproj/.gitignore" "$dir/"
  cp "$work/jsproj/vendor/pad/"* "$dir/vendor/pad/"
  (cd "$dir" && sh -c "$3" >"$work/$name-install.log" 2>&1) || { fail "$name: install in the checkout"; sed 's/^/    /' "$work/$name-install.log"; return; }
  project_repo "$dir" || { fail "$name: the repository"; return; }
  expect "$name: $2 is committed" git cat-file -e "HEAD:$2"
  git config agency.setup "$4"
  git agency worktree create --name feat >/dev/null 2>&1 || { fail "$name: worktree create"; return; }
  local inv
  inv=$(git agency agent start -w feat --runner sh --headless -d --prompt "$5 > test.out 2>&1" </dev/null) || { fail "$name: agent start"; return; }
  wait_done "$inv" 300 || { fail "$name: did not end"; return; }
  show_json "$inv" "$work/$name.json"
  local sb; sb=$(jval "$work/$name.json" record.sandbox_path)
  expect "$name: the setup ran and the test passed in the wall" test "$(jval "$work/$name.json" 'record.status + " " + record.exit_code + " " + record.isolation')" = "finished 0 bwrap"
  expect "$name: node_modules was made in the sandbox" test -f "$sb/node_modules/pad/index.js"
  expect "$name: the test's output" grep -q "1 passed, 0 failed" "$sb/test.out"
  cd "$work" || return
}

case ${AGENCY_E2E_ONLY:-projects} in claude|projects)
  python_project
  js_project
  if pm=$(pm_bin); then
    export PATH="$pm:$PATH"
    pm_case pnpm pnpm-lock.yaml 'pnpm install --silent' 'pnpm install --frozen-lockfile' 'pnpm test'
    pm_case yarn yarn.lock 'yarn install --silent' 'yarn install --frozen-lockfile' 'yarn test'
  else
    fail "pnpm and yarn could not be installed with npm"
  fi
  ;;
esac
