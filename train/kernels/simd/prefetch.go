package simd

// Prefetch asks the CPU to bring the cache lines of row into its caches
// without waiting for them: a loop about to read scattered rows calls it a
// few rows ahead, so that their memory latency overlaps its work on the
// rows before. It changes no value and never faults (a prefetch of memory
// that is not there is dropped). Where there is no assembly it does
// nothing.
func Prefetch(row []float32) {
	if len(row) > 0 {
		prefetch(&row[0], len(row))
	}
}
