// Package graph holds in-memory graphs (compressed sparse rows), node
// features, labels and splits; it reads datasets in the OGB raw layout
// (homogeneous, and heterogeneous as ogbn-mag: ReadOGBHetero), generates
// synthetic graphs for scale (Generate, and the ogbn-mag-shaped
// GenerateHetero), and downloads the OGB node datasets.
// With ReadOptions.Time or HeteroReadOptions.Time it also reads edge and
// node times (time.go, hetero_time.go) into a timed in-adjacency whose rows
// are sorted by (time, source) (BuildInCSRTimed).
// It does not use MPI.
package graph
