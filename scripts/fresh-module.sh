#!/usr/bin/env bash
# Proves the README's claim that a program using impl/credits and
# impl/tokenbucket needs nothing beyond the standard library: a fresh
# module that requires this checkout (by a replace) and imports both
# tables builds with an empty go.sum, before and after go mod tidy, and
# go list -deps names no package outside the standard library and
# tollgate's own. Run from anywhere; exits 1 when the claim is false.
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
