//go:build xsmm

package kernels

import "testing"

// xsmmKernels returns the libxsmm fp32 kernel for BenchmarkGemm and the
// agreement test.
func xsmmKernels(testing.TB) []benchKernel {
	return []benchKernel{{name: "xsmm-fp32", gemm: newXSMM().gemm}}
}
