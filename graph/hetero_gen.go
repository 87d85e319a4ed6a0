package graph

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
)

// ogbn-mag's sizes, the defaults of HeteroGenOptions.
const (
	MagPapers       = 736389
	MagAuthors      = 1134649
	MagInstitutions = 8740
	MagFields       = 59965
	MagCites        = 5416271
	MagWrites       = 7145660
	MagAffiliations = 1043998
	MagTopics       = 7505078
	MagClasses      = 349
	// magFeatDim is the width of the generated paper features (ogbn-mag's
	// word2vec features are 128 wide).
	magFeatDim = 128
)

// The node types and relations of the generated graph, named as in
// ogbn-mag.
const (
	TypeAuthor      = "author"
	TypeField       = "field_of_study"
	TypeInstitution = "institution"
	TypePaper       = "paper"
)

// HeteroGenOptions describe an ogbn-mag-shaped synthetic graph: papers,
// authors, institutions and fields of study joined by
// author___affiliated_with___institution, author___writes___paper,
// paper___cites___paper and paper___has_topic___field_of_study.
//
// Every node of every type belongs to one of Classes planted communities
// (class sizes mildly skewed, as in Generate); a paper's label is its
// community. Every node has a power-law weight θ. Each edge of a relation
// is drawn from an anchor end (the paper for writes, the source otherwise),
// picked by weight over its whole type, and an other end that with
// probability Homophily is picked by weight from the anchor's community
// and otherwise from the whole type; duplicates and citation self loops
// are redrawn, so every relation has exactly its edge count. Only papers
// have features: class centroid plus unit Gaussian noise with centroids
// about FeatSep·√2 noise units apart, weak by default, so the labels are
// learnt mostly through the cites, writes and topic structure.
//
// A zero field (count, Classes, FeatDim, Homophily, FeatSep, PowerLaw)
// means DefaultHeteroGenOptions', ogbn-mag's where it has one.
type HeteroGenOptions struct {
	Papers, Authors, Institutions, Fields int64
	Cites, Writes, Affiliations, Topics   int64

	Classes int
	FeatDim int
	Seed    uint64

	Homophily float64 // probability the other end is drawn from the anchor's community
	FeatSep   float64 // centroid separation in noise units (the default 2: features-only Bayes ~23% on 349 classes, near an MLP on ogbn-mag)
	PowerLaw  float64 // weight density exponent γ > 2

	// Paper split fractions; both 0 mean ogbn-mag's time split shares
	// (629,571 / 64,879 / 41,939 papers: 0.855 / 0.088 / rest).
	TrainFrac, ValidFrac float64

	Workers int // 0 = GOMAXPROCS; does not change the output

	// EdgeTime gives every edge a time (HeteroDataset.InTime, rows then
	// by (time, source)) and NodeTime every node one (NodeTime), uniform
	// in [0, GenTimeRange) and keyed by Seed; WriteHetero writes them. The
	// graph itself does not change.
	EdgeTime, NodeTime bool
}

// MagGenOptions returns options with ogbn-mag's node and edge counts times
// scale (each at least 1), 349 classes and 128 features.
func MagGenOptions(scale float64) HeteroGenOptions {
	s := func(n int64) int64 { return max(1, int64(math.Round(float64(n)*scale))) }
	return HeteroGenOptions{
		Papers: s(MagPapers), Authors: s(MagAuthors), Institutions: s(MagInstitutions), Fields: s(MagFields),
		Cites: s(MagCites), Writes: s(MagWrites), Affiliations: s(MagAffiliations), Topics: s(MagTopics),
		Classes: MagClasses, FeatDim: magFeatDim,
	}
}

