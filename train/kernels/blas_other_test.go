//go:build gonumblas || openblas

package kernels

// openblasKernels is empty when OpenBLAS is the build's own float32 kernel
// (-tags openblas) or not linked at all (-tags gonumblas).
func openblasKernels() []benchKernel { return nil }
