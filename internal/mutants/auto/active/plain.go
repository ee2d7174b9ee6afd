package active

import "unsafe"

// Word returns the address of the value word of a sync/atomic value, or of
// its hooked twin (internal/seam/hooked), as a plain *T: the "plain store"
// mutants of the concurrency campaign (package auto) write through it, so
// the store is an ordinary, non-atomic one. Both types keep their value at
// offset 0 (atomic.Uint64's v, atomic.Pointer's v, atomic.Bool's v; the
// twins wrap one of those): T must be the value's type (uint64, a pointer,
// or bool, which writes the low byte of atomic.Bool's uint32, 0 or 1 on the
// little-endian machines tollgate builds for). It panics when A is smaller
// than T.
func Word[T, A any](a *A) *T {
	var t T
	if unsafe.Sizeof(*a) < unsafe.Sizeof(t) {
		panic("active.Word: the atomic value is smaller than the word written through it")
	}
	return (*T)(unsafe.Pointer(a))
}

// PairWords returns the two words of a seam.Pair (or of its hooked twin,
// which holds one at offset 0), lo then hi, as a plain array: on amd64 and
// arm64 a Pair is three words of which the pair is the two that start at a
// 16-byte boundary (internal/seam/pair_words.go). It panics on any other
// layout (the purego build boxes the pair behind a pointer).
func PairWords[A any](p *A) *[2]uint64 {
	if unsafe.Sizeof(*p) != 3*8 {
		panic("active.PairWords: not the three-word layout of seam.Pair (amd64 or arm64, not purego)")
	}
	w := (*[3]uint64)(unsafe.Pointer(p))
	i := uintptr(unsafe.Pointer(w)) >> 3 & 1
	return (*[2]uint64)(w[i:])
}
