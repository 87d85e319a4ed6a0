package dtrain

import (
	"slices"
	"strings"

	"mpignn/config"
	"mpignn/partition"
	"mpignn/train"
)

// Edge features for the model (TrainConfig.UseEdgeFeat).
//
// A partition written with edge features (partition.Options.EdgeFeat)
// holds a row per stored in-edge; the store serves them and the sampler
// attaches the rows of the edges it keeps to every block
// (sample.Block.EdgeFeat), so a layer that reads them sees the same rows
// in training, in sampled evaluation and in layer-wise inference (whose
// full-neighbourhood blocks come from the same sampler with fanout -1).
// The model reads them when its Config.EdgeDim is their width. A run
// without UseEdgeFeat opens the store without them
// (dsample.StoreOptions.NoEdgeFeat): its blocks, its model and its result
// are those of the same partition written without edge features.

// validateEdgeFeat refuses UseEdgeFeat where the run cannot use edge
// features, before the partition is read: for a task whose graph carries
// none, and for an architecture that reads none.
func validateEdgeFeat(c *TrainConfig, t task) error {
	if !c.UseEdgeFeat {
		return nil
	}
	switch t.name() {
	case TaskLink, TaskEdge:
		return config.Errorf("{UseEdgeFeat}: {Task} %s trains on the link split's graph, which carries no edge features yet (a partition with a link split has none)", t.name())
	}
	if !c.Hetero.isZero() {
		return config.Errorf("{UseEdgeFeat}: edge features are read by homogeneous models only; {Hetero} options mean a heterogeneous partition")
	}
	arch := c.Model.Arch
	if arch == "" {
		arch = train.ArchSAGE
	}
	edge := train.EdgeArchs()
	if !slices.Contains(edge, arch) {
		which := "no model reads them yet"
		if len(edge) > 0 {
			which = "models that read them: " + strings.Join(edge, ", ")
		}
		return config.Errorf("{UseEdgeFeat}: {Model.Arch} %s reads no edge features (%s)", arch, which)
	}
	return nil
}

// resolveEdgeFeat sets the model's EdgeDim from the partition's edge
// features with UseEdgeFeat, refusing a partition without them, and leaves
// them out of the store otherwise (TrainConfig.Store.NoEdgeFeat). Every rank reads the same META, so all
// decide alike (the store checks that the parts agree).
func resolveEdgeFeat(cfg *TrainConfig, meta *partition.Meta, m *train.Config) error {
	cfg.Store.NoEdgeFeat = !cfg.UseEdgeFeat
	if !cfg.UseEdgeFeat {
		return nil
	}
	if meta.EdgeFeatDim == 0 {
		return config.Errorf("{UseEdgeFeat}: partition %s holds no edge features: partition the dataset with {EdgeFeat} (its raw/edge-feat.csv.gz, or a chunked dataset's edge_data feat)", cfg.PartDir)
	}
	m.EdgeDim = meta.EdgeFeatDim // NewModel checks it against the architecture
	return nil
}
