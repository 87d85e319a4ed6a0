//go:build mpich

package spmd

// The MPI implementation is chosen by build tag (default OpenMPI, -tags mpich
// for MPICH). The directive lives in a tag-selected file, not behind a
// conditional #cgo line, so that the two builds differ in their file lists
// and the Go build cache can never hand one the other's compiled objects.

// #cgo pkg-config: mpich
import "C"
