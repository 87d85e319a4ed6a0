//go:build !xsmm

package train

import "testing"

// xsmmKernels is empty without -tags xsmm.
func xsmmKernels(testing.TB) []benchKernel { return nil }
