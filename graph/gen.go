package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// GenSplitName is the split directory the generator writes
// (split/random/{train,valid,test}.csv.gz): a uniformly random split.
const GenSplitName = "random"

// GenOptions describe a synthetic node-classification graph: a
// degree-corrected stochastic block model whose blocks are the classes.
//
// Every node v gets a class c(v) and a weight θ(v) drawn from a power law
// (Pareto with density exponent PowerLaw, so degrees are heavy-tailed). Each
// undirected edge is, with probability Homophily, drawn inside one class
// (class chosen by its total weight, both ends by weight within it) and
// otherwise between two nodes drawn by weight from the whole graph. Self
// loops and duplicates are redrawn, so the graph has exactly
// round(Nodes·AvgDegree/2) distinct undirected edges. Features are the class
// centroid plus unit Gaussian noise; centroids are random with pairwise
// distance about FeatSep·√2 noise units, so the features alone classify
// only part of the nodes and the neighbourhood (mostly of the same class)
// is needed for the rest.
type GenOptions struct {
	Nodes     int64
	AvgDegree float64 // mean undirected degree = directed edges / nodes
	Classes   int
	FeatDim   int
	Seed      uint64

	// Zero Homophily, FeatSep and PowerLaw mean DefaultGenOptions'.
	Homophily float64 // probability an edge is planted inside a class
	FeatSep   float64 // centroid separation in noise units
	PowerLaw  float64 // degree density exponent γ > 2

	// Split sizes: counts win over fractions when positive. By default
	// (all zero) DefaultGenOptions' fractions, and test takes the rest.
	TrainFrac, ValidFrac float64
	Train, Valid, Test   int64

	Workers int // 0 = GOMAXPROCS

	// EdgeTime and NodeTime make WriteSynthetic also write
	// raw/edge_time.csv.gz and raw/node_time.csv.gz: times uniform in
	// [0, GenTimeRange) keyed by (Seed, pair or node). The graph itself
	// does not change.
	EdgeTime, NodeTime bool

	// EdgeFeatDim > 0 makes WriteSynthetic also write
	// raw/edge-feat.csv.gz, that many values per edge line (GenEdgeFeat);
	// NoNodeFeat leaves raw/node-feat.csv.gz out. Together they give an
	// ogbn-proteins-shaped dataset (edge features only). The graph itself
	// does not change.
	EdgeFeatDim int
	NoNodeFeat  bool
}

// GenStats describe a generated graph and what the planted structure
// allows a classifier to reach.
type GenStats struct {
	Edges         int64   // distinct undirected edges (lines written: 2·Edges)
	MaxDegree     int64   // largest undirected degree
	EdgeHomophily float64 // fraction of edges joining nodes of the same class
	Rounds        int     // sampling rounds needed to replace duplicates

	// Accuracies on the first EvalNodes test nodes (ascending id) of two
	// oracles that know the generating parameters: FeatureOnlyAcc is the
	// Bayes classifier of one node's features (what an MLP can reach at
	// best); OracleAcc adds the true labels of all its neighbours (a
	// ceiling a GNN, which sees neighbour features rather than labels,
	// should not exceed by more than noise).
	EvalNodes      int
	FeatureOnlyAcc float64
	OracleAcc      float64
}

// Synthetic is a generated graph. Data.In is nil (building it costs memory
// that writing does not need); call BuildIn for it.
type Synthetic struct {
	Data  *Dataset
	Pairs []uint64 // undirected edges u<v packed as u<<32|v, ascending
	Stats GenStats
	Opt   GenOptions // with defaults filled in
}

// BuildIn returns the symmetric in-adjacency, rows ascending.
func (s *Synthetic) BuildIn() *CSR {
	m := int64(len(s.Pairs))
	src := make([]int64, m)
	dst := make([]int64, m)
	for i, p := range s.Pairs {
		src[i], dst[i] = int64(p>>32), int64(p&0xffffffff)
	}
	return BuildInCSR(s.Data.NumNodes, src, dst, BuildOptions{Undirected: true, Workers: s.Opt.Workers})
}

