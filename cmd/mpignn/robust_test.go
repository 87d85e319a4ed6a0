package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// runMainEnv makes the test binary act as mpignn itself: runCLI starts it
// again with this variable set, and TestMain then runs main() on the
// arguments, so the CLI tests exercise the real command in its own process
// (exit code, stderr, and any crash trace) without a separate build.
const runMainEnv = "MPIGNN_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCLI runs `mpignn args...` in a new process and returns its combined
// output and exit code.
func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	require.FailNow(t, "cannot run mpignn", "mpignn %v: %v", args, err)
	return "", -1
}

// TestCLIRefusesBadNumbers: non-finite float flags, sizes that cannot fit
// in memory, and a partition with empty parts end with one clear line and
// a non-zero exit, never a Go crash trace.
func TestCLIRefusesBadNumbers(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	// 8 nodes in 1 class with half an edge per node: mostly isolated nodes,
	// which libmetis, balancing node counts only, leaves some of 5 parts
	// without.
	out, code := runCLI(t, "gen", "--nodes", "8", "--classes", "1", "--feat-dim", "2", "--avg-degree", "0.5", "--seed", "1", "--out", data)
	require.Zero(t, code, out)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"gen homophily", []string{"gen", "--homophily", "nan", "--out", filepath.Join(dir, "g1")}, "mpignn gen: --homophily NaN: want a finite number"},
		{"gen avg-degree", []string{"gen", "--avg-degree", "+Inf", "--out", filepath.Join(dir, "g2")}, "--avg-degree +Inf: want a finite number"},
		{"gen feat-sep", []string{"gen", "--feat-sep", "-inf", "--out", filepath.Join(dir, "g3")}, "--feat-sep -Inf: want a finite number"},
		{"gen train-frac", []string{"gen", "--train-frac", "NaN", "--out", filepath.Join(dir, "g4")}, "--train-frac NaN"},
		{"gen huge features", []string{"gen", "--nodes", "1000", "--feat-dim", "2000000000", "--out", filepath.Join(dir, "g5")},
			"--nodes 1000 --feat-dim 2000000000 --avg-degree 25 need ~"},
		// ~15 TiB: more than the largest single node's memory, so that the
		// refusal does not depend on the machine (2e9 nodes alone, ~1.4 TiB,
		// would start on a fat node).
		{"gen huge graph", []string{"gen", "--nodes", "2000000000", "--feat-dim", "2000", "--out", filepath.Join(dir, "g6")}, "TiB of memory but this machine has"},
		{"partition imbalance", []string{"partition", "--data", data, "--parts", "2", "--imbalance", "nan", "--out", filepath.Join(dir, "p1")},
			"mpignn partition: --imbalance NaN: want a finite number"},
		{"partition empty part", []string{"partition", "--data", data, "--parts", "5", "--balance", "node", "--seed", "1", "--out", filepath.Join(dir, "p2")},
			"parts are empty"},
		{"train cache-mb", []string{"train", "--parts", dir, "--cache-mb", "nan"}, "--cache-mb NaN: want a finite number"},
		{"train lr", []string{"train", "--parts", dir, "--lr", "inf"}, "--lr +Inf: want a finite number"},
		{"train dropout", []string{"train", "--parts", dir, "--dropout", "NaN"}, "--dropout NaN: want a finite number"},
		{"predict cache-mb", []string{"predict", "--parts", dir, "--checkpoint", dir, "--out", "x.csv", "--cache-mb", "-Inf"}, "--cache-mb -Inf"},
		{"bench comm batch", []string{"bench", "comm", "--batch", "100000000000000"}, "--rows 50000 --batch 100000000000000 --dim 128 need ~"},
		{"bench sample cache-mb", []string{"bench", "sample", "--parts", dir, "--cache-mb", "NaN"}, "--cache-mb NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runCLI(t, tc.args...)
			assert.NotZero(t, code, out)
			assert.Contains(t, out, tc.want)
			assert.NotContains(t, out, "goroutine ")
			assert.NotContains(t, out, "Usage of", "a value error is one line, not the flag usage")
		})
	}
	// Nothing was written for the refused partition.
	assert.NoDirExists(t, filepath.Join(dir, "p2"))
}

