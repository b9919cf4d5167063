#!/usr/bin/env bash
# Landing 50 commits with git agency against git cherry-pick of the same
# range (onto the unchanged base, and onto a moved HEAD), as a ratio.
cd "${BENCH_ROOT:-$(dirname "$0")/..}" && go run ./bench/land
