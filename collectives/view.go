package collectives

import "unsafe"

// Word is an element type a DistArray's rows are read as in place.
type Word interface {
	~uint16 | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// View reinterprets bytes as a slice of T in native byte order, without a
// copy, so that rows fetched into (or exposed from) a DistArray are used in
// place. b must be aligned for T: MPI windows and Go heap allocations of
// at least 8 bytes are. All ranks of a job run on the same architecture,
// so native order is the wire order.
func View[T Word](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
}

// Bytes is View's inverse: the bytes of xs, to pass a typed buffer to
// Fetch, PushRows or Accumulate without a copy.
func Bytes[T Word](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(z)))
}
