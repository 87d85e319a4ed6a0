package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"mpignn/internal/osx"
	"mpignn/internal/tempout"
	"mpignn/train"
	"mpignn/train/dtrain"
)

// pygSidecar is the JSON written beside an exported state dict: what a
// Python user needs to rebuild the model (class and constructor arguments)
// and to feed it the inputs mpignn used.
type pygSidecar struct {
	Format     string             `json:"format"`
	PyGVersion string             `json:"pyg_version"`
	StateDict  string             `json:"state_dict"`
	Model      train.PyGModelSpec `json:"model"`
	// RowNormalize: the run scaled every feature row to unit L1 norm
	// (train --norm-feat); the model expects the same inputs.
	RowNormalize bool            `json:"row_normalize"`
	Weights      string          `json:"weights"` // "best" (best validation) or "final"
	Arch         string          `json:"mpignn_arch"`
	Config       json.RawMessage `json:"mpignn_config"`
}

// sidecarPath is the JSON beside FILE.safetensors: FILE.json.
func sidecarPath(out string) string {
	return strings.TrimSuffix(out, ".safetensors") + ".json"
}

// runExport implements `mpignn export --checkpoint DIR --out
// FILE.safetensors [--format pyg] [--final]`: the checkpoint's model as a
// PyTorch Geometric state dict plus FILE.json with its constructor. It
// reads one file and needs no MPI.
func runExport(args []string) error {
	fs := newFlagSet("export", "mpignn export --checkpoint DIR --out FILE.safetensors [--format pyg] [--final]",
		"Writes a checkpoint's model as a PyTorch Geometric state dict (safetensors) and FILE.json with the\n"+
			"constructor arguments (docs/python.md: using a trained model from Python).")
	ckDir := fs.String("checkpoint", "", "checkpoint directory written by mpignn train (required)")
	out := fs.String("out", "", "output state dict, FILE.safetensors; the constructor arguments go to FILE.json (required)")
	format := fs.String("format", "pyg", "layout of the tensor names: pyg (torch_geometric.nn.models GraphSAGE/GCN/GAT)")
	final := fs.Bool("final", false, "export the final weights instead of the best-validation ones")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return flagMistake(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case *ckDir == "" || *out == "":
		return flagMistake(errors.New("--checkpoint and --out are required"))
	case *format != "pyg":
		return flagMistake(fmt.Errorf("--format %q: the only layout is pyg", *format))
	case !strings.HasSuffix(*out, ".safetensors"):
		return flagMistake(fmt.Errorf("--out %s: the name must end in .safetensors (the sidecar is FILE.json)", *out))
	}
	if !onRankZero("export", "a checkpoint is exported by one process") {
		return nil
	}
	// SIGINT/SIGTERM remove a half-written output and exit 130/143.
	cleanup := tempout.NewCleanup("mpignn export")
	defer cleanup.Listen()()
	cleanup.Add(tempout.Own(*out))
	cleanup.Add(tempout.Own(sidecarPath(*out)))
	ck, err := train.LoadCheckpoint(*ckDir)
	if err != nil {
		return err
	}
	params, weights := ck.BestParams, "best"
	// A heterogeneous checkpoint holds its embeddings of the last epoch
	// only, so its model goes out with the final weights (as predict uses).
	if *final || params == nil || ck.Model.Hetero != nil {
		params, weights = ck.Params, "final"
	}
	embeds, err := dtrain.CheckpointEmbeddings(ck)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", *ckDir, err)
	}
	st, err := train.EncodePyG(ck.Model, params, embeds...)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", *ckDir, err)
	}
	spec, err := train.PyGSpec(ck.Model, embeds)
	if err != nil {
		return err
	}
	var info struct {
		RowNorm bool `json:"row_norm"`
	}
	if len(ck.RunInfo) > 0 {
		if err := json.Unmarshal(ck.RunInfo, &info); err != nil {
			return fmt.Errorf("checkpoint %s: run info: %w", *ckDir, err)
		}
	}
	mj, err := json.Marshal(ck.Model)
	if err != nil {
		return err
	}
	side, err := json.MarshalIndent(pygSidecar{
		Format: "pyg", PyGVersion: train.PyGVersion, StateDict: filepath.Base(*out), Model: spec,
		RowNormalize: info.RowNorm, Weights: weights, Arch: ck.Model.ArchName(), Config: mj,
	}, "", "  ")
	if err != nil {
		return err
	}
	if err := osx.WriteFileAtomic(*out, st); err != nil {
		return err
	}
	if err := osx.WriteFileAtomic(sidecarPath(*out), append(side, '\n')); err != nil {
		return err
	}
	fmt.Printf("export: wrote %s (%s, %s weights) and %s\n", *out, spec.Class, weights, sidecarPath(*out))
	return nil
}
