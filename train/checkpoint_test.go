package train

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mpignn/train/optim"

	"github.com/stretchr/testify/require"
)

func sampleCheckpoint(t *testing.T, withBest bool) *Checkpoint {
	t.Helper()
	cfg := Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5}
	p, err := InitParams(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	n := len(p)
	c := &Checkpoint{
		Model: cfg, Adam: optim.DefaultAdam(0.01, 5e-4), Seed: 1<<63 + 12345, // > 2^53: must survive JSON
		Epoch: 7, Step: 1<<40 + 3, AdamT: 99,
		Params: p, M: make([]float32, n), V: make([]float32, n),
		BestEpoch: 5, BestValAcc: 0.8125, BestTest: 0.79,
		RunInfo: []byte(`{"fanout":[10,5],"batch":64}`),
	}
	for i := range c.M {
		c.M[i] = float32(i) * 1e-3
		c.V[i] = float32(i) * 1e-7
	}
	if withBest {
		c.BestParams = slices.Clone(p)
		c.BestParams[0] = 42
	}
	return c
}

func TestCheckpointRoundTrip(t *testing.T) {
	for _, withBest := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "nested", "ck")
		c := sampleCheckpoint(t, withBest)
		if err := SaveCheckpoint(dir, c); err != nil {
			t.Fatal(err)
		}
		// Overwriting works and leaves no temporary files behind.
		if err := SaveCheckpoint(dir, c); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != CheckpointFile {
			t.Fatalf("directory holds %v, want only %s", ents, CheckpointFile)
		}
		got, err := LoadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.Model != c.Model.Normalized() || got.Adam != c.Adam || got.Seed != c.Seed || got.Epoch != c.Epoch || got.Step != c.Step || got.AdamT != c.AdamT ||
			got.BestEpoch != c.BestEpoch || got.BestValAcc != c.BestValAcc || got.BestTest != c.BestTest || string(got.RunInfo) != string(c.RunInfo) {
			t.Fatalf("header round trip:\n got %+v\nwant %+v", got, c)
		}
		if !slices.Equal(got.Params, c.Params) || !slices.Equal(got.M, c.M) || !slices.Equal(got.V, c.V) || !slices.Equal(got.BestParams, c.BestParams) {
			t.Fatal("arrays differ after round trip")
		}
		if (got.BestParams == nil) != !withBest {
			t.Fatalf("best params presence %v, want %v", got.BestParams != nil, withBest)
		}
	}
}

// The sparse-input state (embedding rows and their optimizer) travels as an
// opaque section after the arrays; checkpoints without it keep their bytes.
func TestCheckpointSparseSection(t *testing.T) {
	plain, err := EncodeCheckpoint(sampleCheckpoint(t, true))
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		sparse []byte
	}{
		{"none", nil},
		{"one byte", []byte{7}},
		{"blob", bytes.Repeat([]byte("emb-state"), 1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sampleCheckpoint(t, true)
			c.Sparse = tc.sparse
			data, err := EncodeCheckpoint(c)
			require.NoError(t, err)
			if tc.sparse == nil {
				require.Equal(t, plain, data, "a checkpoint without sparse state must not change")
			}
			got, err := DecodeCheckpoint("ck", data)
			require.NoError(t, err)
			require.Equal(t, tc.sparse, got.Sparse)
			require.Equal(t, c.Params, got.Params)
			require.Equal(t, c.BestParams, got.BestParams)
		})
	}
}

func TestCheckpointLoadErrors(t *testing.T) {
	good := t.TempDir()
	if err := SaveCheckpoint(good, sampleCheckpoint(t, true)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(good, CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	withCRC := func(b []byte) []byte {
		b = slices.Clone(b)
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32c(b[:len(b)-4]))
		return b
	}
	for _, tc := range []struct {
		name string
		data func() []byte // nil: no file at all
		want string
	}{
		{"missing", nil, "missing file"},
		{"empty", func() []byte { return nil }, "truncated"},
		{"truncated", func() []byte { return data[:len(data)/2] }, "checksum mismatch"},
		{"bad magic", func() []byte { b := slices.Clone(data); b[0] = 'X'; return b }, "bad magic"},
		{"future version", func() []byte {
			b := slices.Clone(data)
			binary.LittleEndian.PutUint32(b[8:], 9)
			return b
		}, "format version 9"},
		{"flipped bit", func() []byte { b := slices.Clone(data); b[len(b)-40] ^= 1; return b }, "checksum mismatch"},
		{"header too long", func() []byte {
			b := slices.Clone(data)
			binary.LittleEndian.PutUint32(b[12:], 1<<30)
			return withCRC(b)
		}, "header length"},
		{"missing array", func() []byte {
			b := slices.Clone(data[:len(data)-4-40])
			return withCRC(append(b, 0, 0, 0, 0))
		}, "bytes of parameter data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.data != nil {
				if err := os.WriteFile(filepath.Join(dir, CheckpointFile), tc.data(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadCheckpoint(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Join(dir, CheckpointFile)) {
				t.Fatalf("error %v, want mention of %q and the file name", err, tc.want)
			}
			if tc.data == nil && !errors.Is(err, ErrNoCheckpoint) {
				t.Fatalf("missing checkpoint error %v does not wrap ErrNoCheckpoint", err)
			}
		})
	}
}

func TestSaveCheckpointRejectsInconsistent(t *testing.T) {
	c := sampleCheckpoint(t, false)
	c.V = c.V[1:]
	if err := SaveCheckpoint(t.TempDir(), c); err == nil || !strings.Contains(err.Error(), "values") {
		t.Fatalf("error %v", err)
	}
	c = sampleCheckpoint(t, false)
	c.RunInfo = []byte("{not json")
	if err := SaveCheckpoint(t.TempDir(), c); err == nil || !strings.Contains(err.Error(), "run info") {
		t.Fatalf("error %v", err)
	}
}
