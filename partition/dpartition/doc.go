// Package dpartition owns the partition of a job: JobParts returns, on
// every rank, the partition of a dataset (raw or chunked) for this job,
// one part per rank, from the cache or made (a raw dataset on rank 0 by
// partition.CachedRaw, a chunked one by every rank with Run, the cache
// directory agreed by one broadcast); ChooseMethod picks a chunked
// dataset's method from what the user named; MetaFields are the
// properties of a partition every rank must agree on before loading it.
// Options.Validate refuses options no run can use, before a dataset is
// read; Run, the door, calls it.
//
// Run partitions a chunked dataset (graph.OpenChunked,
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
// one chunk, and the owner writes each part with the single-process
// writer's code (partition.PartFiles), into rank 0's temporary directory,
// which rank 0 renames after every rank reported its parts. The number of
// parts K need not be the number of ranks P: part q is owned by rank
// q mod P (a rank owns ceil or floor of K/P parts, or none when K < P),
// messages carry the part, and every collective step (lookups, halo
// features, times) takes all of a rank's parts at once, so that ranks
// owning different numbers of parts make the same calls. A rank holds its
// parts' nodes and edges, about K/P parts' worth. For the same
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
// MethodML is multilevel (ParHIP's and dKaMinPar's scheme) on the same
// symmetric graph, with unit edge weights and one vertex weight per
// constraint: nodes of each node type, training nodes of the split the
// writer records, and degree (edges). Coarsening, with all ranks:
// size-constrained label-propagation clustering (5 rounds of a hashed
// half; a cluster is named by its representative vertex, whose owner keeps
// its weight and accepts the round's joins in hash order while the cluster
// stays within KaMinPar's bound eps x total / min(k, n/2000) of the
// combined weight), then contraction into a distributed coarse graph (the
// representative's owner holds the coarse vertex, numbered by key; vertex
// weights and edge weights summed), until at most 2000 x k vertices remain
// or a level shrinks by less than 5 % (vertices without edges, which no
// clustering joins, go into hashed buckets instead). Every rank gathers
// the coarsest graph in key order; rank 0 partitions it with libmetis
// (partition.MetisCSR, every constraint within 1.03) and broadcasts the
// parts. Uncoarsening projects the parts down a level
// at a time and refines each level by lp's rounds with edge weights and a
// bound per constraint: max(1.05 x average, average + the finest level's
// heaviest vertex), METIS' ufactor 50. A vertex of a part over a bound in
// a constraint it weighs in is forced out, to the best connected (else the
// lightest) part it fits; a pair's priority buckets move while they fit
// every constraint's allowance (passing over one that does not), and the
// global histogram alone (every rank computes the same) drops the
// lowest-priority bucket into any part that would end over a bound. That
// bound can exceed 1.05 x average (a degree constraint's heaviest vertex
// is large), and at large k, where METIS partitions the finest graph
// itself, its degree balance misses 1.05 (1.09 at k = 256, 1.36 at
// k = 1024 on a 200k-node graph) with parts at their node bound, so no
// single move can repair it. Only then (a partition within max(1.05 x
// average, average rounded up) in every constraint is returned as it
// is), rebalancing rounds (rebalance.go) swap a vertex of an over part,
// heavy in the constraint, with a lighter vertex of a part with room that
// weighs the same in every other constraint: each over part nominates
// its vertices of least cut loss per unit shed, and its heaviest useful
// ones, each to its best connected part with room; each such part its
// lightest vertices of the profiles asked for; a few per part are
// gathered and matched alike on every rank. As for
// lp every choice hashes (seed, key) and every sum is an integer one, so
// the assignment is the same on any number of ranks; the number of parts k
// is a parameter of the scheme (Run still uses it with one part per
// rank). Memory per rank, of n vertices and m adjacency entries on it: the
// levels' graphs (8 x (2m + (ncon+3) n) bytes for the finest with its edge
// weights, the coarser ones typically under half of that together), while
// contracting 16 bytes per coarse edge sent (rows are merged a coarse
// vertex at a time and go out as vertex, length, pairs in one buffer) and
// 32 per one received (received, then placed by vertex), the coarsest
// graph on every rank (about 2000 k vertices, more where a level stopped
// shrinking, with their edges; METIS' copy on rank 0), and a refinement
// round's histogram: (ncon + 2) words per distinct (from, to, bucket) that
// some rank proposed, at most the round's proposals (no k^2 term); a
// rebalancing round's candidates, (ncon + 5) words each, at most 16 per
// over part and 8 per asked (part, profile).
//
// PT-Scotch's cost on small-world graphs is its sequential
// Fiduccia-Mattheyses refinement of the band graph around each
// bipartition, which such graphs make nearly as large as the graph
// (BENCHMARKS.md, "Distributed partitioning").
//
// Halo features (Options.HaloFeats, homogeneous datasets as in the
// single-process writer) take a second feature exchange after the edges
// moved: every part asks the parts owning its halo nodes for their rows by
// new id, in rounds (Options.RoundIDs rows, else 64 MB), and appends them
// to its own rows, so each rank holds its part's features and its halo's.
//
// Times (Options.Time) come from the chunks: an edge type's edge_data
// "time", or else, per edge, its source's node_data "time" (looked up from
// the source's block owner as the part is; a reverse edge takes the other
// end's time, as ReadOGB and ReadOGBHetero give them); the kind is edge
// when any edge type has edge times, and a node type without node times
// has time 0, as there. Times travel with their edges, and each part's
// rows are sorted by (time, source) without exact repeats,
// graph.BuildInCSRTimed's rows; node times of the owned nodes come from
// their block owners, and META's range is reduced over all ranks, so the
// part equals the single-process timed one.
//
// Link splits (Options.Link: random splits of a homogeneous dataset read
// undirected, untimed; time splits need split/ files a chunked dataset does
// not have, relation splits of heterogeneous graphs are refused) are drawn
// from the parts' rows after the edges moved (link.go): a pair {v, u},
// v < u, is kept by the part of v; its canonical id, and its id within its
// class, come from prefix sums of per-node pair counts at the block owners
// (original-id order), the valid and test pairs are those of lowest
// (partition.LinkPairKey, id), found by a radix select of 16 bits a round
// (one Allreduce of a 2^16 histogram each, 8 rounds per threshold), and the
// part of u learns the class by one exchange. A pair is an edge exactly
// when it is an entry of the symmetric rows, so a fixed negative's test is
// local to its source's part, and a pool draw takes one exchange with the
// part of its source; the training rows (and structural features from
// their lengths) are the train entries. Everything is keyed by original
// ids and canonical ids, so the files are those of partition.Write for the
// same assignment, on any number of ranks. Memory per rank: its rows plus
// a byte and about 40 bytes per pair it keeps.
// Link splits need one part per rank (the part of a pair's other end, and
// of a pool draw's source, is asked while both are held).
package dpartition
