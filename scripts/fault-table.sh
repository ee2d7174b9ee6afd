#!/usr/bin/env bash
# One backend's fault table: tollgate check --backend BACKEND with every
# fault, once per seed, each run's load average written beside its output.
# With HOG=n, n busy loops run beside the checks (HOG=4 on 2 cores: load
# average about 4). Called by scripts/redis-faults.sh and
# scripts/etcd-faults.sh, which name the backend, where the table goes, the
# prefix of its files and the server version line.
#
#   bash scripts/fault-table.sh BACKEND OUTDIR PREFIX VERSION-COMMAND [seeds]
set -euo pipefail
cd "$(dirname "$0")/.."
backend=$1 out=$2 pre=$3 version=$4
seeds=${5:-"1 2 3 4 5"}
mkdir -p "$out"
bin=$(mktemp -d)
tg=$bin/tollgate
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$bin"
}
trap cleanup EXIT
go build -o "$tg" ./cmd/tollgate
for _ in $(seq 1 "${HOG:-0}"); do
  (while :; do :; done) &
  pids+=($!)
done
tag=${HOG:+-load$HOG}
for s in $seeds; do
  f="$out/${pre}seed-$s$tag.txt"
  {
    echo "# tollgate check --backend $backend -duration 10s -seed $s -progress 0 -timeout 60s"
    echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(bash -c "$version"), busy loops beside it: ${HOG:-0}"
    echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$f"
  rc=0
  "$tg" check --backend "$backend" -duration 10s -seed "$s" -progress 0 -timeout 60s >>"$f" 2>&1 || rc=$?
  {
    echo "# exit $rc"
    echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  } >>"$f"
  echo "seed $s: exit $rc, $(grep -c '^  fault' "$f") fault rows -> $f"
done
