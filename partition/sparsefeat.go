package partition

import (
	"fmt"
	"path/filepath"

	"mpignn/config"
	"mpignn/graph"
)

// Sparse feature storage. Wide 0/1 or count features (Cora, CiteSeer,
// Facebook: 1-2 % nonzero) cost 50-100x their information as dense rows,
// in files, in memory, on the wire and in the first layer's products. A
// partition may therefore store its node features as CSR rows instead of
// feat.bin (and halo_feat.bin); META records it in sparse_feat and the
// per-part entry counts. Dense partitions do not mention either field, so
// their META is unchanged.

// Values of Options.SparseFeatures.
const (
	SparseAuto = "auto" // CSR when the density is below SparseAutoDensity
	SparseOn   = "on"
	SparseOff  = "off" // also what "" means
)

// SparseAutoDensity is the density (nonzeros / (nodes·dim)) below which
// SparseAuto stores features as CSR. Below it CSR (8 bytes per entry)
// is smaller than dense (4 bytes per entry) by 5x or more, and the first
// layer's work per stored entry beats dense GEMM.
const SparseAutoDensity = 0.10

// Files of the CSR features (instead of feat.bin / halo_feat.bin).
const (
	fileFeatIndptr      = "feat_indptr.bin"      // int64, owned+1
	fileFeatIndices     = "feat_indices.bin"     // int32, nnz: columns, ascending per row
	fileFeatValues      = "feat_values.bin"      // float32, nnz
	fileHaloFeatIndptr  = "halo_feat_indptr.bin" // int64, halo+1 (only with halo feats)
	fileHaloFeatIndices = "halo_feat_indices.bin"
	fileHaloFeatValues  = "halo_feat_values.bin"
)

// CSRRows are feature rows stored sparsely: row i holds
// Values[Indptr[i]:Indptr[i+1]] at the columns Indices[...], strictly
// ascending, each in [0, dim).
type CSRRows struct {
	Indptr  []int64
	Indices []int32
	Values  []float32
}

// Rows returns the number of rows.
func (c *CSRRows) Rows() int { return max(len(c.Indptr)-1, 0) }

// NNZ returns the number of stored entries.
func (c *CSRRows) NNZ() int64 { return int64(len(c.Indices)) }

// Dense expands the rows into a row-major dense matrix of width dim.
func (c *CSRRows) Dense(dim int) []float32 {
	x := make([]float32, c.Rows()*dim)
	for i := range c.Rows() {
		for e := c.Indptr[i]; e < c.Indptr[i+1]; e++ {
			x[i*dim+int(c.Indices[e])] = c.Values[e]
		}
	}
	return x
}

// Row returns the columns and values of row i.
func (c *CSRRows) Row(i int) ([]int32, []float32) {
	e0, e1 := c.Indptr[i], c.Indptr[i+1]
	return c.Indices[e0:e1], c.Values[e0:e1]
}

// csrRows builds the CSR rows of the given nodes (original ids) of f,
// keeping exactly the nonzero entries.
func csrRows(f *graph.Features, nodes []int64) *CSRRows {
	c := &CSRRows{Indptr: make([]int64, 1, len(nodes)+1)}
	if f == nil || f.Dim == 0 {
		c.Indptr = append(c.Indptr, make([]int64, len(nodes))...)
		return c
	}
	d := int64(f.Dim)
	for _, v := range nodes {
		for k, x := range f.Data[v*d : (v+1)*d] {
			if x != 0 {
				c.Indices = append(c.Indices, int32(k))
				c.Values = append(c.Values, x)
			}
		}
		c.Indptr = append(c.Indptr, int64(len(c.Indices)))
	}
	return c
}

// Density returns the fraction of nonzero feature entries (0 without
// features).
func Density(f *graph.Features) float64 {
	if f == nil || f.Dim == 0 || len(f.Data) == 0 {
		return 0
	}
	nz := 0
	for _, x := range f.Data {
		if x != 0 {
			nz++
		}
	}
	return float64(nz) / float64(len(f.Data))
}

