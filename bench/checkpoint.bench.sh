#!/usr/bin/env bash
# A checkpoint of a one-file change in a generated 20k-file sandbox against
# `git status --porcelain` in the same tree, as ratios: manual (goal ≤ 1.5)
# and automatic (goal ≤ 0.5).
cd "${BENCH_ROOT:-$(dirname "$0")/..}" && go run ./bench/checkpoint