// TestPlotMissingFields: epoch lines without loss or some evaluation
// fields (hand-written, or from another tool) are plotted as far as they
// go instead of crashing on a missing value.
func TestPlotMissingFields(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		lines string
	}{
		{"no losses", `{"type":"epoch","epoch":1,"train_acc":0.5,"val_acc":0.4,"test_acc":0.3}
{"type":"epoch","epoch":2,"train_acc":0.6,"val_acc":0.5,"test_acc":0.45}
`},
		{"only accuracies of some epochs", `{"type":"epoch","epoch":1}
{"type":"epoch","epoch":2,"val_acc":0.5}
{"type":"epoch","epoch":3,"val_loss":1.2,"test_acc":0.45}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
			require.NoError(t, os.WriteFile(m, []byte(tc.lines), 0o644))
			img := m + ".png"
			out, code := runCLI(t, "plot", "--metrics", m, "--out", img)
			require.Zero(t, code, out)
			assert.NotContains(t, out, "goroutine ")
			st, err := os.Stat(img)
			require.NoError(t, err)
			assert.Positive(t, st.Size())
		})
	}
}

// TestDataCacheRebuildsDamagedParts: train --data reuses a cached partition
// only while every part file matches its checksum; a flipped byte or a
// truncated file makes it partition again (and the result verifies).
func TestDataCacheRebuildsDamagedParts(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "synth")
	s, err := graph.Generate(graph.GenOptions{Nodes: 300, AvgDegree: 6, Classes: 3, FeatDim: 4, Seed: 5})
	require.NoError(t, err)
	require.NoError(t, graph.WriteSynthetic(data, s))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	log, err := os.Create(filepath.Join(root, "log"))
	require.NoError(t, err)
	defer log.Close()

	prepare := func() (string, string) {
		t.Helper()
		off, _ := log.Seek(0, 1)
		dir, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff}}, log)
		require.NoError(t, err)
		b, err := os.ReadFile(log.Name())
		require.NoError(t, err)
		return dir, string(b[off:])
	}
	dir, msg := prepare()
	require.Contains(t, msg, "partition: wrote 2 parts")
	_, msg = prepare()
	require.Contains(t, msg, "partition: reusing "+dir)

	feat := filepath.Join(dir, "part-1", "feat.bin")
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"flipped byte", func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(feat)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(feat, tc.damage(b), 0o644))
			m, err := partition.LoadMeta(dir)
			require.NoError(t, err, "META.json is intact: only the checksum shows the damage")
			require.ErrorContains(t, partition.VerifyFiles(dir, m), "part-1/feat.bin")

			again, msg := prepare()
			assert.Equal(t, dir, again)
			assert.Contains(t, msg, "partition: wrote 2 parts", "a damaged cache must be rebuilt")
			m, err = partition.LoadMeta(dir)
			require.NoError(t, err)
			assert.NoError(t, partition.VerifyFiles(dir, m))
		})
	}
}

// TestCLIMistakesAreOneLine: a mistyped flag or value is one line naming
// the flag (with the closest real one), exit code 2, no usage dump; only
// --help prints the usage, which starts with a usage line and prints each
// default once.
func TestCLIMistakesAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"train typo", []string{"train", "--parts", "x", "--epoch", "3"}, "mpignn train: unknown flag --epoch: did you mean --epochs? (mpignn train --help lists the flags)"},
		{"partition typo", []string{"partition", "--part", "2"}, "unknown flag --part: did you mean --parts?"},
		{"no near flag", []string{"plot", "--zzzzzzzz"}, "mpignn plot: unknown flag --zzzzzzzz (mpignn plot --help lists the flags)"},
		{"bad int", []string{"train", "--parts", "x", "--epochs", "ten"}, `mpignn train: --epochs "ten": not a valid value, want an integer`},
		{"missing value", []string{"predict", "--parts"}, "mpignn predict: --parts needs a value"},
		{"bench typo", []string{"bench", "sample", "--fanouts", "1"}, "unknown flag --fanouts: did you mean --fanout? (mpignn bench sample --help"},
		{"inspect typo", []string{"inspect", "dir", "--jsn"}, "unknown flag --jsn: did you mean --json?"},
		{"batch and global batch", []string{"train", "--parts", "x", "--batch", "8", "--global-batch", "32"},
			"mpignn train: --batch 8 and --global-batch 32 exclude each other: --batch counts per rank, --global-batch over all ranks (give one)"},
		// Values the flag parses but does not take are flag mistakes too
		// (issue 34): exit code 2, as docs/commands.md promises.
		{"train bad method", []string{"train", "--parts", "x", "--method", "foo"}, `mpignn train: --method "foo": want metis or random`},
		{"train bad checkpoint-every", []string{"train", "--parts", "x", "--checkpoint-every", "2step"}, `--checkpoint-every "2step": want epochs (5), steps (500steps) or a duration`},
		{"train bad dropout", []string{"train", "--parts", "x", "--dropout", "1"}, "--dropout 1 must be in [0,1)"},
		{"partition bad method", []string{"partition", "--data", "d", "--parts", "2", "--out", "o", "--method", "foo"}, `--method "foo"`},
		{"convert zero chunk", []string{"convert", "--data", "d", "--out", "o", "--chunk-nodes", "0"}, "--chunk-nodes 0: must be at least 1"},
		{"sample no seeds", []string{"sample", "--parts", "x"}, "--seeds needs at least one node id"},
		{"predict bad eval", []string{"predict", "--parts", "x", "--checkpoint", "c", "--out", "o.csv", "--eval", "foo"}, "--eval"},
		{"gen bad format", []string{"gen", "--out", "o", "--format", "foo"}, `--format "foo": want ogb or chunked`},
		{"gen scale without hetero", []string{"gen", "--out", "o", "--scale", "2"}, "--scale needs --hetero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runCLI(t, tc.args...)
			assert.Equal(t, 2, code, out)
			assert.Equal(t, 1, strings.Count(out, "\n"), "one line: %s", out)
			assert.Contains(t, out, tc.want)
		})
	}
	t.Run("only the first rank speaks", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "train", "--epoch", "3")
		cmd.Env = append(os.Environ(), runMainEnv+"=1", "OMPI_COMM_WORLD_RANK=1")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 2, ee.ExitCode())
		assert.Empty(t, string(out))
	})
	for _, tc := range []struct {
		cmd  []string
		want []string
	}{
		{[]string{"train"}, []string{"usage: ./mpirun.sh -n P ./bin/mpignn train (--parts PARTDIR | --data RAWDIR) [flags]", "--cache-dir"}},
		{[]string{"partition"}, []string{"usage: mpignn partition --data RAWDIR --parts P --out PARTDIR [flags]"}},
		{[]string{"inspect"}, []string{"usage: mpignn inspect PARTDIR [--json] [--verify]", "partition directory PARTDIR"}},
		{[]string{"version"}, []string{"usage: mpignn version"}},
		{[]string{"embed"}, []string{"usage: ./mpirun.sh -n P ./bin/mpignn embed"}},
	} {
		t.Run(strings.Join(tc.cmd, " ")+" --help", func(t *testing.T) {
			out, code := runCLI(t, append(tc.cmd, "--help")...)
			assert.Zero(t, code, out)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			for _, line := range strings.Split(out, "\n") {
				assert.LessOrEqual(t, strings.Count(line, "(default"), 1, "a default said twice: %q", line)
			}
			assert.NotContains(t, out, "(default -1)")
		})
	}
	out, code := runCLI(t, "--help")
	assert.Zero(t, code)
	assert.Contains(t, out, "bench sample")
}

// TestSingleProcessCommandsUnderMpirun: a command that works in one process
// (partition of the OGB layout, convert, gen) started by mpirun runs on
// rank 0 only, which says so in one line, and the other ranks exit 0 at
// once without touching the output (issue 34: two ranks used to race for
// it). The launcher is simulated by its environment; tests/cli_test.go
// runs the real mpirun.
func TestSingleProcessCommandsUnderMpirun(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "g")
	out, code := runCLI(t, "gen", "--nodes", "300", "--classes", "3", "--feat-dim", "4", "--seed", "1", "--out", data)
	require.Zero(t, code, out)
	for _, tc := range []struct {
		name string
		args []string // --out is appended
	}{
		{"partition", []string{"partition", "--data", data, "--parts", "2", "--method", "random"}},
		{"convert", []string{"convert", "--data", data}},
		{"gen", []string{"gen", "--nodes", "100", "--avg-degree", "4", "--classes", "2", "--feat-dim", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(rank int, dest string) (string, int) {
				cmd := exec.Command(os.Args[0], append(tc.args, "--out", dest)...)
				cmd.Env = append(os.Environ(), runMainEnv+"=1", "OMPI_COMM_WORLD_RANK="+strconv.Itoa(rank), "OMPI_COMM_WORLD_SIZE=3")
				b, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return string(b), ee.ExitCode()
				}
				require.NoError(t, err)
				return string(b), 0
			}
			other := filepath.Join(dir, tc.name+"-rank1")
			out, code := run(1, other)
			assert.Zero(t, code, out)
			assert.Empty(t, out)
			assert.NoFileExists(t, other)
			assert.NoDirExists(t, other)
			root := filepath.Join(dir, tc.name+"-rank0")
			out, code = run(0, root)
			require.Zero(t, code, out)
			assert.Contains(t, out, "mpignn "+tc.name+": ")
			assert.Contains(t, out, ": rank 0 of 3 runs it, the others exit (under mpirun every rank runs only train, predict")
			assert.DirExists(t, root)
		})
	}
}
