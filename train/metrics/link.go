package metrics

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Ranking metrics of link prediction with the semantics of OGB's
// ogb/linkproppred/evaluate.py, so that figures compare with published
// ones: MRR is its _eval_mrr (ogbl-citation2's metric when the negatives
// are the split's stored target_node_neg) and HitsAtK its _eval_hits
// (ogbl-collab, -ppa, -ddi when the pool is the split's stored edge_neg);
// ogb_test.go recomputes both in numpy. One difference on purpose: OGB
// averages 1/rank in float32, these functions in float64. They are pure functions of the gathered scores: the distributed
// evaluator gathers every rank's scores (in a rank-count independent order)
// and calls them on one set.

// NumHitsK is the number of Hits@K cut-offs reported for link prediction.
const NumHitsK = 5

// HitsKs returns the Hits@K cut-offs reported for link prediction, in the
// order of every Hits array of this package (a fresh array: nothing can
// modify the package's copy).
func HitsKs() [NumHitsK]int { return [NumHitsK]int{1, 3, 10, 50, 100} }

// LinkFigures are the ranking figures of one link evaluation.
type LinkFigures struct {
	AUC float64 `json:"auc"`
	MRR float64 `json:"mrr"`
	// Hits[i] is Hits@K for K = HitsKs()[i].
	Hits [NumHitsK]float64 `json:"hits"`
}

// AUC returns the area under the ROC curve of positive scores pos against
// negative scores neg: the probability that a random positive outscores a
// random negative, a tie counting half (as sklearn's roc_auc_score, which
// OGB uses). It sorts once (O((n+m) log(n+m))) and sums mid-ranks. It
// returns NaN when either side is empty (the AUC is undefined) and ranks a
// NaN score below every number.
func AUC(pos, neg []float32) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	type scored struct {
		s   float32
		pos bool
	}
	all := make([]scored, 0, len(pos)+len(neg))
	for _, s := range pos {
		all = append(all, scored{s, true})
	}
	for _, s := range neg {
		all = append(all, scored{s, false})
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(a.s, b.s) })
	// Mann-Whitney: for each run of tied scores, every positive in it beats
	// the negatives below the run and ties (half) with those inside.
	wins := 0.0
	below := 0 // negatives strictly below the current run
	for i := 0; i < len(all); {
		j, p, q := i, 0, 0
		for ; j < len(all) && cmp.Compare(all[j].s, all[i].s) == 0; j++ {
			if all[j].pos {
				p++
			} else {
				q++
			}
		}
		wins += float64(p) * (float64(below) + 0.5*float64(q))
		below += q
		i = j
	}
	return wins / (float64(len(pos)) * float64(len(neg)))
}

// RankFigures are the per-positive ranking figures of MRR.
type RankFigures struct {
	MRR float64
	// Hits[i] is the fraction of positives ranked within the top K =
	// HitsKs()[i] among their own negatives.
	Hits [NumHitsK]float64
}

// MRR ranks each positive score pos[i] against its own k negatives
// neg[i*k:(i+1)*k] as OGB's _eval_mrr does: the optimistic rank counts the
// negatives scoring strictly higher, the pessimistic rank those scoring at
// least as high, and the rank is their mean plus one (ties count half). It
// returns the mean reciprocal rank and Hits@K (rank <= K) for every K of
// HitsKs. An empty pos, k < 1 or len(neg) != k·len(pos) is an error.
func MRR(pos, neg []float32, k int) (RankFigures, error) {
	var r RankFigures
	switch {
	case len(pos) == 0:
		return r, errors.New("mrr: no positive scores")
	case k < 1:
		return r, fmt.Errorf("mrr: %d negatives per positive, want at least 1", k)
	case len(neg) != k*len(pos):
		return r, fmt.Errorf("mrr: %d negative scores for %d positives with %d each", len(neg), len(pos), k)
	}
	ks := HitsKs()
	for i, p := range pos {
		opt, pess := 0, 0
		for _, s := range neg[i*k : (i+1)*k] {
			if s > p {
				opt++
			}
			if s >= p {
				pess++
			}
		}
		rank := 0.5*float64(opt+pess) + 1
		r.MRR += 1 / rank
		for j, kk := range ks {
			if rank <= float64(kk) {
				r.Hits[j]++
			}
		}
	}
	n := float64(len(pos))
	r.MRR /= n
	for j := range r.Hits {
		r.Hits[j] /= n
	}
	return r, nil
}

// HitsAtK is OGB's _eval_hits (ogbl-collab, ogbl-ppa, ...): the fraction of
// positive scores strictly above the k-th largest score of a shared pool of
// negatives, and 1 when the pool has fewer than k scores. It returns NaN
// for k < 1 or no positives (undefined).
func HitsAtK(pos, pool []float32, k int) float64 {
	if k < 1 || len(pos) == 0 {
		return math.NaN()
	}
	if len(pool) < k {
		return 1
	}
	sorted := slices.Clone(pool)
	slices.SortFunc(sorted, func(a, b float32) int { return cmp.Compare(b, a) })
	kth := sorted[k-1]
	hits := 0
	for _, p := range pos {
		if p > kth {
			hits++
		}
	}
	return float64(hits) / float64(len(pos))
}

// linkFiguresJSON is LinkFigures on the wire: JSON has no NaN, and an
// undefined figure (the AUC of a split without negatives, say) must not
// make a checkpoint unwritable, so non-finite values travel as null.
type linkFiguresJSON struct {
	AUC  *float64           `json:"auc"`
	MRR  *float64           `json:"mrr"`
	Hits [NumHitsK]*float64 `json:"hits"`
}

// MarshalJSON implements json.Marshaler (non-finite figures as null).
func (f LinkFigures) MarshalJSON() ([]byte, error) {
	w := linkFiguresJSON{AUC: finitePtr(f.AUC), MRR: finitePtr(f.MRR)}
	for i, h := range f.Hits {
		w.Hits[i] = finitePtr(h)
	}
	return json.Marshal(w)
}

// UnmarshalJSON implements json.Unmarshaler (null reads as NaN).
func (f *LinkFigures) UnmarshalJSON(data []byte) error {
	var w linkFiguresJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("link figures: %w", err)
	}
	f.AUC, f.MRR = OrNaN(w.AUC), OrNaN(w.MRR)
	for i, h := range w.Hits {
		f.Hits[i] = OrNaN(h)
	}
	return nil
}

// finitePtr returns a pointer to a copy of v, or nil if v is NaN or
// infinite (absent from JSON).
func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
