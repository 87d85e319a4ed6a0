package dtrain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDescribePaths(t *testing.T) {
	const a, b = "onednn fp32 avx512_core", "onednn fp32 avx2"
	for _, tc := range []struct {
		name    string
		paths   []string
		desc    string
		uniform bool
	}{
		{"one rank", []string{b}, b, true},
		{"one path", []string{a, a, a}, a, true},
		{"two nodes", []string{a, a, a, a, b, b, b, b}, a + " on ranks 0-3; " + b + " on ranks 4-7", false},
		{"first seen first", []string{b, a}, b + " on rank 0; " + a + " on rank 1", false},
		{"interleaved", []string{a, b, a, a, b, a}, a + " on ranks 0, 2-3, 5; " + b + " on ranks 1, 4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desc, uniform := describePaths(tc.paths)
			assert.Equal(t, tc.desc, desc)
			assert.Equal(t, tc.uniform, uniform)
		})
	}
}

func TestResumeKernelsLine(t *testing.T) {
	assert.Empty(t, resumeKernelsLine("", "onednn fp32 avx2"), "a checkpoint without the record says nothing")
	assert.Empty(t, resumeKernelsLine("onednn fp32 avx2", "onednn fp32 avx2"))
	assert.Equal(t, "kernels: the checkpoint was written on onednn fp32 avx512_core, this run computes on onednn fp32 avx2: "+
		"it continues, but not bit-identically to a run that was not interrupted (pin one instruction set to make them agree)",
		resumeKernelsLine("onednn fp32 avx512_core", "onednn fp32 avx2"))
}
