package tests

import (
	"archive/zip"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/internal/tempout"
)

// temps lists the temporaries of out (any PID) beside it.
func temps(t *testing.T, out string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "."+filepath.Base(out)+".tmp-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// checkInterrupted runs `bin args` (which writes out) three times:
// interrupted by sig while it holds with its temporary created (exit
// 128+sig, nothing left), SIGKILLed there (the temporary stays behind), and
// to completion, which must remove that stale temporary but not one of a
// live process. The hold makes the moment certain on any machine.
func checkInterrupted(t *testing.T, bin string, args []string, out string, sig syscall.Signal) {
	point := "temp:" + filepath.Base(out)
	t.Run("signal", func(t *testing.T) {
		p := startHeld(t, point, 0, bin, args...)
		p.await(t)
		require.DirExists(t, tempout.Name(out, p.cmd.Process.Pid))
		require.NoError(t, p.cmd.Process.Signal(sig))
		code := p.wait(t, 30*time.Second)
		msg := p.output()
		assert.Equal(t, 128+int(sig), code, "exit code after %v:\n%s", sig, tail(msg, 10))
		assert.Empty(t, temps(t, out), "temporaries left after %v", sig)
		assert.NoFileExists(t, out)
		assert.NoDirExists(t, out)
		assert.Contains(t, msg, "interrupted by SIG")
		assert.NotContains(t, msg, "goroutine ")
	})
	t.Run("sigkill-then-rerun", func(t *testing.T) {
		p := startHeld(t, point, 0, bin, args...)
		stale := tempout.Name(out, p.cmd.Process.Pid)
		p.await(t)
		require.NoError(t, p.cmd.Process.Kill())
		p.wait(t, 30*time.Second)
		require.DirExists(t, stale, "SIGKILL should leave the temporary behind")
		live := tempout.Name(out, os.Getpid()) // this test runs: not stale
		require.NoError(t, os.Mkdir(live, 0o755))
		defer os.RemoveAll(live)

		res, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, "rerun:\n%s", tail(string(res), 20))
		assert.NoDirExists(t, stale, "the rerun kept the temporary of the killed run")
		assert.DirExists(t, live, "the rerun removed the temporary of a live process")
		assert.Equal(t, []string{filepath.Base(live)}, temps(t, out))
	})
}

// TestInterruptedCommands: gen, partition and predict (under mpirun) remove
// their unfinished output on SIGINT/SIGTERM and exit 130/143 (predict: the
// job ends with an error); gen and partition remove a temporary a SIGKILLed
// run left. Each process is stopped by a test hold right after it created
// its temporary, so the signal finds the output in progress on any machine.
func TestInterruptedCommands(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	parts := filepath.Join(work, "parts")

	t.Run("gen", func(t *testing.T) {
		checkInterrupted(t, bin, []string{"gen", "--nodes", "20000", "--avg-degree", "10", "--classes", "5",
			"--feat-dim", "16", "--seed", "1", "--out", data}, data, syscall.SIGINT)
		for _, f := range []string{"raw/edge.csv.gz", "raw/node-feat.csv.gz", "raw/node-label.csv.gz", "split/random/test.csv.gz", "README.md"} {
			assert.FileExists(t, filepath.Join(data, f))
		}
	})
	if t.Failed() {
		return
	}
	t.Run("partition", func(t *testing.T) {
		checkInterrupted(t, bin, []string{"partition", "--data", data, "--parts", "2", "--method", "random",
			"--out", parts}, parts, syscall.SIGTERM)
		res, err := exec.Command(bin, "inspect", parts, "--verify").CombinedOutput()
		assert.NoError(t, err, "inspect --verify of the rerun's output:\n%s", tail(string(res), 10))
	})
	if t.Failed() {
		return
	}
	t.Run("predict", func(t *testing.T) {
		// A checkpoint of the same shape (5 classes, 16 features) from the
		// small shared graph.
		g := gen.get(t)
		ckpt := filepath.Join(work, "ckpt")
		res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--parts", g.parts[2],
			"--fanout", "5,5", "--batch", "64", "--hidden", "16", "--epochs", "1", "--quiet", "--checkpoint", ckpt}})
		require.NoError(t, res.Err, "train:\n%s", tail(res.Output, 20))

		// Rank 0 holds once its temporary of pred.csv exists; the signal goes
		// to mpirun, as scancel sends it, which forwards it to the ranks.
		out := filepath.Join(work, "pred.csv")
		p := startHeldMPI(t, "temp:pred.csv", 0, 2, bin, "predict", "--parts", parts, "--checkpoint", ckpt, "--out", out)
		rank0 := p.await(t)
		tmp := tempout.Name(out, rank0)
		require.FileExists(t, tmp)
		t0 := time.Now()
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		code := p.wait(t, 30*time.Second)
		msg := p.output()
		assert.NotEqual(t, 0, code, "predict finished although it was held:\n%s", tail(msg, 10))
		assert.Less(t, time.Since(t0), 15*time.Second, "the job took long to end")
		assert.NoFileExists(t, tmp, "rank 0 left its temporary:\n%s", tail(msg, 10))
		assert.NoFileExists(t, out)
		assert.Empty(t, temps(t, out))
		assert.Contains(t, msg, "mpignn predict: interrupted by SIGTERM")
	})
}

