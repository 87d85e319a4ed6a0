package kernels

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/cpu"

	"mpignn/internal/half"
	"mpignn/internal/par"
)

// Precisions of the model's layer products (train --precision): fp32, the
// default, runs them on the build's float32 kernel (sgemm); bf16 rounds
// both inputs to bfloat16 and accumulates and writes in fp32 (BF16).
const (
	PrecisionFP32 = "fp32"
	PrecisionBF16 = "bf16"
)

// Precisions lists the values CheckPrecision accepts, the default first.
func Precisions() []string { return []string{PrecisionFP32, PrecisionBF16} }

// CheckPrecision reports whether name is one of Precisions.
func CheckPrecision(name string) error {
	if slices.Contains(Precisions(), name) {
		return nil
	}
	return fmt.Errorf("%q: want one of %s", name, strings.Join(Precisions(), ", "))
}

// ErrNoBF16 is NewBF16's refusal on a CPU without bf16 instructions.
var ErrNoBF16 = errors.New("this CPU has no bf16 instructions (needs AVX512_BF16 or AMX-BF16)")

// CPUHasBF16 reports whether the CPU has native bf16 products: AVX512_BF16's
// dot products (CPUID leaf 7 sub-leaf 1 EAX bit 5) or AMX's bf16 tiles
// (leaf 7 EDX bit 22), as golang.org/x/sys/cpu v0.38 reads them. Without
// them oneDNN 2.6 has no bf16 matmul at all (its reference code needs
// AVX-512 too), and an emulation on fp32 units would be slower than fp32.
func CPUHasBF16() bool { return cpu.X86.HasAVX512BF16 || cpu.X86.HasAMXBF16 }

// BF16 multiplies float32 matrices with bfloat16 inputs and fp32
// accumulation and output: the products of train --precision bf16. Inputs
// are rounded to nearest even (half.ToBF16); op(B) operands that lie in the
// buffer given to SetWeights (the model's weights) are taken from its bf16
// copy, made once per SetWeights, and all others are rounded per call. Like
// Gemm it cuts a product into the fixed blocks of gemmSplit and runs each
// on one thread, so results are bit-identical for any thread count.
//
// A BF16 keeps its operands' bf16 copies between calls: products on one
// BF16 must not overlap in time (a model runs its layers' products in
// sequence). Close frees its kernel.
type BF16 struct {
	// run multiplies one block of bf16 operands into fp32 C; nil for the
	// emulation (NewBF16Emulated).
	run   func(tA, tB bool, m, n, k int, alpha float32, a []uint16, lda int, b []uint16, ldb int, beta float32, c []float32, ldc int)
	close func()
	path  string

	w        []float32 // the buffer of the last SetWeights
	w16      []uint16  // its bf16 copy
	a16, b16 []uint16  // bf16 copies of the last call's A and (non-weight) B
	af, bf   []float32 // emulation only: a16 and b16 widened back to fp32
}

// NewBF16 returns oneDNN's bf16 product, or ErrNoBF16 on a CPU without
// bf16 instructions; it also fails where oneDNN has no bf16 matmul (an
// instruction-set cap below the bf16 classes, SetISA) and in builds
// without oneDNN.
func NewBF16() (*BF16, error) {
	if !CPUHasBF16() {
		return nil, ErrNoBF16
	}
	return newNativeBF16()
}

// NewBF16Emulated returns a BF16 that emulates bf16 products on the
// build's fp32 kernel, FOR TESTS ONLY: it rounds both inputs to bf16 as
// the native kernel does and multiplies the rounded values in fp32, where
// every product of two bf16 values is exact and the sums are fp32 as on
// AMX or AVX512_BF16. It differs from the native kernel only in the order
// of the sums, and it is slower than plain fp32. It lets the tests of this
// project's AVX2 machines, where oneDNN refuses bf16 (status 3), run the
// whole bf16 path: the weights' copy, the per-call rounding, the blocks.
func NewBF16Emulated() *BF16 {
	return &BF16{close: func() {}, path: "emulation"}
}

// Path names the numeric path of p's products, as kernels.Path does for
// fp32 ones: "onednn avx512_core_amx", or "emulation".
func (p *BF16) Path() string { return p.path }

// Close frees p's kernel.
func (p *BF16) Close() { p.close() }

// SetWeights makes p round w to bf16 now and take every later op(B) that
// lies in w from that copy (ranges of it: one tensor, or a block of one).
// The caller calls it again whenever w changes (the model: before every
// pass, i.e. once per optimizer step), and must not resize w meanwhile.
func (p *BF16) SetWeights(w []float32) {
	p.w = w
	p.w16 = toBF16(w, p.w16)
}

// weights16 returns the part of the weights' bf16 copy that holds b, or
// nil when b does not lie in the weights.
func (p *BF16) weights16(b []float32) []uint16 {
	if len(p.w) == 0 || len(b) == 0 {
		return nil
	}
	const size = uintptr(unsafe.Sizeof(float32(0)))
	base, at := uintptr(unsafe.Pointer(&p.w[0])), uintptr(unsafe.Pointer(&b[0]))
	if at < base || (at-base)%size != 0 {
		return nil
	}
	off := int((at - base) / size)
	if off >= len(p.w) || len(b) > len(p.w)-off {
		return nil
	}
	return p.w16[off : off+len(b)]
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C as kernels.Gemm does, with
// op(A) and op(B) rounded to bf16.
func (p *BF16) Gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleRows(m, n, beta, c, ldc) // as dnnlSgemm: no operand to point at
		return
	}
	_, _, ar, ac, br, bc := blasShapes(tA, tB, m, n, k)
	bs := b[:span(br, bc, ldb)]
	b16 := p.weights16(bs)
	if b16 == nil {
		p.b16 = toBF16(bs, p.b16)
		b16 = p.b16
	}
	p.a16 = toBF16(a[:span(ar, ac, lda)], p.a16)
	if p.run == nil {
		// The emulation: the rounded operands back in fp32, where a
		// product of two bf16 values is exact, on the build's fp32 kernel.
		p.af = widenBF16(p.a16, p.af)
		p.bf = widenBF16(b16, p.bf)
		gemmSplit(sgemm, tA, tB, m, n, k, alpha, p.af, lda, p.bf, ldb, beta, c, ldc)
	} else {
		gemmSplit(p.run, tA, tB, m, n, k, alpha, p.a16, lda, b16, ldb, beta, c, ldc)
	}
	nudgeULP(c) // nothing, except in the golden tests' -tags gemmulp build
}

// toBF16 rounds x into dst (grown as needed) in parallel chunks: each
// element is rounded alone, so the result does not depend on the split.
func toBF16(x []float32, dst []uint16) []uint16 {
	if cap(dst) < len(x) {
		dst = make([]uint16, len(x))
	}
	dst = dst[:len(x)]
	par.Range(len(x), len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = half.ToBF16(x[i])
		}
	})
	return dst
}

// widenBF16 writes the fp32 value of every bf16 in x into dst (grown as
// needed): exact, the bf16 bits are the top half of the fp32 ones.
func widenBF16(x []uint16, dst []float32) []float32 {
	if cap(dst) < len(x) {
		dst = make([]float32, len(x))
	}
	dst = dst[:len(x)]
	par.Range(len(x), len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = half.FromBF16(x[i])
		}
	})
	return dst
}
