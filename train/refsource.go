package train

import (
	"fmt"

	"mpignn/graph"
	"mpignn/sample"
)

// RefSource is the single-process BatchSource over an unpartitioned dataset
// (global id == original id): training batches are sample.EpochBatches of
// the whole training split with the GLOBAL batch size, blocks come from
// sample.ReferenceBlocks keyed by (Seed, epoch, step), and valid/test are
// scored in fixed chunks. It is the reference the distributed loader must
// reproduce, and simulates rank `Rank` of `Size` ranks (owning the nodes v
// with v % Size == Rank) so that tests can check rank-count equivalence
// without MPI. The dataset's in-lists must be canonical.
type RefSource struct {
	D           *graph.Dataset
	Split       *graph.Split
	Fanouts     []int
	EvalFanouts []int // nil = Fanouts
	GlobalBatch int
	EvalBatch   int // seeds per evaluation step (all ranks); 0 = GlobalBatch
	Replace     bool
	Seed        uint64
	Rank, Size  int

	sampler sample.Reference
}

func (s *RefSource) nodes(split string) ([]int64, error) {
	switch split {
	case SplitTrain:
		return s.Split.Train, nil
	case SplitValid:
		return s.Split.Valid, nil
	case SplitTest:
		return s.Split.Test, nil
	}
	return nil, fmt.Errorf("reference source: unknown split %q", split)
}

func (s *RefSource) evalBatch() int {
	if s.EvalBatch > 0 {
		return s.EvalBatch
	}
	return s.GlobalBatch
}

// Steps implements BatchSource.
func (s *RefSource) Steps(split string, epoch int) (int, error) {
	nodes, err := s.nodes(split)
	if err != nil {
		return 0, err
	}
	if split == SplitTrain {
		return sample.NumSteps(int64(len(nodes)), s.GlobalBatch), nil
	}
	return sample.NumSteps(int64(len(nodes)), s.evalBatch()), nil
}

// Batch implements BatchSource.
func (s *RefSource) Batch(split string, epoch, step int, b *sample.Batch) error {
	nodes, err := s.nodes(split)
	if err != nil {
		return err
	}
	size := max(s.Size, 1)
	fan := s.Fanouts
	var global []int64
	if split == SplitTrain {
		batches, err := sample.EpochBatches(s.Seed, epoch, nodes, s.GlobalBatch)
		if err != nil {
			return err
		}
		if step < 0 || step >= len(batches) {
			return fmt.Errorf("reference source: step %d outside [0,%d)", step, len(batches))
		}
		global = batches[step]
	} else {
		eb := s.evalBatch()
		lo := step * eb
		if lo < 0 || lo >= len(nodes) {
			return fmt.Errorf("reference source: %s step %d outside the split", split, step)
		}
		global = nodes[lo:min(lo+eb, len(nodes))]
		if s.EvalFanouts != nil {
			fan = s.EvalFanouts
		}
	}
	b.GlobalSeeds = len(global)
	var mine []int64
	for _, v := range global {
		if int(v%int64(size)) == s.Rank {
			mine = append(mine, v)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	key := sample.Key{Seed: s.Seed, Epoch: epoch, Batch: step}
	s.sampler.G = sample.CSRGraph{In: s.D.In}
	blocks, err := s.sampler.Sample(mine, mine, fan, key, s.Replace)
	if err != nil {
		return err
	}
	b.Blocks = blocks
	d := s.D.Feat.Dim
	for _, v := range blocks[0].Orig {
		b.X = append(b.X, s.D.Feat.Data[int(v)*d:int(v+1)*d]...)
		if int(v%int64(size)) != s.Rank {
			b.Stats.RemoteRows++
		}
	}
	for _, v := range mine {
		b.Labels = append(b.Labels, s.D.Labels[v])
	}
	return nil
}
