package dtrain

import (
	"encoding/binary"
	"fmt"

	"mpignn/config"
	"mpignn/train"
)

// CheckpointEmbeddings returns the learnable embedding tables of a
// heterogeneous checkpoint as PyG state-dict tensors
// (train.PyGEmbeddingName: one torch.nn.Embedding weight per node type,
// rows in type-local original id order), in node type order; nil for a
// model without them. It reads the state sparseInputs.Export wrote: per
// embedded type a uint64 length and the table's blob.
func CheckpointEmbeddings(ck *train.Checkpoint) ([]train.NamedTensor, error) {
	var out []train.NamedTensor
	state := ck.Sparse
	for len(state) > 0 {
		if len(state) < 8 {
			return nil, fmt.Errorf("embedding state: %d stray bytes after the last table", len(state))
		}
		n := binary.LittleEndian.Uint64(state)
		if n > uint64(len(state)-8) {
			return nil, fmt.Errorf("embedding state: %d bytes announced, %d left", n, len(state)-8)
		}
		nodeType, dim, rows, params, err := decodeEmbeddingRows(state[8 : 8+n])
		if err != nil {
			return nil, fmt.Errorf("embedding state: %w", err)
		}
		state = state[8+n:]
		out = append(out, train.NamedTensor{Name: train.PyGEmbeddingName(nodeType), Shape: []int{int(rows), dim}, Data: params})
	}
	return out, nil
}

// overrideGCNNorm sets the first-layer normalisation of a GCN checkpoint's
// model for inference (predict/embed --gcn-norm): "sym" is GCNConv's,
// which needs every node's in-degree and so layer-wise inference.
func overrideGCNNorm(ck *train.Checkpoint, norm, eval string, fanouts []int, full bool) error {
	if norm == "" {
		return nil
	}
	mode, err := inferenceMode(eval, fanouts, full)
	if err != nil {
		return err
	}
	if mode != EvalLayerwise {
		return config.Errorf("{GCNNorm} needs layer-wise inference (every node's in-degree): drop {Fanouts}, {Full} and {Eval} sampled")
	}
	if err := ck.Model.SetOpt("gcn-norm", norm); err != nil {
		return fmt.Errorf("%w: %w", config.Errorf("{GCNNorm} %s", norm), err)
	}
	if err := ck.Model.Validate(); err != nil {
		return fmt.Errorf("%w: %w", config.Errorf("{GCNNorm} %s", norm), err)
	}
	return nil
}
