// Package sampletest holds what the tests of every sample.Sampler share:
// the test graph (Dataset) and the conformance test (Conformance) that the
// single-process reference (package sample) and the distributed sampler
// (package sample/dsample, under mpirun) both pass. It imports no MPI, so
// the pure packages' tests can use it.
package sampletest
