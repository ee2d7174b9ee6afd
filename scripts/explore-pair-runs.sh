#!/usr/bin/env bash
# Runs that cover the pairs of access sites the default explore run leaves
# open (spec/explore-site-pairs.md), found by a deeper search and kept in
# internal/interleave/pairruns.txt, which the default run replays
# (interleave.PairRuns; spec/explore.md, "What the cap of one preemption
# hides"):
#
#   1. the default run without the kept runs, with -site-pairs: what it
#      covers;
#   2. every scenario the default run caps (-scenario capped) explored at
#      bound 2 past its cap (-uncapped), BUDGET each, in two processes
#      (-shard), each noting the first run of every pair (-site-pair-runs);
#   3. the runs that first covered a pair step 1 left open, without a
#      reason, written to internal/interleave/pairruns.txt.
#
#   bash scripts/explore-pair-runs.sh          # BUDGET 4m: 12 minutes on 2 cores (measured once)
#   bash scripts/explore-pair-runs.sh 30s      # a shorter search, fewer runs
#
# Then run scripts/explore-code-coverage.sh -write: the tables count what
# the kept runs cover. A change to the tables' code that moves a step
# makes a kept schedule drive another run (TestPairRunsFit fails): run
# this again.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-4m}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tollgate" ./cmd/tollgate
"$work/tollgate" explore -progress 0 -scenario catalogue,generated,edges,owner,directed \
	-site-pairs "$work/pairs.txt" >"$work/default.txt" 2>&1 || {
	cat "$work/default.txt"
	exit 1
}
for i in 1 2; do
	"$work/tollgate" explore -procs 1 -progress 0 -uncapped -bound 2 -budget "$budget" \
		-scenario capped -shard "$i/2" -site-pair-runs "$work/runs$i.txt" >"$work/deep$i.txt" 2>&1 &
done
rc=0
wait %1 || rc=$?
wait %2 || rc=$?
if [ "$rc" -ne 0 ]; then
	cat "$work/deep1.txt" "$work/deep2.txt"
	exit 1
fi
go run ./internal/interleave/sitepairs/table -covered "$work/pairs.txt" \
	-runs "$work/runs1.txt,$work/runs2.txt" -write-runs internal/interleave/pairruns.txt
