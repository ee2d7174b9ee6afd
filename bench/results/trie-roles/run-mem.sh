#!/bin/bash
# Interleaved A/B of the memory per idle key (1,000,000 keys, bench.MemoryPerKey), order rotated.
cd /tmp/ab
rounds=${1:-7}
vs=(old new hdr)
for r in $(seq 1 $rounds); do
  for k in 0 1 2; do
    v=${vs[$(( (k + r) % 3 ))]}
    echo "# round $r variant $v $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> raw/memory.txt
    TOLLGATE_LONG=1 ./$v.bench.test -test.run '^TestMemoryPerKeyTollgate$' -test.v 2>&1 | grep 'B per' | sed "s/^/$v /" >> raw/memory.txt
  done
done
echo done >> raw/memory.txt
