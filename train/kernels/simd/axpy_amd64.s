#include "textflag.h"
#include "rows_amd64.h"

// func axpyRowsAVX(dst, src *float32, w, stride, n int, idx *int32, a *float32, load int)
//
// For each column c < w: dst[c] = start + a[0]·src[idx[0]*stride+c] + ... (k
// order), start dst[c] if load is 1 and +0 (dst not read) if it is 0, rows whose weight is zero skipped, each term a VMULPS then a VADDPS,
// nothing fused. The operands go in Saxpy's order (x·a, then that product plus
// dst[c]): x86 returns the first operand's NaN when both are NaN, so the order
// decides a NaN's bits. Columns go in blocks of 64, 32, 16 and 8 (8, 4, 2 and
// 1 YMM accumulators, loaded from dst once and stored once) and a masked block
// of the last 1..7.
//
// Registers: DI dst block, SI src block (row 0), DX row stride in bytes,
// CX n, R8 idx, R12 a, R11 columns left, R9 load, BX k, AX row address,
// Y0-Y7 accumulators, Y8 a product, Y9 a[k] broadcast, Y13 tail mask.

#define MA(off, acc) VMOVUPS off(AX), Y8; VMULPS Y9, Y8, Y8; VADDPS acc, Y8, acc

// SKIPZERO jumps to l when a[BX] is +0 or -0: such a row is skipped, as
// Saxpy returns at once for alpha == 0 (so 0·Inf never reaches dst).
#define SKIPZERO(l) MOVL (R12)(BX*4), R10; ANDL $0x7fffffff, R10; JZ l

// ROW sets AX to the address of row idx[BX] in the current block and Y9 to
// a[BX] in every lane.
#define ROW ROWADDR; VBROADCASTSS (R12)(BX*4), Y9

// ZEROk sets the first k accumulators to +0: a block's start when load is
// 0, before the branch that loads dst over them when it is 1 (a value fixed
// for the whole call, so the branch is always predicted).
#define ZERO1 VXORPS Y0, Y0, Y0
#define ZERO2 ZERO1; VXORPS Y1, Y1, Y1
#define ZERO4 ZERO2; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3
#define ZERO8 ZERO4; VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7

TEXT ·axpyRowsAVX(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ w+16(FP), R11
	MOVQ stride+24(FP), DX
	SHLQ $2, DX
	MOVQ n+32(FP), CX
	MOVQ idx+40(FP), R8
	MOVQ a+48(FP), R12
	MOVQ load+56(FP), R9

blk64:
	CMPQ R11, $64
	JLT  blk32
	ZERO8
	TESTQ R9, R9
	JZ   start64
	LOAD8(DI)
start64:
	XORQ BX, BX
loop64:
	SKIPZERO(next64)
	ROW
	MA(0, Y0); MA(32, Y1); MA(64, Y2); MA(96, Y3)
	MA(128, Y4); MA(160, Y5); MA(192, Y6); MA(224, Y7)
next64:
	INCQ BX
	CMPQ BX, CX
	JLT  loop64
	STORE8(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $64, R11
	JMP  blk64

blk32:
	CMPQ R11, $32
	JLT  blk16
	ZERO4
	TESTQ R9, R9
	JZ   start32
	LOAD4(DI)
start32:
	XORQ BX, BX
loop32:
	SKIPZERO(next32)
	ROW
	MA(0, Y0); MA(32, Y1); MA(64, Y2); MA(96, Y3)
next32:
	INCQ BX
	CMPQ BX, CX
	JLT  loop32
	STORE4(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, R11

blk16:
	CMPQ R11, $16
	JLT  blk8
	ZERO2
	TESTQ R9, R9
	JZ   start16
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
start16:
	XORQ BX, BX
loop16:
	SKIPZERO(next16)
	ROW
	MA(0, Y0); MA(32, Y1)
next16:
	INCQ BX
	CMPQ BX, CX
	JLT  loop16
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, R11

blk8:
	CMPQ R11, $8
	JLT  tail
	ZERO1
	TESTQ R9, R9
	JZ   start8
	VMOVUPS (DI), Y0
start8:
	XORQ BX, BX
loop8:
	SKIPZERO(next8)
	ROW
	MA(0, Y0)
next8:
	INCQ BX
	CMPQ BX, CX
	JLT  loop8
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, R11

tail:
	// The last 1..7 columns: lanes 0..R11-1 of a masked load and store
	// (masked-off lanes are neither read nor written; their products are
	// of zeros and never stored).
	TESTQ R11, R11
	JZ   done
	LEAQ ·tailMask(SB), AX
	MOVQ $8, R10
	SUBQ R11, R10
	VMOVUPS (AX)(R10*4), Y13
	VXORPS Y0, Y0, Y0
	TESTQ R9, R9
	JZ   startt
	VMASKMOVPS (DI), Y13, Y0
startt:
	XORQ BX, BX
loopt:
	SKIPZERO(nextt)
	ROW
	VMASKMOVPS (AX), Y13, Y8
	VMULPS Y9, Y8, Y8
	VADDPS Y0, Y8, Y0
nextt:
	INCQ BX
	CMPQ BX, CX
	JLT  loopt
	VMASKMOVPS Y0, Y13, (DI)

done:
	VZEROUPPER
	RET
