package dpartition

import (
	"fmt"
	"path/filepath"

	"mpignn/collectives"
	"mpignn/graph"
)

// planEdgeLabels decides whether a run with a link split reads the edge
// task's labels (edge_data "label" of a homogeneous graph, as convert
// writes raw/edge-label.csv.gz), as partition.ReadRaw does for the raw
// layout: when present, or when LinkOptions.EdgeLabels asks for them. Each
// rank reads the label chunks of its edge chunks; the ranks then agree on
// the kind, the width and the class count (max class + 1 over all lines,
// as graph.ReadOGB counts them) into run.elDim and run.elClasses.
// LinkOptions.EdgeLabels overrides the kind the chunks have, as it
// overrides a raw file's width: classes read as real values are one value
// per edge (NaN unlabelled); real values read as classes must be one
// column of integers in [0,2^24).
func (x *run) planEdgeLabels() error {
	if x.linkOpt == nil {
		return nil
	}
	kind := x.linkOpt.EdgeLabels
	if !x.ch.HasEdgeData(graph.HomoEdgeType, graph.ChunkLabel) {
		if kind != "" {
			return fmt.Errorf("%s: --edge-labels %s, but the dataset has no edge labels (edge_data %s/%s; convert writes them from raw/%s)", x.opt.Data, kind, graph.HomoEdgeType, graph.ChunkLabel, graph.EdgeLabelFile)
		}
		return nil
	}
	// Per rank: [chunks of classes, chunks of real values, width, max
	// class + 1, failed], reduced by max. A rank's read error travels in
	// the reduction too, so that no rank is left waiting in it.
	var mine [5]int64
	lerr := x.scanEdgeLabels(kind, &mine)
	if lerr != nil {
		mine[4] = 1
	}
	all := mine
	if err := collectives.Allreduce(x.c, all[:], collectives.Max); err != nil {
		return err
	}
	switch {
	case lerr != nil:
		return lerr
	case all[4] != 0:
		return fmt.Errorf("%s: another rank could not read its edge labels (edge_data %s/%s)", x.opt.Data, graph.HomoEdgeType, graph.ChunkLabel)
	case all[0] == 1 && all[1] == 1:
		return fmt.Errorf("%s: edge labels are classes (1-D integer chunks) in some chunks, real values (2-D float chunks) in others", x.opt.Data)
	case all[2] == 0:
		return fmt.Errorf("%s: the graph has no edges, so its edge labels have no width", x.opt.Data)
	case mine[2] != 0 && mine[2] != all[2]:
		return fmt.Errorf("%s: edge labels of width %d here, %d on another rank", x.opt.Data, mine[2], all[2])
	}
	x.elDim = int(all[2])
	if kind == graph.LabelsClasses || (kind == "" && all[0] == 1) {
		if x.elDim != 1 {
			return fmt.Errorf("%s: edge labels of %d columns, but edge classes are one integer per edge (use --edge-labels real for real values)", x.opt.Data, x.elDim)
		}
		if all[3] == 0 {
			// graph.ReadOGB's refusal of a raw file.
			return fmt.Errorf("%s: no labelled edge (edge_data %s/%s)", x.opt.Data, graph.HomoEdgeType, graph.ChunkLabel)
		}
		x.elClasses = int(all[3])
	}
	return nil
}

// scanEdgeLabels reads the label chunks of this rank's edge chunks into
// mine (see planEdgeLabels), checking classes where kind (or the chunks)
// make them classes.
func (x *run) scanEdgeLabels(kind string, mine *[5]int64) error {
	k0, k1 := graph.ChunkRange(x.ch.NumEdgeChunks(0), x.P, x.rank)
	for k := k0; k < k1; k++ {
		f, classes, err := x.ch.ReadEdgeLabels(0, k)
		if err != nil {
			return err
		}
		file := x.edgeLabelFile(k)
		if f.NumRows() == 0 {
			continue // an empty chunk's kind and width say nothing
		}
		if classes {
			mine[0] = 1
		} else {
			mine[1] = 1
		}
		if mine[0] == 1 && mine[1] == 1 {
			return fmt.Errorf("%s: edge labels are classes (1-D integer chunks) in some chunks, real values (2-D float chunks) in others (%s)", x.opt.Data, file)
		}
		if mine[2] != 0 && mine[2] != int64(f.Dim) {
			return fmt.Errorf("%s: edge labels of width %d in %s, %d in an earlier chunk", x.opt.Data, f.Dim, file, mine[2])
		}
		mine[2] = int64(f.Dim)
		if kind == graph.LabelsReal || (kind == "" && !classes) {
			continue
		}
		if f.Dim != 1 {
			// graph.ReadOGB's refusal of a raw file.
			return fmt.Errorf("%s: %d columns, but edge classes are one integer per line (use --edge-labels real for real values)", file, f.Dim)
		}
		for i, v := range f.Data {
			switch {
			case v != v:
			case v < 0 || v >= 1<<24 || v != float32(int64(v)):
				return fmt.Errorf("%s: edge %d: class %v is not an integer in [0,2^24) (use --edge-labels real for a real value)", file, i, v)
			default:
				mine[3] = max(mine[3], int64(v)+1)
			}
		}
	}
	return nil
}

// readEdgeLabelChunk reads edge chunk k's label rows (NaN unlabelled),
// checked against the agreed width.
func (x *run) readEdgeLabelChunk(k int) (*graph.Features, error) {
	f, _, err := x.ch.ReadEdgeLabels(0, k)
	if err != nil {
		return nil, err
	}
	if f.Dim != x.elDim && f.NumRows() > 0 {
		return nil, fmt.Errorf("%s: edge labels of width %d, want %d (%s)", x.opt.Data, f.Dim, x.elDim, x.edgeLabelFile(k))
	}
	return f, nil
}

// edgeLabelFile names edge chunk k's label file in errors, as the
// dataset's meta lists it, within the dataset.
func (x *run) edgeLabelFile(k int) string {
	f := x.ch.Meta.EdgeData[graph.HomoEdgeType][graph.ChunkLabel].Data[k]
	if filepath.IsAbs(f) {
		return f
	}
	return filepath.Join(x.opt.Data, f)
}

// splitEdgeRows splits the rows moved with the edges (efDim feature
// values, then elDim label values each, see moveEdges) into partRows.ef
// and partRows.el.
func (x *run) splitEdgeRows(r *partRows) {
	if x.elDim == 0 {
		return
	}
	D, F, L := int64(x.efDim+x.elDim), int64(x.efDim), int64(x.elDim)
	all := r.ef
	n := int64(len(all)) / D
	r.el = make([]float32, n*L)
	var ef []float32
	if F > 0 {
		ef = make([]float32, n*F)
	}
	for i := range n {
		copy(ef[i*F:(i+1)*F], all[i*D:i*D+F])
		copy(r.el[i*L:(i+1)*L], all[i*D+F:(i+1)*D])
	}
	r.ef = ef
}
