package kernels

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/cpu"
)

// Why the instruction set is part of a result: oneDNN JIT-compiles its
// fp32 gemm for the best instruction set the CPU offers (SSE4.1, AVX, AVX2
// or AVX-512), and each of those kernels adds the k terms of an element in
// its own order (vector width, unrolling, packing). So one product gives
// different low bits on an AVX2 and an AVX-512 CPU, and a trained model
// differs in its last digits. Within one class the kernel is the same JIT
// code on every CPU, Intel or AMD: with one thread per call (as gemmSplit
// makes it) oneDNN 2.6 chooses no blocking by cache size or core count,
// those only set its thread count. Capping the class (SetISA) therefore
// makes every CPU that has it compute the same bits.
//
// Go's own kernels add one condition: on amd64, math.Exp (and math.Pow,
// which calls it) takes a fused multiply-add path where the CPU has AVX
// and FMA (math/exp_amd64.go), which rounds differently from the other
// path. Every CPU with AVX2 has FMA, so the classes avx2 and wider include
// it; a CPU (or a virtual machine's CPU model) that breaks the rule is
// named as its own path, and so is a narrower class capped on a CPU with
// FMA (pathClass).

// ISANative is the SetISA value that leaves oneDNN on the CPU's best class.
const ISANative = "native"

// ISAs returns the values SetISA takes: native and the fp32 gemm classes
// of oneDNN, from the widest down.
func ISAs() []string { return []string{ISANative, "avx512_core", "avx2", "avx", "sse41"} }

// isaBits is oneDNN's dnnl_cpu_isa_t value of a class (dnnl_types.h):
// each class's bits include those of the classes below it. 0 for native
// and for names that are no class.
func isaBits(class string) int {
	switch class {
	case "sse41":
		return 0x1
	case "avx":
		return 0x3
	case "avx2":
		return 0x7
	case "avx512_core":
		return 0x27
	}
	return 0
}

// CheckISA reports whether name is one of ISAs.
func CheckISA(name string) error {
	if slices.Contains(ISAs(), name) {
		return nil
	}
	return fmt.Errorf("%q: want one of %s", name, strings.Join(ISAs(), ", "))
}

// goFMA reports whether Go's math.Exp takes its FMA path in this process
// (the condition of math/exp_amd64.go). Elsewhere it reports true: other
// architectures' compilers fuse multiply-adds themselves.
func goFMA() bool { return runtime.GOARCH != "amd64" || (cpu.X86.HasAVX && cpu.X86.HasFMA) }

// wideClass reports whether class includes FMA on every CPU that has it.
func wideClass(class string) bool {
	return class == "avx2" || class == "avx512_core" || class == "avx512_mic"
}

// pathClass is the class as Path names it: oneDNN's class, marked where
// Go's math path is not the one every CPU of that class takes ("avx+fma":
// capped at avx on a CPU with FMA; "avx2-nofma": no FMA beside AVX2).
func pathClass(class string, fma bool) string {
	switch {
	case wideClass(class) && !fma:
		return class + "-nofma"
	case !wideClass(class) && fma:
		return class + "+fma"
	}
	return class
}

// isaClass names the fp32 gemm class of a dnnl_cpu_isa_t value. The
// extensions above a class (VNNI, BF16, AMX, AVX2-VNNI) add integer and
// bf16 kernels only, so they run the class's fp32 kernel: an AMX Xeon
// computes fp32 products exactly as any AVX-512 CPU does.
func isaClass(v int) string {
	switch {
	case v&0x27 == 0x27:
		return "avx512_core"
	case v&0xf == 0xf:
		return "avx512_mic" // Xeon Phi: a kernel of its own
	case v&0x7 == 0x7:
		return "avx2"
	case v&0x3 == 0x3:
		return "avx"
	case v&0x1 == 0x1:
		return "sse41"
	}
	return "generic" // no JIT kernel: oneDNN's reference C++ code
}
