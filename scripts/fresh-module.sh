#!/usr/bin/env bash
# Proves the README's claim that a program using impl/credits and
# impl/tokenbucket needs nothing beyond the standard library: a fresh
# module that requires this checkout (by a replace) and imports both
# tables builds with an empty go.sum, before and after go mod tidy, and
# go list -deps names no package outside the standard library and
# tollgate's own. Run from anywhere; exits 1 when the claim is false.
#
# Second, the tables' own floor. This module's go line is the highest go
# line among its dependencies (the tools' redis, etcd and x/ modules ask
# for 1.26), and since Go 1.21 a module's go line is a floor for every
# module that requires it: a consumer at go 1.24 that requires this module
# is told to raise its go line (go build: "updates to go.mod needed"; go
# mod tidy writes go 1.26.0). The tables themselves need no more than
# 1.24: the script copies impl/credits, impl/tokenbucket and the packages
# they import into a module of their own at go 1.24 with no requirements,
# checks it with go vet (whose stdversion check reports a standard-library
# symbol newer than the go line), and builds a consumer at go 1.24 against
# it with an empty go.sum. That is the split that would let a go 1.24
# consumer import the tables: a nested module holding those packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/go/bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
goversion=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$root/go.mod")
cat > go.mod <<EOF
module example.com/fresh

go $goversion

require github.com/tollgate/tollgate v0.0.0

replace github.com/tollgate/tollgate => $root
EOF
cat > main.go <<'EOF'
package main

import (
	"fmt"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/tokenbucket"
)

func main() {
	b := tokenbucket.New[string]()
	_, ok, err := b.Take("k", tokenbucket.Limits{Capacity: 1, RefillPerSecond: 1}, 1)
	t := credits.New[string]()
	h := credits.NewHolder()
	_, res := t.Reserve(h, credits.General)
	fmt.Println(ok, err, res)
}
EOF
fail() { echo "fresh-module: $*" >&2; exit 1; }
# As a new user builds it: no go mod tidy first, so a package the tables
# import from another module shows as "missing go.sum entry".
GOFLAGS= go build -o /dev/null . || fail "a fresh module importing both tables does not build with an empty go.sum (above)"
others=$(GOFLAGS= go list -deps . | grep '\.' | grep -v -e '^github.com/tollgate/tollgate/' -e '^example.com/fresh$' || true)
[ -z "$others" ] || fail "the tables import packages outside the standard library: $others"
GOFLAGS= go mod tidy
[ ! -s go.sum ] || fail "go mod tidy wrote go.sum lines: $(cat go.sum)"
echo "fresh-module: a module importing impl/credits and impl/tokenbucket builds with an empty go.sum; go list -deps: the standard library and tollgate only"

# The tables' own floor: the packages the tables import, as a module at go 1.24.
floor=1.24
lib="$tmp/lib"
pkgs=$(cd "$root" && GOFLAGS= go list -deps ./impl/credits ./impl/tokenbucket | sed -n 's|^github.com/tollgate/tollgate/||p')
for p in $pkgs; do
  mkdir -p "$lib/$p"
  # Sources but no tests: the tests use the tools' dependencies.
  for f in "$root/$p"/*.go "$root/$p"/*.s "$root/$p"/*.h; do
    case "$f" in *_test.go) ;; *) [ ! -f "$f" ] || cp "$f" "$lib/$p/" ;; esac
  done
done
printf 'module github.com/tollgate/tollgate\n\ngo %s\n' "$floor" > "$lib/go.mod"
(cd "$lib" && GOFLAGS= go vet ./...) || fail "the tables and the packages they import do not pass go vet at go $floor (above: stdversion names a symbol newer than go $floor)"
(cd "$lib" && GOFLAGS= go vet -tags tollgate_stats ./impl/...) || fail "the tables with -tags tollgate_stats do not pass go vet at go $floor (above)"
consumer="$tmp/consumer"
mkdir -p "$consumer"
cp "$tmp/main.go" "$consumer/"
cat > "$consumer/go.mod" <<EOF
module example.com/fresh

go $floor

require github.com/tollgate/tollgate v0.0.0

replace github.com/tollgate/tollgate => $lib
EOF
cd "$consumer"
GOFLAGS= go build -o /dev/null . || fail "a go $floor module importing the tables' own module does not build (above)"
GOFLAGS= go mod tidy
grep -qx "go $floor" go.mod || fail "go mod tidy raised the consumer's go line: $(grep '^go ' go.mod)"
[ ! -s go.sum ] || fail "go mod tidy wrote go.sum lines: $(cat go.sum)"
echo "fresh-module: the tables and what they import pass go vet at go $floor; as a module of their own, a go $floor consumer builds with an empty go.sum and keeps its go line (this module's go line, $goversion, is the highest of the tools' dependencies')"
