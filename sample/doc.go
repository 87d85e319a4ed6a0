// Package sample is the distributed graph and feature store and the
// layer-wise neighbor sampler.
//
// The random choices depend only on (seed, epoch, batch, layer, original
// node id), and every in-neighbor list is in canonical order (ascending
// original id), so a node's sampled neighborhood is the same whichever rank
// samples it and however many ranks there are. The pure parts (counter-based
// RNG, one-hop choice over a CSC, deduplicating block building, global
// batching, the single-process reference Sampler) need no MPI.
//
// The distributed parts:
//   - Store (OpenStore, collective): the rank's partition plus distributed
//     arrays of node {edge start, degree}, edge {new id, orig id} and feature
//     rows, read with one-sided gets (transport rma) or Alltoallv; with rma
//     a replicated {edge start, degree} table when it fits, so a remote
//     node costs one read per layer; a halo feature cache and a hot
//     remote-node feature cache, both looked up through a dense id -> slot
//     map.
//   - Store.Sample (collective): reproduces Sampler.Sample exactly; a fixed
//     number of transport calls per layer on every rank.
//   - Store.Gather (collective): feature rows of any nodes, with counters.
//   - Loader (NewLoader, Steps, Batch): global batching (EpochBatches /
//     RankSteps) + sampling + gathering per training step; the step count
//     is the same on every rank, and a rank without seeds in a step still
//     takes part in its collectives.
//   - EdgeRecords / CanonicalText / GatherText: the rank-count-independent
//     text form printed by `mpignn sample`.
package sample
