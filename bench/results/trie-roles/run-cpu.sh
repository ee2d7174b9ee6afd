#!/bin/bash
# Interleaved A/B of the take by CPU time: a fixed 20,000,000 takes per run
# (-benchtime 20000000x, GOMAXPROCS=1), the process's user+system CPU seconds
# read by /usr/bin/time, which waiting for a core does not add to.
cd /tmp/ab
rounds=${1:-15}
vs=(old new hdr)
for r in $(seq 1 $rounds); do
  for k in 0 1 2; do
    v=${vs[$(( (k + r) % 3 ))]}
    for b in TakeString TakeInt; do
      t=$( { GOMAXPROCS=1 /usr/bin/time -f "%U %S" ./$v.tb.test -test.run '^$' -test.bench "^Benchmark$b\$" -test.benchtime 20000000x -test.count 1 > /dev/null; } 2>&1 | tail -1)
      echo "$v $b $r $t $(cut -d' ' -f1 /proc/loadavg)" >> raw/cpu.txt
    done
  done
done
echo "# done" >> raw/cpu.txt
