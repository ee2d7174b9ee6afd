#!/usr/bin/env bash
# Benchmark A/B of the seam: the tollgate cases of bench.Suite run on impl/
# through internal/seam (A) and on the same impl/ with the seam import
# rewritten to sync/atomic (B; seam.Pair stays, see scripts/seam-variant.sh),
# interleaved, COUNT times each. Prints the raw results of both (benchstat
# format) and the mean ns/op per case and B/A. scripts/seam-check.sh already
# proves the two compile to the same machine code; this shows it in time.
# Usage: bash scripts/seam-ab.sh [COUNT] [BENCHTIME]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
# shellcheck source=scripts/seam-variant.sh
. scripts/seam-variant.sh
count=${1:-3}; benchtime=${2:-300ms}
# go test matches each /-separated level of a -bench pattern on its own.
filters=('Suite/TB/^work=(admit|refuse)$/^keys=1$/^g=[12]$/^design=tollgate$' 'Suite/CR/^work=reserve-release$/^g=[12]$/^design=tollgate$')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in seam atomic; do seam_copy_tree "$tmp/$v"; done
seam_atomic_variant "$tmp/atomic"
for v in seam atomic; do (cd "$tmp/$v" && go test -c -o "$tmp/$v.test" ./bench); done
for i in $(seq 1 "$count"); do
  for v in seam atomic; do
    for filter in "${filters[@]}"; do
      (cd "$tmp/$v/bench" && "$tmp/$v.test" -test.run '^$' -test.bench "$filter" -test.benchtime "$benchtime") | grep '^Benchmark' >> "$tmp/$v.txt"
    done
  done
done
for v in seam atomic; do echo "== $v"; cat "$tmp/$v.txt"; done
echo "== mean ns/op: seam (A), sync/atomic (B), B/A"
awk 'FNR==1{v++} {n[$1]; s[v,$1]+=$3; c[v,$1]++} END {for (k in n) printf "%-70s %8.1f %8.1f %5.2f\n", k, s[1,k]/c[1,k], s[2,k]/c[2,k], (s[2,k]/c[2,k])/(s[1,k]/c[1,k])}' "$tmp/seam.txt" "$tmp/atomic.txt" | sort
