package collectives

// withMaxCount returns a copy of c whose MPI calls carry at most n elements,
// so tests can drive the splitting of large messages with small buffers.
func withMaxCount(c *Comm, n int64) *Comm {
	d := *c
	d.maxCount = n
	return &d
}
