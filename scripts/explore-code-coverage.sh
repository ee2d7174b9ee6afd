#!/usr/bin/env bash
# The code coverage of the tables by the default explore run: builds
# tollgate with -cover over the explored copies of impl/, runs the default
# `tollgate explore`, and renders the table (internal/interleave/codecov).
#   bash scripts/explore-code-coverage.sh            # compare with spec/explore-code-coverage.md
#   bash scripts/explore-code-coverage.sh -write     # rewrite it
# Exit 1 when the table differs from the committed one, when a block not
# reached has no reason in internal/interleave/codecov/testdata/unreached.txt,
# or when a reason names a block that is reached.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/cov"
go build -cover -covermode=set \
  -coverpkg=./cmd/tollgate,./internal/mutants/explored/credits,./internal/mutants/explored/tokenbucket \
  -o "$work/tollgate" ./cmd/tollgate
GOCOVERDIR="$work/cov" "$work/tollgate" explore -progress 0 >"$work/explore.txt" 2>&1 || {
  echo "the default explore run failed:"; cat "$work/explore.txt"; exit 1; }
go tool covdata textfmt -i "$work/cov" -o "$work/profile.txt"
rc=0
go run ./internal/interleave/codecov/table -profile "$work/profile.txt" >"$work/table.md" || rc=$?
if [ "${1:-}" = "-write" ]; then
  cp "$work/table.md" spec/explore-code-coverage.md
  echo "wrote spec/explore-code-coverage.md"
elif ! diff -u spec/explore-code-coverage.md "$work/table.md"; then
  echo "spec/explore-code-coverage.md differs from what the default explore run reaches: bash scripts/explore-code-coverage.sh -write"
  rc=1
fi
exit "$rc"
