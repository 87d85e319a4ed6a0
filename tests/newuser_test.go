package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitCode is the exit code of a finished job (0 when it succeeded).
func exitCode(t *testing.T, r Run) int {
	t.Helper()
	var ee *exec.ExitError
	if r.Err == nil {
		return 0
	}
	require.ErrorAs(t, r.Err, &ee, tail(r.Output, 20))
	return ee.ExitCode()
}

// fatalLines returns the lines of a job's output that report its error.
func fatalLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "fatal:") || strings.HasPrefix(l, "mpignn ") && !strings.Contains(l, "rank 0 of") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestNewUserPipeline (issue 34), under real mpirun: convert's default
// chunks serve PT-Scotch on 2..4 ranks; a method the user names is honoured
// (train --data CHUNKED --method lp) or refused with one line and exit code
// 2 (--method metis on a chunked dataset, --method foo); single-process
// commands started by mpirun run once, on rank 0; an error every rank meets
// is one line from rank 0, without the abort's noise or SIGTERM notes.
func TestNewUserPipeline(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	data, ck := filepath.Join(dir, "g"), filepath.Join(dir, "ck")
	out, err := exec.Command(bin, "gen", "--nodes", "1500", "--avg-degree", "6", "--classes", "4", "--feat-dim", "8", "--seed", "2", "--out", data).CombinedOutput()
	require.NoError(t, err, "%s", out)

	t.Run("single-process commands run on rank 0", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args []string
			out  string
		}{
			{"convert", []string{"convert", "--data", data}, ck},
			{"partition", []string{"partition", "--data", data, "--parts", "2", "--method", "random"}, filepath.Join(dir, "ogb-2")},
		} {
			r := h.MPI(Job{Ranks: 2, Args: append(append([]string{bin}, tc.args...), "--out", tc.out), Timeout: 2 * time.Minute})
			require.NoError(t, r.Err, "%s under mpirun -n 2:\n%s", tc.name, tail(r.Output, 20))
			assert.Equal(t, 1, strings.Count(r.Output, "rank 0 of 2 runs it, the others exit"), r.Output)
			assert.NotContains(t, r.Output, "appeared while")
			assert.NotContains(t, r.Output, "file exists")
			assert.DirExists(t, tc.out)
		}
	})
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("no chunked dataset: %v", err)
	}

	t.Run("default chunks on 2-4 ranks", func(t *testing.T) {
		for _, n := range h.Ranks {
			if n < 2 {
				continue
			}
			want := "(ml)"
			r := h.MPI(Job{Ranks: n, Args: []string{bin, "partition", "--data", ck, "--parts", strconv.Itoa(n), "--out", filepath.Join(dir, "d-"+strconv.Itoa(n))}, Timeout: 2 * time.Minute})
			require.NoError(t, r.Err, "np=%d:\n%s", n, tail(r.Output, 20))
			assert.Contains(t, r.Output, "on "+strconv.Itoa(n)+" ranks "+want)
		}
	})

	t.Run("train --data CHUNKED --method lp", func(t *testing.T) {
		r := h.MPI(Job{Ranks: 2, Args: []string{bin, "train", "--data", ck, "--method", "lp", "--epochs", "1", "--fanout", "5,5", "--hidden", "16", "--cache-dir", filepath.Join(dir, "cache")}, Timeout: 2 * time.Minute})
		require.NoError(t, r.Err, tail(r.Output, 20))
		assert.Contains(t, r.Output, "parts (lp, all ranks)")
		assert.Contains(t, r.Output, "final: epochs=1")
	})

	t.Run("flag mistakes: one line, exit code 2", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"partition", "--data", ck, "--parts", "2", "--method", "metis", "--out", filepath.Join(dir, "x")}, "--method metis: METIS needs the whole graph in one process"},
			{[]string{"train", "--data", ck, "--method", "metis"}, "--method metis: METIS needs the whole graph in one process"},
			{[]string{"train", "--data", data, "--method", "foo"}, `--method "foo": want metis or random`},
			{[]string{"train", "--data", data, "--checkpoint-every", "2step"}, `--checkpoint-every "2step"`},
		} {
			r := h.MPI(Job{Ranks: 2, Args: append([]string{bin}, tc.args...), Timeout: time.Minute})
			assert.Equal(t, 2, exitCode(t, r), r.Output)
			assert.Equal(t, 1, strings.Count(r.Output, tc.want), r.Output)
			assert.NoDirExists(t, filepath.Join(dir, "x"))
		}
	})

	t.Run("an error every rank meets is one line", func(t *testing.T) {
		one := filepath.Join(dir, "ck-one")
		out, err := exec.Command(bin, "convert", "--data", data, "--out", one, "--chunk-nodes", "100000").CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, tc := range []struct {
			name  string
			ranks int
			env   []string
			args  []string
			want  string
		}{
			// Ranks on 3 (pretend) nodes cannot share 2 parts.
			{"parts != ranks", 3, pretendNodes(1), []string{"train", "--parts", filepath.Join(dir, "ogb-2"), "--epochs", "1", "--checkpoint", filepath.Join(dir, "ck1")}, "has 2 parts but the job's 3 ranks run on 3 nodes"},
			{"missing checkpoint", 2, nil, []string{"train", "--parts", filepath.Join(dir, "ogb-2"), "--resume", "--checkpoint", filepath.Join(dir, "nock")}, "no checkpoint"},
			{"one chunk for PT-Scotch", 2, nil, []string{"train", "--data", one, "--method", "parmetis", "--epochs", "1", "--checkpoint", filepath.Join(dir, "ck2"), "--cache-dir", filepath.Join(dir, "cache")}, "holds no node chunk"},
		} {
			if tc.name == "one chunk for PT-Scotch" && os.Getenv("MPIGNN_MPI") == "mpich" {
				continue
			}
			r := h.MPI(Job{Ranks: tc.ranks, Env: tc.env, Args: append([]string{bin}, tc.args...), Timeout: time.Minute})
			assert.Equal(t, 1, exitCode(t, r), r.Output)
			lines := fatalLines(r.Output)
			if assert.Len(t, lines, 1, "%s: one error line:\n%s", tc.name, r.Output) {
				assert.Contains(t, lines[0], "[rank 0/"+strconv.Itoa(tc.ranks)+"] fatal: ")
				assert.Contains(t, lines[0], tc.want)
			}
			assert.NotContains(t, r.Output, "SIGTERM received", tc.name)
			assert.NotContains(t, r.Output, "ORTE_ERROR_LOG", tc.name)
			assert.NotContains(t, r.Output, "MPI_ABORT", tc.name)
		}
	})
}
