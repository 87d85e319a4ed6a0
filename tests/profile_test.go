package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrainCPUProfile: train --cpuprofile FILE writes one CPU profile per
// rank (FILE on one rank, FILE.rankR on several) that go tool pprof reads,
// whether training ends normally, on an error after start-up, or on a stop
// on request (--stop-file, exit 75); a file that cannot be created ends
// every rank with a message naming the flag.
func TestTrainCPUProfile(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g := gen.get(t)
	base := []string{"--fanout", "4,3", "--batch", "48", "--hidden", "16", "--seed", "3", "--quiet"}
	tests := []struct {
		name  string
		ranks int
		args  func(dir string) []string
		exit  int      // mpirun's exit code
		files []string // profiles expected in dir
		msg   string   // in the output
	}{
		{"one rank", 1, func(string) []string { return []string{"--epochs", "2"} }, 0, []string{"cpu.prof"}, ""},
		{"two ranks", 2, func(string) []string { return []string{"--epochs", "2"} }, 0, []string{"cpu.prof.rank0", "cpu.prof.rank1"}, ""},
		{"error", 2, func(string) []string { return []string{"--epochs", "2", "--split", "bogus"} }, -1,
			[]string{"cpu.prof.rank0", "cpu.prof.rank1"}, `no split "bogus"`},
		{"stop", 2, func(dir string) []string {
			// The stop file exists from the start: rank 0 sees it at its
			// first look (250 ms), long before 500 epochs end.
			stop := filepath.Join(dir, "stop")
			require.NoError(t, os.WriteFile(stop, []byte("test"), 0o644))
			return []string{"--epochs", "500", "--checkpoint", filepath.Join(dir, "ck"), "--stop-file", stop}
		}, 75, []string{"cpu.prof.rank0", "cpu.prof.rank1"}, "stopped on request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{bin, "train", "--parts", g.parts[tc.ranks], "--cpuprofile", filepath.Join(dir, "cpu.prof")}, base...)
			r := h.MPI(Job{Ranks: tc.ranks, Args: append(args, tc.args(dir)...), Timeout: 2 * time.Minute})
			require.False(t, r.TimedOut, tail(r.Output, 20))
			switch tc.exit {
			case 0:
				require.NoError(t, r.Err, tail(r.Output, 20))
			case -1:
				require.Error(t, r.Err, tail(r.Output, 20))
			default:
				var ee *exec.ExitError
				require.True(t, errors.As(r.Err, &ee), "%v\n%s", r.Err, tail(r.Output, 20))
				require.Equal(t, tc.exit, ee.ExitCode(), tail(r.Output, 20))
			}
			assert.Contains(t, r.Output, tc.msg)
			for _, name := range tc.files {
				requireCPUProfile(t, filepath.Join(dir, name))
			}
			if tc.ranks > 1 {
				assert.NoFileExists(t, filepath.Join(dir, "cpu.prof"), "several ranks write FILE.rankR only")
			}
		})
	}

	t.Run("cannot create", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "no-such-dir", "cpu.prof")
		r := h.MPI(Job{Ranks: 2, Args: append([]string{bin, "train", "--parts", g.parts[2], "--epochs", "1", "--cpuprofile", missing}, base...), Timeout: time.Minute})
		require.False(t, r.TimedOut, tail(r.Output, 20))
		require.Error(t, r.Err)
		// Every rank fails to create its file; the ranks agree on the
		// failure, and rank 0 alone reports the lowest failing rank's.
		assert.Contains(t, r.Output, "--cpuprofile: rank 0: open "+missing+".rank0")
		assert.Equal(t, 1, strings.Count(r.Output, "--cpuprofile:"), r.Output)
		assert.NotContains(t, r.Output, "final:")
	})
}

// requireCPUProfile checks that path is a gzip-compressed pprof profile
// that go tool pprof reads as a CPU profile.
func requireCPUProfile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, "profile missing")
	require.Greater(t, len(data), 2, "%s is empty", path)
	require.Equal(t, []byte{0x1f, 0x8b}, data[:2], "%s is not gzip-compressed (a pprof profile is)", path)
	out, err := exec.Command("go", "tool", "pprof", "-top", path).CombinedOutput()
	require.NoError(t, err, "go tool pprof -top %s:\n%s", path, out)
	assert.Contains(t, string(out), "Type: cpu", path)
}
