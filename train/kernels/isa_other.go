//go:build gonumblas || openblas

package kernels

import "fmt"

// SetISA accepts only native outside the default (oneDNN) build: OpenBLAS
// chooses its kernel by CPU itself (OPENBLAS_CORETYPE pins it), and
// gonum's kernels are the same Go assembly on every x86-64 CPU.
func SetISA(name string) error {
	if err := CheckISA(name); err != nil {
		return err
	}
	if name != ISANative {
		return fmt.Errorf("%s: only the default oneDNN build can cap its instruction set; this build's kernel is %s", name, BLASName)
	}
	return nil
}
