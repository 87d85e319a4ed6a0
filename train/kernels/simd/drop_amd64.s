#include "textflag.h"

// func dropRowAVX2(dst, src *float32, words *uint64, n int, tm1 int32, scale float32, relu bool)
//
// For u < n (a multiple of 4: sixteen units a step, then eight, then four
// in the low halves, since the input rows' width, 100, leaves four):
// v = src[u], under relu v = max(v, 0) as Go computes it, then dst[u] =
// v · m[u] with m[u] = scale where the 16-bit draw of unit u exceeds
// tm1 = t-1 and +0 elsewhere.
//
// ReLU: Intel's VMAXPS dst, a, b returns b when either operand is NaN or
// both are zeros, so max(+0, v) (Go operand order: VMAXPS v, zero, dst)
// returns a NaN v as is and a -0 v as -0; adding +0 then turns -0 into +0
// (round to nearest) and leaves every other value, NaN and subnormals
// included, unchanged. That is Go's max(v, 0).
//
// Mask: eight draws are 16 bytes of words (two words, units in increasing
// order since x86 is little-endian); VPMOVZXWD widens them to 32-bit
// lanes, VPCMPGTD draw > tm1 gives all-ones or zero (draw <= 65535 and
// tm1 >= -1 fit a signed compare), and its AND with the broadcast scale is
// scale or +0 exactly. One rounded VMULPS per lane; nothing fused.
TEXT ·dropRowAVX2(SB), NOSPLIT, $0-41
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         words+16(FP), BX
	MOVQ         n+24(FP), CX
	MOVL         tm1+32(FP), AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	VBROADCASTSS scale+36(FP), Y14
	MOVBLZX      relu+40(FP), AX
	VXORPS       Y15, Y15, Y15
	TESTQ        AX, AX
	JNE          relu16

plain16:
	CMPQ      CX, $16
	JLT       plain8
	VPMOVZXWD (BX), Y2
	VPMOVZXWD 16(BX), Y3
	VPCMPGTD  Y13, Y2, Y2 // draw > t-1
	VPCMPGTD  Y13, Y3, Y3
	VANDPS    Y14, Y2, Y2
	VANDPS    Y14, Y3, Y3
	VMULPS    (SI), Y2, Y0
	VMULPS    32(SI), Y3, Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	ADDQ      $32, BX
	SUBQ      $16, CX
	JMP       plain16

plain8:
	CMPQ      CX, $8
	JLT       plain4
	VPMOVZXWD (BX), Y2
	VPCMPGTD  Y13, Y2, Y2
	VANDPS    Y14, Y2, Y2
	VMULPS    (SI), Y2, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $16, BX
	SUBQ      $8, CX

plain4:
	CMPQ      CX, $4
	JLT       done
	VPMOVZXWD (BX), X2 // one word: four draws
	VPCMPGTD  X13, X2, X2
	VANDPS    X14, X2, X2
	VMULPS    (SI), X2, X0
	VMOVUPS   X0, (DI)
	JMP       done

relu16:
	CMPQ      CX, $16
	JLT       relu8
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VMAXPS    Y0, Y15, Y0 // max(+0, v): v when v is NaN or a zero
	VMAXPS    Y1, Y15, Y1
	VADDPS    Y15, Y0, Y0 // -0 + +0 = +0
	VADDPS    Y15, Y1, Y1
	VPMOVZXWD (BX), Y2
	VPMOVZXWD 16(BX), Y3
	VPCMPGTD  Y13, Y2, Y2
	VPCMPGTD  Y13, Y3, Y3
	VANDPS    Y14, Y2, Y2
	VANDPS    Y14, Y3, Y3
	VMULPS    Y2, Y0, Y0
	VMULPS    Y3, Y1, Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	ADDQ      $32, BX
	SUBQ      $16, CX
	JMP       relu16

relu8:
	CMPQ      CX, $8
	JLT       relu4
	VMOVUPS   (SI), Y0
	VMAXPS    Y0, Y15, Y0
	VADDPS    Y15, Y0, Y0
	VPMOVZXWD (BX), Y2
	VPCMPGTD  Y13, Y2, Y2
	VANDPS    Y14, Y2, Y2
	VMULPS    Y2, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $16, BX
	SUBQ      $8, CX

relu4:
	CMPQ      CX, $4
	JLT       done
	VMOVUPS   (SI), X0
	VMAXPS    X0, X15, X0
	VADDPS    X15, X0, X0
	VPMOVZXWD (BX), X2
	VPCMPGTD  X13, X2, X2
	VANDPS    X14, X2, X2
	VMULPS    X2, X0, X0
	VMOVUPS   X0, (DI)

done:
	VZEROUPPER
	RET
