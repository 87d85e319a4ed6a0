#include "textflag.h"

// func maskScaleAVX(d, y *float32, n int, scale float32)
//
// d[k] = d[k] · m[k] for k < n (n a multiple of 8), with m[k] = scale
// where y[k] > 0 (ordered: false for NaN) and +0 elsewhere: the compare
// yields all-ones or zero lanes, and their AND with the scale is the
// float32 scale or +0 exactly, then one rounded VMULPS per lane.
TEXT ·maskScaleAVX(SB), NOSPLIT, $0-28
	MOVQ d+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y14
	VXORPS Y15, Y15, Y15

loop16:
	CMPQ CX, $16
	JLT  loop8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VCMPPS $0x1e, Y15, Y0, Y0 // GT_OQ: y > 0
	VCMPPS $0x1e, Y15, Y1, Y1
	VANDPS Y14, Y0, Y0
	VANDPS Y14, Y1, Y1
	VMULPS (DI), Y0, Y0
	VMULPS 32(DI), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop16

loop8:
	CMPQ CX, $8
	JLT  done
	VMOVUPS (SI), Y0
	VCMPPS $0x1e, Y15, Y0, Y0
	VANDPS Y14, Y0, Y0
	VMULPS (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

done:
	VZEROUPPER
	RET
