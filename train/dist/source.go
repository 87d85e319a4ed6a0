package dist

import (
	"mpignn/sample/dsample"
	"mpignn/train"
)

// LoaderSource adapts the sampler's distributed Loader to
// train.BatchSource. The Loader's buffers are reused between steps; the
// Batch handed to the trainer aliases them until the next call.
type LoaderSource struct {
	L  *dsample.Loader
	lb dsample.LoaderBatch
}

// Steps implements train.BatchSource.
func (s *LoaderSource) Steps(split string, epoch int) (int, error) { return s.L.Steps(split, epoch) }

// Batch implements train.BatchSource. It is collective (feature fetches).
func (s *LoaderSource) Batch(split string, epoch, step int, b *train.Batch) error {
	if err := s.L.Batch(split, epoch, step, &s.lb); err != nil {
		return err
	}
	b.Blocks = s.lb.Blocks
	b.X = s.lb.X
	b.Labels = s.lb.Labels
	b.GlobalSeeds = s.lb.GlobalSeeds
	b.Stats = train.BatchStats{
		Gather:       s.lb.Gather,
		RemoteRows:   s.lb.RemoteRows,
		CacheHits:    s.lb.CacheHits,
		CacheLookups: s.lb.CacheLookups,
	}
	return nil
}
