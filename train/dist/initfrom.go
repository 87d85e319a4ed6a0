package dist

import (
	"fmt"
	"os"
	"strings"

	"mpignn/collectives"
	"mpignn/train"
)

// initFrom replaces model's initial weights with a PyG-layout state dict
// (train --init-from FILE.safetensors, see train.ImportPyG). Rank 0 reads
// the file and broadcasts its bytes, so only rank 0 needs to see it; every
// rank decodes the same bytes and so starts from the same weights. It is
// collective.
func initFrom(c *collectives.Comm, path string, model *train.Model) error {
	var data []byte
	var rerr error
	if c.Rank() == 0 {
		data, rerr = os.ReadFile(path)
	}
	data, err := BcastBytes(c, 0, data, rerr)
	if err != nil {
		return fmt.Errorf("--init-from: %w", err)
	}
	ts, _, err := train.DecodeSafetensors(path, data)
	for _, t := range ts {
		if err == nil && strings.HasPrefix(t.Name, "embeddings.") {
			err = fmt.Errorf("tensor %s: learnable embedding tables are not imported yet (they live in sharded MPI windows); drop them to start the other weights from the file", t.Name)
		}
	}
	if err == nil {
		var p []float32
		if p, err = train.ImportPyG(model.Config(), ts); err == nil {
			err = model.SetParams(p)
		}
	}
	if err != nil {
		return fmt.Errorf("--init-from %s: %w", path, err)
	}
	return nil
}

// saveImported writes the checkpoint of a run that imported its weights
// (--init-from) and trains no epoch (--epochs 0): the imported model, ready
// for predict, embed or export, and a later --resume. The trainer's loop
// writes checkpoints only after an epoch. It is collective.
func saveImported(c *collectives.Comm, tr *train.Trainer, ro train.RunOptions) error {
	var err error
	if c.Rank() == 0 && ro.CheckpointDir != "" {
		err = train.SaveCheckpoint(ro.CheckpointDir, tr.Checkpoint(ro.RunInfo))
	}
	if err := Agree(c, err); err != nil {
		return fmt.Errorf("--init-from: %w", err)
	}
	return nil
}
