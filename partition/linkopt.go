package partition

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"mpignn/config"
	"mpignn/graph"
)

// Defaults of LinkOptions (the OGB-style evaluation sizes).
const (
	DefaultNegsPerPos  = 100
	DefaultPool        = 10000
	DefaultStructFeats = 32
)

// Bounds that keep the negative arrays (positives x K) and the pools far
// from exhausting memory whatever a caller passes.
const (
	maxNegsPerPos = 1 << 16
	maxPool       = 1 << 32
	maxStruct     = 1 << 16
)

// LinkOptions requests a link-prediction split (Options.Link). The seed is
// Options.Seed.
type LinkOptions struct {
	// Split is "random:TRAIN,VALID,TEST" (fractions of the dataset's
	// distinct undirected pairs, summing to 1) or "time" (the files
	// split/time/{train,valid,test}.csv.gz, read into Dataset.LinkSplits).
	Split string
	// NegsPerPos is K, the fixed negative destinations per valid/test
	// positive; 0 means DefaultNegsPerPos, or the K of the negatives a
	// split stores (OGB's .pt splits), which another value contradicts.
	NegsPerPos int
	// Pool is the number of random pairs in each of the valid and test
	// negative pools; 0 means DefaultPool, or the shared negatives a split
	// stores (OGB's edge_neg), which another value contradicts.
	Pool int64
	// NoValidAdj leaves out the in-adjacency of the valid edges that
	// test-time inference with --use-valid-edges merges in (stored by
	// default, as the option is cheap and the OGB collab rule needs it).
	NoValidAdj bool
	// StructFeats is the width of the structural node features
	// (log-degrees plus fixed random signs, see structFeatures). 0 makes
	// DefaultStructFeats of them for a dataset without features and keeps
	// the features of one that has them; a positive width always replaces
	// the dataset's features. Widths below 2 are refused (the two degree
	// columns come first). Heterogeneous graphs take no structural
	// features (featureless node types get learnable embeddings instead).
	StructFeats int
	// EdgeLabels says how raw/edge-label.csv.gz (the edge task's labels,
	// graph.EdgeLabelFile) is read: graph.LabelsClasses, graph.LabelsReal,
	// or "" (read when the file exists: classes when it has one column,
	// real values when several). A random split labels its pairs, a time
	// or stored split its events (attachEdgeTargets).
	EdgeLabels string
	// Relation makes the split one of a HETEROGENEOUS graph's relation
	// (canonical src___rel___dst): its edges are the positives, see
	// heterolink.go. Split is then "random:TRAIN,VALID,TEST" over the
	// relation's edges or the name of a link split directory
	// (split/<name>/, e.g. "time" or "u1"), whose rows Rows must hold.
	// Empty for a homogeneous graph.
	Relation string
	// Rows are the rows of the named split of a heterogeneous dataset, in
	// homogenized original ids (ReadHeteroSplit reads them); nil for a
	// random split. They are input data, not an option: Key and Matches
	// ignore them.
	Rows *graph.LinkSplit
	// Graph is the message-passing adjacency of the partition:
	// LinkGraphTrain ("" too) builds it from the training edges only;
	// LinkGraphAll from the train, valid and test events with their times,
	// so that a temporal sampler, which only ever reads edges older than
	// its seed, can use the events that precede an evaluation edge. "all"
	// needs Options.Time and a split with times; without temporal sampling
	// it would leak held-out edges, which the trainer refuses.
	Graph string
}

// Message-passing graphs of LinkOptions.Graph.
const (
	LinkGraphTrain = "train"
	LinkGraphAll   = "all"
)

// ParseLinkSplit parses a LinkOptions.Split value. For "random:..." it
// returns the three fractions; for "time" zeros.
func ParseLinkSplit(s string) (kind string, frac [3]float64, err error) {
	if s == LinkSplitTime {
		return LinkSplitTime, frac, nil
	}
	rest, ok := strings.CutPrefix(s, LinkSplitRandom+":")
	if !ok {
		return "", frac, fmt.Errorf("link split %q: want random:TRAIN,VALID,TEST or time", s)
	}
	fields := strings.Split(rest, ",")
	if len(fields) != 3 {
		return "", frac, fmt.Errorf("link split %q: want three fractions TRAIN,VALID,TEST", s)
	}
	for i, f := range fields {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return "", frac, fmt.Errorf("link split %q: fraction %q is not a number", s, f)
		}
		frac[i] = v
	}
	if frac[0] <= 0 || frac[1] < 0 || frac[2] < 0 {
		return "", frac, fmt.Errorf("link split %q: want train > 0 and valid, test >= 0", s)
	}
	if sum := frac[0] + frac[1] + frac[2]; math.Abs(sum-1) > 1e-6 {
		return "", frac, fmt.Errorf("link split %q: fractions sum to %g, want 1", s, sum)
	}
	return LinkSplitRandom, frac, nil
}

