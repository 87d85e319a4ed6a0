package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrainModelsCLI trains GCN, GAT and GATv2 with the real binary under mpirun on
// 2 ranks: both transports must end with the same weights (the models'
// result does not depend on how remote rows travel), and predict must
// rebuild the architecture the checkpoint names and score every node.
func TestTrainModelsCLI(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()
	weights := regexp.MustCompile(`weights=([0-9a-f]+)`)
	cases := []struct {
		model string
		extra []string
	}{
		{"gcn", nil},
		{"gat", []string{"--heads", "4", "--attn-dropout", "0.2"}},
		{"gatv2", []string{"--heads", "4", "--attn-dropout", "0.2"}},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			work := t.TempDir()
			got := map[string]string{}
			for _, tr := range []string{"rma", "alltoallv"} {
				ck := filepath.Join(work, "ck-"+tr)
				args := append([]string{bin, "train", "--parts", g.parts[2], "--model", tc.model, "--fanout", "5,5",
					"--batch", "64", "--hidden", "16", "--epochs", "2", "--seed", "3", "--quiet", "--transport", tr,
					"--checkpoint", ck}, tc.extra...)
				res := h.MPI(Job{Ranks: 2, Args: args, Timeout: 2 * time.Minute})
				require.NoError(t, res.Err, "train:\n%s", tail(res.Output, 20))
				m := weights.FindStringSubmatch(res.Output)
				require.NotNil(t, m, "no weights digest:\n%s", tail(res.Output, 10))
				got[tr] = m[1]
			}
			assert.Equal(t, got["rma"], got["alltoallv"], "%s: the transport changed the weights", tc.model)

			pred := filepath.Join(work, "pred.csv")
			res := h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "predict", "--parts", g.parts[2],
				"--checkpoint", filepath.Join(work, "ck-rma"), "--out", pred}})
			require.NoError(t, res.Err, "predict:\n%s", tail(res.Output, 20))
			b, err := os.ReadFile(pred)
			require.NoError(t, err)
			rows := strings.Split(strings.TrimSpace(string(b)), "\n")
			assert.Equal(t, "original_node_id,predicted_class", rows[0])
			assert.Len(t, rows, 3001, "a prediction per node of the 3,000-node graph")
		})
	}
}
