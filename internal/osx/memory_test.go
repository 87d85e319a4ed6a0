package osx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMeminfo(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int64
		err        string
	}{
		{"available", "MemTotal:       32768000 kB\nMemFree:  1000 kB\nMemAvailable:   24117248 kB\n", 24117248 * 1024, ""},
		{"total only", "MemTotal:       1024 kB\nMemFree:  10 kB\n", 1024 * 1024, ""},
		{"neither", "MemFree:  10 kB\n", 0, "neither MemAvailable nor MemTotal"},
		{"garbage", "MemAvailable: lots kB\n", 0, `bad value "lots"`},
		{"overflow", "MemAvailable: 99999999999999999 kB\n", 0, "bad value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMeminfo(strings.NewReader(tc.text))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	// The real file parses on Linux.
	assert.Positive(t, AvailableMemory())
}

func TestFormatBytes(t *testing.T) {
	for b, want := range map[float64]string{
		512: "512 B", 1536: "1.5 KiB", 23 << 30: "23 GiB", 7.4 * (1 << 40): "7.4 TiB", 300 << 20: "300 MiB",
	} {
		assert.Equal(t, want, FormatBytes(b), "%v bytes", b)
	}
}

// TestFitsMemory: nothing beyond the address space fits, whatever the
// machine says; a byte does.
func TestFitsMemory(t *testing.T) {
	for _, tc := range []struct {
		need float64
		want bool
	}{
		{1, true},
		{MaxAddressable * 2, false},
	} {
		_, ok := FitsMemory(tc.need)
		assert.Equal(t, tc.want, ok, "%v bytes", tc.need)
	}
}
