package sample

import (
	"math"

	"mpignn/internal/hashkey"
)

// Counter-based randomness.
//
// Every random choice of the sampler and of the model (neighbor picks,
// dropout masks, batch order) is a pure function of a key such as
// (seed, epoch, batch, layer, original node id). There is no generator state
// carried from one choice to the next, so the outcome for a node does not
// depend on which rank computes it, on how many ranks there are, or on which
// other nodes happen to be processed alongside it.
//
// The hash that turns a key into a 64-bit stream state is internal/hashkey
// (shared with graph and partition); the stream itself is SplitMix64 (a
// Weyl sequence passed through the same finalizer), which passes BigCrush.
// Everything is plain uint64 arithmetic, so results are identical on every
// platform and Go version.

const (
	// Domain tags keep the hash inputs of unrelated uses apart, so that, for
	// example, a dropout mask never reuses the bits that picked a neighbor.
	tagSample = 0x73616d706c65 // "sample"
	tagMask   = 0x6d61736b
	tagBatch  = 0x6261746368
)

// Hash64 hashes a sequence of words into 64 well-mixed bits: it is
// hashkey.Hash64, kept here for users of the sampler's keys (tests,
// embeddings, initial weights) outside this module's internal packages.
func Hash64(words ...uint64) uint64 { return hashkey.Hash64(words...) }

// Float32From maps 64 random bits to a float32 uniform on [0,1) using the top
// 24 bits, which is exactly the float32 mantissa precision (so every value is
// representable and the result is never 1).
func Float32From(h uint64) float32 { return hashkey.Float32From(h) }

// Float64From maps 64 random bits to a float64 uniform on [0,1) using the top
// 53 bits.
func Float64From(h uint64) float64 { return hashkey.Float64From(h) }

// MaskKey returns the key of the dropout mask row of one node at one layer
// and training step. node must be the ORIGINAL node id so that masks do not
// depend on the number of ranks.
func MaskKey(seed uint64, step, layer int, node int64) uint64 {
	return Hash64(tagMask, seed, uint64(step), uint64(layer), uint64(node))
}

// A dropout mask row draws 16 bits per unit, four units from each 64-bit
// hash: unit u reads bits [16·(u mod 4), 16·(u mod 4)+16) of
// MaskWord(key, u/4). One hash per unit made the masks 11 % of a training
// step's CPU (issue 43); four per hash cut that fourfold, and 16 bits
// still resolve the dropout probability to 1/65536.
const MaskLanes = 4

// MaskWord returns the 64 random bits that decide units 4g..4g+3 of the
// mask row with the given key. It is random access into the stream
// NewStream(key): MaskWord(key, g) is that stream's (g+1)-th Uint64.
func MaskWord(key uint64, g int) uint64 {
	return hashkey.Mix64(key + (uint64(g)+1)*hashkey.Golden)
}

// MaskDraw returns the 16-bit draw of one unit (feature column, or edge
// and head of an attention row) of the mask row with the given key.
func MaskDraw(key uint64, unit int) uint32 {
	return uint32(MaskWord(key, unit/MaskLanes)>>(16*(unit%MaskLanes))) & 0xffff
}

// MaskThreshold returns the draw below which a unit is dropped with
// probability p in [0, 1]: ceil(p·65536), so that a unit is dropped exactly
// when draw/65536 < p and the rate is p rounded up to a multiple of 1/65536.
func MaskThreshold(p float32) uint32 {
	return uint32(math.Ceil(float64(p) * 65536))
}

// MaskKeep reports whether unit `unit` of the mask row with the given key
// is kept under the threshold t of MaskThreshold.
func MaskKeep(key uint64, unit int, t uint32) bool { return MaskDraw(key, unit) >= t }

// Stream is a SplitMix64 generator keyed by a counter-based hash
// (hashkey.Stream, so that graph generators draw from the same streams
// without importing the sampler). Create one from a key (Key.Stream, or
// NewStream of a hash) so that draws are tied to what they decide.
type Stream = hashkey.Stream

// NewStream returns the stream whose state is the given 64-bit key.
func NewStream(key uint64) Stream { return hashkey.NewStream(key) }

// Key identifies one neighbor choice: the neighbors of node Node in layer
// Layer of batch (step) Batch of epoch Epoch under the run seed Seed.
//
// Node must be the ORIGINAL node id. Layer is the index of the block in
// forward order (blocks[0] is the input layer; blocks[L-1] has the seeds as
// destinations). Batch is the global step index within the epoch, which is
// the same on every rank (see EpochBatches / RankSteps).
type Key struct {
	Seed  uint64
	Epoch int
	Batch int
	Layer int
	Node  int64
}

// Stream returns the random stream for this key. It equals
// NewStream(Hash64(tagSample, Seed, Epoch, Batch, Layer, Node)) and is
// computed without allocating.
func (k Key) Stream() Stream { return hashkey.NewStream(k.hashInto(hashkey.Start(6))) }

// hashInto hashes the key's six words into h (the start of a hash of six
// or more words).
func (k Key) hashInto(h uint64) uint64 {
	h = hashkey.Word(h, tagSample)
	h = hashkey.Word(h, k.Seed)
	h = hashkey.Word(h, uint64(k.Epoch))
	h = hashkey.Word(h, uint64(k.Batch))
	h = hashkey.Word(h, uint64(k.Layer))
	return hashkey.Word(h, uint64(k.Node))
}
