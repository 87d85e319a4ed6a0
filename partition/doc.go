// Package partition splits a graph into P parts (METIS through libmetis, or
// random), relabels node ids so every part owns a contiguous id range, builds
// each part's halo (the in-edges of owned nodes), and writes and verifies the
// versioned on-disk partition format: version 1 for homogeneous graphs,
// version 2 (HeteroMeta) for heterogeneous ones, whose parts own a
// contiguous id range per node type and store one in-edge row per (node,
// relation). Link-prediction partitions (Options.Link, link.go) exist for
// both: on a heterogeneous graph the split is over one relation
// (LinkOptions.Relation, heterolink.go).
//
// Timed partitions (Options.Time, time.go) also store times.bin (one time
// per in-edge, aligned with indices.bin) and node_time.bin, described by
// Meta.Time; their rows are strictly ascending in (time, original id), a
// temporal multigraph where a source may repeat at different times, so
// that a temporal sampler finds the neighbours older than a seed as a
// prefix of the row. Untimed partitions are unchanged.
//
// Sparse-feature partitions (Options.SparseFeatures, sparsefeat.go; the
// CLI's default auto picks them below 10 % nonzero) store homogeneous node
// features as CSR rows (feat_indptr.bin int64, feat_indices.bin int32
// columns ascending per row, feat_values.bin float32, and halo_feat_* with
// halo features) instead of feat.bin, recorded as Meta.SparseFeat and
// per-part entry counts; Load validates the rows and returns them as
// Part.FeatCSR. Dense partitions, heterogeneous ones (typed features stay
// dense) and link splits under auto are unchanged.
//
// Options.Validate checks the options before a dataset is read, naming
// the field at fault (config.FieldError). CacheOptions name a partition
// kept for reuse (train --data): its directory name, where it may be, and
// whether one found there is complete (Cached, Pick).
package partition