// DefaultGenOptions are the one source of the generator's defaults:
// Generate takes Homophily, FeatSep, PowerLaw and the split fractions from
// them where o leaves those zero, and the gen command's flags start from
// all of them (the sizes, which Generate requires, included).
func DefaultGenOptions() GenOptions {
	return GenOptions{Nodes: 100000, AvgDegree: 25, Classes: 47, FeatDim: 100,
		Homophily: 0.8, FeatSep: 2, PowerLaw: 2.5, TrainFrac: 0.6, ValidFrac: 0.2}
}

// Validate reports options Generate cannot build, a zero field read as
// its default. Generate (and the chunked generator's New, through Fill)
// checks them once, as it fills them.
func (o GenOptions) Validate() error { return o.fill() }

// Fill validates o and fills in its defaults (the split counts included),
// as Generate does; the chunked generator (graph/chunkgen) shares it.
func (o *GenOptions) Fill() error { return o.fill() }

func (o *GenOptions) fill() error {
	d := DefaultGenOptions()
	if o.Homophily == 0 {
		o.Homophily = d.Homophily
	}
	if o.FeatSep == 0 {
		o.FeatSep = d.FeatSep
	}
	if o.PowerLaw == 0 {
		o.PowerLaw = d.PowerLaw
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case o.Classes < 1:
		return fmt.Errorf("gen: classes %d must be at least 1", o.Classes)
	case o.Nodes < 2*int64(o.Classes) || o.Nodes < 4:
		return fmt.Errorf("gen: %d nodes are too few for %d classes (need at least max(4, 2·classes))", o.Nodes, o.Classes)
	case o.Nodes >= 1<<31:
		return fmt.Errorf("gen: %d nodes exceed the generator's limit of 2^31-1", o.Nodes)
	case o.FeatDim < 1:
		return fmt.Errorf("gen: feature dimension %d must be at least 1", o.FeatDim)
	case o.EdgeFeatDim < 0 || o.EdgeFeatDim > 1<<16:
		return fmt.Errorf("gen: edge feature dimension %d outside [0,%d]", o.EdgeFeatDim, 1<<16)
	case !(o.AvgDegree > 0):
		return fmt.Errorf("gen: average degree %v must be positive", o.AvgDegree)
	case o.AvgDegree > float64(o.Nodes-1)/4:
		// Beyond a quarter of all pairs, redrawing duplicates converges slowly.
		return fmt.Errorf("gen: average degree %v is too dense for %d nodes (at most %v)", o.AvgDegree, o.Nodes, float64(o.Nodes-1)/4)
	case !(o.Homophily >= 0 && o.Homophily <= 1): // NaN fails too
		return fmt.Errorf("gen: homophily %v outside [0,1]", o.Homophily)
	case o.FeatSep < 0 || math.IsNaN(o.FeatSep) || math.IsInf(o.FeatSep, 0):
		return fmt.Errorf("gen: feature separation %v must be a non-negative number", o.FeatSep)
	case !(o.PowerLaw > 2) || math.IsInf(o.PowerLaw, 0):
		return fmt.Errorf("gen: power-law exponent %v must be > 2 (finite mean degree)", o.PowerLaw)
	}
	if o.Train < 0 || o.Valid < 0 || o.Test < 0 {
		return fmt.Errorf("gen: split counts %d/%d/%d must not be negative", o.Train, o.Valid, o.Test)
	}
	if o.Train == 0 && o.Valid == 0 && o.Test == 0 {
		tf, vf := o.TrainFrac, o.ValidFrac
		if tf == 0 && vf == 0 {
			tf, vf = d.TrainFrac, d.ValidFrac
		}
		if !(tf >= 0 && vf >= 0 && tf+vf <= 1) { // NaN fails too
			return fmt.Errorf("gen: split fractions train %v valid %v must be >= 0 and sum to at most 1", tf, vf)
		}
		o.Train = int64(math.Round(tf * float64(o.Nodes)))
		o.Valid = int64(math.Round(vf * float64(o.Nodes)))
		o.Test = o.Nodes - o.Train - o.Valid
	} else if o.Test == 0 {
		o.Test = o.Nodes - o.Train - o.Valid
	}
	if o.Train+o.Valid+o.Test > o.Nodes || o.Test < 0 {
		return fmt.Errorf("gen: split %d/%d/%d needs more than the %d nodes", o.Train, o.Valid, max(o.Test, 0), o.Nodes)
	}
	if o.Train < 1 || o.Test < 1 {
		return fmt.Errorf("gen: split %d/%d/%d needs at least one train and one test node", o.Train, o.Valid, o.Test)
	}
	return nil
}

