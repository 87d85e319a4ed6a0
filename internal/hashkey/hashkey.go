package hashkey

// Golden is 2^64/phi, the SplitMix64 increment.
const Golden = 0x9E3779B97F4A7C15

// Mix64 is the SplitMix64 finalizer (Stafford's Mix13): a bijection on
// uint64 in which every input bit affects every output bit.
func Mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Step is the output of a SplitMix64 stream whose state is s before the
// step: the state advances by Golden, then is finalized.
func Step(s uint64) uint64 { return Mix64(s + Golden) }

// Start and Word are the two halves of Hash64, for hot paths that hash a
// fixed number of words without building a slice:
// Hash64(a, b) == Word(Word(Start(2), a), b). The word count enters the
// initial state so that keys of different lengths never collide by
// construction.
func Start(n int) uint64 { return Mix64(0x243F6A8885A308D3 ^ uint64(n)) }

// Word absorbs one word into the hash state h (see Start).
func Word(h, w uint64) uint64 { return Mix64(h ^ Mix64(w+Golden)) }

// Hash64 hashes a sequence of words into 64 well-mixed bits. It is a
// deterministic, platform-independent function of the words and their
// count; it is not cryptographic.
func Hash64(words ...uint64) uint64 {
	h := Start(len(words))
	for _, w := range words {
		h = Word(h, w)
	}
	return h
}
