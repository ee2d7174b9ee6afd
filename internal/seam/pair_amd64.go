//go:build !purego

package seam

import "github.com/tollgate/tollgate/internal/seam/internal/cpuid"

// The CPU features the amd64 Pair uses, read once and tested by the
// assembly at every operation (a byte compare, so that an operation is one
// call that the Pair's method inlines to). Tests switch them to run every path
// on one machine.
var (
	// pairVecLoad: the CPU enumerates AVX (and the OS saves its state), so an
	// aligned 16-byte VMOVDQA load is atomic.
	// pairCX16: the CPU has CMPXCHG16B.
	pairVecLoad, pairCX16 = cpuid.Features()
)

// pairNoCX16 is where the assembly jumps on a CPU without CMPXCHG16B, in
// place of the operation.
//
//lint:ignore U1000 called from pair_amd64.s
func pairNoCX16() {
	panic("seam: this CPU has no CMPXCHG16B, which seam.Pair needs on amd64; build with -tags purego")
}

// The operations, in pair_amd64.s. addr is the lo word, 16-byte aligned.

// pairLoad128 is a VMOVDQA load with AVX, else a LOCK CMPXCHG16B of (0, 0)
// for (0, 0).
//
//go:noescape
func pairLoad128(addr *uint64) (lo, hi uint64)

// pairStore128 is a LOCK CMPXCHG16B loop.
//
//go:noescape
func pairStore128(addr *uint64, lo, hi uint64)

// pairCAS128 is one LOCK CMPXCHG16B.
//
//go:noescape
func pairCAS128(addr *uint64, oldLo, oldHi, newLo, newHi uint64) (swapped bool)
