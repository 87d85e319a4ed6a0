package dtrain

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/optim"
)

// embeddings is the learnable input of one node type (a featureless one,
// or one chosen with --embed-types): its sharded table, read by the loader
// like features.
type embeddings struct {
	tab   *embeddingTable
	store *dsample.Store // to count owned vs remote rows
	// featDim is the width of the type's features, which come before the
	// embedding in its input rows (0: embedding only).
	featDim int
}

// fetch reads the rows of nodes into dst for the loader (TypedInputs).
func (e *embeddings) fetch(nodes []int64, dst []float32, g *dsample.GatherStats) ([]float32, error) {
	for _, v := range nodes {
		if e.store.Graph().Owns(v) {
			g.LocalRows++
		} else {
			g.RemoteRows++
		}
	}
	before := e.tab.FetchStats().Bytes
	dst, err := e.tab.Fetch(nodes, dst)
	g.Bytes += e.tab.FetchStats().Bytes - before
	return dst, err
}

// sparseInputs implements train.SparseInputs over the run's embedding
// tables: after every step each rank pushes the gradients of its batch's
// embedding rows to their owners, which sum them (in rank order with the
// Alltoallv push, so the result is deterministic) and apply the sparse
// optimizer. emb has one entry per node type, nil for types with features.
type sparseInputs struct {
	emb []*embeddings
	// PushTime accumulates the time spent in Push (all types), for the
	// benchmark line.
	pushTime time.Duration
	cols     []float32 // scratch: the embedding columns of input gradients
}

var _ train.SparseInputs = (*sparseInputs)(nil)

// openEmbeddings opens one table per learnable node type, in type order
// (collective). The tables start from a pure function of the seed and the
// node's original id, so every rank count starts identically.
func (s *heteroSetup) openEmbeddings(c *collectives.Comm, st *dsample.Store, seed uint64) (*sparseInputs, error) {
	if s.opts.Push == PushAccumulate && st.Transport() != collectives.TransportRMA {
		return nil, config.Errorf("{Hetero.Push} accumulate needs one-sided MPI, but the transport is %v (use {Hetero.Push} alltoallv)", st.Transport())
	}
	lr := float32(s.opts.SparseLR)
	si := &sparseInputs{emb: make([]*embeddings, s.schema.NumTypes())}
	for t, name := range s.schema.NodeTypes {
		if !s.learnable[t] {
			continue
		}
		tab, err := openEmbeddingTable(c, st.Part(), embeddingOptions{
			NodeType: name, Dim: s.opts.EmbedDim, Seed: seed, Transport: st.Transport(), Method: s.opts.Push,
			NewOptimizer: func(params []float32, dim int) (optim.SparseOptimizer, error) {
				return optim.NewSparseOptimizer(s.opts.SparseOpt, params, dim, lr)
			},
		})
		if err != nil {
			si.close()
			return nil, err
		}
		si.emb[t] = &embeddings{tab: tab, store: st, featDim: s.featDim[t]}
	}
	if !slices.Contains(s.learnable, true) {
		return nil, nil // every type has features: nothing to learn besides the weights
	}
	return si, nil
}

// embOf returns the per-type tables (all nil for a nil s: every type has
// features).
func (s *sparseInputs) embOf() []*embeddings {
	if s == nil {
		return nil
	}
	return s.emb
}

// close frees the tables (collective). A nil s has none.
func (s *sparseInputs) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, e := range s.emb {
		if e != nil {
			errs = append(errs, e.tab.Close())
		}
	}
	return errors.Join(errs...)
}

// Update implements train.SparseInputs. A rank without seeds in the step
// ran no backward: it pushes nothing, but still takes part.
func (s *sparseInputs) Update(m *train.Model, b *sample.Batch) error {
	start := time.Now()
	defer func() { s.pushTime += time.Since(start) }()
	trained := len(b.Labels) > 0 || len(b.Targets) > 0 || len(b.PairLabels) > 0
	for t, e := range s.emb {
		if e == nil {
			continue
		}
		var nodes []int64
		var grads []float32
		if trained && t < len(b.XTNodes) {
			nodes, grads = b.XTNodes[t], m.InputGrad(t)
			if grads == nil && len(nodes) > 0 {
				return fmt.Errorf("node type %s: no input gradients after the step's backward", e.tab.NodeType())
			}
			if e.featDim > 0 && len(nodes) > 0 {
				// The input row is [features | embedding]: push the
				// embedding's columns.
				w := len(grads) / len(nodes)
				s.cols = s.cols[:0]
				for i := range nodes {
					s.cols = append(s.cols, grads[i*w+e.featDim:(i+1)*w]...)
				}
				grads = s.cols
			}
		}
		if err := e.tab.Push(nodes, grads); err != nil {
			return err
		}
	}
	return nil
}

// Export implements train.SparseInputs: the tables' blobs (rank 0), each
// behind its length, in type order.
func (s *sparseInputs) Export() ([]byte, error) {
	var out []byte
	for _, e := range s.emb {
		if e == nil {
			continue
		}
		blob, err := e.tab.Export()
		if err != nil {
			return nil, err
		}
		out = binary.LittleEndian.AppendUint64(out, uint64(len(blob)))
		out = append(out, blob...)
	}
	return out, nil
}

// Import implements train.SparseInputs. Every rank parses the same bytes,
// so a malformed state fails on all of them alike before any collective.
func (s *sparseInputs) Import(state []byte) error {
	var blobs [][]byte
	for _, e := range s.emb {
		if e == nil {
			continue
		}
		if len(state) < 8 {
			return fmt.Errorf("embedding state ends before the table of node type %s", e.tab.NodeType())
		}
		n := binary.LittleEndian.Uint64(state)
		if n > uint64(len(state)-8) {
			return fmt.Errorf("embedding state of node type %s: %d bytes announced, %d left", e.tab.NodeType(), n, len(state)-8)
		}
		blobs = append(blobs, state[8:8+n])
		state = state[8+n:]
	}
	if len(state) != 0 {
		return fmt.Errorf("embedding state has %d bytes after the last table (a different set of embedded node types?)", len(state))
	}
	i := 0
	for _, e := range s.emb {
		if e == nil {
			continue
		}
		if err := e.tab.Import(blobs[i]); err != nil {
			return err
		}
		i++
	}
	return nil
}
