package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"mpignn/internal/osx"
	"mpignn/train/metrics"
	"mpignn/train/optim"
)

// Checkpoint is the complete state of a training run. The random state is
// implicit: every draw is a pure function of (Seed, epoch, step, node), so
// Seed, Epoch and Step are the generator state.
type Checkpoint struct {
	Model Config
	Adam  optim.AdamConfig
	// Recipe is the run's training recipe, nil for the default (Adam at a
	// constant rate; its header then reads as before). With SGD, M holds
	// the momentum buffer (zeros without momentum), V zeros and AdamT the
	// steps taken.
	Recipe *Recipe
	// EvalsSinceBest counts the evaluations since the best one
	// (Recipe.EarlyStop's counter).
	EvalsSinceBest int
	Seed           uint64
	Epoch          int   // completed epochs
	Step           int64 // optimizer steps taken (dropout masks are keyed by it)
	AdamT          int64
	// Params, M and V have Model.NumParams() elements each.
	Params, M, V []float32
	// Best-validation state; BestParams is nil before the first epoch.
	BestEpoch  int
	BestValAcc float64
	BestTest   float64
	// BestValLink and BestTestLink are the link figures of the best epoch
	// (nil for node classification); link runs select on BestValLink.MRR,
	// so a resumed run needs it to continue the same selection.
	BestValLink, BestTestLink *metrics.LinkFigures
	// BestValTargets and BestTestTargets are a real-target task's figures
	// of the best epoch (nil otherwise); the run selects on the validation
	// ones.
	BestValTargets, BestTestTargets *metrics.TargetFigures
	BestParams                      []float32
	// RunInfo is opaque to this package (the CLI stores its flags there).
	RunInfo []byte
	// Sparse is the state of the learnable inputs (sharded node embeddings
	// and their sparse optimizer, see SparseInputs), opaque here; nil for
	// models without them.
	Sparse []byte
	// EpochStep is, for a checkpoint written in the middle of an epoch,
	// the number of steps of epoch Epoch+1 already taken (0 at an epoch's
	// end). EpochSums then holds every rank's metric sums of those steps
	// (one row per rank, in rank order: loss, correct, seeds, remote rows,
	// cache hits, cache lookups), so that the resumed epoch reports the
	// same figures as an uninterrupted one.
	EpochStep int
	EpochSums [][]float64
}

// CheckpointFile is the name of the checkpoint inside its directory.
const CheckpointFile = "checkpoint.bin"

// Format versions: 1 held a GraphSAGE config under "model"; 2 adds "arch"
// (the registry name) beside the architecture's config JSON; 3 is version
// 2 written in the middle of an epoch (epoch_step and epoch_sums in the
// header). Checkpoints at an epoch's end are still written as version 2,
// so builds that know only 2 read them; a build that knows only 2 refuses
// a mid-epoch checkpoint instead of resuming it at the epoch's start.
// Version 1 files still load, as GraphSAGE.
const (
	ckMagic        = "MPIGNNCK"
	ckVersion      = 2
	ckVersionV1    = 1
	ckVersionMidEp = 3
)

// ckHeader is the JSON header of the file. Integers that may exceed 2^53
// travel as strings so that JSON does not round them.
type ckHeader struct {
	Arch  string           `json:"arch,omitempty"` // version 2; absent in version 1 (GraphSAGE)
	Model json.RawMessage  `json:"model"`
	Adam  optim.AdamConfig `json:"adam"`
	// Recipe and EvalsSinceBest are absent for the default recipe and a
	// zero count, so such checkpoints keep their exact header.
	Recipe         *Recipe `json:"recipe,omitempty"`
	EvalsSinceBest int     `json:"evals_since_best,omitempty"`
	Seed           uint64  `json:"seed,string"`
	Epoch          int     `json:"epoch"`
	Step           int64   `json:"step,string"`
	AdamT          int64   `json:"adam_t,string"`
	NumParams      int     `json:"num_params"`
	BestEpoch      int     `json:"best_epoch"`
	BestValAcc     float64 `json:"best_val_acc"`
	BestTest       float64 `json:"best_test_acc"`
	HasBest        bool    `json:"has_best_params"`
	// Link figures of the best epoch: absent for node classification, so
	// node checkpoints keep their exact header.
	BestValLink  *metrics.LinkFigures `json:"best_val_link,omitempty"`
	BestTestLink *metrics.LinkFigures `json:"best_test_link,omitempty"`
	// Real-target figures of the best epoch: absent for the other tasks.
	BestValTargets  *metrics.TargetFigures `json:"best_val_targets,omitempty"`
	BestTestTargets *metrics.TargetFigures `json:"best_test_targets,omitempty"`
	RunInfo         json.RawMessage        `json:"run_info,omitempty"`
	// SparseBytes is the length of the sparse-input state after the
	// parameter arrays (absent, 0, for models without learnable inputs).
	SparseBytes int64 `json:"sparse_bytes,omitempty,string"`
	// Version 3 (mid-epoch) only; see Checkpoint.EpochStep.
	EpochStep int         `json:"epoch_step,omitempty"`
	EpochSums [][]float64 `json:"epoch_sums,omitempty"`
}

