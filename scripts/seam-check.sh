#!/usr/bin/env bash
# Proves from the compiler's output that the seam costs the real tables
# nothing: impl/ compiled against internal/seam and the same impl/ with the
# seam import replaced by sync/atomic produce the same machine code,
# instruction for instruction, and no call into internal/seam remains but
# those of its Pair's operations.
#
# seam.Pair, the 128-bit word, is the one type of the seam that is not
# sync/atomic's, and sync/atomic has nothing to replace it with; the variant
# without the seam keeps it (scripts/seam-variant.sh says how and what the
# comparison then proves). So that a Pair costs its users nothing around its
# operations either, the seam build may refer to internal/seam only by calls
# of Pair's assembly (internal/seam.pair*): a call of a Pair method, or of
# any other function of the seam, means something did not inline.
#
# The tree checked is the working tree, untracked files included. Run from
# anywhere; exits 1 on a difference.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
# shellcheck source=scripts/seam-variant.sh
. scripts/seam-variant.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The probe's main package imports internal/seam itself, first and for
# nothing: so that both binaries link the same packages in the same order
# (seam.Pair needs internal/seam/internal/cpuid, whose code and data would otherwise
# move every address of one binary when impl/ of the other does not use a
# Pair). The linker lays packages out in the order it first meets their
# imports, so main imports it first, in a group of its own.
#
# The tables are instantiated in other packages, which import impl/ and
# nothing of the seam, as a user's package does: Go inlines a generic
# method's callees from a third package into the instantiating package only
# when the generic's own package exports their inline bodies
# (impl/*/exportPairInline), and an instantiation in a package that imports
# the seam itself would hide a missing export.
probe_main='package main

import (
	_ "github.com/tollgate/tollgate/internal/seam"

	"github.com/tollgate/tollgate/cmd/seamprobe/usecr"
	"github.com/tollgate/tollgate/cmd/seamprobe/usetb"
)

func main() {
	usetb.Run()
	usecr.Run()
}
'
# One package per table, each importing only its table, so that a table
# whose own package stopped exporting the inline bodies is seen even when
# the other still does.
probe_tb='package usetb

import (
	"fmt"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// Run calls every operation of the token bucket.
func Run() {
	tb := tokenbucket.New[string]()
	lim := tokenbucket.Limits{Capacity: 3, RefillPerSecond: 2}
	r, ok, _ := tb.TakeAt(1, "k", lim, 1)
	p, _ := tb.PeekAt(2, "k", lim)
	w, _ := tb.RetryAfterAt(3, "k", lim, 3)
	n, _ := tb.ReclaimAt(4, lim)
	tb.Reset("k")
	tb.ResetAll()
	fmt.Println(r, ok, p, w, n)
}
'
probe_cr='package usecr

import (
	"fmt"

	"github.com/tollgate/tollgate/impl/credits"
)

// Run calls every operation of the credit table.
func Run() {
	tab := credits.New[string]()
	h := credits.NewHolder()
	tok, res := tab.Reserve(h, credits.General)
	e := tab.EnqueueAt(1, h, tok, "x")
	got, _ := tab.Take(tok)
	fmt.Println(res, e, got, tab.Finish(tok), tab.Release(h, tok), tab.Sweep(), tab.Enqueued(), tab.Snapshot())
	h.Exit()
	tab.Close()
}
'
for v in seam atomic; do
  seam_copy_tree "$tmp/$v"
  mkdir -p "$tmp/$v/cmd/seamprobe/usetb" "$tmp/$v/cmd/seamprobe/usecr"
  printf '%s' "$probe_main" > "$tmp/$v/cmd/seamprobe/main.go"
  printf '%s' "$probe_tb" > "$tmp/$v/cmd/seamprobe/usetb/usetb.go"
  printf '%s' "$probe_cr" > "$tmp/$v/cmd/seamprobe/usecr/usecr.go"
done
# The variant without the seam: the same files, the import rewritten in place
# (same line numbers, so the listings compare line for line).
seam_atomic_variant "$tmp/atomic"
for v in seam atomic; do
  (cd "$tmp/$v" && go build -trimpath -o "$tmp/$v.bin" ./cmd/seamprobe)
  go tool objdump -s 'github.com/tollgate/tollgate/impl/' "$tmp/$v.bin" |
    awk '/^TEXT/ {print $1, $2; next} {$2=""; $3=""; print}' > "$tmp/$v.asm"
done
n=$(grep -c '^TEXT' "$tmp/seam.asm")
if [ "$n" -lt 20 ]; then
  echo "seam-check: only $n impl functions in the probe's disassembly; the probe no longer exercises impl/"; exit 1
fi
# Every reference to internal/seam but a call of Pair's assembly. The
# compiler's equality functions of types that hold a Pair (type:.eq.…, for
# instance of the shape of the trie's node, which a generic node type gets
# once a node is compared or hashed as a whole anywhere) carry
# "internal/seam.Pair" in their names only: they compare memory, call no
# code of the seam, and are the same in both builds, which the comparison
# below checks.
pairops='tollgate/internal/seam\.pair[A-Za-z0-9_]*(\.abi0)?\(SB\)'
stray=$(grep 'internal/seam' "$tmp/seam.asm" | sed -E "s#$pairops##g" | grep -v 'type:\.eq\.' | grep 'internal/seam' || true)
if [ -n "$stray" ]; then
  echo "seam-check: the real build still refers to internal/seam:"; echo "$stray" | head; exit 1
fi
pairs=$(grep -cE "$pairops" "$tmp/seam.asm" || true)
if ! diff -q "$tmp/seam.asm" "$tmp/atomic.asm" >/dev/null; then
  echo "seam-check: impl/ through the seam compiles differently from impl/ on sync/atomic:"
  diff "$tmp/seam.asm" "$tmp/atomic.asm" | head -40
  exit 1
fi
echo "seam-check: $n impl functions, $(grep -vc '^TEXT' "$tmp/seam.asm") instructions: identical with and without the seam ($pairs calls of seam.Pair's assembly, no other reference to internal/seam)"