// HeteroGenStats describe a generated heterogeneous graph.
type HeteroGenStats struct {
	// Edges and EdgeHomophily (fraction of edges whose ends share a
	// community) per relation, by canonical name.
	Edges         map[string]int64
	EdgeHomophily map[string]float64
	Rounds        int // most sampling rounds any relation needed
	// Accuracies on the first EvalNodes test papers of two classifiers that
	// know the generating parameters: FeatureOnlyAcc is the Bayes
	// classifier of a paper's features (what an MLP can reach at best);
	// OracleAcc adds the planted communities of all its neighbours through
	// every relation (edge likelihoods only, degrees ignored): roughly what
	// the graph makes reachable.
	EvalNodes      int
	FeatureOnlyAcc float64
	OracleAcc      float64
}

// relSpec is one generated relation: its types (indices into the sorted
// types author, field_of_study, institution, paper) and edge count.
type relSpec struct {
	rel            Relation
	src, dst       int
	anchorIsSrc    bool
	edges          int64
	countFlagLabel string
}

// Fill validates o and fills in its defaults, as GenerateHetero does; the
// chunked generator (graph/chunkgen) shares it.
func (o *HeteroGenOptions) Fill() error { return o.fill() }

// GenRelation is one relation of the generated graph: the end drawn first
// by weight over its whole type (the anchor) and the edge count.
type GenRelation struct {
	Rel         Relation
	AnchorIsSrc bool
	Edges       int64
}

// GenRelations returns the relations of the graph o describes, in
// canonical-name order.
func (o *HeteroGenOptions) GenRelations() []GenRelation {
	var out []GenRelation
	for _, sp := range o.specs() {
		out = append(out, GenRelation{Rel: sp.rel, AnchorIsSrc: sp.anchorIsSrc, Edges: sp.edges})
	}
	return out
}

// DefaultHeteroGenOptions are the one source of the heterogeneous
// generator's defaults, taken where a field is zero: ogbn-mag's counts and
// classes (MagGenOptions(1)) and split shares, and a weak planted signal
// (features alone classify few papers).
func DefaultHeteroGenOptions() HeteroGenOptions {
	o := MagGenOptions(1)
	o.Homophily, o.FeatSep, o.PowerLaw = 0.7, 2, 2.5
	o.TrainFrac, o.ValidFrac = 629571.0/MagPapers, 64879.0/MagPapers
	return o
}

// Validate reports options GenerateHetero cannot build, a zero field read
// as its default. GenerateHetero (and the chunked generator's NewHetero,
// through Fill) checks them once, as it fills them.
func (o HeteroGenOptions) Validate() error { return o.fill() }

