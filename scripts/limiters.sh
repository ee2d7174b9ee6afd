#!/usr/bin/env bash
# The full limiter campaign (spec/limiters.md): every released version of
# golang.org/x/time (v0.1.0 on) and go.uber.org/ratelimit the module proxy
# serves, and github.com/go-redis/redis_rate/v10 on a throwaway
# redis-server, each built in a generated module of its own. Writes
# limiters/results/ (results.md, results.json, cex/*.json and *.png), which
# is committed; the README and spec quote it.
#
#   bash scripts/limiters.sh            # about three minutes on 2 cores
#
# Needs network access to the module proxy (or a warm module cache) and
# redis-server (apt-get update && apt-get install -y redis-server).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$(go env GOPATH)/bin:$PATH"
out=limiters/results
rm -rf "$out"
go run ./cmd/tollgate limiters -out "$out" -seed 1 "$@"
