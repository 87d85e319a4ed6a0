// Package graph holds graphs in memory: the in-adjacency as compressed
// sparse rows (CSR, each row's sources ascending), node features, labels
// and splits (Dataset), and their heterogeneous (HeteroDataset) and timed
// variants. It reads datasets in the OGB raw layout (ReadOGB,
// ReadOGBHetero), generates synthetic ones (Generate, GenerateHetero) and
// downloads the OGB node datasets. It does not use MPI.
//
// Start from the examples: ExampleReadOGB reads a dataset from disk,
// ExampleBuildInCSR builds a graph from an edge list. With
// ReadOptions.Time (HeteroReadOptions.Time) a dataset also carries edge and
// node times (time.go, hetero_time.go), and its rows are sorted by (time,
// source) instead (BuildInCSRTimed).
//
// Every options type a door takes (ReadOptions, HeteroReadOptions,
// GenOptions, HeteroGenOptions, ConvertOptions, DownloadOptions) has
// Validate, which that door calls; the generators' defaults have one
// source, DefaultGenOptions and DefaultHeteroGenOptions, which the gen
// command's flags show.
package graph