func (o *HeteroGenOptions) fill() error {
	d := DefaultHeteroGenOptions()
	for _, p := range []struct{ v, def *int64 }{
		{&o.Papers, &d.Papers}, {&o.Authors, &d.Authors}, {&o.Institutions, &d.Institutions}, {&o.Fields, &d.Fields},
		{&o.Cites, &d.Cites}, {&o.Writes, &d.Writes}, {&o.Affiliations, &d.Affiliations}, {&o.Topics, &d.Topics},
	} {
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	if o.Classes == 0 {
		o.Classes = d.Classes
	}
	if o.FeatDim == 0 {
		o.FeatDim = d.FeatDim
	}
	for _, p := range []struct{ v, def *float64 }{{&o.Homophily, &d.Homophily}, {&o.FeatSep, &d.FeatSep}, {&o.PowerLaw, &d.PowerLaw}} {
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.TrainFrac == 0 && o.ValidFrac == 0 {
		o.TrainFrac, o.ValidFrac = d.TrainFrac, d.ValidFrac
	}
	for _, c := range []struct {
		name string
		n    int64
	}{{"papers", o.Papers}, {"authors", o.Authors}, {"institutions", o.Institutions}, {"fields", o.Fields}} {
		if c.n < 1 || c.n >= 1<<31 {
			return fmt.Errorf("gen: %d %s, want 1..2^31-1", c.n, c.name)
		}
	}
	switch {
	case o.Classes < 1:
		return fmt.Errorf("gen: classes %d must be at least 1", o.Classes)
	case o.Papers < 2*int64(o.Classes) || o.Papers < 4:
		return fmt.Errorf("gen: %d papers are too few for %d classes (need at least max(4, 2·classes))", o.Papers, o.Classes)
	case o.FeatDim < 1:
		return fmt.Errorf("gen: feature dimension %d must be at least 1", o.FeatDim)
	case !(o.Homophily >= 0 && o.Homophily <= 1):
		return fmt.Errorf("gen: homophily %v outside [0,1]", o.Homophily)
	case o.FeatSep < 0 || math.IsNaN(o.FeatSep) || math.IsInf(o.FeatSep, 0):
		return fmt.Errorf("gen: feature separation %v must be a non-negative number", o.FeatSep)
	case !(o.PowerLaw > 2) || math.IsInf(o.PowerLaw, 0):
		return fmt.Errorf("gen: power-law exponent %v must be > 2 (finite mean degree)", o.PowerLaw)
	case !(o.TrainFrac >= 0 && o.ValidFrac >= 0 && o.TrainFrac+o.ValidFrac < 1):
		return fmt.Errorf("gen: split fractions train %v valid %v must be >= 0 and leave room for test", o.TrainFrac, o.ValidFrac)
	}
	train := int64(math.Round(o.TrainFrac * float64(o.Papers)))
	valid := int64(math.Round(o.ValidFrac * float64(o.Papers)))
	if train < 1 || o.Papers-train-valid < 1 {
		return fmt.Errorf("gen: split of %d papers by fractions %v/%v leaves no train or no test paper", o.Papers, o.TrainFrac, o.ValidFrac)
	}
	for _, r := range o.specs() {
		pairs := float64(o.count(r.src)) * float64(o.count(r.dst))
		if r.src == r.dst {
			pairs -= float64(o.count(r.src))
		}
		if r.edges < 0 || float64(r.edges) > pairs/4 {
			// Beyond a quarter of all pairs, redrawing duplicates converges slowly.
			return fmt.Errorf("gen: %d %s edges, want 0..%d (a quarter of the possible pairs)", r.edges, r.rel.Name, int64(pairs/4))
		}
	}
	return nil
}

// HeteroGenMemory validates opt like GenerateHetero and estimates the
// memory GenerateHetero and WriteHetero need, in bytes (float64: absurd
// sizes give a huge number, not an overflow): the paper features, about 32
// bytes per edge (keys, the sort buffer, the adjacency) and about 64 bytes
// per node (communities, weights, alias tables, adjacency offsets for four
// relations).
func HeteroGenMemory(opt HeteroGenOptions) (float64, error) {
	if err := opt.fill(); err != nil {
		return 0, err
	}
	nodes := float64(opt.Papers + opt.Authors + opt.Institutions + opt.Fields)
	edges := float64(opt.Cites + opt.Writes + opt.Affiliations + opt.Topics)
	return float64(opt.Papers)*float64(opt.FeatDim)*4 + edges*32 + nodes*64 + float64(opt.Classes*opt.FeatDim)*8, nil
}

// Type indices of the sorted node types.
const (
	tAuthor = iota
	tField
	tInstitution
	tPaper
)

func (o *HeteroGenOptions) count(t int) int64 {
	return [...]int64{o.Authors, o.Fields, o.Institutions, o.Papers}[t]
}

// specs returns the relations in canonical-name order (their index is the
// edge type).
func (o *HeteroGenOptions) specs() []relSpec {
	return []relSpec{
		{Relation{TypeAuthor, "affiliated_with", TypeInstitution}, tAuthor, tInstitution, true, o.Affiliations, "affiliations"},
		{Relation{TypeAuthor, "writes", TypePaper}, tAuthor, tPaper, false, o.Writes, "writes"},
		{Relation{TypePaper, "cites", TypePaper}, tPaper, tPaper, true, o.Cites, "cites"},
		{Relation{TypePaper, "has_topic", TypeField}, tPaper, tField, true, o.Topics, "topics"},
	}
}

// Random streams of the heterogeneous generator (genFeatures and genSplit
// use streamCentroids, streamFeatures and streamSplit).
const (
	streamHetClass  = 64  // + type
	streamHetWeight = 72  // + type
	streamHetEdges  = 128 // + relation*64 + round
)

// hetType is one node type's planted structure and samplers.
type hetType struct {
	class    []int32   // community per node
	members  [][]int32 // nodes per community
	global   *alias    // by weight over the type
	perClass []*alias  // by weight within each community (nil if empty)
	share    []float64 // each community's share of the type's weight
}

// GenerateHetero builds the graph described by opt (see HeteroGenOptions).
// It is deterministic: the same options give the same dataset whatever
// Workers or GOMAXPROCS.
func GenerateHetero(opt HeteroGenOptions) (*HeteroDataset, error) {
	d, _, err := GenerateHeteroStats(opt)
	return d, err
}

// GenerateHeteroStats is GenerateHetero that also returns the statistics
// of the planted structure and the options with defaults filled in.
func GenerateHeteroStats(opt HeteroGenOptions) (*HeteroDataset, *HeteroGenStats, error) {
	if err := opt.fill(); err != nil {
		return nil, nil, err
	}
	k := opt.Classes
	types := make([]*hetType, 4)
	forEachChunk(opt.Workers, 4, func(t int64) {
		types[t] = plantType(opt, int(t), opt.count(int(t)))
	})
	specs := opt.specs()
	keys := make([][]uint64, len(specs))
	st := &HeteroGenStats{Edges: map[string]int64{}, EdgeHomophily: map[string]float64{}}
	for r, sp := range specs {
		var ks []uint64
		round := 0
		for int64(len(ks)) < sp.edges {
			if round == 64 {
				return nil, nil, fmt.Errorf("gen: only %d of %d distinct %s edges after %d rounds; lower --%s", len(ks), sp.edges, sp.rel.Name, round, sp.countFlagLabel)
			}
			ks = append(ks, sampleRelation(opt, r, sp, round, sp.edges-int64(len(ks)), types)...)
			parallelSort(ks, opt.Workers)
			ks = slices.Compact(ks)
			round++
		}
		keys[r] = slices.Clip(ks)
		st.Rounds = max(st.Rounds, round)
		same := int64(0)
		for _, key := range keys[r] {
			if types[sp.dst].class[key>>32] == types[sp.src].class[key&0xffffffff] {
				same++
			}
		}
		st.Edges[sp.rel.String()] = int64(len(keys[r]))
		if len(keys[r]) > 0 {
			st.EdgeHomophily[sp.rel.String()] = float64(same) / float64(len(keys[r]))
		}
	}
	counts := map[string]int64{TypeAuthor: opt.Authors, TypeField: opt.Fields, TypeInstitution: opt.Institutions, TypePaper: opt.Papers}
	rels := make([]Relation, len(specs))
	for i, sp := range specs {
		rels[i] = sp.rel
	}
	schema, err := NewSchema(counts, rels)
	if err != nil {
		return nil, nil, err
	}
	labels := types[tPaper].class
	g := GenOptions{Nodes: opt.Papers, Classes: k, FeatDim: opt.FeatDim, FeatSep: opt.FeatSep, Seed: opt.Seed, Workers: opt.Workers}
	feat, cen := genFeatures(g, labels)
	g.Train = int64(math.Round(opt.TrainFrac * float64(opt.Papers)))
	g.Valid = int64(math.Round(opt.ValidFrac * float64(opt.Papers)))
	g.Test = opt.Papers - g.Train - g.Valid
	split := genSplit(g)
	d := &HeteroDataset{
		Name:       "synthetic-mag",
		Schema:     schema,
		In:         buildRelIn(schema, keys, opt.Workers),
		Feat:       map[string]*Features{TypePaper: feat},
		Labels:     map[string][]int32{TypePaper: labels},
		NumClasses: map[string]int{TypePaper: k},
		Splits:     map[string]map[string]*Split{GenSplitName: {TypePaper: split}},
	}
	plantedHetero(opt, st, specs, keys, types, feat, cen, split.Test)
	addHeteroGenTimes(d, opt)
	return d, st, nil
}

// plantType assigns communities and weights to the n nodes of type t and
// builds its samplers.
func plantType(opt HeteroGenOptions, t int, n int64) *hetType {
	k := opt.Classes
	// Community sizes ∝ (c+1)^-0.5, at least min(2, n/k) each.
	w := make([]float64, k)
	var sum float64
	for c := range w {
		w[c] = 1 / math.Sqrt(float64(c+1))
		sum += w[c]
	}
	base := min(2, n/int64(k))
	rest := n - base*int64(k)
	cnt := make([]int64, k)
	used := int64(0)
	for c := range cnt {
		cnt[c] = base + int64(float64(rest)*w[c]/sum)
		used += cnt[c]
	}
	for c := 0; used < n; c = (c + 1) % k {
		cnt[c]++
		used++
	}
	h := &hetType{class: make([]int32, n), members: make([][]int32, k), perClass: make([]*alias, k), share: make([]float64, k)}
	pos := 0
	for c, m := range cnt {
		for range m {
			h.class[pos] = int32(c)
			pos++
		}
	}
	r := newRand(opt.Seed, streamHetClass+uint64(t), 0)
	r.Shuffle(len(h.class), func(i, j int) { h.class[i], h.class[j] = h.class[j], h.class[i] })

	// Weights: Pareto(γ-1) with minimum 1, capped at √n as in Generate.
	theta := make([]float32, n)
	r = newRand(opt.Seed, streamHetWeight+uint64(t), 0)
	thetaCap := math.Max(2, math.Sqrt(float64(n)))
	inv := -1 / (opt.PowerLaw - 1)
	for v := range theta {
		theta[v] = float32(math.Min(thetaCap, math.Pow(1-r.Float64(), inv)))
	}
	for v, c := range h.class {
		h.members[c] = append(h.members[c], int32(v))
	}
	h.global = newAlias(theta)
	var total float64
	for c, mem := range h.members {
		if len(mem) == 0 {
			continue
		}
		cw := make([]float32, len(mem))
		for i, v := range mem {
			cw[i] = theta[v]
			h.share[c] += float64(theta[v])
		}
		total += h.share[c]
		h.perClass[c] = newAlias(cw)
	}
	for c := range h.share {
		h.share[c] /= total
	}
	return h
}

// sampleRelation draws `need` edges of relation r as keys dst<<32|src
// (type-local ids), in chunks of 1<<20 edges, each from its own stream.
func sampleRelation(opt HeteroGenOptions, r int, sp relSpec, round int, need int64, types []*hetType) []uint64 {
	const chunk = 1 << 20
	anchorT, otherT := types[sp.dst], types[sp.src]
	if sp.anchorIsSrc {
		anchorT, otherT = types[sp.src], types[sp.dst]
	}
	out := make([]uint64, need)
	forEachChunk(opt.Workers, (need+chunk-1)/chunk, func(c int64) {
		rng := newRand(opt.Seed, streamHetEdges+uint64(r)*64+uint64(round), uint64(c))
		for i := c * chunk; i < min(need, (c+1)*chunk); i++ {
			var a, o int32
			for try := 0; ; try++ {
				a = anchorT.global.sample(rng)
				cl := anchorT.class[a]
				if pc := otherT.perClass[cl]; try < 16 && pc != nil && rng.Float64() < opt.Homophily {
					o = otherT.members[cl][pc.sample(rng)]
				} else {
					o = otherT.global.sample(rng)
				}
				if sp.src != sp.dst || a != o {
					break
				}
			}
			src, dst := o, a
			if sp.anchorIsSrc {
				src, dst = a, o
			}
			out[i] = uint64(dst)<<32 | uint64(src)
		}
	})
	return out
}

// plantedHetero scores the two classifiers of HeteroGenStats on up to
// 20,000 test papers.
func plantedHetero(opt HeteroGenOptions, st *HeteroGenStats, specs []relSpec, keys [][]uint64, types []*hetType,
	feat *Features, cen []float64, test []int64) {
	k, dim := opt.Classes, opt.FeatDim
	eval := test[:min(len(test), 20000)]
	st.EvalNodes = len(eval)
	slot := make([]int32, opt.Papers) // eval index + 1, or 0
	for i, v := range eval {
		slot[v] = int32(i + 1)
	}
	papers := types[tPaper]
	score := make([]float64, len(eval)*k)
	// An edge from an end of community c' to paper v of unknown community
	// c has likelihood ∝ h·[c'=c]/share_T(c) + (1-h), T the type of the
	// end drawn second (its probability carries the community factor).
	table := func(t *hetType) []float64 {
		tab := make([]float64, k*k) // [c'][c]
		for c2 := 0; c2 < k; c2++ {
			for c := 0; c < k; c++ {
				p := 1 - opt.Homophily
				if c == c2 {
					if t.share[c] > 0 {
						p += opt.Homophily / t.share[c]
					} else {
						p = 1
					}
				}
				tab[c2*k+c] = math.Log(p)
			}
		}
		return tab
	}
	add := func(v int64, other int32, tab []float64) {
		if s := slot[v]; s != 0 {
			row := score[int(s-1)*k:][:k]
			for c, x := range tab[int(other)*k:][:k] {
				row[c] += x
			}
		}
	}
	for r, sp := range specs {
		if sp.src != tPaper && sp.dst != tPaper {
			continue
		}
		second := types[sp.src]
		if sp.anchorIsSrc {
			second = types[sp.dst]
		}
		tab := table(second)
		for _, key := range keys[r] {
			s, d := int64(key&0xffffffff), int64(key>>32)
			if sp.dst == tPaper {
				add(d, types[sp.src].class[s], tab)
			}
			if sp.src == tPaper {
				add(s, types[sp.dst].class[d], tab)
			}
		}
	}
	logPrior := make([]float64, k)
	for _, l := range papers.class {
		logPrior[l]++
	}
	for c := range logPrior {
		logPrior[c] = math.Log(math.Max(logPrior[c], 0.5) / float64(opt.Papers))
	}
	st.FeatureOnlyAcc, st.OracleAcc = plantedAccuracy(feat, papers.class, eval, cen, logPrior, score, k, dim)
}

// DescribeHetero returns a short human-readable description of a generated
// graph (the README.md the command line writes beside it).
func DescribeHetero(opt HeteroGenOptions, st *HeteroGenStats) string {
	_ = opt.fill() // options that generated a graph are valid
	var b strings.Builder
	fmt.Fprintf(&b, "# Synthetic heterogeneous graph (mpignn gen --hetero)\n\n")
	fmt.Fprintf(&b, "ogbn-mag-shaped: planted communities shared by all node types; a paper's label is its community.\n\n")
	fmt.Fprintf(&b, "- nodes: paper %d, author %d, institution %d, field_of_study %d\n", opt.Papers, opt.Authors, opt.Institutions, opt.Fields)
	for _, sp := range opt.specs() {
		name := sp.rel.String()
		fmt.Fprintf(&b, "- %s: %d edges, edge homophily %.4f\n", name, st.Edges[name], st.EdgeHomophily[name])
	}
	fmt.Fprintf(&b, "- classes %d, paper feature dim %d, seed %d, homophily %g, feature separation %g, power law %g\n",
		opt.Classes, opt.FeatDim, opt.Seed, opt.Homophily, opt.FeatSep, opt.PowerLaw)
	fmt.Fprintf(&b, "- split %q on papers: train fraction %.4f, valid %.4f, test the rest\n", GenSplitName, opt.TrainFrac, opt.ValidFrac)
	fmt.Fprintf(&b, "- planted accuracy on %d test papers: features-only Bayes %.4f, features + neighbour communities %.4f\n",
		st.EvalNodes, st.FeatureOnlyAcc, st.OracleAcc)
	fmt.Fprintf(&b, "\nRead with graph.ReadOGBHetero(dir, graph.DefaultHeteroReadOptions()) (reverse relations are added on load).\n")
	return b.String()
}
