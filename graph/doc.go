// Package graph holds in-memory graphs (compressed sparse rows), node
// features, labels and splits; it reads datasets in the OGB raw layout,
// generates synthetic graphs for scale, and downloads the OGB node datasets.
// It does not use MPI.
package graph
