//go:build !purego

#include "textflag.h"

// CMPXCHG16B m128 compares RDX:RAX with m128 (RAX with the low quadword, at
// the lower address: lo); if equal it sets ZF and stores RCX:RBX, else it
// clears ZF and loads m128 into RDX:RAX. With LOCK it is atomic and a full
// barrier. m128 must be 16-byte aligned (#GP otherwise).
//
// Each function first tests the feature it needs; without CMPXCHG16B it
// jumps to pairNoCX16, which panics as though the caller had called it.

// func pairLoad128(addr *uint64) (lo, hi uint64)
TEXT ·pairLoad128(SB), NOSPLIT, $0-24
	MOVQ addr+0(FP), DI
	CMPB ·pairVecLoad(SB), $0
	JEQ  locked
	// One aligned 16-byte load, atomic on a CPU that enumerates AVX; it
	// does not write the line.
	VMOVDQA (DI), X0
	VMOVQ   X0, AX
	VPEXTRQ $1, X0, DX
	MOVQ    AX, lo+8(FP)
	MOVQ    DX, hi+16(FP)
	RET
locked:
	CMPB ·pairCX16(SB), $0
	JEQ  nocx16
	XORL AX, AX
	XORL DX, DX
	XORL BX, BX
	XORL CX, CX
	LOCK
	CMPXCHG16B (DI)
	// Equal: (0, 0) was stored over (0, 0) and RDX:RAX is still (0, 0).
	// Not equal: RDX:RAX is the value. Either way the line was written.
	MOVQ AX, lo+8(FP)
	MOVQ DX, hi+16(FP)
	RET
nocx16:
	JMP ·pairNoCX16(SB)

// func pairStore128(addr *uint64, lo, hi uint64)
TEXT ·pairStore128(SB), NOSPLIT, $0-24
	CMPB ·pairCX16(SB), $0
	JEQ  nocx16
	MOVQ addr+0(FP), DI
	MOVQ lo+8(FP), BX
	MOVQ hi+16(FP), CX
	// A guess at the current value; a wrong one costs a retry, with RDX:RAX
	// then holding the value.
	MOVQ 0(DI), AX
	MOVQ 8(DI), DX
again:
	LOCK
	CMPXCHG16B (DI)
	JNE  again
	RET
nocx16:
	JMP ·pairNoCX16(SB)

// func pairCAS128(addr *uint64, oldLo, oldHi, newLo, newHi uint64) (swapped bool)
TEXT ·pairCAS128(SB), NOSPLIT, $0-41
	CMPB  ·pairCX16(SB), $0
	JEQ   nocx16
	MOVQ  addr+0(FP), DI
	MOVQ  oldLo+8(FP), AX
	MOVQ  oldHi+16(FP), DX
	MOVQ  newLo+24(FP), BX
	MOVQ  newHi+32(FP), CX
	LOCK
	CMPXCHG16B (DI)
	SETEQ swapped+40(FP)
	RET
nocx16:
	JMP ·pairNoCX16(SB)