// File layout (little endian):
//
//	magic "MPIGNNCK" | version u32 | header length u32 | header JSON |
//	params | m | v | [best params]   (float32 each, NumParams values) |
//	[sparse-input state, SparseBytes bytes] |
//	CRC-32C (Castagnoli) u32 of everything before it
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// SaveCheckpoint writes c to dir/checkpoint.bin atomically (temporary file,
// fsync, rename, directory fsync), creating dir if needed. Only one rank
// should call it.
func SaveCheckpoint(dir string, c *Checkpoint) error {
	data, err := EncodeCheckpoint(c)
	if err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if err := osx.WriteFileAtomic(filepath.Join(dir, CheckpointFile), data); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}

// ErrCheckpointExists is wrapped by PrepareCheckpointDir when a fresh run
// would write over an existing checkpoint.
var ErrCheckpointExists = errors.New("already holds a checkpoint")

// PrepareCheckpointDir readies dir for a run's checkpoints before its first
// epoch, so that a bad directory is refused at start instead of at the first
// save, possibly hours later. A fresh run (resume false) refuses a directory
// that already holds a checkpoint unless overwrite is set, because its first
// save would silently replace the old one; it then creates dir (and missing
// parents). Whenever dir exists, a small probe file is written, synced and
// removed in it: a real write, because permission bits do not tell whether
// root can write, nor whether the file system is read-only or full. On
// resume a missing (or unreachable) dir is left for LoadCheckpoint to
// report.
//
// It returns the directories it created, deepest first, so that a run that
// ends without writing a checkpoint can remove them again (RemoveEmptyDirs);
// on error it has already removed them. Only one rank should call it.
func PrepareCheckpointDir(dir string, resume, overwrite bool) ([]string, error) {
	if !resume && !overwrite {
		if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err == nil {
			return nil, fmt.Errorf("checkpoint directory %s %w: pass --resume to continue from it or --overwrite-checkpoint to start over and replace it", dir, ErrCheckpointExists)
		}
	}
	var created []string
	if resume {
		if _, err := os.Stat(dir); err != nil {
			return nil, nil
		}
	} else {
		created = missingDirs(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			RemoveEmptyDirs(created)
			return nil, fmt.Errorf("checkpoint directory %s: %w", dir, err)
		}
	}
	if err := probeWrite(dir); err != nil {
		RemoveEmptyDirs(created)
		return nil, fmt.Errorf("checkpoint directory %s is not writable: %w", dir, err)
	}
	return created, nil
}

// missingDirs lists dir and those of its ancestors that do not exist yet,
// deepest first: what MkdirAll(dir) will create.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// RemoveEmptyDirs removes each of dirs (deepest first) that is empty and
// keeps the others: os.Remove refuses a directory with content, so nothing
// written into them is ever lost.
func RemoveEmptyDirs(dirs []string) {
	for _, d := range dirs {
		os.Remove(d)
	}
}

