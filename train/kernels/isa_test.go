package kernels

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestISAClass: every dnnl_cpu_isa_t value of oneDNN 2.6 (dnnl_types.h)
// maps to the fp32 gemm class whose kernel it runs.
func TestISAClass(t *testing.T) {
	for _, tc := range []struct {
		name string
		bits int
		want string
	}{
		{"all", 0x0, "generic"},
		{"sse41", 0x1, "sse41"},
		{"avx", 0x3, "avx"},
		{"avx2", 0x7, "avx2"},
		{"avx2_vnni", 0x407, "avx2"},
		{"avx512_mic", 0xf, "avx512_mic"},
		{"avx512_mic_4ops", 0x1f, "avx512_mic"},
		{"avx512_core", 0x27, "avx512_core"},
		{"avx512_core_vnni", 0x67, "avx512_core"},
		{"avx512_core_bf16", 0xe7, "avx512_core"},
		{"avx512_core_amx", 0x3e7, "avx512_core"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, isaClass(tc.bits))
		})
	}
	// Each value SetISA takes is its own class.
	for _, name := range ISAs()[1:] {
		assert.Equal(t, name, isaClass(isaBits(name)), name)
	}
}

// TestPathClass: Path marks a class whose Go math path differs from that
// of the class's CPUs, and only then.
func TestPathClass(t *testing.T) {
	for _, tc := range []struct {
		class string
		fma   bool
		want  string
	}{
		{"avx2", true, "avx2"},
		{"avx512_core", true, "avx512_core"},
		{"avx", false, "avx"},
		{"sse41", false, "sse41"},
		{"avx", true, "avx+fma"},
		{"sse41", true, "sse41+fma"},
		{"avx2", false, "avx2-nofma"},
		{"avx512_core", false, "avx512_core-nofma"},
	} {
		assert.Equal(t, tc.want, pathClass(tc.class, tc.fma), "%s fma=%v", tc.class, tc.fma)
	}
}

func TestCheckISA(t *testing.T) {
	for _, name := range ISAs() {
		require.NoError(t, CheckISA(name), name)
		require.NoError(t, SetISA(ISANative))
	}
	for _, bad := range []string{"", "AVX2", "avx512", "amx", "x86-64-v3"} {
		err := CheckISA(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "want one of native, avx512_core, avx2, avx, sse41")
		assert.Equal(t, err, SetISA(bad), "SetISA refuses what CheckISA refuses")
	}
}

// TestPath: the path names the build's library, fp32, and a class.
func TestPath(t *testing.T) {
	f := strings.Fields(Path())
	require.Len(t, f, 3, Path())
	assert.Equal(t, "fp32", f[1])
	switch BLASName {
	case "dnnl-fp32":
		assert.Equal(t, "onednn", f[0])
		class, _, _ := strings.Cut(strings.TrimSuffix(f[2], "-nofma"), "+")
		assert.Contains(t, []string{"generic", "sse41", "avx", "avx2", "avx512_core", "avx512_mic"}, class)
	default:
		assert.Contains(t, []string{"openblas", "gonum"}, f[0])
	}
}
