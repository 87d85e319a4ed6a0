package tests

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/train/kernels"
)

// emulateBF16 is the tests-only environment that runs --precision bf16 on
// the emulation instead of refusing a CPU without bf16 (cmd/mpignn's
// emulateBF16Env).
const emulateBF16 = "MPIGNN_TEST_EMULATE_BF16=1"

var testAccRe = regexp.MustCompile(`(?m)^final: .*\btest_acc=([0-9.]+)`)

// TestPrecisionRefused: on a CPU without bf16 instructions (this
// project's AVX2 machines) --precision bf16 is refused on every rank with
// one line naming the flag, before any training; a value that is no
// precision is a usage error.
func TestPrecisionRefused(t *testing.T) {
	if kernels.CPUHasBF16() {
		t.Skip("this CPU has bf16 instructions: --precision bf16 runs here")
	}
	parts := cora.get(t)
	bin, _ := h.Mpignn()
	ranks := 2
	if parts[2] == "" {
		ranks = 1
	}
	want := "--precision bf16: this CPU has no bf16 instructions (needs AVX512_BF16 or AMX-BF16)"
	res := h.MPI(Job{Ranks: ranks, Args: append([]string{bin, "train", "--parts", parts[ranks], "--batch", "12", "--precision", "bf16"}, goldenTrainArgs...), Timeout: time.Minute})
	require.Error(t, res.Err, res.Output)
	assert.Equal(t, 1, strings.Count(res.Output, want), "one line:\n%s", res.Output)
	assert.NotContains(t, res.Output, "epoch 1/")
	assert.NotContains(t, res.Output, "panic")

	res = h.MPI(Job{Ranks: 1, Args: append([]string{bin, "train", "--parts", parts[ranks], "--precision", "fp16"}, goldenTrainArgs...), Timeout: time.Minute})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, `--precision "fp16": want one of fp32, bf16`)
}

// TestPrecisionBF16 trains Cora with the layers' products in bf16 (the
// emulation where the CPU has no bf16; the native kernel where it has):
// it learns (test accuracy far above the 0.32 of the majority class), the
// same bits on 1 and 2 threads, other bits than fp32; the metrics and the
// start-up line name the path; the checkpoint records the precision, so
// that a resume at fp32 is refused with one line and a resume that does
// not give it continues at bf16, bit-identical to the run not interrupted.
func TestPrecisionBF16(t *testing.T) {
	parts := cora.get(t)
	if parts[1] == "" {
		t.Skip("no 1-rank Cora partition under this MPIGNN_TEST_RANKS")
	}
	bin, _ := h.Mpignn()
	var env []string
	layers := "emulation"
	if !kernels.CPUHasBF16() {
		env = []string{emulateBF16}
	} else {
		layers = "onednn avx512_core_" // _bf16 or _amx
	}
	args := []string{bin, "train", "--parts", parts[1], "--fanout", "10,5", "--hidden", "64", "--batch", "64", "--seed", "1", "--quiet", "--eval", "sampled"}
	run := func(extra ...string) Run {
		res := h.MPI(Job{Ranks: 1, Args: append(slices.Clone(args), extra...), Env: env, Timeout: 2 * time.Minute})
		require.NoError(t, res.Err, tail(res.Output, 20))
		return res
	}
	weights := func(res Run) string {
		w := weightsRe.FindStringSubmatch(res.Stdout)
		require.NotNil(t, w, res.Stdout)
		return w[1]
	}
	dir := t.TempDir()
	metrics := filepath.Join(dir, "m.jsonl")
	one := run("--precision", "bf16", "--epochs", "8", "--threads", "1", "--metrics", metrics)
	assert.Contains(t, one.Stdout, "\nkernels: onednn fp32 ")
	assert.Contains(t, one.Stdout, ", layers bf16 on "+layers)
	a := testAcc(t, one)
	assert.Greater(t, a, 0.6, "bf16 training must learn")
	epochs, summary := epochKernels(t, metrics)
	require.Len(t, epochs, 8)
	assert.Contains(t, summary, ", layers bf16 on "+layers)
	assert.Equal(t, summary, epochs[0])

	two := run("--precision", "bf16", "--epochs", "8", "--threads", "2")
	assert.Equal(t, weights(one), weights(two), "1 and 2 threads")
	fp32 := run("--epochs", "8", "--threads", "2")
	assert.NotEqual(t, weights(one), weights(fp32), "bf16 products must change the bits")
	t.Logf("test accuracy after 8 epochs: bf16 (%s) %.4f, fp32 %.4f", layers, a, testAcc(t, fp32))

	ck := filepath.Join(dir, "ck")
	run("--precision", "bf16", "--epochs", "3", "--checkpoint", ck)
	res := h.MPI(Job{Ranks: 1, Args: append(slices.Clone(args), "--epochs", "8", "--checkpoint", ck, "--resume", "--precision", "fp32"), Env: env, Timeout: time.Minute})
	require.Error(t, res.Err)
	assert.Equal(t, 1, strings.Count(res.Output, "the checkpoint's run differs: --precision was bf16, now fp32"), res.Output)
	resumed := run("--epochs", "8", "--checkpoint", ck, "--resume")
	assert.Contains(t, resumed.Stdout, "--precision bf16", "the resume takes the checkpoint's precision")
	assert.Equal(t, weights(one), weights(resumed), "resumed vs not interrupted")
}

// testAcc is the test accuracy of a run's final line.
func testAcc(t *testing.T, res Run) float64 {
	t.Helper()
	acc := testAccRe.FindStringSubmatch(res.Stdout)
	require.NotNil(t, acc, res.Stdout)
	a, err := strconv.ParseFloat(acc[1], 64)
	require.NoError(t, err)
	return a
}
