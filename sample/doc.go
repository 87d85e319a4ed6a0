// Package sample is the distributed graph and feature store and the
// layer-wise neighbor sampler.
//
// The random choices depend only on (seed, epoch, batch, layer, node), so a
// node's sampled neighborhood is the same whichever rank samples it and
// however many ranks there are. The pure parts (one-hop sampling over a CSC,
// deduplication, block building, global batching) need no MPI.
package sample
