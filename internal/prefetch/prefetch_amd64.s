#include "textflag.h"

// func lines(p unsafe.Pointer, n uintptr)
//
// PREFETCHT0 on every 64-byte line of the n > 0 bytes from p.
TEXT ·lines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	ADDQ AX, CX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JLT  loop
	RET
