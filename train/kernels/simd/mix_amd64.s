#include "textflag.h"

// func mixWordsAVX2(dst *uint64, n int, key uint64)
//
// For g < n (a multiple of 4): dst[g] = mix(key + (g+1)·weyl), eight words
// a step in two independent registers (so that one's multiplies overlap
// the other's shifts), then four. mix is z ^= z>>30; z *= A; z ^= z>>27;
// z *= B; z ^= z>>31 on 64-bit lanes, all modulo 2^64.
//
// AVX2 multiplies only 32-bit halves (VPMULUDQ: low half by low half into
// a full 64-bit lane). z·C modulo 2^64, with z = zh·2^32 + zl and
// C = ch·2^32 + cl, is zl·cl + ((zh·cl + zl·ch) << 32): three products,
// the cross ones only needed modulo 2^32, which the shift keeps.

// MUL64(z, cl, ch, t1, t2) sets z = z·C modulo 2^64 (cl, ch: registers
// holding C's halves in every lane's low 32 bits; t1, t2: scratch).
#define MUL64(z, cl, ch, t1, t2) \
	VPSRLQ   $32, z, t1 \
	VPMULUDQ cl, t1, t1 \
	VPMULUDQ ch, z, t2 \
	VPADDQ   t2, t1, t1 \
	VPSLLQ   $32, t1, t1 \
	VPMULUDQ cl, z, z \
	VPADDQ   t1, z, z

// XSHR(z, k, t) sets z ^= z >> k.
#define XSHR(z, k, t) \
	VPSRLQ $k, z, t \
	VPXOR  t, z, z

#define MIX(z, t1, t2) \
	XSHR(z, 30, t1) \
	MUL64(z, Y8, Y9, t1, t2) \
	XSHR(z, 27, t1) \
	MUL64(z, Y10, Y11, t1, t2) \
	XSHR(z, 31, t1)

TEXT ·mixWordsAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ key+16(FP), AX

	// Y12 = the states of words 0..3: key + (1..4)·weyl; Y13 = 4·weyl,
	// Y14 = 8·weyl (the step of one and of two registers).
	MOVQ $0x9E3779B97F4A7C15, DX
	MOVQ AX, BX
	ADDQ DX, BX
	VMOVQ BX, X0
	ADDQ DX, BX
	VMOVQ BX, X1
	VPUNPCKLQDQ X1, X0, X0
	ADDQ DX, BX
	VMOVQ BX, X1
	ADDQ DX, BX
	VMOVQ BX, X2
	VPUNPCKLQDQ X2, X1, X1
	VINSERTI128 $1, X1, Y0, Y12
	MOVQ DX, BX
	SHLQ $2, BX
	VMOVQ BX, X0
	VPBROADCASTQ X0, Y13
	VPADDQ Y13, Y13, Y14

	// The multipliers' halves, in the low 32 bits of every lane.
	MOVQ $0x1CE4E5B9, BX
	VMOVQ BX, X0
	VPBROADCASTQ X0, Y8
	MOVQ $0xBF58476D, BX
	VMOVQ BX, X0
	VPBROADCASTQ X0, Y9
	MOVQ $0x133111EB, BX
	VMOVQ BX, X0
	VPBROADCASTQ X0, Y10
	MOVQ $0x94D049BB, BX
	VMOVQ BX, X0
	VPBROADCASTQ X0, Y11

loop8:
	CMPQ CX, $8
	JLT  tail4
	VMOVDQU Y12, Y0
	VPADDQ  Y13, Y12, Y1
	MIX(Y0, Y2, Y3)
	MIX(Y1, Y4, Y5)
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	VPADDQ  Y14, Y12, Y12
	ADDQ    $64, DI
	SUBQ    $8, CX
	JMP     loop8

tail4:
	CMPQ CX, $4
	JLT  done
	VMOVDQU Y12, Y0
	MIX(Y0, Y2, Y3)
	VMOVDQU Y0, (DI)

done:
	VZEROUPPER
	RET