// GenMemory validates opt like Generate and estimates the memory Generate
// and WriteSynthetic need, in bytes (float64: absurd sizes give a huge
// number, not an overflow): the feature matrix, the class centroids, about
// 24 bytes per undirected edge (the edge list, a round's fresh draws and
// the sort buffer) and about 72 bytes per node (labels, weights, alias
// tables, split permutation, degrees). Callers compare it with the
// machine's memory before anything is allocated.
func GenMemory(opt GenOptions) (float64, error) {
	if err := opt.fill(); err != nil {
		return 0, err
	}
	n, dim := float64(opt.Nodes), float64(opt.FeatDim)
	edges := math.Max(1, math.Round(n*opt.AvgDegree/2))
	return n*dim*4 + float64(opt.Classes)*dim*8 + edges*24 + n*72, nil
}

// Random streams: every random quantity comes from its own PCG stream keyed
// by (seed, purpose, chunk), so results do not depend on Workers.
const (
	streamClasses = iota + 1
	streamWeights
	streamCentroids
	streamFeatures
	streamSplit
	streamEdges // + round, so this must stay last
)

func newRand(seed uint64, stream, chunk uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream<<48|chunk))
}

// Generate builds the synthetic graph described by opt. It is deterministic:
// the same options give the same graph whatever the number of workers.
func Generate(opt GenOptions) (*Synthetic, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	n := opt.Nodes
	k := opt.Classes

	// Classes: sizes mildly skewed (∝ (c+1)^-0.5, like the uneven product
	// categories of ogbn-products but tamer), assigned in random order.
	labels := make([]int32, n)
	{
		w := make([]float64, k)
		var sum float64
		for c := range w {
			w[c] = 1 / math.Sqrt(float64(c+1))
			sum += w[c]
		}
		pos := int64(0)
		for c := 0; c < k; c++ {
			cnt := int64(float64(n-2*int64(k)) * w[c] / sum)
			if c == k-1 {
				cnt = n - pos - 2 // every class gets at least 2 nodes below
			}
			for i := int64(0); i < cnt+2 && pos < n; i++ {
				labels[pos] = int32(c)
				pos++
			}
		}
		r := newRand(opt.Seed, streamClasses, 0)
		r.Shuffle(int(n), func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	}

	// Weights θ(v): Pareto(γ-1) with minimum 1, capped at √n so that no
	// hub needs more neighbours than its class has.
	theta := make([]float32, n)
	{
		r := newRand(opt.Seed, streamWeights, 0)
		thetaCap := math.Max(2, math.Sqrt(float64(n)))
		inv := -1 / (opt.PowerLaw - 1)
		for v := range theta {
			theta[v] = float32(math.Min(thetaCap, math.Pow(1-r.Float64(), inv)))
		}
	}
	members := make([][]int32, k)
	for v, c := range labels {
		members[c] = append(members[c], int32(v))
	}
	global := newAlias(theta)
	classW := make([]float32, k)
	perClass := make([]*alias, k)
	for c, mem := range members {
		w := make([]float32, len(mem))
		for i, v := range mem {
			w[i] = theta[v]
			classW[c] += theta[v]
		}
		perClass[c] = newAlias(w)
	}
	classAlias := newAlias(classW)

	target := int64(math.Round(float64(n) * opt.AvgDegree / 2))
	if target < 1 {
		target = 1
	}
	var pairs []uint64
	rounds := 0
	for int64(len(pairs)) < target {
		if rounds == 64 {
			return nil, fmt.Errorf("gen: only %d of %d distinct edges after %d rounds; lower --avg-degree", len(pairs), target, rounds)
		}
		need := target - int64(len(pairs))
		fresh := sampleEdges(opt, uint64(rounds), need, labels, members, global, classAlias, perClass)
		pairs = append(pairs, fresh...)
		parallelSort(pairs, opt.Workers)
		pairs = slices.Compact(pairs)
		rounds++
	}
	pairs = slices.Clip(pairs)

	feat, centroids := genFeatures(opt, labels)
	split := genSplit(opt)
	d := &Dataset{
		Name:       "synthetic",
		NumNodes:   n,
		Feat:       feat,
		Labels:     labels,
		NumClasses: k,
		Splits:     map[string]*Split{GenSplitName: split},
	}
	s := &Synthetic{Data: d, Pairs: pairs, Opt: opt}
	s.Stats = planted(opt, d, pairs, centroids, classW)
	s.Stats.Rounds = rounds
	return s, nil
}

// sampleEdges draws `need` undirected edges without self loops, in chunks of
// 1<<20 edges, each chunk from its own stream.
func sampleEdges(opt GenOptions, round uint64, need int64, labels []int32, members [][]int32,
	global, classAlias *alias, perClass []*alias) []uint64 {
	const chunk = 1 << 20
	out := make([]uint64, need)
	forEachChunk(opt.Workers, (need+chunk-1)/chunk, func(c int64) {
		r := newRand(opt.Seed, streamEdges+round, uint64(c))
		for i := c * chunk; i < min(need, (c+1)*chunk); i++ {
			var u, v int32
			for try := 0; ; try++ {
				if try < 16 && r.Float64() < opt.Homophily {
					cl := classAlias.sample(r)
					u = members[cl][perClass[cl].sample(r)]
					v = members[cl][perClass[cl].sample(r)]
				} else {
					u, v = int32(global.sample(r)), int32(global.sample(r))
				}
				if u != v {
					break
				}
			}
			if u > v {
				u, v = v, u
			}
			out[i] = uint64(u)<<32 | uint64(v)
		}
	})
	return out
}

// forEachChunk calls fn(c) for c in [0, nChunks) on up to workers
// goroutines, handing out chunks in order. Each chunk seeds its own random
// stream from its index, so the output does not depend on which goroutine
// runs which chunk.
func forEachChunk(workers int, nChunks int64, fn func(c int64)) {
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				c := next
				next++
				mu.Unlock()
				if c >= nChunks {
					return
				}
				fn(c)
			}
		}()
	}
	wg.Wait()
}

