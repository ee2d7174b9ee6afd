//go:build !purego

#include "textflag.h"

// func callerFrames(rets *[siteFrames + 1]uintptr): 7 words (site.go)
//
// Fills rets with the return addresses of the caller's frame and of the
// frames above it, read through the frame pointers (the caller's BP, as
// this function saves none of its own), zeros once the chain ends.
TEXT ·callerFrames(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ rets+0(FP), DI
	MOVQ BP, AX
	MOVQ $0, CX
next:
	CMPQ CX, $7
	JEQ  done
	TESTQ AX, AX
	JEQ  zero
	MOVQ 8(AX), DX // the return address sits one word above the frame pointer
	MOVQ DX, (DI)(CX*8)
	MOVQ (AX), AX // the frame pointer the frame saved: its caller's
	INCQ CX
	JMP  next
zero:
	MOVQ $0, (DI)(CX*8)
	INCQ CX
	CMPQ CX, $7
	JNE  zero
done:
	RET
