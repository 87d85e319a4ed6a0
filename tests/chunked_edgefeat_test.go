package tests

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"mpignn/partition"
)

// edgeFeatRows reads every part of the partition dir: the edge feature
// row of each stored in-edge by (destination, source) original ids (with
// its time when timed), and the feature row of each node by original id,
// so that partitions of different assignments can be compared.
func edgeFeatRows(t *testing.T, dir string) (m *partition.Meta, edges, nodes map[string][]float32) {
	t.Helper()
	m, err := partition.LoadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	edges, nodes = map[string][]float32{}, map[string][]float32{}
	ed, fd := int64(m.EdgeFeatDim), int64(m.FeatDim)
	for p := range m.NumParts {
		pt, err := partition.Load(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range pt.Orig {
			if fd > 0 {
				nodes[strconv.FormatInt(v, 10)] = pt.Feat[int64(i)*fd : int64(i+1)*fd]
			}
			for e := pt.Indptr[i]; e < pt.Indptr[i+1]; e++ {
				key := fmt.Sprintf("%d<-%d", v, pt.IndicesOrig[e])
				if pt.Times != nil {
					key += "@" + strconv.FormatInt(pt.Times[e], 10)
				}
				if _, dup := edges[key]; dup {
					t.Fatalf("%s part %d: edge %s stored twice", dir, p, key)
				}
				edges[key] = nil
				if ed > 0 {
					edges[key] = pt.EdgeFeat[e*ed : (e+1)*ed]
				}
			}
		}
	}
	return m, edges, nodes
}

// TestChunkedEdgeFeatCLI: convert of a dataset with edge features (gen
// --edge-feat-dim, with and without node features) writes edge_data
// "feat", and `mpirun -n P mpignn partition --edge-feat` of it (the
// default method, so another assignment than the single-process one)
// stores, on every rank count, for every (destination, source) edge the
// row the single-process partition --edge-feat stores, and --node-feat
// from-edges:mean the same node features.
func TestChunkedEdgeFeatCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); mustRun(t, bin, args...) }
	for _, tc := range []struct {
		name  string
		gen   []string
		flags []string
	}{
		{"ef", nil, []string{"--edge-feat"}},
		{"nf", []string{"--no-node-feat"}, []string{"--edge-feat", "--node-feat", "from-edges:mean"}},
		{"nf-time", []string{"--no-node-feat", "--edge-time"}, []string{"--node-feat", "from-edges:sum", "--time"}},
	} {
		data, ck := filepath.Join(dir, "g-"+tc.name), filepath.Join(dir, "ck-"+tc.name)
		run(append([]string{"gen", "--nodes", "1500", "--avg-degree", "6", "--classes", "4", "--feat-dim", "8", "--edge-feat-dim", "4", "--seed", "3", "--out", data}, tc.gen...)...)
		run("convert", "--data", data, "--out", ck, "--chunk-nodes", "200", "--chunk-edges", "1500")
		single := filepath.Join(dir, "single-"+tc.name)
		run(append([]string{"partition", "--parts", "2", "--method", "random", "--seed", "4", "--data", data, "--out", single}, tc.flags...)...)
		sm, se, sn := edgeFeatRows(t, single)
		for _, n := range h.Ranks {
			dist := filepath.Join(dir, "dist-"+tc.name+"-"+strconv.Itoa(n))
			args := append([]string{bin, "partition", "--parts", strconv.Itoa(n), "--data", ck, "--out", dist}, tc.flags...)
			r := h.MPI(Job{Ranks: n, Args: args, Timeout: 2 * time.Minute})
			if r.Err != nil {
				t.Fatalf("%s np=%d: %v\n%s", tc.name, n, r.Err, tail(r.Output, 30))
			}
			dm, de, dn := edgeFeatRows(t, dist)
			if dm.EdgeFeatDim != sm.EdgeFeatDim || dm.NodeFeatFrom != sm.NodeFeatFrom || dm.FeatDim != sm.FeatDim || dm.NumEdges != sm.NumEdges {
				t.Fatalf("%s np=%d: META edge_feat_dim %d node_feat_from %q feat_dim %d edges %d, single-process %d %q %d %d",
					tc.name, n, dm.EdgeFeatDim, dm.NodeFeatFrom, dm.FeatDim, dm.NumEdges, sm.EdgeFeatDim, sm.NodeFeatFrom, sm.FeatDim, sm.NumEdges)
			}
			for _, cmp := range []struct {
				what string
				a, b map[string][]float32
			}{{"edge", se, de}, {"node", sn, dn}} {
				if len(cmp.a) != len(cmp.b) {
					t.Fatalf("%s np=%d: %d %s rows, single-process %d", tc.name, n, len(cmp.b), cmp.what, len(cmp.a))
				}
				for k, row := range cmp.a {
					got, ok := cmp.b[k]
					if !ok || fmt.Sprint(got) != fmt.Sprint(row) {
						t.Fatalf("%s np=%d: %s %s: row %v, single-process %v", tc.name, n, cmp.what, k, got, row)
					}
				}
			}
		}
	}
}
