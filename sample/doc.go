// Package sample is the pure core of neighbor sampling: everything that
// decides WHAT is sampled, with no MPI, so that it (and package train, which
// builds on it) compiles, links and tests on a machine without MPI.
//
// The random choices depend only on (seed, epoch, batch, layer, original
// node id), and every in-neighbor list is in canonical order (ascending
// original id), so a node's sampled neighborhood is the same whichever rank
// samples it and however many ranks there are. The parts:
//   - Key, Stream, Hash64: the counter-based RNG;
//   - ChoosePositions: which positions of a node's canonical neighbor list
//     one hop takes;
//   - Block, BlockBuilder: the sampled message-flow graph of one layer and
//     its deduplicating builder, the single place that fixes node order;
//   - EpochBatches, RankSteps, Permutation: global batching;
//   - Sampler: the interface of a layer-wise sampler; Reference (and
//     SampleBlocks, ReferenceBlocks) the single-process one over a Graph,
//     which every other Sampler must reproduce (sample/sampletest checks
//     an implementation against it);
//   - RelFanouts, ParseRelFanouts, RelPlan, RelGraph (HeteroCSR, HomoRel),
//     HeteroReference, RelSampler: typed sampling of heterogeneous graphs
//     over relation rows v*R+r (key Node = orig*R+r; per-relation fanouts;
//     Block.Etype), which reduces to Reference for R = 1;
//   - EdgeSet, ExcludeRows: the pairs a link-prediction step keeps out of
//     its blocks (seed edges and their reverse), dropped after the choice
//     so that every sampler drops the same edges;
//   - Temporal (strategies uniform and last, Strict), TimedRelGraph,
//     TimedCSR, HeteroReference.SampleRelAt: temporal sampling over rows in
//     (time, original id) order, where a seed's time bounds the edges its
//     neighbourhood may use; blocks then carry Time (per node: the seed
//     time it is expanded at, nodes deduplicated per (node, time)) and
//     EdgeTime (see temporal.go for why per (node, time) and not per seed);
//   - EdgeRecords, CanonicalText (EdgeRecordsRel, CanonicalTextRel for
//     typed blocks, EdgeRecordsAt, CanonicalTextAt for temporal ones): the
//     rank-count-independent text form printed by `mpignn sample`.
//
// The distributed graph and feature stores and the distributed sampler,
// which do need MPI, are in package sample/dsample.
package sample
