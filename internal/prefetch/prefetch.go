// Package prefetch asks the CPU to start loading memory that a loop is
// about to read at scattered places (feature rows, a node's edges), a few
// items ahead, so that their memory latency overlaps the work on the items
// before. A prefetch changes no value and never faults (one of memory that
// is not there is dropped); where there is no assembly it does nothing.
package prefetch

import "unsafe"

// Float32s prefetches the cache lines of s.
func Float32s(s []float32) {
	if len(s) > 0 {
		lines(unsafe.Pointer(&s[0]), uintptr(len(s))*4)
	}
}

// Float64s prefetches the cache lines of s.
func Float64s(s []float64) {
	if len(s) > 0 {
		lines(unsafe.Pointer(&s[0]), uintptr(len(s))*8)
	}
}

// Uint16s prefetches the cache lines of s.
func Uint16s(s []uint16) {
	if len(s) > 0 {
		lines(unsafe.Pointer(&s[0]), uintptr(len(s))*2)
	}
}

// Int64s prefetches the cache lines of s.
func Int64s(s []int64) {
	if len(s) > 0 {
		lines(unsafe.Pointer(&s[0]), uintptr(len(s))*8)
	}
}
