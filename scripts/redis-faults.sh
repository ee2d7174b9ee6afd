#!/usr/bin/env bash
# The committed fault table of the Redis backend (backends/redischeck/results):
# tollgate check --backend redis with every fault, once per seed, each run's
# load average written beside its output. With HOG=n, n busy loops run
# beside the checks (HOG=4 on 2 cores: load average about 4), to measure the
# checker's cost on a loaded machine. With BACKEND=redis-cluster, the
# cluster-* faults on a Redis Cluster instead, into cluster-seed-N.txt.
#
#   bash scripts/redis-faults.sh [seeds] [outdir]    (default: 1 2 3 4 5, backends/redischeck/results)
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${BACKEND:-redis}
pre=
[ "$backend" = redis-cluster ] && pre=cluster-
exec bash scripts/fault-table.sh "$backend" "${2:-backends/redischeck/results}" "$pre" \
  "redis-server --version | cut -d' ' -f1-3" "${1:-1 2 3 4 5}"
