# Sourced by scripts/seam-check.sh and scripts/seam-ab.sh: makes the variant
# of a copy of the tree that does without the seam.
#
# seam_atomic_variant DIR rewrites the copy of the tree at DIR in place:
#
#   - every impl/ file that imports internal/seam and uses no seam.Pair
#     imports sync/atomic instead, under the name seam, on the same line
#     (so line numbers, and the listings, stay comparable line for line);
#   - sync/atomic has no 128-bit word, so a file that uses seam.Pair keeps
#     its import, and internal/seam becomes a stand-in: seam's Pair files
#     (pair*.go and pair*.s, tests left out) kept as they are, beside
#     aliases of sync/atomic's types that this function writes itself. Every
#     other file of internal/seam is removed, so nothing of seam but its Pair
#     reaches the variant: if seam's Uint64, say, became anything but
#     sync/atomic's, the Pair-using files would compile differently too.
#
# The stand-in keeps seam's import path, so the symbols and the layout of the
# two binaries are the same and their listings compare instruction for
# instruction. Pair's code is the same on both sides by construction, so
# the comparison says nothing of it; that it adds nothing around its
# operations to the code that uses it is checked by seam-check.sh in the seam
# build: every Pair method must inline, leaving a sync/atomic operation or one
# call of its assembly.
seam_atomic_variant() {
  local dir=$1 mod=github.com/tollgate/tollgate
  grep -rl "\"$mod/internal/seam\"" "$dir/impl" --include='*.go' | while read -r f; do
    if ! grep -q '\bseam\.Pair\b' "$f"; then
      sed -i "s|\"$mod/internal/seam\"|seam \"sync/atomic\"|" "$f"
    fi
  done
  find "$dir/internal/seam" -maxdepth 1 -type f ! \( -name 'pair*.go' -o -name 'pair*.s' \) -delete
  find "$dir/internal/seam" -maxdepth 1 -type f -name '*_test.go' -delete
  # atomic.go, the name of the file it stands in for: the compiler lists a
  # package's imports in the order of its files, and the linker lays the
  # packages out in that order, so another name would move code.
  cat > "$dir/internal/seam/atomic.go" <<'GO'
// Package seam, in the variant of the tree without the seam: the Pair files
// of internal/seam beside sync/atomic's types, written by
// scripts/seam-variant.sh.
package seam

import "sync/atomic"

type (
	Bool           = atomic.Bool
	Int32          = atomic.Int32
	Int64          = atomic.Int64
	Pointer[T any] = atomic.Pointer[T]
	Uint32         = atomic.Uint32
	Uint64         = atomic.Uint64
	Uintptr        = atomic.Uintptr
	Value          = atomic.Value
)
GO
}

# seam_copy_tree DIR copies the working tree (tracked files, and untracked
# ones that are not ignored; deleted files left out) to DIR.
seam_copy_tree() {
  mkdir -p "$1"
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$1"
}
