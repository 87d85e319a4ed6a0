// Package kernels owns the model's numeric kernels and every line of cgo
// and every build tag that selects them: dense products (Gemm, over
// oneDNN, OpenBLAS or gonum, and GemmRows, one of Gemm's row blocks, for
// passes that keep a block in cache), Axpy, the sparse-times-dense
// products of CSR inputs (Spmm, SpmmT), the row sums of aggregation and
// scatter (SumRows, AddRows) and their weighted form (AxpyRows and
// AxpyRowsZero, GAT's attention), the per-head dots of GAT's scores
// (HeadDots), column sums (AddColumns) and the ReLU-dropout forward
// (DropRow) and backward (MaskScale), with their benchmarks and agreement
// tests. The last eight run the AVX (DropRow: AVX2) assembly of package
// simd on float32 where the CPU has it, with the bits of the scalar loops.
//
// It lives under train, not internal/, because its one contract is the
// model's: results bit-identical for any thread count. Gemm cuts a product
// into blocks of 64 rows of C whatever GOMAXPROCS is, and the sparse
// kernels give every output element one writer summing in a fixed order,
// so P ranks and T threads train exactly like one. A general BLAS wrapper
// would not promise that. The kernels take slices and CSR arrays only (no
// sample or train types), so train imports them and not the reverse.
//
// Build tags (none needed by default):
//
//   - default: float32 products on oneDNN's fp32 gemm (blas_dnnl.go,
//     dnnl_sgemm.go; libdnnl-dev), float64 ones (gradient checks) on
//     OpenBLAS through gonum's blas64 (blas_openblas.go; libopenblas-dev).
//   - openblas: float32 products on OpenBLAS too (blas_openblas32.go).
//   - gonumblas: gonum's pure-Go kernels for both, no cgo (blas_gonum.go).
//   - dnnl: adds oneDNN's bf16 matmul (bf16_dnnl.go) to BenchmarkGemm and
//     TestGemmKernelsAgree, and its fp32 gemm and bf16 matmul in openblas
//     builds.
//   - xsmm: adds libxsmm's fp32 kernel (kern_xsmm.go; libxsmm-dev) there.
//
// BF16 is the opt-in bf16 product of train --precision bf16 (bf16.go): the
// matmul primitive of oneDNN in the default build (bf16_dnnl.go), only on
// CPUs with AVX512_BF16 or AMX-BF16 (NewBF16 refuses others), with the
// same fixed blocks as Gemm. NewBF16Emulated runs the same path on the
// fp32 kernel, for tests on CPUs without bf16.
//
// BLASName names the float32 kernel of the build. BenchmarkGemm measured
// oneDNN about 1.8x faster than Debian's OpenBLAS, and OpenBLAS 5-16x
// faster than gonum, on the model's layer sizes.
package kernels
