//go:build !dnnl

package kernels

import "testing"

// dnnlKernels is empty without -tags dnnl.
func dnnlKernels(testing.TB) []benchKernel { return nil }
