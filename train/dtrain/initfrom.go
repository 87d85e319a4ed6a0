package dtrain

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/train"
)

// initFrom replaces model's initial weights, and the learnable embeddings
// of sparse (nil without them), with a PyG-layout state dict (train
// --init-from FILE.safetensors, see train.ImportPyG; embedding tables are
// train.PyGEmbeddingName tensors). Rank 0 reads the file and broadcasts its
// bytes, so only rank 0 needs to see it; every rank decodes the same bytes
// and so starts from the same weights. It is collective.
func initFrom(c *collectives.Comm, path string, model *train.Model, sparse *sparseInputs) error {
	var data []byte
	var rerr error
	if c.Rank() == 0 {
		data, rerr = os.ReadFile(path)
	}
	data, err := collectives.BcastBytes(c, 0, data, rerr)
	if err != nil {
		return fmt.Errorf("%w: %w", config.Errorf("{InitFrom}"), err)
	}
	ts, _, err := train.DecodeSafetensors(path, data)
	var dense, embeds []train.NamedTensor
	for _, t := range ts {
		if strings.HasPrefix(t.Name, "embeddings.") {
			embeds = append(embeds, t)
		} else {
			dense = append(dense, t)
		}
	}
	if err == nil && sparse == nil && len(embeds) > 0 {
		err = fmt.Errorf("tensor %s: the %s model has no learnable embeddings", embeds[0].Name, model.Config().ArchName())
	}
	if err == nil {
		var p []float32
		if p, err = train.ImportPyG(model.Config(), dense); err == nil {
			err = model.SetParams(p)
		}
	}
	// Every rank decoded the same bytes, so every rank reaches this point
	// with the same error or none: the collective below is safe to skip.
	if err == nil && sparse != nil {
		err = importEmbeddings(c, sparse, embeds)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", config.Errorf("{InitFrom} %s", path), err)
	}
	return nil
}

// importEmbeddings sets the learnable embedding tables to the given
// tensors (one per embedded node type, shape rows x dim): rank 0 takes the
// tables' current state (their fresh optimizer state included), swaps in
// the parameters and broadcasts the result, which every rank imports. It
// is collective.
func importEmbeddings(c *collectives.Comm, sparse *sparseInputs, embeds []train.NamedTensor) error {
	cur, err := sparse.Export()
	if err != nil {
		return err
	}
	var next []byte
	var lerr error
	if c.Rank() == 0 {
		next, lerr = replaceEmbeddings(cur, embeds)
	}
	state, err := collectives.BcastBytes(c, 0, next, lerr)
	if err != nil {
		return err
	}
	return sparse.Import(state)
}

// replaceEmbeddings rewrites a sparseInputs state (per embedded type a
// uint64 length and the table's blob) with the parameters of embeds, which
// must hold exactly one tensor per table, of the table's shape.
func replaceEmbeddings(state []byte, embeds []train.NamedTensor) ([]byte, error) {
	left := slices.Clone(embeds)
	var out []byte
	for len(state) > 0 {
		if len(state) < 8 || binary.LittleEndian.Uint64(state) > uint64(len(state)-8) {
			return nil, fmt.Errorf("embedding state: malformed table length")
		}
		n := binary.LittleEndian.Uint64(state)
		blob := state[8 : 8+n]
		state = state[8+n:]
		nodeType, dim, rows, _, err := decodeEmbeddingRows(blob)
		if err != nil {
			return nil, err
		}
		name := train.PyGEmbeddingName(nodeType)
		i := slices.IndexFunc(left, func(t train.NamedTensor) bool { return t.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("the state dict lacks %s (%d x %d), the learnable embedding of node type %s", name, rows, dim, nodeType)
		}
		t := left[i]
		left = slices.Delete(left, i, i+1)
		if !slices.Equal(t.Shape, []int{int(rows), dim}) {
			return nil, fmt.Errorf("tensor %s has shape %v, the table is %d x %d", name, t.Shape, rows, dim)
		}
		nb, err := replaceEmbeddingRows(blob, t.Data)
		if err != nil {
			return nil, err
		}
		out = binary.LittleEndian.AppendUint64(out, uint64(len(nb)))
		out = append(out, nb...)
	}
	if len(left) > 0 {
		return nil, fmt.Errorf("tensor %s: no learnable embedding table of that node type", left[0].Name)
	}
	return out, nil
}

// saveUntrained writes the checkpoint of a run that trains no epoch
// (--epochs 0): the imported model and embeddings (imported: --init-from)
// or the initial weights, ready for predict, embed or export, and a later
// --resume. The trainer's loop writes checkpoints only after an epoch. It
// is collective; without a checkpoint directory it writes nothing.
func saveUntrained(c *collectives.Comm, tr *train.Trainer, ro train.RunOptions, imported bool) error {
	var err error
	var sparse []byte
	if tr.Sparse != nil && ro.Checkpointing {
		sparse, err = tr.Sparse.Export() // collective: every rank
	}
	if err == nil && c.Rank() == 0 && ro.CheckpointDir != "" {
		ck := tr.Checkpoint(ro.RunInfo)
		ck.Sparse = sparse
		err = train.SaveCheckpoint(ro.CheckpointDir, ck)
	}
	if err := collectives.Agree(c, err); err != nil {
		if imported {
			return fmt.Errorf("%w: %w", config.Errorf("{InitFrom}"), err)
		}
		return fmt.Errorf("checkpoint of the initial weights: %w", err)
	}
	return nil
}
