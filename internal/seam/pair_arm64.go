//go:build !purego

package seam

// The instructions, in pair_arm64.s. addr is the lo word, 16-byte aligned.

// pairLoad128 is LDAXP and STLXP of the same value, retried until the
// store-exclusive succeeds.
//
//go:noescape
func pairLoad128(addr *uint64) (lo, hi uint64)

// pairStore128 is LDAXP and STLXP of (lo, hi), retried.
//
//go:noescape
func pairStore128(addr *uint64, lo, hi uint64)

// pairCAS128 is LDAXP, a compare of both halves and, when they are equal,
// STLXP of (newLo, newHi), retried while the store-exclusive fails.
//
//go:noescape
func pairCAS128(addr *uint64, oldLo, oldHi, newLo, newHi uint64) (swapped bool)
