// Macros shared by the row kernels (rows_amd64.s, axpy_amd64.s): the
// accumulators Y0-Y7 (a block of 64 columns) or Y0-Y3 (32) loaded from and
// stored to the destination block at p, and the address of a source row.

#define LOAD8(p) VMOVUPS 0(p), Y0; VMOVUPS 32(p), Y1; VMOVUPS 64(p), Y2; VMOVUPS 96(p), Y3; VMOVUPS 128(p), Y4; VMOVUPS 160(p), Y5; VMOVUPS 192(p), Y6; VMOVUPS 224(p), Y7
#define STORE8(p) VMOVUPS Y0, 0(p); VMOVUPS Y1, 32(p); VMOVUPS Y2, 64(p); VMOVUPS Y3, 96(p); VMOVUPS Y4, 128(p); VMOVUPS Y5, 160(p); VMOVUPS Y6, 192(p); VMOVUPS Y7, 224(p)
#define LOAD4(p) VMOVUPS 0(p), Y0; VMOVUPS 32(p), Y1; VMOVUPS 64(p), Y2; VMOVUPS 96(p), Y3
#define STORE4(p) VMOVUPS Y0, 0(p); VMOVUPS Y1, 32(p); VMOVUPS Y2, 64(p); VMOVUPS Y3, 96(p)

// ROWADDR sets AX to the address of row idx[BX] in the current block (R8
// idx, DX the row stride in bytes, SI the block's column in row 0).
#define ROWADDR MOVLQSX (R8)(BX*4), AX; IMULQ DX, AX; ADDQ SI, AX