// linkKind returns the kind of lo.Split: ParseLinkSplit's for a
// homogeneous split; for a relation split also LinkSplitNamed, any other
// split directory name.
func (lo LinkOptions) linkKind() (kind string, frac [3]float64, err error) {
	if lo.Relation == "" || strings.HasPrefix(lo.Split, LinkSplitRandom+":") || lo.Split == LinkSplitTime {
		return ParseLinkSplit(lo.Split)
	}
	if !validSplitName(lo.Split) {
		return "", frac, fmt.Errorf("link split %q: want random:TRAIN,VALID,TEST or the name of a split directory (letters, digits, '_', '.', '-')", lo.Split)
	}
	return LinkSplitNamed, frac, nil
}

// resolved checks lo (Validate) and fills its defaults.
func (lo LinkOptions) resolved() (LinkOptions, error) {
	if err := lo.Validate(); err != nil {
		return lo, err
	}
	if lo.Graph == "" {
		lo.Graph = LinkGraphTrain
	}
	if lo.NegsPerPos == 0 {
		lo.NegsPerPos = DefaultNegsPerPos
	}
	if lo.Pool == 0 {
		lo.Pool = DefaultPool
	}
	return lo, nil
}

// Validate reports link options no partitioning can use, without a
// dataset, naming the field at fault (config.FieldError, a path in
// LinkOptions; Options.Validate puts it under Link). Whether Graph "all"
// has the times it needs is Options.Validate's (it holds Time) and the
// split's rows' (checked when they are read).
func (lo LinkOptions) Validate() error {
	if _, _, err := lo.linkKind(); err != nil {
		return config.Errorf("{Split}: %v", err)
	}
	switch lo.Graph {
	case "", LinkGraphTrain, LinkGraphAll:
	default:
		return config.Errorf("{Graph} %q: want %s or %s", lo.Graph, LinkGraphTrain, LinkGraphAll)
	}
	if lo.Relation != "" {
		if _, err := graph.ParseRelation(lo.Relation); err != nil {
			return config.Errorf("{Relation}: %v", err)
		}
		if lo.StructFeats != 0 {
			return config.Errorf("{StructFeats} %d: a heterogeneous link split ({Relation}) takes none (featureless node types get learnable embeddings)", lo.StructFeats)
		}
	}
	switch {
	case lo.NegsPerPos < 0 || lo.NegsPerPos > maxNegsPerPos:
		return config.Errorf("{NegsPerPos} %d: want 1..%d (0 = %d)", lo.NegsPerPos, maxNegsPerPos, DefaultNegsPerPos)
	case lo.Pool < 0 || lo.Pool > maxPool:
		return config.Errorf("{Pool} %d: want 1..%d (0 = %d)", lo.Pool, int64(maxPool), DefaultPool)
	case lo.StructFeats < 0 || lo.StructFeats == 1 || lo.StructFeats > maxStruct:
		return config.Errorf("{StructFeats} %d: want 0 (automatic) or 2..%d", lo.StructFeats, maxStruct)
	case lo.EdgeLabels != "" && lo.EdgeLabels != graph.LabelsClasses && lo.EdgeLabels != graph.LabelsReal:
		return config.Errorf("{EdgeLabels} %s: want %s or %s", lo.EdgeLabels, graph.LabelsClasses, graph.LabelsReal)
	}
	return nil
}

