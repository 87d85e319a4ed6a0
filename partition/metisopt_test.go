package partition

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMetisOptionsValidate: unknown or repeated balance names and an
// imbalance METIS cannot take are refused before the graph is built, by
// Validate and so by Metis (even for one part, which skips METIS).
func TestMetisOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  MetisOptions
		want string
	}{
		{"defaults", MetisOptions{}, ""},
		{"every name", MetisOptions{Balance: []string{BalanceNode, BalanceTrain, BalanceValid, BalanceTest, BalanceDegree}, Imbalance: 1.001}, ""},
		{"no constraints", MetisOptions{Balance: []string{}}, ""},
		{"unknown name", MetisOptions{Balance: []string{"node", "edges"}}, `unknown balance constraint "edges" (want node, train, valid, test, degree)`},
		{"repeated name", MetisOptions{Balance: []string{"train", "node", "train"}}, `balance constraint "train" listed twice`},
		{"imbalance below 1.001", MetisOptions{Imbalance: 1}, "imbalance 1 must be >= 1.001"},
		{"negative imbalance", MetisOptions{Imbalance: -2}, "imbalance -2 must be >= 1.001"},
		{"nan imbalance", MetisOptions{Imbalance: math.NaN()}, "imbalance NaN must be >= 1.001"},
		{"infinite imbalance", MetisOptions{Imbalance: math.Inf(1)}, "imbalance +Inf must be >= 1.001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := communityDataset(60, 2, 4)
			_, merr := Metis(d, 1, tc.opt)
			if tc.want == "" {
				require.NoError(t, tc.opt.Validate())
				require.NoError(t, merr)
				return
			}
			require.EqualError(t, tc.opt.Validate(), tc.want)
			require.EqualError(t, merr, "metis: "+tc.want)
		})
	}
}
