// Package half converts between float32 and the two 16-bit float formats a
// partition may store its node features in: bfloat16 (float32's sign and
// 8-bit exponent with 7 mantissa bits) and IEEE 754 binary16 (5-bit
// exponent, 10 mantissa bits, largest finite value 65504). Narrowing
// rounds to nearest, ties to even, as torch's Tensor.to(torch.bfloat16)
// and .half() do; widening is exact. The functions are pure, so a row
// converts to the same bits on every rank and thread.
package half

import (
	"fmt"
	"math"
)

// Kind is the element type of a feature table.
type Kind uint8

// The feature types: F32 stores float32 (the default), BF16 and FP16 two
// bytes per value.
const (
	F32 Kind = iota
	BF16
	FP16
)

// Names of the kinds as the command line and META.json spell them.
const (
	NameF32  = "fp32"
	NameBF16 = "bf16"
	NameFP16 = "fp16"
)

// Parse returns the kind named s ("" is F32).
func Parse(s string) (Kind, error) {
	switch s {
	case "", NameF32:
		return F32, nil
	case NameBF16:
		return BF16, nil
	case NameFP16:
		return FP16, nil
	}
	return F32, fmt.Errorf("feature type %q: want %s, %s or %s", s, NameF32, NameBF16, NameFP16)
}

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case F32:
		return NameF32
	case BF16:
		return NameBF16
	case FP16:
		return NameFP16
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Bytes returns the size of one value.
func (k Kind) Bytes() int {
	if k == F32 {
		return 4
	}
	return 2
}

// Half reports whether k is one of the 2-byte kinds.
func (k Kind) Half() bool { return k == BF16 || k == FP16 }

// MaxFP16 is the largest finite binary16 value.
const MaxFP16 = 65504

// ToBF16 rounds x to bfloat16, to nearest with ties to even. A NaN stays a
// NaN (quiet, with x's sign and top payload bits); values beyond
// bfloat16's range round to ±Inf, as in torch.
func ToBF16(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 { // NaN: truncating could make it Inf
		return uint16(b>>16) | 0x0040
	}
	// Adding 0x7fff plus the lowest kept bit rounds the dropped 16 bits to
	// nearest, a tie to the even neighbour; a carry moves into the
	// exponent, which is the right result (up to Inf).
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// FromBF16 widens a bfloat16 to float32 (exact).
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// ToFP16 rounds x to binary16, to nearest with ties to even, subnormals
// included. ok is false when x is not finite or its rounded magnitude
// exceeds 65504 (binary16 would hold ±Inf); h is then the Inf or NaN.
func ToFP16(x float32) (h uint16, ok bool) {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff && man != 0:
		return sign | 0x7e00 | uint16(man>>13), false
	case exp == 0xff:
		return sign | 0x7c00, false
	case exp == 0:
		// float32 zeros and subnormals (< 2^-126) are far below half of
		// binary16's smallest subnormal (2^-24): they round to zero.
		return sign, true
	}
	e := exp - 127
	if e > 15 {
		return sign | 0x7c00, false
	}
	m := man | 0x800000 // 24 significant bits
	// A normal result keeps 11 significant bits (shift 13); below 2^-14
	// the result is subnormal and keeps fewer, one less per binade.
	shift := uint(13)
	base := uint32(e+14) << 10 // exponent field minus one: m's leading bit adds the one
	if e < -14 {
		shift = uint(13 - 14 - e)
		base = 0
	}
	if shift > 24 {
		return sign, true // below half the smallest subnormal
	}
	kept := m >> shift
	rem := m & (1<<shift - 1)
	halfway := uint32(1) << (shift - 1)
	if rem > halfway || (rem == halfway && kept&1 == 1) {
		kept++ // a carry out of the mantissa moves into the exponent
	}
	v := base + kept
	if v >= 0x7c00 {
		return sign | 0x7c00, false
	}
	return sign | uint16(v), true
}

// FromFP16 widens a binary16 to float32 (exact). The exponent and
// mantissa bits, moved to float32's places, read as a float32 2^112 times
// too small (the biases differ by 127-15), subnormals included, so one
// multiplication by 2^112 rescales every finite value exactly; Inf and NaN
// keep float32's all-ones exponent instead. Branch-light, as Gather widens
// every feature value of a step through it.
func FromFP16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	if h&0x7c00 == 0x7c00 {
		return math.Float32frombits(sign | 0x7f800000 | uint32(h&0x3ff)<<13)
	}
	f := math.Float32frombits(uint32(h&0x7fff)<<13) * 0x1p112
	return math.Float32frombits(sign | math.Float32bits(f))
}

// Narrow rounds src into dst (len(dst) >= len(src)) as kind k (BF16 or
// FP16). It is for values already known to fit (Check), such as rows
// scaled to unit sum: an FP16 value out of range becomes ±Inf.
func Narrow(k Kind, dst []uint16, src []float32) {
	switch k {
	case BF16:
		for i, x := range src {
			dst[i] = ToBF16(x)
		}
	case FP16:
		for i, x := range src {
			dst[i], _ = ToFP16(x)
		}
	}
}

// Widen writes the float32 values of src (kind k, BF16 or FP16) into dst
// (len(dst) >= len(src)).
func Widen(k Kind, dst []float32, src []uint16) {
	dst = dst[:len(src)]
	switch k {
	case BF16:
		// Four at a time: one bounds check per four values instead of one
		// per value, which made this loop cost 1.5x more.
		i := 0
		for ; i+4 <= len(src); i += 4 {
			s, d := src[i:i+4:i+4], dst[i:i+4:i+4]
			d[0] = math.Float32frombits(uint32(s[0]) << 16)
			d[1] = math.Float32frombits(uint32(s[1]) << 16)
			d[2] = math.Float32frombits(uint32(s[2]) << 16)
			d[3] = math.Float32frombits(uint32(s[3]) << 16)
		}
		for ; i < len(src); i++ {
			dst[i] = math.Float32frombits(uint32(src[i]) << 16)
		}
	case FP16:
		for i, h := range src {
			dst[i] = FromFP16(h)
		}
	}
}

// Check returns the index of the first value of xs that kind k refuses,
// or -1: for FP16 a value that is not finite or of magnitude above 65504
// (stricter than ToFP16's ok, which lets [65504, 65520) round down, so
// that no stored value was ever beyond binary16's range). BF16 holds every
// float32 (NaN stays NaN, as it would in float32), so it never refuses.
func Check(k Kind, xs []float32) int {
	if k != FP16 {
		return -1
	}
	for i, x := range xs {
		if !(x >= -MaxFP16 && x <= MaxFP16) { // NaN fails both
			return i
		}
	}
	return -1
}
