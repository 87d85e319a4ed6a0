package spmd_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"mpignn/spmd"
	"mpignn/spmd/spmdtest"
)

var world *spmd.World

func TestMain(m *testing.M) { spmdtest.Main(m, &world) }

func TestWorld(t *testing.T) {
	if world.Size() < 1 || world.Rank() < 0 || world.Rank() >= world.Size() {
		t.Fatalf("rank %d of %d", world.Rank(), world.Size())
	}
	if world.IsRoot() != (world.Rank() == 0) {
		t.Errorf("IsRoot = %v on rank %d", world.IsRoot(), world.Rank())
	}
	if !strings.Contains(world.Library(), "MPI") {
		t.Errorf("library version %q does not name MPI", world.Library())
	}
	if err := world.Barrier(); err != nil {
		t.Fatal(err)
	}
}

func TestLogfTagsRank(t *testing.T) {
	var buf bytes.Buffer
	defer world.SetOutput(os.Stderr)
	world.SetOutput(&buf)
	world.Logf("loss %.2f", 1.5)
	world.Logf("already terminated\n")
	want := fmt.Sprintf("[rank %d/%d] loss 1.50\n[rank %d/%d] already terminated\n",
		world.Rank(), world.Size(), world.Rank(), world.Size())
	if buf.String() != want {
		t.Errorf("log = %q, want %q", buf.String(), want)
	}
}

func TestAgreeExit(t *testing.T) {
	tests := []struct {
		name  string
		local func(rank int) int
		want  func(size int) int
	}{
		{"all zero", func(int) int { return 0 }, func(int) int { return 0 }},
		{"last rank fails", func(r int) int {
			if r == world.Size()-1 {
				return 3
			}
			return 0
		}, func(int) int { return 3 }},
		{"largest wins", func(r int) int { return r }, func(p int) int { return p - 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := world.AgreeExit(tc.local(world.Rank()))
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want(world.Size()); got != want {
				t.Errorf("agreed %d, want %d", got, want)
			}
		})
	}
}

// FatalChildEnv makes TestFatalChild fail on purpose. The tests/ harness sets
// it when it runs this binary under mpirun to check that one rank's Fatal
// ends the whole job; in a normal run TestFatalChild skips.
const FatalChildEnv = "MPIGNN_FATAL_CHILD"

// TestFatalChild: rank 1 hits an error in the middle of the run while the
// other ranks wait in a collective for it. Without MPI_Abort they would wait
// forever.
func TestFatalChild(t *testing.T) {
	if os.Getenv(FatalChildEnv) == "" {
		t.Skip("only run by the tests/ harness, with " + FatalChildEnv + "=1")
	}
	if err := world.Barrier(); err != nil {
		t.Fatal(err)
	}
	if world.Rank() == 1 {
		time.Sleep(200 * time.Millisecond) // "mid-run": the others are already waiting
		world.Fatal(errors.New("injected failure: partition file part-1/feat.bin is corrupt"))
	}
	// Everybody else blocks here until the abort kills them.
	world.Barrier()
	t.Fatal("the barrier returned although rank 1 aborted")
}
