package dtrain

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/internal/osx"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// LocalRanks returns the number of ranks on this node as the launcher
// reports it (OpenMPI, MPICH/Hydra), or worldSize when it does not say:
// they share the node's cores and memory.
func LocalRanks(worldSize int) int {
	for _, env := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"} {
		if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
			return v
		}
	}
	return max(worldSize, 1)
}

// checkFits refuses, on every rank, a model that does not fit in the memory
// of this rank's node (shared with the other ranks there). Ranks on
// different nodes may see different memory, so the outcome is agreed. It is
// collective. hint names the fields that shrink the estimate ({Path}, as
// config.Errorf's format).
func checkFits(c *collectives.Comm, e train.MemoryEstimate, hint string) error {
	err := train.CheckMemory(e, osx.AvailableMemory(), LocalRanks(c.Size()), "")
	if err != nil {
		// CheckMemory ends its message with "; " and the hint, which here
		// names fields: the message is made again as a FieldError.
		err = fmt.Errorf("rank %d: %w", c.Rank(), config.Errorf("%s; "+hint, strings.TrimSuffix(err.Error(), "; ")))
	}
	return collectives.Agree(c, err)
}

// batchField names the field that sets the run's batch size, for a hint:
// {Loader.GlobalBatch} when it is set, else {Loader.Batch}.
func batchField(lo dsample.LoaderOptions) string {
	if lo.GlobalBatch > 0 {
		return "{Loader.GlobalBatch}"
	}
	return "{Loader.Batch}"
}

// checkTrainable refuses a run that cannot train before anything large is
// allocated: a global batch that overflows, a split without training nodes
// (in the whole graph: META counts every part), and a model that does not
// fit in memory. It is collective.
// lo is the loader's options as the run resolved them (split and eval
// fanouts filled in).
func checkTrainable(c *collectives.Comm, partDir string, meta *partition.Meta, lo dsample.LoaderOptions, so dsample.StoreOptions, model train.Config) error {
	var err error
	if lo.GlobalBatch == 0 && lo.Batch > math.MaxInt32/c.Size() {
		// Global batches index seeds with ints and every rank's share is
		// at most the batch: anything this large is a typo.
		err = config.Errorf("train: {Loader.Batch} %d x %d ranks is more than %d seeds per step", lo.Batch, c.Size(), math.MaxInt32)
	} else if lo.GlobalBatch > math.MaxInt32 {
		err = config.Errorf("train: {Loader.GlobalBatch} %d is more than %d seeds per step", lo.GlobalBatch, math.MaxInt32)
	} else if sc, ok := meta.Splits[lo.Split]; ok && sc.Train == 0 {
		err = fmt.Errorf("train: split %s of %s has no training nodes (valid %d, test %d)", lo.Split, partDir, sc.Valid, sc.Test)
	}
	if err := collectives.Agree(c, err); err != nil {
		return err
	}
	e := model.EstimateTraining(lo.Fanouts, lo.EvalFanouts, lo.RankShare(c.Size()), meta.NumNodes)
	if e.Store, err = storeEstimate(c, meta, so); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if err := checkFits(c, e, "lower {Model.Hidden}, "+batchField(lo)+" or {Loader.Fanouts}"); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// storeEstimate is storeParts for this rank of c, with its node layout. It
// is collective.
func storeEstimate(c *collectives.Comm, meta *partition.Meta, so dsample.StoreOptions) ([]train.MemoryPart, error) {
	nodeRanks, err := collectives.FewestNodeRanks(c)
	if err != nil {
		return nil, err
	}
	return storeParts(meta, c.Rank(), nodeRanks, so), nil
}

// storeParts estimates what rank's sampling store allocates (see
// dsample.Store): its share of the adjacency ({first edge, degree} per node
// and relation, {new id, original id} per in-edge) and of the features,
// the degree table replicated on every rank when one-sided reads may build
// it (16 bytes per node and relation, up to {Store.DegreeTableMB}), the
// block builder's window over its own nodes (8 bytes each) and the hot
// cache with its slot map (two 12-byte slots per row). The blocks' table
// and the halo cache scale with a step and a partition's cut, which the
// model's activations and the partition's halo already bound.
//
// On shared parts (Meta.Shared) a node holds its part once: a rank counts
// its part's share of it (the part over its ranks), and the block index
// over its own share of nodes.
func storeParts(meta *partition.Meta, rank, nodeRanks int, so dsample.StoreOptions) []train.MemoryPart {
	if meta == nil || rank < 0 || rank >= meta.NumParts {
		return nil
	}
	var pi partition.PartInfo
	ranks := 1.0 // ranks that hold the part
	own := float64(meta.Offsets[rank+1] - meta.Offsets[rank])
	switch sh := meta.Shared; {
	case sh != nil:
		g := sort.Search(len(sh.First)-1, func(g int) bool { return sh.First[g+1] > rank })
		if g >= len(sh.Infos) {
			return nil
		}
		pi, ranks = sh.Infos[g], float64(sh.First[g+1]-sh.First[g])
	case rank < len(meta.Parts):
		pi = meta.Parts[rank]
	default:
		return nil
	}
	R := float64(max(meta.NumRels(), 1))
	vb := float64(meta.FeatKind().Bytes()) // bytes of a feature value (2 with --feat-dtype bf16|fp16)
	parts := []train.MemoryPart{
		{Name: "graph share", Bytes: (16*float64(pi.Nodes)*R + 16*float64(pi.Edges)) / ranks},
		{Name: "feature share", Bytes: vb * float64(pi.Nodes) * float64(meta.FeatDim) / ranks},
		{Name: "block index", Bytes: 8 * own},
	}
	limit := so.DegreeTableMB
	if limit == 0 {
		limit = 256
	}
	nr := float64(max(nodeRanks, 1))
	if deg := 16 * float64(meta.NumNodes) * R; so.Transport != collectives.TransportAlltoallv && limit > 0 && deg <= limit*(1<<20)*nr {
		parts = append(parts, train.MemoryPart{Name: "degree table", Bytes: deg / nr})
	}
	if so.CacheMB > 0 && meta.FeatDim > 0 {
		cache := so.CacheMB * (1 << 20)
		rows := cache / (vb * float64(meta.FeatDim))
		parts = append(parts, train.MemoryPart{Name: "hot cache", Bytes: cache + 24*rows})
	}
	return parts
}
