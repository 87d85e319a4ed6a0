#include "textflag.h"

// func prefetch(p *float32, n int)
//
// PREFETCHT0 on every 64-byte line of the n values from p.
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*4), CX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JLT  loop
	RET
