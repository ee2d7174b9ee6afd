#!/usr/bin/env bash
# Power-loss rows of the fault table (internal/lazyfs, issue 46 item 2):
# tollgate check with the data directories on lazyfs mounts, the faults
# named (default: the Redis row that must lose nothing, power-loss-always,
# and the one that must lose, power-loss-no). Exits non-zero when a row
# breaks its promise, and when this machine cannot mount FUSE: a power-loss
# row is never skipped.
#
#   bash scripts/power-loss.sh [backend] [faults]
#     e.g. bash scripts/power-loss.sh etcd power-loss-all
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${1:-redis}
faults=${2:-power-loss-always,power-loss-no}
if [ ! -e /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  echo "power-loss: this machine cannot mount FUSE (/dev/fuse: $([ -e /dev/fuse ] && echo present || echo missing);" \
    "fusermount3: $(command -v fusermount3 || echo missing)); install: apt-get update && apt-get install -y fuse3" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tg=$work/tollgate
go build -o "$tg" ./cmd/tollgate
"$tg" check --backend "$backend" -duration 2s -seed 1 -timeout 60s -progress 0 -faults "$faults"
