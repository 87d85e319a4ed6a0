//go:build !amd64

package prefetch

import "unsafe"

// lines does nothing without assembly.
func lines(p unsafe.Pointer, n uintptr) {}
