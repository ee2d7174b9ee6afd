//go:build purego || !(amd64 || arm64)

package seam

import "sync/atomic"

// pairWords is the portable storage of a Pair: a pointer to an immutable box
// of (lo, hi); nil is (0, 0). A write publishes a fresh box, so every write
// allocates 16 bytes; a box is never written after it is published, so
// reading it after loading the pointer needs nothing more (the pointer's
// atomic load orders the box's contents before the read).
type pairWords struct{ v atomic.Pointer[[2]uint64] }

func unbox(b *[2]uint64) (lo, hi uint64) {
	if b == nil {
		return 0, 0
	}
	return b[0], b[1]
}

// Load atomically loads both halves: one snapshot of the pair. It does not
// write.
func (p *Pair) Load() (lo, hi uint64) { return unbox(p.w.v.Load()) }

// LoadLo atomically loads lo alone. It does not write.
func (p *Pair) LoadLo() uint64 {
	lo, _ := unbox(p.w.v.Load())
	return lo
}

// LoadHi atomically loads hi alone. A LoadLo and a LoadHi are two loads,
// not one snapshot.
func (p *Pair) LoadHi() uint64 {
	_, hi := unbox(p.w.v.Load())
	return hi
}

// Store atomically stores lo and hi, in a box it allocates.
func (p *Pair) Store(lo, hi uint64) { p.w.v.Store(&[2]uint64{lo, hi}) }

// CompareAndSwap executes the compare-and-swap operation on both halves at
// once: if the pair holds (oldLo, oldHi) it becomes (newLo, newHi). It fails
// if either half differs.
//
// A failure does not write; a success allocates a box. It retries while the
// pointer moved but the box it now holds still has (oldLo, oldHi): the pair
// held the expected value all along, so failing would be a spurious failure.
// A retry means another write succeeded, so the loop is lock-free.
func (p *Pair) CompareAndSwap(oldLo, oldHi, newLo, newHi uint64) (swapped bool) {
	var next *[2]uint64
	for {
		cur := p.w.v.Load()
		if lo, hi := unbox(cur); lo != oldLo || hi != oldHi {
			return false
		}
		if next == nil {
			next = &[2]uint64{newLo, newHi}
		}
		if p.w.v.CompareAndSwap(cur, next) {
			return true
		}
	}
}

// CompareAndSwapLo executes the compare-and-swap operation on lo alone: if lo
// is old it becomes new. hi is neither compared nor changed: the box it
// publishes carries the hi of the box it replaced. It retries as
// CompareAndSwap does; a failure does not write, a success allocates a box
// (one per call: a box that lost its compare-and-swap was never published, so
// the retry refills it).
func (p *Pair) CompareAndSwapLo(old, new uint64) (swapped bool) {
	var next *[2]uint64
	for {
		cur := p.w.v.Load()
		lo, hi := unbox(cur)
		if lo != old {
			return false
		}
		if next == nil {
			next = &[2]uint64{}
		}
		next[0], next[1] = new, hi
		if p.w.v.CompareAndSwap(cur, next) {
			return true
		}
	}
}