// ReadOptions returns base adjusted to read a dataset for this link split:
// features and labels become optional (link datasets such as bitcoin-alpha
// have neither), a time split's files are read into Dataset.LinkSplits,
// and node splits are not read unless base names them (a link task does not
// use them, and a dataset's split/ may hold link splits such as split/time,
// which are not node-id files).
// The random split needs nothing extra: its units are the distinct
// undirected pairs, which the symmetrised, deduplicated Dataset.In holds
// exactly (adding reverse edges, dropping self loops and duplicates does not
// change the set of unordered pairs), so the raw edge list is not kept.
func (lo LinkOptions) ReadOptions(base graph.ReadOptions) graph.ReadOptions {
	base.OptionalFeatures, base.OptionalLabels = true, true
	if base.Splits == nil {
		base.Splits = []string{}
	}
	if lo.Split == LinkSplitTime {
		base.LinkSplits = append(base.LinkSplits[:len(base.LinkSplits):len(base.LinkSplits)], LinkSplitTime)
	}
	return base
}

// Key is a short file-name-safe string identifying everything in lo that
// changes the written partition (for partition caches such as train
// --data's): two option sets with the same Key write the same partition.
func (lo LinkOptions) Key() string {
	r, err := lo.resolved()
	if err != nil {
		r = lo
	}
	split := strings.NewReplacer(":", "-", ",", "-").Replace(r.Split)
	k := fmt.Sprintf("link-%s-k%d-pool%d", split, r.NegsPerPos, r.Pool)
	if r.NoValidAdj {
		k += "-novalidadj"
	}
	if r.StructFeats > 0 {
		k += fmt.Sprintf("-sf%d", r.StructFeats)
	}
	if r.EdgeLabels != "" {
		k += "-el-" + r.EdgeLabels
	}
	if r.Relation != "" {
		k += "-rel-" + r.Relation
	}
	if r.Graph == LinkGraphAll {
		k += "-graph-all"
	}
	return k
}

// Matches reports whether the link section m was written with these
// options and seed (for reusing a cached partition).
func (lo LinkOptions) Matches(m *LinkMeta, seed uint64) bool {
	r, err := lo.resolved()
	if err != nil || m == nil {
		return false
	}
	// Stored negatives (an OGB .pt split) fix K and the pools: unset
	// options match them, as they do when partitioning.
	negsOK := m.NegsPerPos == r.NegsPerPos || (m.StoredNegs && lo.NegsPerPos == 0)
	poolOK := m.Pool == r.Pool || (m.StoredPool && lo.Pool == 0)
	if m.Split != r.Split || m.Seed != seed || !negsOK || !poolOK || m.ValidAdj == r.NoValidAdj || m.Relation != r.Relation {
		return false
	}
	if g := m.Graph; (g == "" && r.Graph != LinkGraphTrain) || (g != "" && g != r.Graph) {
		return false
	}
	return r.StructFeats == 0 || m.StructFeats == r.StructFeats
}

// errGraphNeedsTime refuses LinkGraphAll without Options.Time (the rule
// of Options.Validate, and of checkGraph for a caller that skipped it).
func errGraphNeedsTime() error {
	return config.Errorf("{Link.Graph} %s needs {Time} (the adjacency then holds held-out events, which only a temporal sampler may read)", LinkGraphAll)
}

// checkGraph refuses LinkGraphAll unless the partition is timed and the
// split's events have times, and returns the meta value of lo.Graph ("" for
// the default, so that META of an untimed link partition is unchanged).
func (lo LinkOptions) checkGraph(timed, hasTime bool) (string, error) {
	if lo.Graph != LinkGraphAll {
		return "", nil
	}
	if !timed {
		return "", errGraphNeedsTime()
	}
	if !hasTime {
		return "", config.Errorf("{Link.Graph} %q needs a split whose rows have times (such as split/time); the random split has none", LinkGraphAll)
	}
	return LinkGraphAll, nil
}

var errNoTimeSplit = errors.New("dataset has no link split \"time\" loaded: read it with LinkOptions.ReadOptions (ReadOptions.LinkSplits = [\"time\"])")

// ReadHeteroSplit reads the rows of lo's named split of the heterogeneous
// dataset in dir (split/<Split>/, edges of lo.Relation, see
// graph.ReadHeteroLinkSplit) for LinkOptions.Rows; a random split needs
// none (nil, nil).
func (lo LinkOptions) ReadHeteroSplit(dir string, s *graph.Schema) (*graph.LinkSplit, error) {
	kind, _, err := lo.linkKind()
	if err != nil {
		return nil, err
	}
	if kind == LinkSplitRandom {
		return nil, nil
	}
	if s == nil {
		return nil, errors.New("link split: no graph schema")
	}
	return graph.ReadHeteroLinkSplit(dir, lo.Split, s, lo.Relation)
}
