#!/bin/bash
# profile.sh PORT: where a take's server time goes, measured inside the
# server. Builds a throwaway library "tbprof" from the current
# impl/redis/tokenbucket/tokenbucket.lua (its helpers and take, no
# registrations) plus pieces.lua, loads it on the redis-server at PORT (one
# you started for this: it writes keys tollgate:tb:{prof}, rate:k1 and
# rate:kx), and prints, for each piece, ns per call: the best of 20 batches
# of 200 calls timed with TIME inside one FCALL (the best batch is the one
# least disturbed by other processes on a loaded machine). Run it several
# times and compare pieces of one run.
set -e
P=${1:?port}
here=$(cd "$(dirname "$0")" && pwd)
lua=$here/../../../../impl/redis/tokenbucket/tokenbucket.lua
{ echo '#!lua name=tbprof'; sed -e 's/tollgate_tb/tbprof/g' -e '/^redis.register_function/d' -e '/^#!lua/d' "$lua"; cat "$here/pieces.lua"; } |
  redis-cli -p "$P" -x FUNCTION LOAD REPLACE >/dev/null
redis-cli -p "$P" DEL 'tollgate:tb:{prof}' >/dev/null
for p in empty hget hset get setex time tonum13 tonumfrac fmt15 fmt17 oldbucket bucket pack unpack concat take rr; do
  printf '%-10s %s\n' "$p" "$(redis-cli -p "$P" FCALL tbprof_run 0 "$p" 200)"
done
