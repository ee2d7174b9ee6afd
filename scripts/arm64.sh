#!/usr/bin/env bash
# Bit-exactness on arm64 (spec/tokenbucket.md T3): arm64 has a fused
# multiply-add, and Go may fuse x*y+z there unless an explicit float64
# conversion rounds the product. This script
#   1. cross-compiles the float-carrying packages for arm64 and fails if any
#      tollgate function (tests excluded) contains a fused instruction, and
#   2. when qemu-aarch64 is installed (Debian: qemu-user), runs their tests
#      on arm64, so the golden float values are checked there too.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(./model ./impl/tokenbucket)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
# The test binaries are built with the mutants compiled in (their overlay,
# internal/mutants/build), so the tests that judge a mutant run on arm64
# too: a test binary under qemu cannot rebuild itself with them. The
# mutants' own code is left out of the fused-instruction check.
ov="$(go run ./internal/mutants/gen -overlay "$dir/overlay")"
for p in "${pkgs[@]}"; do
  bin="$dir/$(basename "$p").arm64"
  GOARCH=arm64 go test -c -vet=off -overlay "$ov" -o "$bin" "$p"
  fused=$(go tool objdump "$bin" |
    awk '/^TEXT /{fn=$2} /FMADD|FMSUB|FNMADD|FNMSUB/{print fn}' |
    grep '^github.com/tollgate/tollgate/' | grep -v '^github.com/tollgate/tollgate/internal/mutants/' | grep -v '_test\.' |
    grep -Ev '\.(Test|Benchmark|Fuzz|Example)[A-Za-z0-9_]*(\.|\(|$)' | sort -u || true)
  if [ -n "$fused" ]; then
    echo "FAIL $p: fused multiply-add in: $fused"
    status=1
  else
    echo "ok   $p: no fused multiply-add on arm64"
  fi
  if command -v qemu-aarch64 >/dev/null; then
    if qemu-aarch64 "$bin" -test.short -test.count=1 >"$dir/out" 2>&1; then
      echo "ok   $p: tests pass on arm64 (qemu)"
    else
      tail -20 "$dir/out"; echo "FAIL $p: tests on arm64 (qemu)"; status=1
    fi
  else
    echo "skip $p: qemu-aarch64 not installed, arm64 tests not run"
  fi
done
exit $status
