//go:build !xsmm

package kernels

import "testing"

// xsmmKernels is empty without -tags xsmm.
func xsmmKernels(testing.TB) []benchKernel { return nil }
