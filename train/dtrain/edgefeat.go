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
// none, and for a named architecture that reads none. The default
// architecture depends on the partition (GraphSAGE, HeteroSAGE on a
// heterogeneous one), so resolveEdgeFeat checks it once that is read.
func validateEdgeFeat(c *TrainConfig, t task) error {
	if !c.UseEdgeFeat {
		if train.ArchNeedsEdgeFeatures(c.Model.Arch) {
			return config.Errorf("{Model.Arch} %s reads edge features: give {UseEdgeFeat} (on a partition written with them: partition or train --data with --edge-feat)", c.Model.Arch)
		}
		return nil
	}
	switch t.name() {
	case TaskLink, TaskEdge:
		return config.Errorf("{UseEdgeFeat}: {Task} %s trains on the link split's graph, which carries no edge features yet (a partition with a link split has none)", t.name())
	}
	if c.Model.Arch == "" {
		return nil
	}
	return edgeArch(c.Model.Arch)
}

// edgeArch refuses UseEdgeFeat for an architecture that reads no edge
// features.
func edgeArch(arch string) error {
	edge := train.EdgeArchs()
	if slices.Contains(edge, arch) {
		return nil
	}
	which := "no model reads them yet"
	if len(edge) > 0 {
		which = "models that read them: " + strings.Join(edge, ", ")
	}
	return config.Errorf("{UseEdgeFeat}: {Model.Arch} %s reads no edge features (%s)", arch, which)
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
	if cfg.Model.Arch == "" && slices.Contains(append(train.Archs(), train.HeteroArchs()...), m.ArchName()) {
		// The partition's default architecture, which validateEdgeFeat
		// left to here (an architecture passed with train.WithArchs is
		// named, and checked there).
		if err := edgeArch(m.ArchName()); err != nil {
			return err
		}
	}
	if meta.EdgeFeatDim == 0 {
		return config.Errorf("{UseEdgeFeat}: partition %s holds no edge features: partition the dataset with {EdgeFeat} (its raw/edge-feat.csv.gz, a heterogeneous dataset's raw/relations/<rel>/edge_<name>.csv.gz, or a chunked dataset's edge_data feat)", cfg.PartDir)
	}
	m.EdgeDim = meta.EdgeFeatDim // NewModel checks it against the architecture
	return nil
}
