package train

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOptsCanonical: the same parameters set in any order give the same
// Opts (Configs compare with ==), and With(key, nil) removes a key.
func TestOptsCanonical(t *testing.T) {
	a := Opts("").With("heads", 4).With("attn_dropout", float32(0.3))
	b := Opts("").With("attn_dropout", float32(0.3)).With("heads", 4)
	assert.Equal(t, a, b)
	assert.Equal(t, Opts(`attn_dropout=0.3,heads=4`), a)
	assert.Equal(t, []string{"attn_dropout", "heads"}, a.Keys())
	assert.Equal(t, 4, a.Int("heads"))
	assert.Equal(t, float32(0.3), a.Float32("attn_dropout"))
	assert.Equal(t, Opts("heads=4"), a.With("attn_dropout", nil))
	assert.Equal(t, Opts("heads=2"), a.With("attn_dropout", nil).With("heads", 2), "a key set again replaces its value")

	c := Opts("").With("aggr", "max").With("train_eps", true)
	s, ok := c.Text("aggr")
	assert.True(t, ok)
	assert.Equal(t, "max", s, "a choice reads unquoted")
	assert.Equal(t, "max", c.String("aggr", "mean"))
	assert.Equal(t, "mean", Opts("").String("aggr", "mean"))
	assert.True(t, c.Bool("train_eps"))
	assert.False(t, c.Has("heads"))
}

// TestConfigJSONOpts: a config's parameters sit at the top level of its
// JSON, as GAT's heads and attn_dropout did when they were fields, and
// read back into an equal config; a GAT config written by earlier builds
// (fields in their old place) reads the same.
func TestConfigJSONOpts(t *testing.T) {
	cfg := Config{Arch: ArchGAT, InDim: 5, Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.5, Opts: GATOpts(4, 0.25)}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	assert.JSONEq(t, `{"in_dim":5,"hidden":8,"classes":3,"layers":2,"dropout":0.5,"heads":4,"attn_dropout":0.25}`, string(b))

	old := `{"in_dim":5,"hidden":8,"classes":3,"layers":2,"dropout":0.5,"heads":4,"attn_dropout":0.25}`
	var got Config
	require.NoError(t, json.Unmarshal([]byte(old), &got))
	got.Arch = ArchGAT
	assert.Equal(t, cfg, got)
	require.NoError(t, got.Validate())

	// A config without parameters writes exactly what it did before.
	sage := Config{InDim: 5, Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.5}
	b, err = json.Marshal(sage)
	require.NoError(t, err)
	assert.Equal(t, `{"in_dim":5,"hidden":8,"classes":3,"layers":2,"dropout":0.5}`, string(b))

	for _, bad := range []string{`{"in_dim":5,"x":{"a":1}}`, `{"in_dim":5,"x":[1,2]}`, `{"in_dim":5,"x":"a,b"}`} {
		require.Error(t, json.Unmarshal([]byte(bad), &got), bad)
	}
	// A key no architecture has is refused by name.
	require.NoError(t, json.Unmarshal([]byte(`{"in_dim":5,"classes":3,"layers":1,"edge_width":3}`), &got))
	assert.ErrorContains(t, got.Validate(), `unknown key "edge_width"`)
}

// TestSetOpt: a flag's text becomes the parameter's value, checked
// against its kind and owner; the value the layer reads when the key is
// absent (Omit) is not stored, so such configs stay as they were.
func TestSetOpt(t *testing.T) {
	tests := []struct {
		name, arch, flag, text string
		want                   Opts
		err                    string
	}{
		{"int", ArchGAT, "heads", "4", "heads=4", ""},
		{"float", ArchGAT, "attn-dropout", "0.5", "attn_dropout=0.5", ""},
		{"omitted value", ArchGAT, "attn-dropout", "0", "", ""},
		{"not an int", ArchGAT, "heads", "four", "", `Opts.Heads "four" is not an integer`},
		{"not a number", ArchGAT, "attn-dropout", "x", "", `Opts.AttnDropout "x" is not a number`},
		{"another model's", ArchSAGE, "heads", "4", "", "Opts.Heads applies to Arch gat only, not sage"},
		{"choice", ArchGCN, "gcn-norm", GCNNormSym, `gcn_norm="sym"`, ""},
		{"choice default", ArchGCN, "gcn-norm", GCNNormMean, "", ""},
		{"bad choice", ArchGCN, "gcn-norm", "both", "", `Opts.GcnNorm "both": want one of mean, sym`},
		{"unknown", ArchGAT, "colour", "red", "", `unknown key "colour"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Arch: tc.arch}
			err := c.SetOpt(tc.flag, tc.text)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Opts)
		})
	}
}

// TestArchParams: every key is declared once with one kind, its flag is
// the key in kebab case, and a key shared by architectures (GAT's heads)
// is owned by each of them.
func TestArchParams(t *testing.T) {
	seen := map[string]ParamKind{}
	for _, a := range builtinArchs() {
		for _, p := range a.Params {
			if k, ok := seen[p.Key]; ok {
				assert.Equal(t, k, p.Kind, "%s: %s declared with two kinds", a.Name, p.Key)
			}
			seen[p.Key] = p.Kind
			_, err := p.literal(p.Default)
			assert.NoError(t, err, "%s: %s's default %q", a.Name, p.Key, p.Default)
			assert.True(t, ArchOwns(a.Name, p.Flag()))
		}
	}
	assert.True(t, IsArchParam("heads"))
	assert.False(t, IsArchParam("hidden"))
	assert.False(t, ArchOwns(ArchSAGE, "heads"))
	assert.Equal(t, "Opts.AttnDropout", OptField("attn_dropout"))
}
