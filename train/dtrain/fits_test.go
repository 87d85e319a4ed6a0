package dtrain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// TestCheckFitsNamesFields: a model too large for any machine is refused
// with the fields to lower named as fields, which a command line spells as
// its flags.
func TestCheckFitsNamesFields(t *testing.T) {
	c := comm(t)
	err := checkFits(c, train.MemoryEstimate{Params: 1 << 50}, "lower {Model.Hidden} or {Loader.Batch}")
	require.Error(t, err)
	var fe *config.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Model.Hidden", fe.Field)
	assert.Contains(t, err.Error(), "more than any machine can address; lower Model.Hidden or Loader.Batch")
	flags := map[string]string{"Model.Hidden": "--hidden", "Loader.Batch": "--batch"}
	assert.Contains(t, config.Render(err, func(p string) string { return flags[p] }), "; lower --hidden or --batch")
	require.NoError(t, checkFits(c, train.MemoryEstimate{Params: 1}, "lower {Loader.Batch}"))
}

// TestStoreParts: a rank counts its part's store, and on shared parts its
// share of the node's one copy (the part over the part's ranks) with the
// block index over its own nodes; the degree table is held once per node on
// either layout, so a rank counts it over its node's ranks.
func TestStoreParts(t *testing.T) {
	infos := []partition.PartInfo{{Nodes: 600, Edges: 6000}, {Nodes: 400, Edges: 2000}}
	own := &partition.Meta{NumParts: 2, NumNodes: 1000, FeatDim: 10, Offsets: []int64{0, 600, 1000}, Parts: infos}
	shared := own.ShareView([]int{0, 3, 4}, []int64{0, 100, 300, 600, 1000})
	bytes := func(parts []train.MemoryPart) map[string]float64 {
		m := map[string]float64{}
		for _, p := range parts {
			m[p.Name] = p.Bytes
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		meta      *partition.Meta
		rank      int
		nodeRanks int
		want      map[string]float64
	}{
		{"a part per rank", own, 0, 1, map[string]float64{
			"graph share": 16*600 + 16*6000, "feature share": 4 * 600 * 10, "block index": 8 * 600, "degree table": 16 * 1000}},
		{"a part per rank, 2 ranks a node", own, 1, 2, map[string]float64{
			"graph share": 16*400 + 16*2000, "feature share": 4 * 400 * 10, "block index": 8 * 400, "degree table": 16 * 1000 / 2.0}},
		{"one of a part's 3 ranks", shared, 1, 3, map[string]float64{
			"graph share": (16*600 + 16*6000) / 3.0, "feature share": 4 * 600 * 10 / 3.0, "block index": 8 * 200, "degree table": 16 * 1000 / 3.0}},
		{"a part's only rank", shared, 3, 1, map[string]float64{
			"graph share": 16*400 + 16*2000, "feature share": 4 * 400 * 10, "block index": 8 * 400, "degree table": 16 * 1000}},
		{"no such rank", own, 2, 1, map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := bytes(storeParts(tc.meta, tc.rank, tc.nodeRanks, dsample.StoreOptions{Transport: collectives.TransportRMA}))
			require.Len(t, got, len(tc.want))
			for k, v := range tc.want {
				assert.InDelta(t, v, got[k], 1e-6, k)
			}
		})
	}
}
