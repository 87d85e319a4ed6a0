// Package tests holds the multi-rank and end-to-end tests of mpignn. They
// are plain Go tests that start real MPI jobs: every package whose tests use
// spmdtest is compiled once with `go test -c` and run under mpirun with 1, 2,
// 3 and 4 ranks (oversubscribed), each run under a time limit so that a hang
// fails instead of blocking CI; the mpignn binary is run the same way for
// end-to-end checks.
//
// Run them with `make test`, or alone with `go test ./tests/`.
// MPIGNN_TEST_RANKS (e.g. "2,4") narrows the rank counts and
// MPIGNN_TEST_TIMEOUT (a Go duration) changes the per-run limit.
package tests
