//go:build gemmulp

package kernels

import "math"

// nudgeULP moves the first element of every float32 product one ulp up.
// It exists only in binaries built with -tags gemmulp, which the golden
// tests build to prove their power: a kernel that is off by one ulp in a
// single element per product must fail every golden training table
// (tests/golden_ulp_test.go). No other build can turn it on.
func nudgeULP[T Float](c []T) {
	if v, ok := any(c).([]float32); ok && len(v) > 0 {
		v[0] = math.Nextafter32(v[0], float32(math.Inf(1)))
	}
}