// UseSparse decides mode (Options.SparseFeatures) for the features f of a
// dataset: hetero says it is heterogeneous (typed features stay dense:
// SparseOn is an error), link that it is a link split (whose loaders read
// dense rows, so SparseAuto keeps it dense; SparseOn is honoured). The
// train command's --data mode calls it to name and match its cached
// partitions.
func UseSparse(mode string, f *graph.Features, hetero, link bool) (bool, error) {
	switch mode {
	case "", SparseOff:
		return false, nil
	case SparseAuto:
		return !hetero && !link && f != nil && f.Dim > 0 && Density(f) < SparseAutoDensity, nil
	case SparseOn:
		if hetero {
			return false, config.Errorf("{SparseFeatures} %q: heterogeneous partitions store their typed features dense (use auto or off)", mode)
		}
		if f == nil || f.Dim == 0 {
			return false, config.Errorf("{SparseFeatures} %q: the dataset has no node features", mode)
		}
		return true, nil
	}
	return false, checkSparseMode(mode)
}

// putCSR writes the three files of rows c and records them in files.
func putCSR(files map[string]FileInfo, aw *arrayWriter, pdir string, p int, names [3]string, c *CSRRows) error {
	if err := putArray(files, aw, pdir, p, names[0], c.Indptr); err != nil {
		return err
	}
	if err := putArray(files, aw, pdir, p, names[1], c.Indices); err != nil {
		return err
	}
	return putArray(files, aw, pdir, p, names[2], c.Values)
}

// sparseFiles lists part p's CSR feature files with their lengths.
func (m *Meta) sparseFiles(p int) []fileSpec {
	pi := m.Parts[p]
	fs := []fileSpec{
		{fileFeatIndptr, dtInt64, pi.Nodes + 1},
		{fileFeatIndices, dtInt32, pi.FeatNNZ},
		{fileFeatValues, dtFloat32, pi.FeatNNZ},
	}
	if m.HaloFeats {
		fs = append(fs,
			fileSpec{fileHaloFeatIndptr, dtInt64, pi.HaloNodes + 1},
			fileSpec{fileHaloFeatIndices, dtInt32, pi.HaloFeatNNZ},
			fileSpec{fileHaloFeatValues, dtFloat32, pi.HaloFeatNNZ})
	}
	return fs
}

// loadCSR reads and validates one set of CSR feature files of part pt.
func (pt *Part) loadCSR(dir string, names [3]string) (*CSRRows, error) {
	m, p := pt.Meta, pt.ID
	c := &CSRRows{}
	var err error
	if c.Indptr, err = readPartArray[int64](dir, m, p, names[0]); err != nil {
		return nil, err
	}
	if c.Indices, err = readPartArray[int32](dir, m, p, names[1]); err != nil {
		return nil, err
	}
	if c.Values, err = readPartArray[float32](dir, m, p, names[2]); err != nil {
		return nil, err
	}
	file := func(name string) string { return filepath.Join(dir, partDir(p), name) }
	if f, err := c.check(m.FeatDim); err != nil {
		return nil, fmt.Errorf("load %s: %w", file(names[f]), err)
	}
	return c, nil
}

// check validates the structure: offsets from 0 to nnz, never decreasing;
// columns strictly ascending within each row and in [0, dim). On error it
// also returns which of the three arrays is at fault (0 offsets, 1
// columns, 2 values), for the message to name its file.
func (c *CSRRows) check(dim int) (int, error) {
	if len(c.Indptr) == 0 {
		return 0, fmt.Errorf("sparse features: empty offsets")
	}
	if len(c.Values) != len(c.Indices) {
		return 2, fmt.Errorf("sparse features: %d values for %d columns", len(c.Values), len(c.Indices))
	}
	if c.Indptr[0] != 0 || c.Indptr[len(c.Indptr)-1] != int64(len(c.Indices)) {
		return 0, fmt.Errorf("sparse features: offsets run from %d to %d, want 0 to %d", c.Indptr[0], c.Indptr[len(c.Indptr)-1], len(c.Indices))
	}
	for i := range c.Rows() {
		if c.Indptr[i+1] < c.Indptr[i] {
			return 0, fmt.Errorf("sparse features: offsets decrease at row %d", i)
		}
	}
	for i := range c.Rows() {
		prev := int32(-1)
		for e := c.Indptr[i]; e < c.Indptr[i+1]; e++ {
			if k := c.Indices[e]; k <= prev || int(k) >= dim {
				return 1, fmt.Errorf("sparse features: row %d: column %d not ascending or outside [0,%d)", i, k, dim)
			}
			prev = c.Indices[e]
		}
	}
	return 0, nil
}
