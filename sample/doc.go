// Package sample is the pure core of neighbor sampling: everything that
// decides WHAT is sampled, with no MPI, so that it (and package train, which
// builds on it) compiles, links and tests on a machine without MPI.
//
// The random choices depend only on (seed, epoch, batch, layer, original
// node id), through the counter-based hash of internal/hashkey (Key,
// Stream), and every in-neighbor list is in canonical order (ascending
// original id), so a node's sampled neighborhood is the same whichever rank
// samples it and however many ranks there are.
//
// Start from the examples: ExampleReferenceBlocks samples the blocks of one
// batch on one process, ExampleEpochBatches cuts an epoch into the global
// batches every rank agrees on. Reference is the single-process sampler
// that every other Sampler must reproduce (sample/sampletest checks an
// implementation against it); the rest extends it along one axis each:
// typed sampling of heterogeneous graphs (hetero.go: relation rows, per-
// relation fanouts, Block.Etype), temporal sampling (temporal.go: a seed's
// time bounds the edges its neighbourhood may use), the edges a link step
// keeps out of its blocks (exclude.go), and the rank-count-independent text
// form printed by `mpignn sample` (text.go).
//
// Fanouts are configured once: FanoutPlan (fanout.go) is a fanout setting
// parsed where it is typed (ParseFanoutPlan of "15,10" or "cites=15,10;
// *=5,5"), carried typed to the sampler and resolved against a schema there
// (Resolve); CheckFanouts is the one rule of a plain fanout list.
//
// The distributed graph and feature stores and the distributed sampler,
// which do need MPI, are in package sample/dsample.
package sample
