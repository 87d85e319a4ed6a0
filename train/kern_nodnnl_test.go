//go:build !dnnl

package train

import "testing"

// dnnlKernels is empty without -tags dnnl.
func dnnlKernels(testing.TB) []benchKernel { return nil }
