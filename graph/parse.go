package graph

import (
	"fmt"
	"math"
	"strconv"
)

// The parsers in this file work on one line (without its '\n') and return
// errors that describe only the content; the caller adds file and line.
// They are written by hand because the reader spends most of its time here:
// strconv and encoding/csv allocate per field.

// parseError is a constant error kind, so the sentinels below are consts
// rather than package-level variables.
type parseError string

func (e parseError) Error() string { return string(e) }

const (
	errEmpty    = parseError("empty field")
	errNotInt   = parseError("not an integer")
	errOverflow = parseError("integer out of range")
)

// trimCR removes a trailing '\r' so files written on Windows parse too.
func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

// parseInt parses a decimal integer (optional leading '-' or '+') at the
// start of b and returns it with the rest of b.
func parseInt(b []byte) (int64, []byte, error) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var v uint64
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		if v > (math.MaxInt64-uint64(c))/10 {
			return 0, b, errOverflow
		}
		v = v*10 + uint64(c)
	}
	if i == start {
		if len(b) == 0 {
			return 0, b, errEmpty
		}
		return 0, b, errNotInt
	}
	if neg {
		return -int64(v), b[i:], nil
	}
	return int64(v), b[i:], nil
}

// parseIntLine parses a line holding exactly one integer.
func parseIntLine(line []byte) (int64, error) {
	v, rest, err := parseInt(line)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", err, clip(line))
	}
	if len(rest) != 0 {
		return 0, fmt.Errorf("%w: %q", errNotInt, clip(line))
	}
	return v, nil
}

// parseEdgeLine parses "src,dst".
func parseEdgeLine(line []byte) (src, dst int64, err error) {
	src, rest, err := parseInt(line)
	if err != nil {
		return 0, 0, fmt.Errorf("bad source id (%v) in %q, want \"src,dst\"", err, clip(line))
	}
	if len(rest) == 0 || rest[0] != ',' {
		return 0, 0, fmt.Errorf("want \"src,dst\", got %q", clip(line))
	}
	dst, rest, err = parseInt(rest[1:])
	if err != nil {
		return 0, 0, fmt.Errorf("bad destination id (%v) in %q, want \"src,dst\"", err, clip(line))
	}
	if len(rest) != 0 {
		return 0, 0, fmt.Errorf("want \"src,dst\", got %q", clip(line))
	}
	return src, dst, nil
}

// pow10f32 returns 10^e for 0 <= e <= 10, the powers of ten that are exact
// in float32 (5^10 < 2^24).
func pow10f32(e int) float32 {
	f := float32(1)
	for ; e >= 2; e -= 2 {
		f *= 100
	}
	if e == 1 {
		f *= 10
	}
	return f
}

// parseFloat32 parses one decimal field. The fast path covers values whose
// digits form an integer m <= 2^24 and whose decimal exponent e has |e| <= 10:
// then m and 10^|e| are exact float32 values and one float32 multiply or
// divide rounds correctly (Clinger's argument), giving the same bits as
// strconv.ParseFloat(s, 32). Everything else goes to strconv. Non-finite
// values are rejected: they would poison training silently.
func parseFloat32(b []byte) (float32, error) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	exp := 0
	digits := false
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		digits = true
		mant = mant*10 + uint64(c)
		if mant > 1<<24 {
			return parseFloat32Slow(b)
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			digits = true
			mant = mant*10 + uint64(c)
			exp--
			if mant > 1<<24 || exp < -10 {
				return parseFloat32Slow(b)
			}
		}
	}
	if !digits {
		return parseFloat32Slow(b)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		start := i
		e := 0
		for ; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			e = e*10 + int(c)
			if e > 100 {
				return parseFloat32Slow(b)
			}
		}
		if i == start {
			return parseFloat32Slow(b)
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) || exp < -10 || exp > 10 {
		return parseFloat32Slow(b)
	}
	f := float32(mant)
	if exp < 0 {
		f /= pow10f32(-exp)
	} else {
		f *= pow10f32(exp)
	}
	if neg {
		f = -f
	}
	return f, nil
}

func parseFloat32Slow(b []byte) (float32, error) {
	if len(b) == 0 {
		return 0, errEmpty
	}
	v, err := strconv.ParseFloat(string(b), 32)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", clip(b))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("non-finite number %q", clip(b))
	}
	return float32(v), nil
}

// parseFeatureLine parses comma-separated floats into out and returns how
// many fields the line has; it fails when that differs from len(out).
func parseFeatureLine(line []byte, out []float32) error {
	k := 0
	for {
		if k >= len(out) {
			return fmt.Errorf("more than %d values", len(out))
		}
		// Fast path for single-digit fields, the whole of a bag-of-words
		// row ("0,1,0,..."): it halves the time to read such files.
		if len(line) > 0 && line[0]-'0' <= 9 && (len(line) == 1 || line[1] == ',') {
			out[k] = float32(line[0] - '0')
			k++
			if len(line) == 1 {
				break
			}
			line = line[2:]
			continue
		}
		end := 0
		for end < len(line) && line[end] != ',' {
			end++
		}
		f, err := parseFloat32(line[:end])
		if err != nil {
			return fmt.Errorf("value %d: %w", k+1, err)
		}
		out[k] = f
		k++
		if end == len(line) {
			break
		}
		line = line[end+1:]
	}
	if k != len(out) {
		return fmt.Errorf("%d values, want %d (the length of the first row)", k, len(out))
	}
	return nil
}

// countFields returns the number of comma-separated fields of a line.
func countFields(line []byte) int {
	n := 1
	for _, c := range line {
		if c == ',' {
			n++
		}
	}
	return n
}

// clip shortens a line for an error message.
func clip(b []byte) string {
	const max = 60
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
