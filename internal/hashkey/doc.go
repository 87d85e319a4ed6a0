// Package hashkey is the counter-based hash every deterministic choice of
// mpignn is keyed by: neighbor picks, dropout masks and batch order
// (sample), held-out edges, negatives and structural features of a link
// split (partition), generated edge and node times (graph), initial
// weights and embeddings (train).
//
// A choice is a pure function of a key such as (seed, epoch, batch, layer,
// original node id), so its outcome does not depend on which rank computes
// it, on how many ranks there are, or on the order of the work. The
// building blocks are the SplitMix64 finalizer (Mix64, a bijection on
// uint64 with full avalanche), a sponge that hashes a sequence of words
// with it (Hash64, or Start and Word on hot paths), and the SplitMix64
// stream step (Step). Everything is plain uint64 arithmetic, so results
// are identical on every platform and Go version.
//
// The outputs must never change. Golden files under */testdata (sampled
// blocks, partitions, generated graphs, weights digests) and every
// checkpoint and partition already on disk were produced with them; a
// change of one bit here silently moves all of them. hashkey_test.go pins
// values: a failure there means this package changed behaviour, not that
// the pins need updating.
//
// The package imports nothing of mpignn, so that graph, partition and
// sample can all use it without depending on each other.
package hashkey
