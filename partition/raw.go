package partition

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"mpignn/graph"
)

// Source is a dataset directory in OGB's raw layout, homogeneous or
// heterogeneous (graph.IsHeteroLayout tells), and how it is read for
// partitioning. A chunked dataset is partitioned by every rank of a job
// instead (partition/dpartition).
type Source struct {
	Data string
	// Undirected: a homogeneous graph gets every edge's reverse and loses
	// self loops (graph.UndirectedOptions); a heterogeneous one gets the
	// reverse of every relation but NoReverse's (NoReverseAll: none).
	Undirected   bool
	NoReverse    []string
	NoReverseAll bool
	// NormalizeFeatures divides every feature row by its sum.
	NormalizeFeatures bool
	// Workers bounds the reader's parallelism (0: its default).
	Workers int
	// Labels says how a homogeneous dataset's node-label file is read
	// (graph.ReadOptions.Labels): by its width, as classes, or as real
	// targets.
	Labels string
}

// Raw is a raw dataset read for partitioning with some Options: the
// dataset (homogeneous d or heterogeneous h) and, for a heterogeneous
// link split, the split's rows. The link split of a homogeneous dataset
// is drawn when it is partitioned (Partition).
type Raw struct {
	opt Options
	d   *graph.Dataset
	h   *graph.HeteroDataset
}

// ReadRaw reads src for partitioning with opt: the link split's read
// options (LinkOptions.ReadOptions), times with opt.Time, edge features
// with opt.EdgeFeat, node features from them with opt.NodeFeat, and for a
// heterogeneous link split its rows (LinkOptions.ReadHeteroSplit). It
// refuses what a heterogeneous partition does not take (a link split
// without a relation, halo features, sparse features) before reading,
// and a relation or label type for a homogeneous dataset.
func ReadRaw(src Source, opt Options) (*Raw, error) {
	r := &Raw{opt: opt}
	link := opt.Link != nil
	if link {
		if err := opt.Link.Validate(); err != nil {
			return nil, err
		}
	}
	if graph.IsHeteroLayout(src.Data) {
		switch {
		case link && opt.Link.Relation == "":
			return nil, errors.New("a link split of a heterogeneous dataset needs --relation src___rel___dst (the relation whose edges are split)")
		case opt.HaloFeats:
			return nil, errors.New("--halo-feats: not supported for heterogeneous datasets yet")
		case src.Labels == graph.LabelsReal:
			return nil, errors.New("--labels real: real node targets are read for homogeneous datasets only")
		case opt.NodeFeat != "":
			return nil, errors.New("--node-feat: not supported for heterogeneous datasets yet")
		case opt.EdgeFeat && opt.Time:
			return nil, errors.New("--edge-feat with --time: not supported for heterogeneous datasets yet")
		}
		if _, err := opt.ResolveSparse(nil, true, link); err != nil {
			return nil, err
		}
		r.opt.SparseFeatures = SparseOff
		ro := graph.DefaultHeteroReadOptions()
		ro.Reverse = src.Undirected && !src.NoReverseAll
		if ro.Reverse {
			ro.NoReverse = src.NoReverse
		}
		ro.NormalizeFeatures, ro.Time = src.NormalizeFeatures, opt.Time
		if src.Workers > 0 {
			ro.Workers = src.Workers
		}
		if opt.EdgeFeat {
			// Every per-edge attribute file but edge_time, one column each
			// (graph.HeteroEdgeAttrs; hetero_edgefeat.go there).
			names, err := graph.HeteroEdgeAttrs(src.Data)
			if err != nil {
				return nil, err
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("--edge-feat: no relation of %s has per-edge attribute files (raw/relations/<rel>/edge_<name>.csv.gz other than edge_time)", src.Data)
			}
			ro.EdgeFeat = names
		}
		h, err := graph.ReadOGBHetero(src.Data, ro)
		if err != nil {
			return nil, err
		}
		if link {
			lo := *opt.Link
			if lo.Rows, err = lo.ReadHeteroSplit(src.Data, h.Schema); err != nil {
				return nil, err
			}
			r.opt.Link = &lo
		}
		r.h = h
		return r, nil
	}
	if opt.LabelType != "" || len(src.NoReverse) > 0 || src.NoReverseAll || (link && opt.Link.Relation != "") {
		return nil, fmt.Errorf("--label-type, --no-reverse and --relation apply to heterogeneous datasets; %s has the homogeneous layout", src.Data)
	}
	ro := graph.ReadOptions{Dedup: true}
	if src.Undirected {
		ro = graph.UndirectedOptions()
	}
	ro.NormalizeFeatures = src.NormalizeFeatures
	if src.Workers > 0 {
		ro.Workers = src.Workers
	}
	if link {
		ro = opt.Link.ReadOptions(ro)
		// Edge labels (the edge task's targets) ride on the link split,
		// which holds labelled edges out as it holds out positives: read
		// when asked for, or when the dataset has them.
		ro.EdgeLabelKind = opt.Link.EdgeLabels
		ro.EdgeLabels = opt.Link.EdgeLabels != "" || fileExists(filepath.Join(src.Data, "raw", graph.EdgeLabelFile))
	}
	ro.Time = opt.Time
	ro.Labels = src.Labels
	ro.EdgeFeat, ro.NodeFeatFromEdges = opt.EdgeFeat, opt.NodeFeat
	d, err := graph.ReadOGB(src.Data, ro)
	if err != nil {
		return nil, err
	}
	r.d = d
	return r, nil
}

