#!/usr/bin/env bash
# make bench: Go benchmarks, then every bench/*.bench.sh. Prints numbers and
# ratios against plain git; never fails on a slow result.
BENCH_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BENCH_ROOT
cd "$BENCH_ROOT"
echo "== go benchmarks"
go test -run '^$' -bench . -benchtime 3x ./... 2>&1 | grep -E '^(Benchmark|ok|---)' || true
for s in bench/*.bench.sh; do
	[ -e "$s" ] || continue
	echo "== $s"
	bash "$s" || echo "(benchmark $s did not complete)"
done
exit 0
