package sample

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTemporalEligible(t *testing.T) {
	ts := []int64{1, 3, 3, 3, 7, 9}
	cases := []struct {
		t            int64
		strict, want int64
		loose        int64
	}{
		{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 1, 0, 1}, {3, 1, 0, 4}, {4, 4, 0, 4},
		{9, 5, 0, 6}, {100, 6, 0, 6}, {1<<63 - 1, 6, 0, 6},
	}
	for _, c := range cases {
		assert.Equal(t, c.strict, Temporal{Strategy: TemporalUniform, Strict: true}.Eligible(ts, c.t), "strict at %d", c.t)
		assert.Equal(t, c.loose, Temporal{Strategy: TemporalUniform}.Eligible(ts, c.t), "at %d", c.t)
	}
	assert.Zero(t, Temporal{Strategy: TemporalLast}.Eligible(nil, 5))
}

func TestTemporalChoose(t *testing.T) {
	k := Key{Seed: 1, Epoch: 2, Batch: 3, Layer: 1, Node: 40}
	last := Temporal{Strategy: TemporalLast}
	uni := Temporal{Strategy: TemporalUniform}
	tests := []struct {
		name    string
		tp      Temporal
		elig    int64
		fan     int
		replace bool
		want    []int64
	}{
		{"last 3 of 10", last, 10, 3, false, []int64{7, 8, 9}},
		{"last all", last, 4, -1, false, []int64{0, 1, 2, 3}},
		{"last more than eligible", last, 2, 5, true, []int64{0, 1}},
		{"nothing eligible", uni, 0, 5, false, nil},
		{"fanout 0", uni, 9, 0, false, nil},
		{"uniform all", uni, 3, 5, false, []int64{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.tp.Choose(k, 5, tc.elig, tc.fan, tc.replace, nil))
		})
	}
	// Uniform draws inside the prefix, from the (key, time) stream: the
	// same key at two times draws differently, at one time identically.
	a := uni.Choose(k, 5, 1000, 10, false, nil)
	require.Len(t, a, 10)
	for _, p := range a {
		require.Less(t, p, int64(1000))
	}
	assert.Equal(t, a, uni.Choose(k, 5, 1000, 10, false, nil))
	assert.NotEqual(t, a, uni.Choose(k, 6, 1000, 10, false, nil))
	assert.NotEqual(t, a, ChoosePositions(k, 1000, 10, false, nil), "temporal and plain choices share a stream")
}

func TestTemporalCodeRoundTrip(t *testing.T) {
	for _, tp := range []Temporal{{}, {Strategy: TemporalUniform}, {Strategy: TemporalUniform, Strict: true}, {Strategy: TemporalLast}, {Strategy: TemporalLast, Strict: true}} {
		got, err := DecodeTemporal(tp.Code())
		require.NoError(t, err)
		if tp.On() {
			assert.Equal(t, tp, got)
		} else {
			assert.False(t, got.On())
		}
	}
	for _, bad := range []int64{3, 8, -1, 4} {
		_, err := DecodeTemporal(bad)
		assert.Error(t, err, "code %d", bad)
	}
	for _, s := range []string{"", "none", "uniform", "last"} {
		_, err := ParseTemporalStrategy(s)
		assert.NoError(t, err)
	}
	_, err := ParseTemporalStrategy("recent")
	assert.ErrorContains(t, err, "want none, uniform or last")
}

// TestBuilderTemporalDedup: a temporal block keeps one node per (id, time),
// sources inherit their destination's time, and edge times line up.
func TestBuilderTemporalDedup(t *testing.T) {
	var bb BlockBuilder
	bb.UseDenseIDs(100) // temporal blocks must ignore the dense index
	bb.SetTemporal(true)
	require.Error(t, bb.Reset([]int64{1}, []int64{1}))
	require.NoError(t, bb.ResetAt([]int64{5, 5, 7}, []int64{5, 5, 7}, []int64{10, 20, 10}))
	require.Error(t, bb.ResetAt([]int64{5, 5}, []int64{5, 5}, []int64{10, 10}), "repeated (node, time)")
	require.NoError(t, bb.ResetAt([]int64{5, 5, 7}, []int64{5, 5, 7}, []int64{10, 20, 10}))
	require.Error(t, bb.AddNeighbors(0, []int64{7}, []int64{7}))
	require.NoError(t, bb.AddNeighborsTimed(0, []int64{7, 9}, []int64{7, 9}, []int64{4, 9}))
	require.NoError(t, bb.AddNeighborsTimed(1, []int64{7, 9}, []int64{7, 9}, []int64{15, 19}))
	require.NoError(t, bb.AddNeighborsTimed(2, []int64{9}, []int64{9}, []int64{1}))
	b := bb.Block()
	require.NoError(t, b.Validate())
	// 7@10 is destination 2; 9@10 is new; 7@20 and 9@20 are new.
	assert.Equal(t, []int64{5, 5, 7, 9, 7, 9}, b.Nodes)
	assert.Equal(t, []int64{10, 20, 10, 10, 20, 20}, b.Time)
	assert.Equal(t, []int32{2, 3, 4, 5, 3}, b.Indices)
	assert.Equal(t, []int64{4, 9, 15, 19, 1}, b.EdgeTime)
	bb.SetTemporal(false)
	require.NoError(t, bb.Reset([]int64{1, 2}, []int64{1, 2}))
	require.NoError(t, bb.AddNeighbors(0, []int64{2, 3}, []int64{2, 3}))
	b = bb.Block()
	assert.Nil(t, b.Time)
	assert.Equal(t, []int64{1, 2, 3}, b.Nodes)
}
