package train

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/nlpodyssey/safetensors"
)

// EncodeSafetensors serialises tensors (float32, little-endian) and the
// string metadata (the header's "__metadata__", may be nil) in the
// safetensors format: an 8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and data offsets, then the raw data.
// The layout is a function of the input only (tensors sorted by name), so
// equal state dicts give equal bytes.
func EncodeSafetensors(tensors []NamedTensor, meta map[string]string) ([]byte, error) {
	views := make(map[string]safetensors.TensorView, len(tensors))
	for _, t := range tensors {
		if _, dup := views[t.Name]; dup {
			return nil, fmt.Errorf("safetensors: tensor %s twice", t.Name)
		}
		shape := make([]uint64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = uint64(d)
		}
		data := make([]byte, 4*len(t.Data))
		for i, v := range t.Data {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		v, err := safetensors.NewTensorView(safetensors.F32, shape, data)
		if err != nil {
			return nil, fmt.Errorf("safetensors: tensor %s: %w", t.Name, err)
		}
		views[t.Name] = v
	}
	b, err := safetensors.Serialize(views, meta)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	return b, nil
}

// DecodeSafetensors parses a safetensors file's bytes (name is used in
// errors). Floating-point tensors (F32, F64, F16, BF16) are returned as
// float32; any other dtype is refused.
func DecodeSafetensors(name string, b []byte) ([]NamedTensor, map[string]string, error) {
	st, err := safetensors.Deserialize(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a safetensors file: %w", name, err)
	}
	var out []NamedTensor
	for _, nv := range st.Tensors() {
		v := nv.TensorView
		shape := make([]int, len(v.Shape()))
		n := 1
		for i, d := range v.Shape() {
			if d > math.MaxInt32 {
				return nil, nil, fmt.Errorf("%s: tensor %s: dimension %d too large", name, nv.Name, d)
			}
			shape[i] = int(d)
			n *= int(d)
		}
		data, err := floatsOf(v.DType(), v.Data(), n)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: tensor %s: %w", name, nv.Name, err)
		}
		out = append(out, NamedTensor{Name: nv.Name, Shape: shape, Data: data})
	}
	_, md, err := safetensors.ReadMetadata(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, md.Metadata(), nil
}

// floatsOf converts n little-endian values of a floating-point dtype to
// float32.
func floatsOf(dt safetensors.DType, b []byte, n int) ([]float32, error) {
	out := make([]float32, n)
	switch dt {
	case safetensors.F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case safetensors.F64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	case safetensors.BF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	case safetensors.F16:
		for i := range out {
			out[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
		}
	default:
		return nil, fmt.Errorf("dtype %s is not a floating-point type", dt)
	}
	return out, nil
}

// halfToFloat converts an IEEE 754 binary16 value to float32.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}

// ReadSafetensors reads and decodes a safetensors file.
func ReadSafetensors(path string) ([]NamedTensor, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return DecodeSafetensors(path, b)
}
