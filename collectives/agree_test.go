package collectives

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribeMismatch(t *testing.T) {
	f := func(kv ...string) []Field {
		var out []Field
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, Field{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	meta := []Field{{Name: "feat_dim", Value: "4", Source: "p/META.json"}}
	cases := []struct {
		name string
		per  [][]Field
		bad  []bool
		want string
	}{
		{"one rank", [][]Field{f("--hidden", "16"), f("--hidden", "32")}, nil,
			"rank 1 has --hidden 32 but rank 0 has 16"},
		{"first differing field in rank 0 order", [][]Field{f("--a", "1", "--b", "2"), f("--a", "1", "--b", "3")}, nil,
			"rank 1 has --b 3 but rank 0 has 2"},
		{"ranks grouped by value", [][]Field{f("--seed", "1"), f("--seed", "2"), f("--seed", "1"), f("--seed", "2"), f("--seed", "5")}, nil,
			"ranks 1, 3 have --seed 2, rank 4 has --seed 5 but rank 0 has 1"},
		{"source named", [][]Field{meta, {{Name: "feat_dim", Value: "8", Source: "q/META.json"}}}, nil,
			"rank 1 has feat_dim 8 but rank 0 has 4 (p/META.json)"},
		{"empty value quoted", [][]Field{f("--split", ""), f("--split", "full")}, nil,
			`rank 1 has --split full but rank 0 has ""`},
		{"missing field", [][]Field{f("--a", "1", "--b", "2"), f("--a", "1")}, nil,
			"rank 1 has no --b but rank 0 has 2"},
		{"extra field", [][]Field{f("--a", "1"), f("--a", "1", "--c", "9")}, nil,
			"rank 1 has --c 9 but rank 0 has no such field"},
		{"undecodable rank", [][]Field{f("--a", "1"), nil}, []bool{false, true},
			"rank 1 sent start-up fields this binary cannot read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Contains(t, DescribeMismatch(tc.per, tc.bad), tc.want)
		})
	}
}

func TestCheckCounts(t *testing.T) {
	cases := []struct {
		name   string
		counts []int64
		total  int64
		err    string
	}{
		{"fine", []int64{0, 3, 4}, 7, ""},
		{"negative", []int64{1, -2}, 0, "rank 1 announced -2 elements"},
		{"overflow", []int64{math.MaxInt64 / 8, 1}, 0, "rank 1 announced 1 elements"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkCounts[int64](tc.counts, "test")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.total, got)
		})
	}
}

// TestAgreeFields runs the start-up agreement on every rank: identical
// fields pass; a field that differs on the last rank is named, with the same
// error on every rank (so that rank 0 alone prints it).
func TestAgreeFields(t *testing.T) {
	c, err := NewComm()
	require.NoError(t, err)
	same := []Field{{Name: "--hidden", Value: "16"}, {Name: "feat_dim", Value: "4", Source: "META.json"}}
	require.NoError(t, AgreeFields(c, same))

	last := c.Size() - 1
	mine := []Field{{Name: "--hidden", Value: "16"}, {Name: "feat_dim", Value: "4", Source: "META.json"}}
	if c.Rank() == last && last > 0 {
		mine[1].Value = "8"
	}
	err = AgreeFields(c, mine)
	if last == 0 {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	assert.True(t, IsMismatch(err))
	assert.Equal(t, fmt.Sprintf("rank %d has feat_dim 8 but rank 0 has 4 (META.json)", last), err.Error())

	// A rank whose fields are too large to announce still takes part, and
	// every rank fails instead of waiting.
	big := same
	if c.Rank() == last {
		big = []Field{{Name: "x", Value: string(make([]byte, maxFieldsBytes))}}
	}
	err = AgreeFields(c, big)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("rank %d announced -1 bytes", last))
}

// TestDistArrayRowSizeMismatch: ranks that would read rows of different
// sizes from each other are refused when the array is made.
func TestDistArrayRowSizeMismatch(t *testing.T) {
	c, err := NewComm()
	require.NoError(t, err)
	if c.Size() < 2 {
		t.Skip("needs 2 ranks")
	}
	rowBytes := 16
	if c.Rank() == 1 {
		rowBytes = 32
	}
	_, err = NewDistArray(c, 5, rowBytes, TransportAlltoallv)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 1 has rows of 32 bytes but rank 0 has 16")
}

// TestFetchBadRequestNoHang: a rank that asks another for a row it does not
// hold (their partition books disagree) gets an answer, and the owner
// reports the bad request after the exchange instead of leaving the
// requester waiting for a response that never comes.
func TestFetchBadRequestNoHang(t *testing.T) {
	c, err := NewComm()
	require.NoError(t, err)
	if c.Size() < 2 {
		t.Skip("needs 2 ranks")
	}
	a, err := NewDistArray(c, 4, 8, TransportAlltoallv)
	require.NoError(t, err)
	defer a.Free()
	require.NoError(t, a.Seal())
	var rows []int64
	if c.Rank() == 0 {
		// Rank 0 believes rank 1 owns rows [4, 100) and later ranks none.
		for p := 2; p < len(a.offsets); p++ {
			a.offsets[p] = 100
		}
		rows = []int64{50}
	}
	err = a.Fetch(rows, make([]byte, 8*len(rows)))
	if c.Rank() == 1 {
		require.Error(t, err)
		assert.Contains(t, err.Error(), "rank 0 asked for local row 46 of 4")
	} else {
		require.NoError(t, err)
	}
}