// probeWrite writes, syncs and removes a small temporary file in dir.
func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write([]byte("mpignn write probe\n"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// EncodeCheckpoint serialises c in the checkpoint file format.
func EncodeCheckpoint(c *Checkpoint) ([]byte, error) {
	n := c.Model.NumParams()
	if err := c.Model.Validate(); err != nil {
		return nil, err
	}
	if len(c.Params) != n || len(c.M) != n || len(c.V) != n || (c.BestParams != nil && len(c.BestParams) != n) {
		return nil, fmt.Errorf("%d/%d/%d/%d values for a model of %d parameters", len(c.Params), len(c.M), len(c.V), len(c.BestParams), n)
	}
	mj, err := json.Marshal(c.Model)
	if err != nil {
		return nil, err
	}
	h := ckHeader{
		Arch: c.Model.ArchName(), Model: mj, Adam: c.Adam, Recipe: c.Recipe, EvalsSinceBest: c.EvalsSinceBest, Seed: c.Seed, Epoch: c.Epoch, Step: c.Step, AdamT: c.AdamT,
		NumParams: n, BestEpoch: c.BestEpoch, BestValAcc: c.BestValAcc, BestTest: c.BestTest,
		HasBest:     c.BestParams != nil,
		BestValLink: c.BestValLink, BestTestLink: c.BestTestLink,
		BestValTargets: c.BestValTargets, BestTestTargets: c.BestTestTargets,
		SparseBytes: int64(len(c.Sparse)),
		EpochStep:   c.EpochStep, EpochSums: c.EpochSums,
	}
	version := uint32(ckVersion)
	switch {
	case c.EpochStep < 0:
		return nil, fmt.Errorf("negative epoch step %d", c.EpochStep)
	case c.EpochStep > 0 && len(c.EpochSums) == 0:
		return nil, fmt.Errorf("mid-epoch checkpoint (step %d) without the ranks' epoch sums", c.EpochStep)
	case c.EpochStep > 0:
		version = ckVersionMidEp
	}
	if len(c.RunInfo) > 0 {
		if !json.Valid(c.RunInfo) {
			return nil, errors.New("run info is not valid JSON")
		}
		h.RunInfo = c.RunInfo
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	arrays := [][]float32{c.Params, c.M, c.V}
	if h.HasBest {
		arrays = append(arrays, c.BestParams)
	}
	var buf bytes.Buffer
	buf.Grow(16 + len(hj) + 4*n*len(arrays) + len(c.Sparse) + 4)
	buf.WriteString(ckMagic)
	buf.Write(binary.LittleEndian.AppendUint32(nil, version))
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(hj))))
	buf.Write(hj)
	var w [4]byte
	for _, a := range arrays {
		for _, v := range a {
			binary.LittleEndian.PutUint32(w[:], math.Float32bits(v))
			buf.Write(w[:])
		}
	}
	buf.Write(c.Sparse)
	buf.Write(binary.LittleEndian.AppendUint32(nil, crc32c(buf.Bytes())))
	return buf.Bytes(), nil
}

// ErrNoCheckpoint is wrapped by LoadCheckpoint when dir holds no checkpoint.
var ErrNoCheckpoint = errors.New("no checkpoint")