// parallelSort sorts x using up to `workers` goroutines: sort pieces, then
// merge pairs of pieces.
func parallelSort(x []uint64, workers int) {
	if workers < 2 || len(x) < 1<<16 {
		slices.Sort(x)
		return
	}
	pieces := 2
	for pieces < workers {
		pieces *= 2
	}
	bounds := make([]int, pieces+1)
	for i := range bounds {
		bounds[i] = len(x) * i / pieces
	}
	var wg sync.WaitGroup
	for i := 0; i < pieces; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.Sort(x[bounds[i]:bounds[i+1]])
		}()
	}
	wg.Wait()
	buf := make([]uint64, len(x))
	src, dst := x, buf
	for width := 1; width < pieces; width *= 2 {
		for i := 0; i < pieces; i += 2 * width {
			lo, mid, hi := bounds[i], bounds[min(i+width, pieces)], bounds[min(i+2*width, pieces)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				mergeInto(dst[lo:hi], src[lo:mid], src[mid:hi])
			}()
		}
		wg.Wait()
		src, dst = dst, src
	}
	if &src[0] != &x[0] {
		copy(x, src)
	}
}

func mergeInto(dst, a, b []uint64) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			dst[k] = a[i]
			i++
		} else {
			dst[k] = b[j]
			j++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// genFeatures returns centroid + N(0,1) noise rounded to 1e-3 (so the text
// files stay short and parse back exactly), and the centroids.
func genFeatures(opt GenOptions, labels []int32) (*Features, []float64) {
	dim := opt.FeatDim
	cen := make([]float64, opt.Classes*dim)
	r := newRand(opt.Seed, streamCentroids, 0)
	scale := opt.FeatSep / math.Sqrt(float64(dim))
	for i := range cen {
		cen[i] = r.NormFloat64() * scale
	}
	n := opt.Nodes
	f := &Features{Dim: dim, Data: make([]float32, n*int64(dim))}
	const chunk = 1 << 14
	forEachChunk(opt.Workers, (n+chunk-1)/chunk, func(c int64) {
		r := newRand(opt.Seed, streamFeatures, uint64(c))
		for v := c * chunk; v < min(n, (c+1)*chunk); v++ {
			centroid := cen[int(labels[v])*dim : int(labels[v]+1)*dim]
			row := f.Row(v)
			for j := range row {
				row[j] = float32(math.Round((centroid[j]+r.NormFloat64())*1000)) / 1000
			}
		}
	})
	return f, cen
}

// genSplit draws a uniformly random train/valid/test split; each list is
// ascending.
func genSplit(opt GenOptions) *Split {
	perm := make([]int64, opt.Nodes)
	for i := range perm {
		perm[i] = int64(i)
	}
	r := newRand(opt.Seed, streamSplit, 0)
	r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	take := func(lo, cnt int64) []int64 {
		ids := slices.Clone(perm[lo : lo+cnt])
		slices.Sort(ids)
		return ids
	}
	return &Split{
		Train: take(0, opt.Train),
		Valid: take(opt.Train, opt.Valid),
		Test:  take(opt.Train+opt.Valid, opt.Test),
	}
}

// planted measures the homophily and degrees, and scores the two oracle
// classifiers (see GenStats) on up to 100,000 test nodes.
func planted(opt GenOptions, d *Dataset, pairs []uint64, cen []float64, classW []float32) GenStats {
	st := GenStats{Edges: int64(len(pairs))}
	n, k, dim := d.NumNodes, opt.Classes, opt.FeatDim
	deg := make([]int32, n)
	same := int64(0)
	for _, p := range pairs {
		u, v := p>>32, p&0xffffffff
		deg[u]++
		deg[v]++
		if d.Labels[u] == d.Labels[v] {
			same++
		}
	}
	for _, x := range deg {
		st.MaxDegree = max(st.MaxDegree, int64(x))
	}
	if len(pairs) > 0 {
		st.EdgeHomophily = float64(same) / float64(len(pairs))
	}
	eval := d.Splits[GenSplitName].Test
	if len(eval) > 100000 {
		eval = eval[:100000]
	}
	st.EvalNodes = len(eval)
	slot := make([]int32, n) // eval index + 1, or 0
	for i, v := range eval {
		slot[v] = int32(i + 1)
	}
	// P(neighbour class c' | own class c) = h·[c'=c] + (1-h)·π(c'), π the
	// classes' weight shares (a global edge picks its ends by weight).
	var wsum float64
	for _, w := range classW {
		wsum += float64(w)
	}
	logNb := make([]float64, k*k) // [c'][c]
	for c2 := 0; c2 < k; c2++ {
		pi := float64(classW[c2]) / wsum
		for c := 0; c < k; c++ {
			p := (1 - opt.Homophily) * pi
			if c == c2 {
				p += opt.Homophily
			}
			logNb[c2*k+c] = math.Log(p)
		}
	}
	nbScore := make([]float64, len(eval)*k)
	for _, p := range pairs {
		u, v := p>>32, p&0xffffffff
		if s := slot[u]; s != 0 {
			row := nbScore[int(s-1)*k:][:k]
			for c, x := range logNb[int(d.Labels[v])*k:][:k] {
				row[c] += x
			}
		}
		if s := slot[v]; s != 0 {
			row := nbScore[int(s-1)*k:][:k]
			for c, x := range logNb[int(d.Labels[u])*k:][:k] {
				row[c] += x
			}
		}
	}
	logPrior := make([]float64, k)
	for _, l := range d.Labels {
		logPrior[l]++
	}
	for c := range logPrior {
		logPrior[c] = math.Log(logPrior[c] / float64(n))
	}
	st.FeatureOnlyAcc, st.OracleAcc = plantedAccuracy(d.Feat, d.Labels, eval, cen, logPrior, nbScore, k, dim)
	return st
}

// plantedAccuracy is the accuracy on the eval nodes of the two Bayes
// oracles of a planted partition (0 without eval nodes): features alone
// (unit-variance Gaussians around the class centroids cen, k rows of dim,
// with the log priors) and features plus the neighbour score (score[i*k+c]
// for eval node i and class c). Ties go to the lowest class.
func plantedAccuracy(feat *Features, labels []int32, eval []int64, cen, logPrior, score []float64, k, dim int) (featOnly, oracle float64) {
	var okF, okO int
	for i, v := range eval {
		x := feat.Row(v)
		bestF, bestO := -1, -1
		var sF, sO float64
		for c := 0; c < k; c++ {
			var dist float64
			for j, mu := range cen[c*dim : (c+1)*dim] {
				t := float64(x[j]) - mu
				dist += t * t
			}
			f := logPrior[c] - dist/2
			o := f + score[i*k+c]
			if bestF < 0 || f > sF {
				bestF, sF = c, f
			}
			if bestO < 0 || o > sO {
				bestO, sO = c, o
			}
		}
		if int32(bestF) == labels[v] {
			okF++
		}
		if int32(bestO) == labels[v] {
			okO++
		}
	}
	if len(eval) == 0 {
		return 0, 0
	}
	return float64(okF) / float64(len(eval)), float64(okO) / float64(len(eval))
}

// alias is Walker's alias table: O(1) sampling from a discrete
// distribution.
type alias struct {
	prob  []float32
	other []int32
}

func newAlias(w []float32) *alias {
	n := len(w)
	a := &alias{prob: make([]float32, n), other: make([]int32, n)}
	var sum float64
	for _, x := range w {
		sum += float64(x)
	}
	scaled := make([]float64, n)
	small := make([]int32, 0, n)
	large := make([]int32, 0, n)
	for i, x := range w {
		scaled[i] = float64(x) * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		a.prob[s] = float32(scaled[s])
		a.other[s] = l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// Leftovers are 1 up to rounding.
	for _, i := range large {
		a.prob[i], a.other[i] = 1, i
	}
	for _, i := range small {
		a.prob[i], a.other[i] = 1, i
	}
	return a
}

func (a *alias) sample(r *rand.Rand) int32 {
	i := r.IntN(len(a.prob))
	if r.Float32() < a.prob[i] {
		return int32(i)
	}
	return a.other[i]
}

// WriteSynthetic writes s in the OGB raw layout under dir (atomically, see
// WriteOGB), every undirected edge as two lines "u,v" and "v,u", plus a
// README.md recording the options and the planted ceilings.
func WriteSynthetic(dir string, s *Synthetic) error {
	m := 2 * int64(len(s.Pairs))
	edge := func(i int64) (int64, int64) {
		p := s.Pairs[i/2]
		u, v := int64(p>>32), int64(p&0xffffffff)
		if i%2 == 1 {
			return v, u
		}
		return u, v
	}
	d := s.Data
	if s.Opt.NoNodeFeat {
		dd := *d
		dd.Feat = nil
		d = &dd
	}
	return writeOGB(dir, d, m, edge, func(tmp string) error {
		if err := writeSyntheticTimes(filepath.Join(tmp, "raw"), s, runtime.GOMAXPROCS(0)); err != nil {
			return err
		}
		if err := writeSyntheticEdgeFeat(filepath.Join(tmp, "raw"), s, runtime.GOMAXPROCS(0)); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, "README.md"), []byte(s.Describe()), 0o644)
	})
}

