#!/usr/bin/env bash
# Proves from the compiler's output that the seam costs the real tables
# nothing: impl/ compiled against internal/seam and the same impl/ with the
# seam import replaced by sync/atomic produce the same machine code,
# instruction for instruction, and no call into internal/seam remains.
# Run from anywhere; exits 1 on a difference.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

probe='package main

import (
	"fmt"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/tokenbucket"
)

func main() {
	tb := tokenbucket.New[string]()
	lim := tokenbucket.Limits{Capacity: 3, RefillPerSecond: 2}
	r, ok, _ := tb.TakeAt(1, "k", lim, 1)
	p, _ := tb.PeekAt(2, "k", lim)
	w, _ := tb.RetryAfterAt(3, "k", lim, 3)
	tb.Reset("k")
	tb.ResetAll()
	tab := credits.New[string]()
	h := credits.NewHolder()
	tok, res := tab.Reserve(h, credits.General)
	e := tab.EnqueueAt(1, h, tok, "x")
	got, _ := tab.Take(tok)
	fmt.Println(r, ok, p, w, res, e, got, tab.Finish(tok), tab.Release(h, tok), tab.Sweep(), tab.Enqueued(), tab.Snapshot())
	h.Exit()
	tab.Close()
}
'
for v in seam atomic; do
  mkdir -p "$tmp/$v"
  git ls-files -z | xargs -0 cp --parents -t "$tmp/$v"
  mkdir -p "$tmp/$v/cmd/seamprobe"
  printf '%s' "$probe" > "$tmp/$v/cmd/seamprobe/main.go"
done
# The variant without the seam: the same files, the import rewritten in place
# (same line numbers, so the listings compare line for line).
grep -rl '"github.com/tollgate/tollgate/internal/seam"' "$tmp/atomic/impl" | while read -r f; do
  sed -i 's|"github.com/tollgate/tollgate/internal/seam"|seam "sync/atomic"|' "$f"
done
for v in seam atomic; do
  (cd "$tmp/$v" && go build -trimpath -o "$tmp/$v.bin" ./cmd/seamprobe)
  go tool objdump -s 'github.com/tollgate/tollgate/impl/' "$tmp/$v.bin" |
    awk '/^TEXT/ {print $1, $2; next} {$2=""; $3=""; print}' > "$tmp/$v.asm"
done
n=$(grep -c '^TEXT' "$tmp/seam.asm")
if [ "$n" -lt 20 ]; then
  echo "seam-check: only $n impl functions in the probe's disassembly; the probe no longer exercises impl/"; exit 1
fi
if grep -q 'internal/seam' "$tmp/seam.asm"; then
  echo "seam-check: the real build still refers to internal/seam:"; grep 'internal/seam' "$tmp/seam.asm" | head; exit 1
fi
if ! diff -q "$tmp/seam.asm" "$tmp/atomic.asm" >/dev/null; then
  echo "seam-check: impl/ through the seam compiles differently from impl/ on sync/atomic:"
  diff "$tmp/seam.asm" "$tmp/atomic.asm" | head -40
  exit 1
fi
echo "seam-check: $n impl functions, $(grep -vc '^TEXT' "$tmp/seam.asm") instructions: identical with and without the seam"