// LoadCheckpoint reads dir/checkpoint.bin and verifies magic, version,
// sizes and checksum. Every failure names the file and what is wrong.
func LoadCheckpoint(dir string) (*Checkpoint, error) {
	path := filepath.Join(dir, CheckpointFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint %s: %w (missing file; was a checkpoint written to this directory?)", path, ErrNoCheckpoint)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return DecodeCheckpoint(path, data)
}

// DecodeCheckpoint parses the bytes of a checkpoint file (read by one rank
// and broadcast, for example); name is used in error messages.
func DecodeCheckpoint(name string, data []byte) (*Checkpoint, error) {
	path := name
	bad := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint %s: "+format, append([]any{path}, args...)...)
	}
	if len(data) < len(ckMagic)+12 {
		return nil, bad("truncated: %d bytes is shorter than any checkpoint", len(data))
	}
	if string(data[:len(ckMagic)]) != ckMagic {
		return nil, bad("not an mpignn checkpoint (bad magic %q)", data[:len(ckMagic)])
	}
	le := binary.LittleEndian
	version := le.Uint32(data[8:])
	if version != ckVersion && version != ckVersionV1 && version != ckVersionMidEp {
		return nil, bad("format version %d, this build reads versions %d to %d (written by a newer mpignn?)", version, ckVersionV1, ckVersionMidEp)
	}
	body, sum := data[:len(data)-4], le.Uint32(data[len(data)-4:])
	if got := crc32c(body); got != sum {
		return nil, bad("checksum mismatch (stored %08x, computed %08x): the file is corrupt or truncated", sum, got)
	}
	hl := int(le.Uint32(data[12:]))
	if 16+hl > len(body) {
		return nil, bad("header length %d exceeds the file", hl)
	}
	var h ckHeader
	if err := json.Unmarshal(body[16:16+hl], &h); err != nil {
		return nil, bad("header: %v", err)
	}
	modelVersion := version
	if version == ckVersionMidEp {
		modelVersion = ckVersion
	}
	cfg, err := decodeModelConfig(modelVersion, h.Arch, h.Model)
	if err != nil {
		return nil, bad("%v", err)
	}
	n := cfg.NumParams()
	if h.NumParams != n {
		return nil, bad("header says %d parameters but its model config has %d", h.NumParams, n)
	}
	count := 3
	if h.HasBest {
		count = 4
	}
	rest := body[16+hl:]
	if h.SparseBytes < 0 || int64(len(rest)) != int64(4*n*count)+h.SparseBytes {
		return nil, bad("%d bytes of parameter data, want %d (%d arrays of %d float32, %d bytes of sparse-input state)", len(rest), int64(4*n*count)+h.SparseBytes, count, n, h.SparseBytes)
	}
	if h.Epoch < 0 || h.Step < 0 || h.AdamT < 0 {
		return nil, bad("negative epoch %d, step %d or adam step %d", h.Epoch, h.Step, h.AdamT)
	}
	if mid := version == ckVersionMidEp; mid != (h.EpochStep > 0) || mid != (len(h.EpochSums) > 0) {
		return nil, bad("format version %d with epoch step %d and %d rows of epoch sums", version, h.EpochStep, len(h.EpochSums))
	}
	for i, row := range h.EpochSums {
		if len(row) != epochSums {
			return nil, bad("epoch sums of rank %d hold %d values, want %d", i, len(row), epochSums)
		}
	}
	next := func() []float32 {
		a := make([]float32, n)
		for i := range a {
			a[i] = math.Float32frombits(le.Uint32(rest[4*i:]))
		}
		rest = rest[4*n:]
		return a
	}
	c := &Checkpoint{
		Model: cfg, Adam: h.Adam, Recipe: h.Recipe, EvalsSinceBest: h.EvalsSinceBest, Seed: h.Seed, Epoch: h.Epoch, Step: h.Step, AdamT: h.AdamT,
		BestEpoch: h.BestEpoch, BestValAcc: h.BestValAcc, BestTest: h.BestTest,
		BestValLink: h.BestValLink, BestTestLink: h.BestTestLink,
		BestValTargets: h.BestValTargets, BestTestTargets: h.BestTestTargets,
		RunInfo:   []byte(h.RunInfo),
		EpochStep: h.EpochStep, EpochSums: h.EpochSums,
	}
	c.Params, c.M, c.V = next(), next(), next()
	if h.HasBest {
		c.BestParams = next()
	}
	if h.SparseBytes > 0 {
		c.Sparse = slices.Clone(rest[:h.SparseBytes])
	}
	return c, nil
}

// decodeModelConfig reads the model config of a checkpoint header: version
// 1 files hold a GraphSAGE config (no arch); version 2 files name the
// architecture, whose config must hold no key that neither Config nor the
// architecture's Params know (a field this build does not know would
// change the model silently): Config's JSON takes every other key into
// Opts, and Validate refuses those the architecture does not own.
func decodeModelConfig(version uint32, arch string, raw json.RawMessage) (Config, error) {
	var cfg Config
	switch {
	case version == ckVersionV1 && arch != "":
		return cfg, fmt.Errorf("format version 1 with an arch (%q) field", arch)
	case version == ckVersionV1:
		arch = ArchSAGE // the only model version 1 knew
	case arch == "":
		return cfg, errors.New("header names no model arch")
	}
	if _, err := lookupArch(arch); err != nil {
		return cfg, fmt.Errorf("model: %w; this build cannot load it", err)
	}
	if len(raw) == 0 {
		return cfg, errors.New("header has no model config")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%s model config: %w", arch, err)
	}
	cfg.Arch = arch
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// recipe is the checkpoint's recipe (the default for nil), normalized.
func (c *Checkpoint) recipe() Recipe {
	if c.Recipe == nil {
		return Recipe{}
	}
	return c.Recipe.Normalized()
}

// RecipeOf is the recipe of checkpoint c's run (the default for none).
func RecipeOf(c *Checkpoint) Recipe { return c.recipe() }

// recipeOrNil is r for a checkpoint: nil for the default.
func recipeOrNil(r Recipe) *Recipe {
	if r.IsZero() {
		return nil
	}
	r = r.Normalized()
	return &r
}
