#!/usr/bin/env bash
# Runs the tests of internal/seam and internal/seam/hooked on arm64, under
# qemu-aarch64 (user-mode emulation): the LDAXP/STLXP implementation of
# seam.Pair, and the portable one (-tags purego) for good measure. The tests
# are cross-compiled here; extra arguments go to the test binaries (e.g.
# -test.count=20 -test.v).
#
# Without qemu-aarch64 it skips, saying how to install it (Debian/Ubuntu:
# apt-get install qemu-user), unless CI=true, where a skip would pass a check
# that did not run: then it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
if ! command -v qemu-aarch64 >/dev/null; then
  msg="seam-arm64: qemu-aarch64 is not installed (Debian/Ubuntu: apt-get install qemu-user)"
  if [ "${CI:-}" = true ]; then
    echo "$msg; CI=true, so this is a failure" >&2
    exit 1
  fi
  echo "$msg; skipped"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
for tags in "" purego; do
  for p in ./internal/seam ./internal/seam/hooked; do
    name="$p${tags:+ (-tags $tags)}"
    bin="$dir/test.arm64"
    GOARCH=arm64 go test -c ${tags:+-tags "$tags"} -o "$bin" "$p"
    # A test binary runs in its package's directory.
    if (cd "$p" && qemu-aarch64 "$bin" -test.count=1 "$@") >"$dir/out" 2>&1; then
      echo "ok   $name on arm64 (qemu)"
    else
      tail -30 "$dir/out"; echo "FAIL $name on arm64 (qemu)"; status=1
    fi
  done
done
exit $status
