#include "textflag.h"

// func dotRows8AVX(out, v *float32, vs int, rows *[8]*float32, f, n, segs int)
//
// out[s*8+r] = Σ_c v[s*vs+c]·rows[r][s*f+c], c = 0..n-1 in order, from +0,
// each term a VMULPS (the v value first) then a VADDPS (the sum first):
// lane r of an accumulator is row r's chain. n ≤ f is a positive multiple
// of 4, segs positive. Four columns at a time: lane r's value of column c comes
// from a 4x4 transpose within each 128-bit half, rows 0-3 in the low half
// and rows 4-7 in the high one (each half loaded from two rows). Segments
// go in pairs, their chunks interleaved, so one chain's addition latency
// is filled with the other's work.
//
// Registers: DI out, SI v of segment s, DX v of segment s+1, R10 vs in
// bytes, R9 rows, R8 f in bytes, R11 n in bytes, R12 segments left, R13 segment s's byte
// offset in a row, CX column byte offset in the segment, BX the chunk's
// byte offset in a row, AX a row's address, Y0-Y11 the chunk, Y14 and Y15
// the accumulators.

// CHUNK adds the four columns at row offset o (v's at vp+CX) to acc.
#define CHUNK(o, vp, acc) \
	MOVQ 0(R9), AX; VMOVUPS (AX)(o*1), X0; MOVQ 32(R9), AX; VINSERTF128 $1, (AX)(o*1), Y0, Y0; \
	MOVQ 8(R9), AX; VMOVUPS (AX)(o*1), X1; MOVQ 40(R9), AX; VINSERTF128 $1, (AX)(o*1), Y1, Y1; \
	MOVQ 16(R9), AX; VMOVUPS (AX)(o*1), X2; MOVQ 48(R9), AX; VINSERTF128 $1, (AX)(o*1), Y2, Y2; \
	MOVQ 24(R9), AX; VMOVUPS (AX)(o*1), X3; MOVQ 56(R9), AX; VINSERTF128 $1, (AX)(o*1), Y3, Y3; \
	VUNPCKLPS Y1, Y0, Y4; VUNPCKHPS Y1, Y0, Y5; VUNPCKLPS Y3, Y2, Y6; VUNPCKHPS Y3, Y2, Y7; \
	VSHUFPS $0x44, Y6, Y4, Y0; VSHUFPS $0xEE, Y6, Y4, Y1; VSHUFPS $0x44, Y7, Y5, Y2; VSHUFPS $0xEE, Y7, Y5, Y3; \
	VBROADCASTSS 0(vp)(CX*1), Y8; VMULPS Y0, Y8, Y8; VADDPS Y8, acc, acc; \
	VBROADCASTSS 4(vp)(CX*1), Y9; VMULPS Y1, Y9, Y9; VADDPS Y9, acc, acc; \
	VBROADCASTSS 8(vp)(CX*1), Y10; VMULPS Y2, Y10, Y10; VADDPS Y10, acc, acc; \
	VBROADCASTSS 12(vp)(CX*1), Y11; VMULPS Y3, Y11, Y11; VADDPS Y11, acc, acc

TEXT ·dotRows8AVX(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ vs+16(FP), R10
	SHLQ $2, R10
	MOVQ rows+24(FP), R9
	MOVQ f+32(FP), R8
	SHLQ $2, R8
	MOVQ n+40(FP), R11
	SHLQ $2, R11
	MOVQ segs+48(FP), R12
	XORQ R13, R13

pair:
	CMPQ R12, $2
	JLT  single
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	LEAQ (SI)(R10*1), DX
	XORQ CX, CX
pairloop:
	LEAQ (R13)(CX*1), BX
	CHUNK(BX, SI, Y14)
	ADDQ R8, BX
	CHUNK(BX, DX, Y15)
	ADDQ $16, CX
	CMPQ CX, R11
	JLT  pairloop
	VMOVUPS Y14, 0(DI)
	VMOVUPS Y15, 32(DI)
	ADDQ $64, DI
	LEAQ (SI)(R10*2), SI
	LEAQ (R13)(R8*2), R13
	SUBQ $2, R12
	JMP  pair

single:
	TESTQ R12, R12
	JZ   done
	VXORPS Y14, Y14, Y14
	XORQ CX, CX
singleloop:
	LEAQ (R13)(CX*1), BX
	CHUNK(BX, SI, Y14)
	ADDQ $16, CX
	CMPQ CX, R11
	JLT  singleloop
	VMOVUPS Y14, 0(DI)

done:
	VZEROUPPER
	RET
