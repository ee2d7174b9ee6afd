#!/bin/bash
# run.sh BEFORE.test AFTER.test ROUNDS CALLS > raw.txt
#
# Interleaved rounds of impl/redis/tokenbucket's BenchmarkClient (one
# throwaway redis-server) and BenchmarkClientCluster (a throwaway Redis
# Cluster of 3 primaries, each with a replica): in each round both builds
# (test binaries made with `go test -c ./impl/redis/tokenbucket` from the
# commit before and after the change, with the same bench_test.go) run
# every design (take, bare, ping, wire) CALLS times on one goroutine, the
# builds' order alternating from round to round and the designs' order
# rotated (TOLLGATE_BENCH_ROTATE). Each output line is prefixed with the
# build and the round; the load average is written before and after each
# round. summarize.go reads the result.
set -e
before=${1:?before.test}
after=${2:?after.test}
rounds=${3:-9}
calls=${4:-10000}
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(nproc) cpus; $rounds rounds of $calls calls per design; builds: $before $after"
for r in $(seq 1 "$rounds"); do
  echo "# round $r start: $(cut -d' ' -f1-3 /proc/loadavg) (load average 1, 5, 15 min)"
  if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for build in $order; do
    bin=$before
    [ "$build" = after ] && bin=$after
    TOLLGATE_BENCH_ROTATE=$r nice -n 10 "$bin" -test.run XXX -test.bench 'Client' \
      -test.benchtime "${calls}x" -test.benchmem 2>&1 |
      grep '^Benchmark' | sed "s/^/$build r$r /"
  done
done
echo "# end: $(cut -d' ' -f1-3 /proc/loadavg) (load average 1, 5, 15 min) $(date -u '+%H:%M UTC')"
