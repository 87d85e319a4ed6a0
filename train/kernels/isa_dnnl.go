//go:build !gonumblas && !openblas

package kernels

// #cgo LDFLAGS: -ldnnl
// #include <oneapi/dnnl/dnnl.h>
import "C"

import "fmt"

// SetISA caps the instruction set of oneDNN's kernels at name (one of
// ISAs; native leaves them on the CPU's best), so that every CPU of that
// class computes the same bits (see isa.go). It must come before the
// first product: oneDNN fixes its choice then. It fails when the CPU
// lacks the class, naming the best one it has, since a cap the CPU cannot
// reach would silently run another kernel.
func SetISA(name string) error {
	if err := CheckISA(name); err != nil {
		return err
	}
	if name == ISANative {
		return nil
	}
	if st := C.dnnl_set_max_cpu_isa(C.dnnl_cpu_isa_t(isaBits(name))); st != C.dnnl_success {
		return fmt.Errorf("oneDNN refused to cap its instruction set at %s (status %d): it was already in use", name, int(st))
	}
	if got := dnnlClass(); got != name {
		return fmt.Errorf("this CPU has no %s: oneDNN's best here is %s", name, got)
	}
	if wideClass(name) && !goFMA() {
		return fmt.Errorf("this CPU has %s but no FMA, without which Go's math.Exp rounds unlike every other %s CPU's", name, name)
	}
	return nil
}

// dnnlClass is the fp32 class oneDNN dispatches to in this process.
func dnnlClass() string { return isaClass(int(C.dnnl_get_effective_cpu_isa())) }
