//go:build (amd64 || arm64) && !purego

package seam

import (
	"sync/atomic"
	"unsafe"
)

// pairWords is the storage of a Pair on amd64 and arm64: three words, of
// which the pair is the two that start at a 16-byte boundary, lo first (lower
// address), hi second. The third is padding. The pair is chosen afresh by
// every operation (see Pair on why it stays the same one).
type pairWords [3]uint64

// lo is the address of the lo word: w[0] when w is 16-byte aligned, else
// w[1].
func (w *pairWords) lo() *uint64 { return &w[uintptr(unsafe.Pointer(w))>>3&1] }

// hi is the address of the hi word, the one after lo.
func (w *pairWords) hi() *uint64 { return &w[uintptr(unsafe.Pointer(w))>>3&1+1] }

// Each method is one call to the assembly, or one sync/atomic operation, so
// that it inlines into its caller; in race builds the 128-bit ones go the
// long way round, through the race* methods, which tell the race detector.
// The assembly functions are named pair*: scripts/seam-check.sh lets impl/
// refer to internal/seam by calls of those and nothing else.

// Load atomically loads both halves: one snapshot of the pair. On amd64 with
// AVX it does not write the cache line; on amd64 without AVX and on arm64 it
// does (see Pair).
func (p *Pair) Load() (lo, hi uint64) {
	if pairRace {
		return p.raceLoad()
	}
	// Assigned, not returned: that keeps the method within the inliner's
	// budget.
	lo, hi = pairLoad128(p.w.lo())
	return
}

// LoadLo atomically loads lo alone. It does not write the cache line.
func (p *Pair) LoadLo() uint64 { return atomic.LoadUint64(p.w.lo()) }

// LoadHi atomically loads hi alone. It does not write the cache line. A
// LoadLo and a LoadHi are two loads, not one snapshot: a write between them
// may pair a lo with a hi it never had. The race detector learns of the
// 128-bit writes' synchronization on lo's address only (see Pair), so code
// that needs it loads lo first.
func (p *Pair) LoadHi() uint64 { return atomic.LoadUint64(p.w.hi()) }

// Store atomically stores lo and hi.
func (p *Pair) Store(lo, hi uint64) {
	if pairRace {
		p.raceStore(lo, hi)
		return
	}
	pairStore128(p.w.lo(), lo, hi)
}

// CompareAndSwap executes the compare-and-swap operation on both halves at
// once: if the pair holds (oldLo, oldHi) it becomes (newLo, newHi). It fails
// if either half differs. On amd64 it writes the cache line even when it
// fails; on arm64 a failure does not write.
func (p *Pair) CompareAndSwap(oldLo, oldHi, newLo, newHi uint64) (swapped bool) {
	if pairRace {
		return p.raceCAS(oldLo, oldHi, newLo, newHi)
	}
	return pairCAS128(p.w.lo(), oldLo, oldHi, newLo, newHi)
}

// CompareAndSwapLo executes the compare-and-swap operation on lo alone: if lo
// is old it becomes new. hi is neither compared nor changed. It is
// sync/atomic's CompareAndSwapUint64 on the lo word, with its costs (on amd64
// it writes the cache line even when it fails).
func (p *Pair) CompareAndSwapLo(old, new uint64) (swapped bool) {
	if pairRace {
		pairRaceReleaseMerge(unsafe.Pointer(p.w.lo()))
	}
	return atomic.CompareAndSwapUint64(p.w.lo(), old, new)
}

// The operations of a race build. The race detector models LoadLo and
// CompareAndSwapLo itself (they are sync/atomic's); the others synchronize on
// the same address, the lo word's. CompareAndSwapLo also releases on that
// address before it runs, as the 128-bit writes do: the release its
// sync/atomic call makes is not always acquired by a 128-bit Load's
// RaceAcquire (TestPair/*/Publishes/CompareAndSwapLo-Load saw a race about
// one round in three hundred without it), while one made before the write
// always is.

func (p *Pair) raceLoad() (lo, hi uint64) {
	a := p.w.lo()
	lo, hi = pairLoad128(a)
	pairRaceAcquire(unsafe.Pointer(a))
	return lo, hi
}

func (p *Pair) raceStore(lo, hi uint64) {
	a := p.w.lo()
	pairRaceReleaseMerge(unsafe.Pointer(a))
	pairStore128(a, lo, hi)
}

func (p *Pair) raceCAS(oldLo, oldHi, newLo, newHi uint64) bool {
	a := p.w.lo()
	pairRaceReleaseMerge(unsafe.Pointer(a))
	ok := pairCAS128(a, oldLo, oldHi, newLo, newHi)
	pairRaceAcquire(unsafe.Pointer(a))
	return ok
}
