#!/bin/bash
# run.sh TOLLGATE OUT [ROUNDS]: the 1 -> 3 primary scaling (tollgate bench
# -redis-cluster) with the benchmark's process pinned to CPU 1 and every
# redis-server it starts pinned to CPU 0 (taskset) as soon as it appears,
# on a machine of 2 CPUs. TOLLGATE is a built cmd/tollgate. Besides the
# bench's own output in OUT (raw.txt, RESULTS.md), it writes OUT/servers.txt:
# each server's command line and its CPU time (utime+stime from
# /proc/PID/stat, last read before it exited), so that the servers' CPU per
# take can be set beside the client's (cpu-ns/op in RESULTS.md).
set -e
bin=${1:?tollgate binary}
out=${2:?output directory}
rounds=${3:-7}
mkdir -p "$out"
tick=$(getconf CLK_TCK)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') start, load average $(cut -d' ' -f1-3 /proc/loadavg)" > "$out/load.txt"
taskset -c 1 nice -n 10 "$bin" bench -redis-cluster -run REDIS-CLUSTER -rounds "$rounds" -benchtime 300ms -memkeys 0 -out "$out" > "$out/stdout.txt" 2>&1 &
pid=$!
declare -A cpu cmd order
n=0
client=""
while kill -0 "$pid" 2>/dev/null; do
  [ -z "$client" ] && client=$(taskset -pc "$pid" 2>/dev/null | sed 's/.*: //')
  for c in $(pgrep -P "$pid" -x redis-server || true); do
    if [ -z "${cmd[$c]}" ]; then
      taskset -pc 0 "$c" > /dev/null || continue
      # redis-server sets its title to "redis-server 127.0.0.1:PORT ...";
      # the affinity is read back to show the pinning took.
      cmd[$c]="$(tr '\0' ' ' < "/proc/$c/cmdline" 2>/dev/null | grep -o -- ':[0-9]*' | head -1 | tr -d :) cpus=$(taskset -pc "$c" | sed 's/.*: //')"
      n=$((n + 1)); order[$c]=$n
    fi
    # utime and stime are fields 14 and 15 of /proc/PID/stat (the command
    # name, field 2, holds no space here).
    t=$(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || true)
    [ -n "$t" ] && cpu[$c]=$t
  done
  sleep 0.2
done
wait "$pid" || echo "# tollgate bench exited $?" >> "$out/load.txt"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') end, load average $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/load.txt"
{
  echo "# client (tollgate bench, pid $pid): cpus=$client"
  echo "# order pid port affinity cpu_seconds (CLK_TCK $tick); the first two servers are the 1-primary cluster (primary, replica), the next six the 3-primary one (primaries first)"
  for c in "${!order[@]}"; do
    echo "${order[$c]} $c ${cmd[$c]} $(awk -v t="${cpu[$c]:-0}" -v k="$tick" 'BEGIN{printf "%.2f", t/k}')"
  done | sort -n
} > "$out/servers.txt"
