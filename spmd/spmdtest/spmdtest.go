// Package spmdtest runs a package's tests as an MPI program: the same test
// binary runs on every rank under mpirun, and every rank exits with the same
// code so a failure on one rank fails the whole run.
//
// A package with multi-rank tests uses it from TestMain:
//
//	func TestMain(m *testing.M) { spmdtest.Main(m, &world) }
//
// The binary also runs without mpirun, as a one-rank world, so plain
// `go test` covers the one-rank case.
package spmdtest

import (
	"fmt"
	"os"
	"testing"

	"mpignn/spmd"
)

// Main starts MPI, stores the world in *w for the tests, runs them, agrees on
// the exit code across ranks (the largest wins), finalises MPI and exits.
// Ranks other than 0 print only failures, so logs stay readable.
func Main(m *testing.M, w **spmd.World) {
	world, err := spmd.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "spmdtest: %v\n", err)
		os.Exit(1)
	}
	*w = world
	code := m.Run()
	agreed, err := world.AgreeExit(code)
	if err != nil {
		world.Logf("agree on exit code: %v", err)
		agreed = 1
	}
	if agreed != code {
		world.Logf("tests passed here but failed on another rank")
	}
	if err := world.Finalize(); err != nil {
		world.Logf("finalize: %v", err)
		if agreed == 0 {
			agreed = 1
		}
	}
	os.Exit(agreed)
}