// TestInterruptedDownload: an interrupted transfer keeps ROOT/NAME.zip.part
// (a rerun resumes it: it is not a stale temporary), an interrupted unpack
// leaves no temporary directory, and a rerun after a SIGKILL during the
// unpack removes the one left and completes.
func TestInterruptedDownload(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	// 8 MB of zeros: the unpack is caught by a test hold, not by its length.
	const bigSize = 8 << 20
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.Create("arxiv/raw/big.bin")
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for i := 0; i < bigSize>>20; i++ {
		_, err := w.Write(zeros)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	zipBytes := zb.Bytes()

	var stall atomic.Bool // send half the zip, then hang until the client goes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stall.Load() {
			w.Header().Set("Content-Length", strconv.Itoa(len(zipBytes)))
			w.Write(zipBytes[:len(zipBytes)/2])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		http.ServeContent(w, r, "arxiv.zip", time.Time{}, bytes.NewReader(zipBytes))
	}))
	defer srv.Close()

	root := t.TempDir()
	dest := filepath.Join(root, "ogbn-arxiv")
	part := dest + ".zip.part"
	args := []string{"download", "ogbn-arxiv", "--root", root, "--url", srv.URL}

	t.Run("transfer", func(t *testing.T) {
		stall.Store(true)
		defer stall.Store(false)
		p := start(t, bin, args...)
		for {
			if st, err := os.Stat(part); err == nil && st.Size() > 0 {
				break
			}
			select {
			case <-p.done:
				t.Fatalf("download ended early:\n%s", p.output())
			case <-time.After(2 * time.Millisecond):
			}
		}
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, 130, p.wait(t, 30*time.Second), p.output())
		assert.FileExists(t, part, "the partial download must stay for resuming")
		assert.NoDirExists(t, dest)
		assert.Empty(t, temps(t, dest))
	})
	t.Run("unpack", func(t *testing.T) {
		// Resumes the transfer, then is stopped while unpacking; the
		// finished zip stays, the half-unpacked directory does not.
		checkUnpack := func(sig syscall.Signal) string {
			p := startHeld(t, "temp:"+filepath.Base(dest), 0, bin, args...)
			tmp := tempout.Name(dest, p.cmd.Process.Pid)
			p.await(t)
			require.DirExists(t, tmp)
			require.NoError(t, p.cmd.Process.Signal(sig))
			code := p.wait(t, 30*time.Second)
			if sig != syscall.SIGKILL {
				assert.Equal(t, 128+int(sig), code, p.output())
				assert.Contains(t, p.output(), "resuming at byte")
			}
			assert.FileExists(t, dest+".zip")
			assert.NoDirExists(t, dest)
			return tmp
		}
		checkUnpack(syscall.SIGTERM)
		assert.Empty(t, temps(t, dest))

		stale := checkUnpack(syscall.SIGKILL)
		require.DirExists(t, stale)
		res, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, string(res))
		assert.NoDirExists(t, stale)
		assert.Empty(t, temps(t, dest))
		st, err := os.Stat(filepath.Join(dest, "raw", "big.bin"))
		require.NoError(t, err)
		assert.Equal(t, int64(bigSize), st.Size())
	})
}
