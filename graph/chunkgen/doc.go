// Package chunkgen generates a synthetic node-classification graph directly
// in the chunked format (graph.OpenChunked, DistDGL's layout), one chunk at
// a time, so that the ranks of an MPI job can each write their own chunks
// of the same graph and a graph larger than one process's memory can be
// generated at all.
//
// Every value is a pure function of the seed and a node id or an edge
// index, drawn through the counter-based hash (hashkey.Hash64 and its
// streams): a chunk's bytes do not depend on which process writes it, on
// how many processes there are, or on the worker count. The model is that
// of graph.Generate (planted classes with skewed sizes, edges mostly inside
// a class, power-law degrees, features around class centroids, a random
// split), or of graph.GenerateHetero (ogbn-mag's four node types and
// relations, NewHetero), built so that no table over all nodes is needed:
// see Gen.
//
// The package does not use MPI; cmd/mpignn's `gen --format chunked` runs it
// under mpirun.
package chunkgen
