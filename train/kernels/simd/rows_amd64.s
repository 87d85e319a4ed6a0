#include "textflag.h"
#include "rows_amd64.h"

// func sumRowsAVX(dst, src *float32, w, stride, n int, idx *int32, mode int, scale float32)
//
// For each column c < w: dst[c] = start + src[idx[0]*stride+c] + src[idx[1]*stride+c]
// + ... (k order), then · scale when mode has rowsScale; start is dst[c]
// when mode has rowsLoad, else +0. Columns go in blocks of 64, 32, 16 and 8
// (8, 4, 2 and 1 YMM accumulators) and a masked block of the last 1..7; each
// block's accumulators stay in registers over all n rows and are stored
// once. VADDPS and VMULPS round every lane as the scalar ADDSS and MULSS
// do, and nothing is fused, so the bits are the scalar loop's.
//
// Registers: DI dst block, SI src block (row 0), DX row stride in bytes,
// CX n, R8 idx, R9 mode, R11 columns left, BX k, AX row address,
// Y0-Y7 accumulators, Y8 loaded row, Y13 tail mask, Y14 scale.

#define ZERO8 VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3; VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7
#define ADD8(p) VADDPS 0(p), Y0, Y0; VADDPS 32(p), Y1, Y1; VADDPS 64(p), Y2, Y2; VADDPS 96(p), Y3, Y3; VADDPS 128(p), Y4, Y4; VADDPS 160(p), Y5, Y5; VADDPS 192(p), Y6, Y6; VADDPS 224(p), Y7, Y7
#define SCALE8 VMULPS Y14, Y0, Y0; VMULPS Y14, Y1, Y1; VMULPS Y14, Y2, Y2; VMULPS Y14, Y3, Y3; VMULPS Y14, Y4, Y4; VMULPS Y14, Y5, Y5; VMULPS Y14, Y6, Y6; VMULPS Y14, Y7, Y7

#define ZERO4 VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3
#define ADD4(p) VADDPS 0(p), Y0, Y0; VADDPS 32(p), Y1, Y1; VADDPS 64(p), Y2, Y2; VADDPS 96(p), Y3, Y3
#define SCALE4 VMULPS Y14, Y0, Y0; VMULPS Y14, Y1, Y1; VMULPS Y14, Y2, Y2; VMULPS Y14, Y3, Y3

#define ZERO2 VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1
#define LOAD2(p) VMOVUPS 0(p), Y0; VMOVUPS 32(p), Y1
#define ADD2(p) VADDPS 0(p), Y0, Y0; VADDPS 32(p), Y1, Y1
#define SCALE2 VMULPS Y14, Y0, Y0; VMULPS Y14, Y1, Y1
#define STORE2(p) VMOVUPS Y0, 0(p); VMOVUPS Y1, 32(p)



TEXT ·sumRowsAVX(SB), NOSPLIT, $0-60
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ w+16(FP), R11
	MOVQ stride+24(FP), DX
	SHLQ $2, DX
	MOVQ n+32(FP), CX
	MOVQ idx+40(FP), R8
	MOVQ mode+48(FP), R9
	VBROADCASTSS scale+56(FP), Y14

blk64:
	CMPQ R11, $64
	JLT  blk32
	TESTQ $1, R9
	JZ   zero64
	LOAD8(DI)
	JMP  go64
zero64:
	ZERO8
go64:
	XORQ BX, BX
loop64:
	ROWADDR
	ADD8(AX)
	INCQ BX
	CMPQ BX, CX
	JLT  loop64
	TESTQ $2, R9
	JZ   store64
	SCALE8
store64:
	STORE8(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $64, R11
	JMP  blk64

blk32:
	CMPQ R11, $32
	JLT  blk16
	TESTQ $1, R9
	JZ   zero32
	LOAD4(DI)
	JMP  go32
zero32:
	ZERO4
go32:
	XORQ BX, BX
loop32:
	ROWADDR
	ADD4(AX)
	INCQ BX
	CMPQ BX, CX
	JLT  loop32
	TESTQ $2, R9
	JZ   store32
	SCALE4
store32:
	STORE4(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, R11

blk16:
	CMPQ R11, $16
	JLT  blk8
	TESTQ $1, R9
	JZ   zero16
	LOAD2(DI)
	JMP  go16
zero16:
	ZERO2
go16:
	XORQ BX, BX
loop16:
	ROWADDR
	ADD2(AX)
	INCQ BX
	CMPQ BX, CX
	JLT  loop16
	TESTQ $2, R9
	JZ   store16
	SCALE2
store16:
	STORE2(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, R11

blk8:
	CMPQ R11, $8
	JLT  tail
	TESTQ $1, R9
	JZ   zero8
	VMOVUPS (DI), Y0
	JMP  go8
zero8:
	VXORPS Y0, Y0, Y0
go8:
	XORQ BX, BX
loop8:
	ROWADDR
	VADDPS (AX), Y0, Y0
	INCQ BX
	CMPQ BX, CX
	JLT  loop8
	TESTQ $2, R9
	JZ   store8
	VMULPS Y14, Y0, Y0
store8:
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, R11

tail:
	// The last 1..7 columns: lanes 0..R11-1 of a masked load and store
	// (masked-off lanes are neither read nor written, so no access
	// reaches past a row or past dst).
	TESTQ R11, R11
	JZ   done
	LEAQ ·tailMask(SB), AX
	MOVQ $8, R10
	SUBQ R11, R10
	VMOVUPS (AX)(R10*4), Y13
	TESTQ $1, R9
	JZ   zerot
	VMASKMOVPS (DI), Y13, Y0
	JMP  got
zerot:
	VXORPS Y0, Y0, Y0
got:
	XORQ BX, BX
loopt:
	ROWADDR
	VMASKMOVPS (AX), Y13, Y8
	VADDPS Y8, Y0, Y0
	INCQ BX
	CMPQ BX, CX
	JLT  loopt
	TESTQ $2, R9
	JZ   storet
	VMULPS Y14, Y0, Y0
storet:
	VMASKMOVPS Y0, Y13, (DI)

done:
	VZEROUPPER
	RET

// tailMask: 8 lanes set, then 8 clear; the 8 words from word 8-r on set
// the first r lanes (the masked tails of sumRowsAVX and axpyRowsAVX).
DATA ·tailMask+0(SB)/8, $0xffffffffffffffff
DATA ·tailMask+8(SB)/8, $0xffffffffffffffff
DATA ·tailMask+16(SB)/8, $0xffffffffffffffff
DATA ·tailMask+24(SB)/8, $0xffffffffffffffff
DATA ·tailMask+32(SB)/8, $0
DATA ·tailMask+40(SB)/8, $0
DATA ·tailMask+48(SB)/8, $0
DATA ·tailMask+56(SB)/8, $0
GLOBL ·tailMask(SB), RODATA|NOPTR, $64
