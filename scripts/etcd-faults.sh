#!/usr/bin/env bash
# The committed fault table of the etcd backend (backends/etcdcheck/results):
# tollgate check --backend etcd with every fault, once per seed, each run's
# load average written beside its output. With HOG=n, n busy loops run
# beside the checks (HOG=4 on 2 cores: load average about 4).
#
#   bash scripts/etcd-faults.sh [seeds] [outdir]    (default: 1 2 3 4 5, backends/etcdcheck/results)
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/fault-table.sh etcd "${2:-backends/etcdcheck/results}" "" \
  "echo etcd \$(etcd --version | sed -n 's/^etcd Version: //p')" "${1:-1 2 3 4 5}"
