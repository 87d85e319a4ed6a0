package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// h is set once by TestMain and only read afterwards.
var h *Harness

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mpignn-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err = NewHarness(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		fmt.Fprintln(os.Stderr, "tests: mpirun not found; run `make test` (it installs OpenMPI) or scripts/deps.sh")
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mpiPackages lists the packages whose tests run under MPI: those importing
// spmdtest. Finding them with go list means a new multi-rank package cannot
// be forgotten here.
func mpiPackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.Dir}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	cmd.Dir = h.Root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, imports, _ := strings.Cut(line, "|")
		if strings.Contains(" "+imports+" ", " mpignn/spmd/spmdtest ") {
			rel, err := filepath.Rel(h.Root, dir)
			if err != nil {
				t.Fatal(err)
			}
			pkgs = append(pkgs, filepath.ToSlash(rel))
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("no package imports spmdtest: the discovery is broken")
	}
	return pkgs
}

// TestMultiRankPackages runs every multi-rank test binary with 1..4 ranks.
// All ranks agree on the exit code (spmdtest.Main), so one failing rank
// fails the run.
func TestMultiRankPackages(t *testing.T) {
	for _, pkg := range mpiPackages(t) {
		bin, err := h.TestBinary(pkg)
		for _, n := range h.Ranks {
			t.Run(fmt.Sprintf("%s/np=%d", pkg, n), func(t *testing.T) {
				mustBuild(t, bin, err)
				r := h.MPI(Job{Ranks: n, Dir: filepath.Join(h.Root, pkg), Args: []string{bin}})
				if r.Err != nil {
					t.Fatalf("%s with %d ranks: %v\n%s", pkg, n, r.Err, tail(r.Output, 60))
				}
				t.Logf("%s np=%d passed in %.1fs", pkg, n, r.Elapsed.Seconds())
			})
		}
	}
}

// TestRankFailureEndsJob: rank 1 of 3 fails mid-run while the others wait in
// a barrier; the job must end quickly, non-zero, with rank 1's message.
func TestRankFailureEndsJob(t *testing.T) {
	bin, err := h.TestBinary("spmd")
	mustBuild(t, bin, err)
	r := h.MPI(Job{
		Ranks:   3,
		Dir:     filepath.Join(h.Root, "spmd"),
		Env:     []string{"MPIGNN_FATAL_CHILD=1"},
		Args:    []string{bin, "-test.run", "^TestFatalChild$"},
		Timeout: 60 * time.Second,
	})
	t.Logf("job ended after %.2fs", r.Elapsed.Seconds())
	if r.Err == nil {
		t.Fatalf("the job exited 0 although rank 1 failed:\n%s", tail(r.Output, 30))
	}
	if r.TimedOut || r.Elapsed > 10*time.Second {
		t.Fatalf("the job took %v to end (limit 10s): a failing rank must abort the job:\n%s", r.Elapsed, tail(r.Output, 30))
	}
	if want := "[rank 1/3] fatal: injected failure"; !strings.Contains(r.Output, want) {
		t.Fatalf("output lacks %q:\n%s", want, tail(r.Output, 30))
	}
}

// TestBenchCommTransports runs `mpignn bench comm` on shared memory, where
// one-sided works, and over TCP with the RDMA one-sided component, where
// window creation fails and auto must fall back to Alltoallv.
func TestBenchCommTransports(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	args := []string{bin, "bench", "comm", "--rows", "5000", "--dim", "128", "--batch", "1000", "--iters", "5"}
	tests := []struct {
		name    string
		ranks   int
		mpiArgs []string
		want    []string // regexps the output must match
	}{
		{"shm/np=2", 2, nil, []string{`(?m)^rma +\d+`, `(?m)^alltoallv +\d+`, `auto picked: rma`}},
		{"shm/np=4", 4, nil, []string{`(?m)^rma +\d+`, `(?m)^alltoallv +\d+`, `auto picked: rma`}},
		{"tcp/np=2", 2, []string{"--mca", "btl", "self,tcp", "--mca", "osc", "rdma"},
			[]string{`(?m)^rma +skipped: one-sided MPI unavailable`, `(?m)^alltoallv +\d+`, `auto picked: alltoallv`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mpiArgs != nil && os.Getenv("MPIGNN_MPI") == "mpich" {
				// The --mca flags select OpenMPI components; MPICH's RMA works
				// over TCP, so there is no fallback to force there.
				t.Skip("OpenMPI-only case (MPIGNN_MPI=mpich)")
			}
			r := h.MPI(Job{Ranks: tc.ranks, MPIArgs: tc.mpiArgs, Args: args, Timeout: 2 * time.Minute})
			if r.Err != nil {
				t.Fatalf("%v\n%s", r.Err, tail(r.Output, 30))
			}
			for _, w := range tc.want {
				if !regexp.MustCompile(w).MatchString(r.Output) {
					t.Errorf("output does not match %q:\n%s", w, r.Output)
				}
			}
		})
	}
}
