package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// TestInspectHetero checks that inspect prints the per-type node counts
// and the per-relation cut of a heterogeneous partition, as text and JSON.
func TestInspectHetero(t *testing.T) {
	writes := graph.Relation{Src: "author", Name: "writes", Dst: "paper"}
	s, err := graph.NewSchema(map[string]int64{"author": 6, "paper": 8}, []graph.Relation{writes, writes.Reverse()})
	require.NoError(t, err)
	n, R := s.NumNodes(), int64(s.NumRels())
	rows := make([][]int64, n*R)
	w, rw := int64(s.RelIndex(writes.String())), int64(s.RelIndex(writes.Reverse().String()))
	for p := int64(0); p < 8; p++ {
		a := p % 6 // author a writes paper p
		rows[(6+p)*R+w] = append(rows[(6+p)*R+w], a)
		rows[a*R+rw] = append(rows[a*R+rw], 6+p)
	}
	in := &graph.CSR{Indptr: make([]int64, n*R+1)}
	for i, row := range rows {
		in.Indices = append(in.Indices, row...)
		in.Indptr[i+1] = int64(len(in.Indices))
	}
	d := &graph.HeteroDataset{
		Name: "tiny", Schema: s, In: in,
		Feat: map[string]*graph.Features{"paper": {Dim: 2, Data: make([]float32, 16)}},
	}
	out := filepath.Join(t.TempDir(), "p")
	_, err = partition.WriteHeteroDataset(out, d, 2, partition.Options{Method: partition.MethodRandom, Seed: 1})
	require.NoError(t, err)

	var buf bytes.Buffer
	require.NoError(t, inspect(&buf, []string{out, "--verify"}))
	for _, want := range []string{"2 node types, 2 relations", "feature dims paper 2", "author___writes___paper", "paper___rev_writes___author", "cut_fraction"} {
		assert.Contains(t, buf.String(), want)
	}
	buf.Reset()
	require.NoError(t, inspect(&buf, []string{out, "--json"}))
	var js struct {
		Parts []struct {
			TypeNodes []int64 `json:"type_nodes"`
		} `json:"parts"`
		Hetero struct {
			NodeTypes []string `json:"node_types"`
			Relations []struct {
				Relation string `json:"relation"`
				Edges    int64  `json:"edges"`
			} `json:"relations"`
		} `json:"hetero"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &js))
	assert.Equal(t, []string{"author", "paper"}, js.Hetero.NodeTypes)
	require.Len(t, js.Parts, 2)
	assert.Equal(t, int64(14), js.Parts[0].TypeNodes[0]+js.Parts[0].TypeNodes[1]+js.Parts[1].TypeNodes[0]+js.Parts[1].TypeNodes[1])
	require.Len(t, js.Hetero.Relations, 2)
	assert.Equal(t, int64(8), js.Hetero.Relations[0].Edges)
}
