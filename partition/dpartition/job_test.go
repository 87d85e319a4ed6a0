package dpartition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/partition"
)

// TestChooseMethod: the methods of a chunked dataset, and one error naming
// the flag and the choices for any other.
func TestChooseMethod(t *testing.T) {
	for _, tc := range []struct {
		method, assignment string
		set                bool
		want, err          string
	}{
		{method: "lp", set: true, want: MethodLP},
		{method: "ml", set: true, want: MethodML},
		{method: "random", set: true, want: partition.MethodRandom},
		{method: "lpx", set: true, err: `--method "lpx": want parmetis, lp, ml, random or --assignment DIR for a chunked dataset`},
		{method: "lp", set: true, assignment: "a", err: "--assignment DIR gives the assignment; leave out --method"},
		// A method the user names is honoured or refused, never swapped
		// (issue 34): metis, typed, is refused rather than run as PT-Scotch.
		{method: "metis", set: true, err: "--method metis: METIS needs the whole graph in one process, and a chunked dataset is partitioned by all ranks; use --method ml (the default here), lp, parmetis or random, or partition the OGB layout"},
		{method: "metis", set: false, want: MethodML},
		{method: "parmetis", set: true, want: MethodParMetis, err: map[bool]string{true: "", false: "--method parmetis: PT-Scotch is not available in this build"}[ParMetisAvailable]},
	} {
		got, err := ChooseMethod(tc.method, tc.set, tc.assignment)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

// TestOptionsValidate: options no partitioning can use are refused before
// a dataset is read, naming what is wrong.
func TestOptionsValidate(t *testing.T) {
	ok := Options{Data: "d", Out: "o", Parts: 2, Method: partition.MethodRandom, Undirected: true}
	require.NoError(t, ok.Validate())
	link := &partition.LinkOptions{Split: "random:0.8,0.1,0.1"}
	for _, tc := range []struct {
		edit func(o *Options)
		err  string
	}{
		{func(o *Options) { o.Parts = 0 }, "--parts 0: want at least 1"},
		{func(o *Options) { o.Method = partition.MethodMetis }, `method "metis": the distributed partitioner supports`},
		{func(o *Options) { o.Method = MethodAssignment }, "method assignment needs the directory"},
		{func(o *Options) { o.SparseFeatures = "dense" }, `sparse features "dense"`},
		{func(o *Options) { o.Link = &partition.LinkOptions{Split: "time"} }, "random:TRAIN,VALID,TEST splits only"},
		{func(o *Options) { o.Link = &partition.LinkOptions{Split: "random:0.8,0.1,0.1", Relation: "a___r___b"} }, "heterogeneous link splits"},
		{func(o *Options) { o.Link, o.Undirected = link, false }, "needs --undirected"},
		{func(o *Options) { o.Link, o.Time = link, true }, "with --time on a chunked dataset is not supported"},
		{func(o *Options) { o.Link, o.Split = link, "s" }, "names a node split"},
		{func(o *Options) { o.Link = &partition.LinkOptions{Split: "random:0.8,0.1,0.1", NegsPerPos: -1} }, "link split:"},
	} {
		o := ok
		tc.edit(&o)
		require.ErrorContains(t, o.Validate(), tc.err)
	}
}
