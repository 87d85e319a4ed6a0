package dtrain

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"mpignn/collectives"
	"mpignn/internal/half"
	"mpignn/partition"
	"mpignn/train"
)

// Reducer implements train.Reducer with MPI_Allreduce(MPI_SUM) over the
// world communicator.
type Reducer struct{ C *collectives.Comm }

// AllreduceSum32 implements train.Reducer.
func (r Reducer) AllreduceSum32(buf []float32) error {
	defer r.C.Phase("allreduce")()
	return collectives.Allreduce(r.C, buf, collectives.Sum)
}

// AllreduceSum64 implements train.Reducer.
func (r Reducer) AllreduceSum64(buf []float64) error {
	defer r.C.Phase("allreduce")()
	return collectives.Allreduce(r.C, buf, collectives.Sum)
}

// Rank and Size tell the trainer which row of a mid-epoch checkpoint's
// per-rank sums is this rank's.
func (r Reducer) Rank() int { return r.C.Rank() }

// Size is the number of ranks.
func (r Reducer) Size() int { return r.C.Size() }

// GatherRows implements train.RowGatherer with two Allgathervs.
func (r Reducer) GatherRows(ids []int64, rows []float32) ([]int64, []float32, error) {
	defer r.C.Phase("gather")()
	all, _, err := collectives.Allgatherv(r.C, ids)
	if err != nil {
		return nil, nil, err
	}
	allRows, _, err := collectives.Allgatherv(r.C, rows)
	return all, allRows, err
}

// Agree implements train.Reducer with collectives.Agree.
func (r Reducer) Agree(localErr error) error { return collectives.Agree(r.C, localErr) }

// LoadCheckpoint reads dir's checkpoint on rank 0 and broadcasts it, so the
// ranks need no shared file system and all of them report the same error for
// a missing or corrupt file. It is collective.
func LoadCheckpoint(c *collectives.Comm, dir string) (*train.Checkpoint, error) {
	path := filepath.Join(dir, train.CheckpointFile)
	var data []byte
	var err error
	if c.Rank() == 0 {
		data, err = os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("checkpoint %s: %w (missing file; was a checkpoint written to this directory?)", path, train.ErrNoCheckpoint)
		} else if err != nil {
			err = fmt.Errorf("checkpoint: %w", err)
		}
	}
	data, err = collectives.BcastBytes(c, 0, data, err)
	if err != nil {
		return nil, err
	}
	return train.DecodeCheckpoint(path, data)
}

// WeightsHash returns the first 16 hex digits of the SHA-256 of the
// little-endian bytes of p: a short fingerprint for comparing the weights of
// two runs bit for bit.
func WeightsHash(p []float32) string {
	h := sha256.New()
	var b [4096]byte
	for len(p) > 0 {
		k := min(len(p), len(b)/4)
		for i, v := range p[:k] {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		h.Write(b[:4*k])
		p = p[k:]
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// RowNormalizeCSR is RowNormalize for CSR rows: the same sums (zeros add
// nothing to them) and the same scaling, so sparse and dense partitions
// give bit-identical normalised features.
func RowNormalizeCSR(c *partition.CSRRows) {
	if c == nil {
		return
	}
	for i := range c.Rows() {
		_, row := c.Row(i)
		normalizeRow(row)
	}
}

// rowNormalizePart row-normalises the owned and halo features of a
// homogeneous partition, dense or sparse.
func rowNormalizePart(part *partition.Part) {
	dim := part.Meta.FeatDim
	RowNormalize(part.Feat, dim)
	RowNormalize(part.HaloFeat, dim)
	RowNormalize16(part.Meta.FeatKind(), part.Feat16, dim)
	RowNormalize16(part.Meta.FeatKind(), part.HaloFeat16, dim)
	RowNormalizeCSR(part.FeatCSR)
	RowNormalizeCSR(part.HaloFeatCSR)
}

// RowNormalize16 is RowNormalize for rows stored at two bytes a value
// (kind half.BF16 or FP16): each row is widened, normalised as a float32
// row is and rounded back, so the table stays at two bytes a value and the
// model reads the rounded unit-sum rows. A row's result depends on the row
// alone, so every rank and thread count gives the same bits.
func RowNormalize16(kind half.Kind, x []uint16, dim int) {
	if dim <= 0 || !kind.Half() {
		return
	}
	row := make([]float32, dim)
	for i := 0; i+dim <= len(x); i += dim {
		half.Widen(kind, row, x[i:i+dim])
		normalizeRow(row)
		half.Narrow(kind, x[i:i+dim], row)
	}
}

// RowNormalize scales every row of x (width dim) to sum 1 in absolute value
// (rows of zeros stay zero), the usual preprocessing of bag-of-words
// features (Cora, CiteSeer). It works row by row, so each rank can apply it
// to the rows it holds.
func RowNormalize(x []float32, dim int) {
	if dim <= 0 {
		return
	}
	for i := 0; i+dim <= len(x); i += dim {
		normalizeRow(x[i : i+dim])
	}
}

// normalizeRow scales row to sum 1 in absolute value (a row of zeros stays
// zero). A sparse row's stored values are its nonzeros, so dense and CSR
// rows normalise to the same floats.
func normalizeRow(row []float32) {
	s := 0.0
	for _, v := range row {
		s += math.Abs(float64(v))
	}
	if s == 0 {
		return
	}
	inv := float32(1 / s)
	for k := range row {
		row[k] *= inv
	}
}
