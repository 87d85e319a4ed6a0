package train

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"mpignn/train/optim"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// archConfigs is one small configuration per registered architecture.
var archConfigs = []Config{
	{Arch: ArchSAGE, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5},
	{Arch: ArchGCN, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5},
	{Arch: ArchGAT, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5, Opts: GATOpts(2, 0.25)},
}

// TestCheckpointArchRoundTrip: every architecture's config comes back with
// its arch, so predict and resume rebuild the same model.
func TestCheckpointArchRoundTrip(t *testing.T) {
	for _, cfg := range archConfigs {
		t.Run(cfg.Arch, func(t *testing.T) {
			p, err := InitParams(cfg, 3)
			require.NoError(t, err)
			n := len(p)
			c := &Checkpoint{Model: cfg, Adam: optim.DefaultAdam(0.01, 0), Seed: 3, Params: p, M: make([]float32, n), V: make([]float32, n)}
			data, err := EncodeCheckpoint(c)
			require.NoError(t, err)
			got, err := DecodeCheckpoint("ck", data)
			require.NoError(t, err)
			assert.Equal(t, cfg, got.Model)
			assert.Equal(t, p, got.Params)
			m, err := NewModel(got.Model, 0)
			require.NoError(t, err)
			require.NoError(t, m.SetParams(got.Params))
			assert.Equal(t, cfg.Arch, m.Config().Arch)
		})
	}
}

// TestCheckpointV1Loads reads a checkpoint written by the build before
// architectures existed (format version 1, testdata/checkpoint-v1-sage.bin,
// InDim 4, Hidden 5, Classes 3, 2 layers, seed 7): it loads as GraphSAGE and
// resumes into a trainer configured the same way.
func TestCheckpointV1Loads(t *testing.T) {
	data, err := os.ReadFile("testdata/checkpoint-v1-sage.bin")
	require.NoError(t, err)
	require.EqualValues(t, 1, binary.LittleEndian.Uint32(data[8:]), "fixture must stay a version-1 file")
	c, err := DecodeCheckpoint("v1", data)
	require.NoError(t, err)
	want := Config{Arch: ArchSAGE, InDim: 4, Hidden: 5, Classes: 3, Layers: 2, Dropout: 0.5, InputDropout: 0.25}
	require.Equal(t, want, c.Model)
	p, err := InitParams(want, 7)
	require.NoError(t, err)
	require.Equal(t, p, c.Params, "version-1 parameters are GraphSAGE's layout")
	require.Len(t, c.BestParams, len(p))
	assert.Equal(t, p[0]+0.5, c.BestParams[0])
	assert.Equal(t, int64(10), c.Step)
	assert.JSONEq(t, `{"dataset":"x"}`, string(c.RunInfo))

	g := newSynthGraph(1, 50, 4, 3)
	o := testOpts{Model: Config{InDim: 4, Hidden: 5, Classes: 3, Layers: 2, Dropout: 0.5, InputDropout: 0.25}, Options: Options{Adam: optim.DefaultAdam(0.01, 5e-4), Seed: 7}}
	tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, 7, []int{3, 2}, 8))
	require.NoError(t, err)
	require.NoError(t, tr.Restore(c))
	assert.Equal(t, p, tr.Model().Params())
	// Restoring it into another architecture is refused by name.
	o.Model = Config{Arch: ArchGCN, InDim: 4, Hidden: 5, Classes: 3, Layers: 2, Dropout: 0.5, InputDropout: 0.25}
	tr, err = newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, 7, []int{3, 2}, 8))
	require.NoError(t, err)
	assert.ErrorContains(t, tr.Restore(c), "checkpoint holds a sage model, this run configures gcn")
}

// TestCheckpointHeaderRefusals: headers this build cannot interpret are
// refused with a message naming the reason.
func TestCheckpointHeaderRefusals(t *testing.T) {
	cfg := archConfigs[2]
	p, err := InitParams(cfg, 1)
	require.NoError(t, err)
	n := len(p)
	good, err := EncodeCheckpoint(&Checkpoint{Model: cfg, Adam: optim.DefaultAdam(0.01, 0), Params: p, M: make([]float32, n), V: make([]float32, n)})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		version uint32
		edit    func(h map[string]any)
		want    string
	}{
		{"unknown arch", 2, func(h map[string]any) { h["arch"] = "gin2" }, `unknown model "gin2" (known: sage, gcn, gat, gin, gine, rgcn, hsage); this build cannot load it`},
		{"no arch", 2, func(h map[string]any) { delete(h, "arch") }, "names no model arch"},
		{"unknown config field", 2, func(h map[string]any) { h["model"].(map[string]any)["edge_width"] = 3 }, `unknown key "edge_width"`},
		{"version 1 with gat fields", 1, func(h map[string]any) { delete(h, "arch") }, "gat only, not sage"},
		{"newer version", 4, func(h map[string]any) {}, "format version 4, this build reads versions 1 to 3"},
		{"version 3 without epoch progress", 3, func(h map[string]any) {}, "format version 3 with epoch step 0 and 0 rows"},
		{"epoch step in version 2", 2, func(h map[string]any) { h["epoch_step"] = 2; h["epoch_sums"] = []any{[]any{1, 2, 3, 4, 5, 6}} }, "format version 2 with epoch step 2"},
		{"short epoch sums", 3, func(h map[string]any) { h["epoch_step"] = 2; h["epoch_sums"] = []any{[]any{1, 2}} }, "epoch sums of rank 0 hold 2 values, want 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := rewriteHeader(t, good, tc.version, tc.edit)
			_, err := DecodeCheckpoint("ck", data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Unedited, the rewrite helper produces a loadable file (so the cases
	// above fail for their edit, not for the rewrite).
	_, err = DecodeCheckpoint("ck", rewriteHeader(t, good, 2, func(map[string]any) {}))
	require.NoError(t, err)
}

// rewriteHeader returns a copy of a checkpoint file with its version set and
// its JSON header edited, with a fresh checksum.
func rewriteHeader(t *testing.T, data []byte, version uint32, edit func(map[string]any)) []byte {
	t.Helper()
	le := binary.LittleEndian
	hl := int(le.Uint32(data[12:]))
	var h map[string]any
	require.NoError(t, json.Unmarshal(data[16:16+hl], &h))
	edit(h)
	hj, err := json.Marshal(h)
	require.NoError(t, err)
	out := slices.Clone(data[:8])
	out = le.AppendUint32(out, version)
	out = le.AppendUint32(out, uint32(len(hj)))
	out = append(out, hj...)
	out = append(out, data[16+hl:len(data)-4]...)
	return le.AppendUint32(out, crc32c(out))
}
