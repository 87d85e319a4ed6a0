// Package dsample is the distributed side of sampling: it holds a rank's
// partition in MPI distributed arrays (collectives.DistArray) and runs the
// pure sampling core of package sample over them, reproducing sample's
// single-process reference exactly on any number of ranks. It is kept apart
// from package sample so that sample and train do not link MPI.
//
// The parts:
//   - GraphStore (OpenGraphStore, collective): the adjacency, as distributed
//     arrays of node {edge start, degree} and edge {new id, orig id} rows,
//     read with one-sided gets (transport rma) or Alltoallv; with rma a
//     replicated {edge start, degree} table when it fits, so a remote node
//     costs one read per layer. Neighbors is its collective batch read.
//   - FeatureStore (OpenFeatureStore, collective): feature rows by
//     FeatureKey {node type, name} (today one key, NodeFeat), one
//     distributed array per key, each with a halo cache and a hot
//     remote-node cache looked up through a dense id -> slot map; Gather
//     (collective) reads rows of any nodes, with counters. A sparse-feature
//     partition's table stays sparse (featsparse.go): fixed-capacity CSR
//     rows on the wire, CSR caches; GatherSparse returns sample.SparseRows
//     and the node Loader fills Batch.XS with them.
//     A heterogeneous partition has one table per node type with features,
//     over TypeRows (typed.go): a type's rows sharded by owner, type-local
//     new ids; train/dtrain keeps its learnable embeddings over them too.
//   - Sampler (NewSampler; Sample, collective): the layer-wise sampler over
//     a GraphStore, with one door, Sample(Request): the request carries the
//     seeds, the fanouts or a per-relation plan (sample.RelFanouts), seed
//     times, the key, replace and optional counters. It reproduces
//     sample.Reference / sample.HeteroReference exactly with a fixed number
//     of transport calls per layer on every rank. SetExclude drops a step's
//     seed edges from the blocks, on both transports.
//     SetTemporal and a Request with Times sample temporally on a timed
//     partition (temporal.go): own rows by binary search over the local
//     edge times, remote rows with a fixed number of one-sided reads (times
//     at fences, then the gap holding the prefix end), or on the owner with
//     Alltoallv.
//   - Store (OpenStore, collective): one rank's partition opened as both
//     stores plus the Sampler, probing the transport once; with labels. It
//     hands out its parts (Graph, Features, Sampler, Part) rather than
//     forwarding their methods.
//   - Options: every options type has Validate, called by its door
//     (NewLoader, NewLinkLoader, Store.Embed, OpenStore, OpenGraphStore,
//     OpenFeatureStore) before anything collective; fanouts follow
//     sample.CheckFanouts, the one rule of a fanout list.
//   - Loader (NewLoader, Steps, Batch): global batching (sample.EpochBatches
//     / sample.RankSteps) + sampling + gathering per training step; the step
//     count is the same on every rank, and a rank without seeds in a step
//     still takes part in its collectives.
//   - LinkLoader (NewLinkLoader, Steps, Batch): link prediction's training
//     batches: edge seeds batched globally by canonical edge id, keyed
//     negatives (mapped to partition ids through an IDMap), the step's
//     positive edges excluded from sampling; and Embed, every node's
//     model output for ranking evaluation. On a heterogeneous partition
//     (link split on one relation) negatives are of the relation's
//     destination type, sampling is typed, inputs are typed
//     (SetTypedInputs) and Embed covers the relation's two node types
//     through a TypedEmbedder (linkhetero.go).
//   - IDMap (OpenIDMap, Map): original -> partition ids, distributed by
//     original-id blocks (stored by the partitioner of a link split).
//   - Store.Embed: runs an Embedder over every node in global batches and
//     keeps the rows in a distributed array (Embeddings; NewEmbeddings
//     gives rows to fill, as layer-wise inference in train/dtrain does).
//   - GatherText: the canonical text of all ranks' blocks (`mpignn sample`).
//
// Every exported function or method that reads remote data is collective:
// all ranks call it, in the same order, also with nothing to read.
package dsample
