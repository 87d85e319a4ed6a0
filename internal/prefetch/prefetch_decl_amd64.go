package prefetch

import "unsafe"

// lines runs PREFETCHT0 on every 64-byte line of the n > 0 bytes from p.
// In prefetch_amd64.s.
//
//go:noescape
func lines(p unsafe.Pointer, n uintptr)
