#!/usr/bin/env bash
# What the default explore run reaches of the tables, measured in one run:
# builds tollgate with -cover over the explored copies of impl/, runs the
# default `tollgate explore` with -site-pairs, and renders two tables:
#   spec/explore-code-coverage.md  the blocks of code it reaches
#                                  (internal/interleave/codecov)
#   spec/explore-site-pairs.md     the ordered pairs of access sites it runs
#                                  with a switch of threads between them
#                                  (internal/interleave/sitepairs)
#   bash scripts/explore-code-coverage.sh            # compare with the committed tables
#   bash scripts/explore-code-coverage.sh -write     # rewrite them
# Exit 1 when the run fails, when a table differs from the committed one,
# when a block not reached has no reason in
# internal/interleave/codecov/testdata/unreached.txt, or when a reason (of
# either table) names what is reached.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/cov"
go build -cover -covermode=set \
  -coverpkg=./cmd/tollgate,./internal/mutants/explored/credits,./internal/mutants/explored/tokenbucket \
  -o "$work/tollgate" ./cmd/tollgate
GOCOVERDIR="$work/cov" "$work/tollgate" explore -progress 0 -site-pairs "$work/pairs.txt" >"$work/explore.txt" 2>&1 || {
  echo "the default explore run failed:"; cat "$work/explore.txt"; exit 1; }
tail -n 1 "$work/explore.txt"
go tool covdata textfmt -i "$work/cov" -o "$work/profile.txt"
rc=0
go run ./internal/interleave/codecov/table -profile "$work/profile.txt" >"$work/table.md" || rc=$?
go run ./internal/interleave/sitepairs/table -covered "$work/pairs.txt" >"$work/pairs.md" || rc=$?
if [ "${1:-}" = "-write" ]; then
  cp "$work/table.md" spec/explore-code-coverage.md
  cp "$work/pairs.md" spec/explore-site-pairs.md
  echo "wrote spec/explore-code-coverage.md and spec/explore-site-pairs.md"
else
  if ! diff -u spec/explore-code-coverage.md "$work/table.md"; then
    echo "spec/explore-code-coverage.md differs from what the default explore run reaches: bash scripts/explore-code-coverage.sh -write"
    rc=1
  fi
  if ! diff -u spec/explore-site-pairs.md "$work/pairs.md"; then
    echo "spec/explore-site-pairs.md differs from the pairs the default explore run covers: bash scripts/explore-code-coverage.sh -write"
    rc=1
  fi
fi
exit "$rc"
