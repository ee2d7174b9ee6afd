#!/bin/bash
# Interleaved A/B of the take: rounds of old, hdr (a), new (b), the order rotated each round.
cd /tmp/ab
rounds=${1:-9}
vs=(old new hdr)
for r in $(seq 1 $rounds); do
  for k in 0 1 2; do
    v=${vs[$(( (k + r) % 3 ))]}
    echo "# round $r variant $v $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> raw/take.txt
    ./$v.tb.test -test.run '^$' -test.bench 'Take(String|Int)$' -test.benchtime 1s -test.count 1 2>&1 | grep '^Benchmark' | sed "s/^/$v /" >> raw/take.txt
  done
done
echo "# batch done" >> raw/take.txt
