// Package partition splits a graph into the parts of a training job, one
// per rank: it assigns nodes to parts (METIS through libmetis, or Random),
// relabels ids so that every part owns a contiguous range, builds each
// part's halo (the in-edges of its owned nodes), and writes, verifies and
// loads the versioned on-disk format (Write, Load; META.json describes a
// partition). It does not use MPI; partition/dpartition partitions under
// mpirun.
//
// Start from the examples: ExampleWriteDataset partitions a graph on one
// process and loads its parts, ExampleRandom assigns without METIS. The
// variants of the format each live in their own files:
//   - heterogeneous graphs (hetero*.go; format version 2, HeteroMeta): a
//     contiguous id range per node type and one in-edge row per (node,
//     relation);
//   - link prediction (link*.go, Options.Link): the split's positives,
//     fixed evaluation negatives and pools are stored with the parts, and
//     the adjacency is the training graph's;
//   - timed partitions (time.go, Options.Time): times.bin per in-edge and
//     node_time.bin, rows strictly ascending in (time, original id), so
//     that the neighbours older than a seed are a prefix of its row;
//   - sparse features (sparsefeat.go, Options.SparseFeatures; the CLI's
//     auto picks them below 10 % nonzero): CSR feature rows instead of
//     feat.bin, returned as Part.FeatCSR.
//
// Options.Validate checks the options before a dataset is read, naming
// the field at fault (config.FieldError); MetisOptions.Validate those of
// Metis. CacheOptions name a partition kept for reuse (train --data): its
// directory name, where it may be, and whether one found there is
// complete (Cached, Pick; their Validate before either).
//
// A dataset directory in OGB's raw layout, homogeneous or heterogeneous,
// becomes a partition through one path whichever command asks (raw.go):
// ReadRaw reads it as a Source says (and draws nothing yet), Raw.Partition
// assigns and writes, and CachedRaw does both for a cache (train --data on
// rank 0). A chunked dataset is partitioned by every rank instead
// (partition/dpartition, whose JobParts picks between the two for a job).
package partition
