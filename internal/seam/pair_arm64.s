//go:build !purego

#include "textflag.h"

// LDAXP (Rn), (Rt, Rt2) loads the pair at Rn (Rt the lower address: lo) with
// acquire semantics and marks it for exclusive access; STLXP (Rt, Rt2), (Rn),
// Rs stores a pair with release semantics if the mark is still held, and sets
// Rs to 0 if it stored, 1 if not. The load is a single-copy-atomic read of the
// 16 bytes only when the store-exclusive that follows succeeds. Rn must be
// 16-byte aligned.

// func pairLoad128(addr *uint64) (lo, hi uint64)
TEXT ·pairLoad128(SB), NOSPLIT, $0-24
	MOVD addr+0(FP), R0
again:
	LDAXP (R0), (R1, R2)
	STLXP (R1, R2), (R0), R3
	CBNZ  R3, again
	MOVD  R1, lo+8(FP)
	MOVD  R2, hi+16(FP)
	RET

// func pairStore128(addr *uint64, lo, hi uint64)
TEXT ·pairStore128(SB), NOSPLIT, $0-24
	MOVD addr+0(FP), R0
	MOVD lo+8(FP), R1
	MOVD hi+16(FP), R2
again:
	LDAXP (R0), (R3, R4)
	STLXP (R1, R2), (R0), R5
	CBNZ  R5, again
	RET

// func pairCAS128(addr *uint64, oldLo, oldHi, newLo, newHi uint64) (swapped bool)
TEXT ·pairCAS128(SB), NOSPLIT, $0-41
	MOVD addr+0(FP), R0
	MOVD oldLo+8(FP), R1
	MOVD oldHi+16(FP), R2
	MOVD newLo+24(FP), R3
	MOVD newHi+32(FP), R4
again:
	LDAXP (R0), (R5, R6)
	CMP   R1, R5
	BNE   fail
	CMP   R2, R6
	BNE   fail
	STLXP (R3, R4), (R0), R7
	CBNZ  R7, again
	MOVD  $1, R8
	MOVB  R8, swapped+40(FP)
	RET
fail:
	// Each half was read single-copy atomically, and one of them differs
	// from the expected value: the pair differed at that moment. No store.
	MOVB ZR, swapped+40(FP)
	RET
