// Package dpartition partitions a chunked dataset (graph.OpenChunked,
// DistDGL's chunked graph format) with every rank of an MPI job, each
// holding only its share: rank r reads its run of every type's node chunks
// (graph.ChunkRange) and of every edge type's chunks, the assignment comes
// from label propagation (MethodLP, below), from PT-Scotch (MethodParMetis: the symmetric graph of all relations,
// distributed by block, partitioned by collectives.ParMetisKway with one
// vertex weight, seeded and deterministic; OpenMPI builds only), from
// partition.Random (the single-process random assignment, computed on
// every rank and cut to the rank's nodes) or from per-type assignment
// files (DistDGL's "<ntype>.txt", one part id per line), node records and
// edges move to the rank that owns their part with Alltoallv in rounds of
// one chunk, and rank p writes part-p with the single-process writer's
// code (partition.PartFiles), into rank 0's temporary directory, which
// rank 0 renames after every rank reported its part. For the same
// assignment the directory is byte-identical to partition.Write /
// partition.WriteHetero of the same dataset read with the same options.
//
// Nodes of a homogeneous dataset whose label is -1 (OGB's NaN in
// node-label.npz: ogbn-papers100M labels 1.5 M of its 111 M nodes) keep
// their edges and features and are written with label -1, the format's
// "no label" (as the other types of a heterogeneous partition); a split
// set that names one is refused, and partition.Load checks the same.
//
// MethodLP partitions the same symmetric graph (symGraph, built once for
// both engines) by distributed size-constrained label propagation, each
// rank holding its rows, its vertices' labels and the labels of their
// remote neighbours (one Alltoallv of those per round): three rounds of
// plain label propagation of node ids give clusters, parts start as
// random unions of them (a hash of the seed and the cluster's id), then
// up to 30 rounds move a hashed half of the nodes each to the part most
// of their neighbours are in (nodes of a part over the bound also to a
// lighter part), with every pair's flow limited from an Allreduce of a
// parts x parts x 128 histogram of the candidates' weights so that no part
// grows past (1+0.03) x the average vertex weight (the vertex weight of
// PT-Scotch: nodes and degree). It stops early, by an Allreduce every
// rank sees, when at most one node in a thousand moved. Every choice is a
// hashkey hash of (seed, round, node id[, part or label]) and every sum an
// integer one, so the assignment does not depend on the number of ranks.
// Memory per rank: its edges and nodes (and remote neighbours), plus
// parts^2 x 128 words; no whole-graph array (the hash start replaces
// partition.Random's shuffle, which the random method computes).
//
// PT-Scotch's cost on small-world graphs is its sequential
// Fiduccia-Mattheyses refinement of the band graph around each
// bipartition, which such graphs make nearly as large as the graph
// (BENCHMARKS.md, "Distributed partitioning").
//
// Times, link splits and halo features are refused (they need the whole
// graph's times or a second feature exchange); the number of parts is the
// number of ranks.
package dpartition