// Describe returns a short human-readable description of s.
func (s *Synthetic) Describe() string {
	o, st := s.Opt, s.Stats
	var b strings.Builder
	fmt.Fprintf(&b, "# Synthetic graph (mpignn gen)\n\n")
	fmt.Fprintf(&b, "Degree-corrected stochastic block model; classes are the planted communities.\n\n")
	fmt.Fprintf(&b, "- nodes %d, undirected edges %d (edge.csv.gz lines %d, both directions), max degree %d\n", o.Nodes, st.Edges, 2*st.Edges, st.MaxDegree)
	fmt.Fprintf(&b, "- classes %d, feature dim %d, seed %d\n", o.Classes, o.FeatDim, o.Seed)
	fmt.Fprintf(&b, "- homophily parameter %g (measured edge homophily %.4f), feature separation %g, power-law exponent %g\n", o.Homophily, st.EdgeHomophily, o.FeatSep, o.PowerLaw)
	fmt.Fprintf(&b, "- split %q: train %d, valid %d, test %d\n", GenSplitName, o.Train, o.Valid, o.Test)
	fmt.Fprintf(&b, "- planted accuracy on %d test nodes: features-only Bayes %.4f, features + true neighbour labels %.4f\n", st.EvalNodes, st.FeatureOnlyAcc, st.OracleAcc)
	if o.EdgeFeatDim > 0 || o.NoNodeFeat {
		fmt.Fprintf(&b, "- edge features %d per edge line (noise + the ends' classes mod %d), node features written: %v (the planted accuracy above is of the generated node features)\n", o.EdgeFeatDim, max(o.EdgeFeatDim, 1), !o.NoNodeFeat)
	}
	fmt.Fprintf(&b, "\nRead with graph.UndirectedOptions() (or without Undirected: both directions are stored).\n")
	return b.String()
}
