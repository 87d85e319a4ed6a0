package hashkey

import "math/bits"

// Stream is a SplitMix64 generator (a Weyl sequence passed through Mix64).
// The zero value is a valid stream, but streams should be created from a
// key (NewStream of a Hash64, or the sampler's Key.Stream) so that draws
// are tied to what they decide.
type Stream struct{ s uint64 }

// NewStream returns the stream whose state is the given 64-bit key.
func NewStream(key uint64) Stream { return Stream{s: key} }

// Uint64 returns the next 64 random bits.
func (r *Stream) Uint64() uint64 {
	r.s += Golden
	return Mix64(r.s)
}

// Uint64n returns a uniform integer in [0,n) for n > 0 (0 when n == 0),
// without modulo bias: Lemire's multiply-shift with rejection of the short
// final interval.
func (r *Stream) Uint64n(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		// The threshold (2^64 - n) mod n is only needed on this rare path.
		t := -n % n
		for lo < t {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Float32 returns a uniform float32 in [0,1).
func (r *Stream) Float32() float32 { return Float32From(r.Uint64()) }

// Float64 returns a uniform float64 in [0,1).
func (r *Stream) Float64() float64 { return Float64From(r.Uint64()) }

// Float32From maps 64 random bits to a float32 uniform on [0,1) using the top
// 24 bits, which is exactly the float32 mantissa precision (so every value is
// representable and the result is never 1).
func Float32From(h uint64) float32 { return float32(h>>40) * (1.0 / (1 << 24)) }

// Float64From maps 64 random bits to a float64 uniform on [0,1) using the top
// 53 bits.
func Float64From(h uint64) float64 { return float64(h>>11) * (1.0 / (1 << 53)) }
