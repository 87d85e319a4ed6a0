package dist

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidateCheckpointFlags: --overwrite-checkpoint needs a checkpoint
// directory and contradicts --resume; each combination is refused before
// any collective call, naming the flags.
func TestValidateCheckpointFlags(t *testing.T) {
	tests := []struct {
		name              string
		dir               string
		resume, overwrite bool
		err               string // "" = valid
	}{
		{"fresh", "ck", false, false, ""},
		{"resume", "ck", true, false, ""},
		{"overwrite", "ck", false, true, ""},
		{"resume and overwrite", "ck", true, true, "--resume and --overwrite-checkpoint"},
		{"overwrite without dir", "", false, true, "--overwrite-checkpoint needs a checkpoint directory"},
		{"resume without dir", "", true, false, "resume needs a checkpoint directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := TrainConfig{PartDir: "p", Fanouts: []int{5}, Batch: 1, Epochs: 1,
				CheckpointDir: tc.dir, Resume: tc.resume, OverwriteCheckpoint: tc.overwrite}
			err := cfg.validate()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}
