package dtrain

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagNamer is a writer that spells fields as the command line does.
type flagNamer struct{ bytes.Buffer }

func (*flagNamer) FieldName(path string) string {
	return map[string]string{"Run.CheckpointDir": "--checkpoint"}[path]
}

// TestWriteFinalNoEpochs: a run of no epochs says what it did and how to go
// on, naming the checkpoint flag as the writer spells it (not the field's
// path in braces), and never reading a directory's braces as a field.
func TestWriteFinalNoEpochs(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"no checkpoint", Result{task: nodeTask{}, Weights: "ab"},
			"final: epochs=0 weights=ab: the initial weights, not trained or evaluated; no checkpoint written (no --checkpoint)\n"},
		{"a checkpoint", Result{task: nodeTask{}, Weights: "ab", checkpointDir: "ck{Run.CheckpointDir}"},
			"final: epochs=0 weights=ab: the initial weights, not trained or evaluated; predict and embed --checkpoint ck{Run.CheckpointDir} evaluate it\n"},
		{"imported, with embeddings", Result{task: linkTask{}, Weights: "ab", Embeddings: "cd", initFrom: "m.pt"},
			"final: epochs=0 weights=ab embeddings=cd: imported m.pt, not trained or evaluated; no checkpoint written (no --checkpoint)\n"},
		{"stopped", Result{task: nodeTask{}, Stopped: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w flagNamer
			require.NoError(t, tc.r.WriteFinal(&w))
			assert.Equal(t, tc.want, w.String())
		})
	}
}