// Summary says what was read: "N nodes, E edges, D features, C classes",
// or for a heterogeneous graph "N nodes of T types, E edges of R
// relations".
func (r *Raw) Summary() string {
	if r.h != nil {
		return fmt.Sprintf("%d nodes of %d types, %d edges of %d relations", r.h.NumNodes(), r.h.Schema.NumTypes(), r.h.In.NumEdges(), r.h.Schema.NumRels())
	}
	dim := 0
	if r.d.Feat != nil {
		dim = r.d.Feat.Dim
	}
	if t := r.d.Targets; t != nil {
		return fmt.Sprintf("%d nodes, %d edges, %d features, %d real targets per node", r.d.NumNodes, r.d.In.NumEdges(), dim, t.Dim)
	}
	return fmt.Sprintf("%d nodes, %d edges, %d features, %d classes", r.d.NumNodes, r.d.In.NumEdges(), dim, r.d.NumClasses)
}

// Partition assigns the nodes to parts with the Options' method (drawing
// a homogeneous link split once, for both) and writes the partition
// directory out, calling phase (if set) with the time of "assign" and
// "write" as each ends.
func (r *Raw) Partition(out string, parts int, phase func(name string, d time.Duration)) (*Meta, error) {
	t := time.Now()
	step := func(name string) {
		if phase != nil {
			phase(name, time.Since(t))
		}
		t = time.Now()
	}
	if r.h != nil {
		if err := checkOutDir(out, r.opt.Overwrite); err != nil {
			return nil, err
		}
		assign, err := AssignHetero(r.h, parts, r.opt)
		if err != nil {
			return nil, err
		}
		step("assign")
		m, err := WriteHetero(out, r.h, assign, parts, r.opt)
		if err == nil {
			step("write")
		}
		return m, err
	}
	pr, err := prepareOut(out, r.d, r.opt)
	if err != nil {
		return nil, err
	}
	assign, err := pr.Assign(parts)
	if err != nil {
		return nil, err
	}
	step("assign")
	m, err := pr.Write(out, assign, parts)
	if err == nil {
		step("write")
	}
	return m, err
}

// CachedRaw returns the directory of the cached partition of o (a raw
// dataset read undirected, with reverse relations), reused when a complete
// one is found (Cached), else written: the dataset is read first, since
// the split it resolves to and the sparse mode its features call for name
// the cache. It prints which to out.
func CachedRaw(o CacheOptions, out io.Writer) (string, error) {
	// Checked before the dataset is read, which may take minutes.
	if err := o.Validate(); err != nil {
		return "", err
	}
	// A cache being rebuilt (damaged, or left half-written) is replaced.
	o.Undirected, o.Overwrite = true, true
	r, err := ReadRaw(Source{Data: o.Data, Undirected: true}, o.Options)
	if err != nil {
		return "", err
	}
	o.Options = r.opt
	switch {
	case r.h != nil && o.Link == nil:
		if _, o.Split, err = ResolveHetero(r.h, o.Options); err != nil {
			return "", err
		}
	case r.d != nil:
		if o.Split, err = ResolveSplit(r.d, o.Split); err != nil {
			return "", err
		}
		sparse, err := o.ResolveSparse(r.d.Feat, false, o.Link != nil)
		if err != nil {
			return "", err
		}
		o.SparseFeatures = SparseOff
		if sparse {
			o.SparseFeatures = SparseOn
		}
	}
	r.opt = o.Options
	return cached(o, out, func(dir string) error {
		_, err := r.Partition(dir, o.Parts, nil)
		return err
	})
}

// fileExists reports whether path names an existing file (an unreadable
// one counts, so that reading it reports the real error).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
