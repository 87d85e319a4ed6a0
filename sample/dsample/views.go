package dsample

import "unsafe"

// int64View reinterprets a byte slice (8-byte aligned: MPI windows and Go
// heap allocations of 8 bytes or more are) as int64s in native byte order.
// All ranks of a job run on the same architecture, so native order is the
// wire order.
func int64View(b []byte) []int64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

func float32View(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// byteView is the inverse view, used to pass typed buffers to Fetch.
func byteView[T int64 | int32 | float32](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(z)))
}
