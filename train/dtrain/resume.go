package dtrain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/train"
	"mpignn/train/optim"
)

// Resuming: a checkpoint records the settings of its run (the model
// config, the optimizer, the seed and the run info). A resume compares all
// of them with its own, key by key over their canonical JSON, so that no
// setting can be forgotten by a hand-written list, and names every
// difference by the field that sets it (a FieldError: a command line
// spells the fields as its flags).

// setting names a key of the canonical settings for the user: the field
// that sets it ({Path}, config.Mark) and how its absence reads.
type setting struct {
	field  string
	absent string // the value shown when the key is absent ("" = "unset")
}

// settingNames maps the dotted keys of the canonical settings (see
// resumeSettings) to their fields. Every key a checkpoint can hold must be
// here (TestResumeNamesEverySetting).
func settingNames() map[string]setting {
	names := map[string]setting{
		"run.dataset":                 {"the dataset ({PartDir})", ""},
		"run.split":                   {"{Loader.Split}", ""},
		"run.global_batch":            {"{Loader.GlobalBatch} ({Loader.Batch} × ranks)", ""},
		"run.fanouts":                 {"{Loader.Fanouts}", ""},
		"run.eval_fanouts":            {"{Loader.EvalFanouts}", ""},
		"run.replace":                 {"{Loader.Replace}", ""},
		"run.row_norm":                {"{RowNorm}", ""},
		"run.task":                    {"{Task}", "node"},
		"run.link_split":              {"{LinkSplit}", "none"},
		"run.link.neg_ratio":          {"{Link.NegRatio}", "none (node task)"},
		"run.link.neg_strict":         {"{Link.NegStrict}", "false"},
		"run.link.use_valid_edges":    {"{Link.UseValidEdges}", "false"},
		"run.link.keep_seed_edges":    {"{Link.KeepSeedEdges}", "false"},
		"run.max_steps":               {"{Trainer.MaxSteps}", "0"},
		"run.metric":                  {"{Trainer.Metric}", "the task's default"},
		"run.recipe.optimizer":        {"{Trainer.Recipe.Optimizer}", "adam"},
		"run.recipe.momentum":         {"{Trainer.Recipe.Momentum}", "0"},
		"run.recipe.nesterov":         {"{Trainer.Recipe.Nesterov}", "false"},
		"run.recipe.lr_schedule":      {"{Trainer.Recipe.LRSchedule}", "constant"},
		"run.recipe.warmup":           {"{Trainer.Recipe.Warmup}", "0"},
		"run.recipe.clip_grad_norm":   {"{Trainer.Recipe.ClipGradNorm}", "0 (off)"},
		"run.recipe.early_stop":       {"{Trainer.Recipe.EarlyStop}", "0 (off)"},
		"run.hetero.rel_fanouts":      {"{Hetero.Fanout} (per relation)", "none"},
		"run.hetero.eval_rel_fanouts": {"{Hetero.EvalFanout} (per relation)", "none"},
		"run.hetero.embed_dim":        {"{Hetero.EmbedDim}", "none (homogeneous)"},
		"run.hetero.embed_types":      {"{Hetero.EmbedTypes}", "none"},
		"run.hetero.sparse_opt":       {"{Hetero.SparseOpt}", "none (homogeneous)"},
		"run.hetero.sparse_lr":        {"{Hetero.SparseLR}", "none (homogeneous)"},
		"run.hetero.push":             {"{Hetero.Push}", "none (homogeneous)"},
		"run.temporal.strategy":       {"{Loader.Temporal}", "none"},
		"run.temporal.strict":         {"{Loader.Temporal.Strict}", "false"},
		"run.temporal.seed_time":      {"{Loader.SeedTime}", "unset"},
		"run.eval":                    {"{Eval}", "sampled"},
		"run.precision":               {"{Precision}", "fp32"},
		"model.arch":                  {"{Model.Arch}", ""},
		"model.in_dim":                {"the partition's feature width", ""},
		"model.hidden":                {"{Model.Hidden}", ""},
		"model.classes":               {"the partition's classes (link task: {Model.Hidden})", ""},
		"model.layers":                {"the number of layers ({Loader.Fanouts})", ""},
		"model.dropout":               {"{Model.Dropout}", ""},
		"model.input_dropout":         {"{Model.InputDropout}", "0"},
		"model.edge_dim":              {"the edge features' width ({UseEdgeFeat})", "0 (none)"},
		"model.decoder":               {"{Model.Decoder}", "none (node task)"},
		"model.residual":              {"{Model.Residual}", "false"},
		"model.norm":                  {"{Model.Norm}", "none"},
		"model.jk":                    {"{Model.JK}", "none"},
		"model.hetero.node_types":     {"the partition's node types", "none (homogeneous)"},
		"model.hetero.node_orig":      {"the partition's node type sizes", "none (homogeneous)"},
		"model.hetero.relations":      {"the partition's relations", "none (homogeneous)"},
		"model.hetero.in_dims":        {"the input widths of the node types ({Hetero.EmbedDim})", "none (homogeneous)"},
		"model.hetero.bases":          {"{Hetero.Bases}", "0"},
		"model.hetero.learnable":      {"{Hetero.EmbedTypes}", "none"},
		"adam.lr":                     {"{Trainer.Adam.LR}", ""},
		"adam.weight_decay":           {"{Trainer.Adam.WeightDecay}", ""},
		"adam.beta1":                  {"Adam's beta1", ""},
		"adam.beta2":                  {"Adam's beta2", ""},
		"adam.eps":                    {"Adam's eps", ""},
		"seed":                        {"{Trainer.Seed}", ""},
	}
	// The architectures' own parameters sit at the model config's top
	// level under their keys.
	for _, p := range train.ArchParams() {
		absent := p.Omit
		if absent == "" {
			absent = "none (another model)"
		}
		names["model."+p.Key] = setting{"{Model." + p.Field() + "}", absent}
	}
	return names
}

// resumeSettings is the canonical form of everything a resumed run must
// share with its checkpoint: run info, model config (with its arch), the
// optimizer and the seed, as one JSON object.
func resumeSettings(model train.Config, adam optim.AdamConfig, seed uint64, runInfo []byte) (map[string]any, error) {
	mj, err := json.Marshal(model)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(mj, &m); err != nil {
		return nil, err
	}
	m["arch"] = model.ArchName()
	aj, err := json.Marshal(adam)
	if err != nil {
		return nil, err
	}
	var a map[string]any
	if err := json.Unmarshal(aj, &a); err != nil {
		return nil, err
	}
	r := map[string]any{}
	if len(runInfo) > 0 {
		d := json.NewDecoder(bytes.NewReader(runInfo))
		d.UseNumber()
		if err := d.Decode(&r); err != nil {
			return nil, fmt.Errorf("run info: %w", err)
		}
		// The printed settings line describes a run (its --epochs too,
		// which a resume may raise); the settings themselves are compared
		// key by key above it.
		delete(r, "settings")
		delete(r, "kernels") // a resume may run on another path (resumeKernelsLine)
	}
	return map[string]any{"run": r, "model": m, "adam": a, "seed": strconv.FormatUint(seed, 10)}, nil
}

// flatten turns nested objects into dotted keys; arrays and scalars are
// leaves.
func flatten(prefix string, v any, out map[string]any) {
	if obj, ok := v.(map[string]any); ok {
		for k, x := range obj {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, x, out)
		}
		return
	}
	out[prefix] = v
}

// showSetting renders a leaf for a message: strings bare, lists of
// numbers comma-separated, everything else as JSON.
func showSetting(v any, absent string) string {
	switch x := v.(type) {
	case nil:
		if absent == "" {
			return "unset"
		}
		return absent
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = showSetting(e, "")
		}
		return strings.Join(parts, ",")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// diffSettings lists, sorted by field, every setting that differs between
// the checkpoint (saved) and this run (now), as "--temporal was uniform,
// now last" (by field). A key that has no name in settingNames is shown by its key.
func diffSettings(saved, now map[string]any) []string {
	a, b := map[string]any{}, map[string]any{}
	flatten("", saved, a)
	flatten("", now, b)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	names := settingNames()
	seen := map[string]bool{}
	var out []string
	for k := range keys {
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if bytes.Equal(x, y) {
			continue
		}
		n, ok := names[k]
		if !ok {
			n = setting{field: k}
		}
		line := fmt.Sprintf("%s was %s, now %s", config.Mark(n.field), showSetting(a[k], n.absent), showSetting(b[k], n.absent))
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	sort.Strings(out)
	return out
}

// checkResume refuses to resume checkpoint ck under settings that differ
// from its run's, naming each differing setting by its field.
func checkResume(ck *train.Checkpoint, model train.Config, adam optim.AdamConfig, seed uint64, runInfo []byte) error {
	saved, err := resumeSettings(ck.Model, ck.Adam, ck.Seed, ck.RunInfo)
	if err != nil {
		return fmt.Errorf("checkpoint %w", err)
	}
	now, err := resumeSettings(model, adam, seed, runInfo)
	if err != nil {
		return err
	}
	if d := diffSettings(saved, now); len(d) > 0 {
		return config.Errorf("the checkpoint's run differs: %s (a resume continues the checkpoint's run: leave these settings out to take its values; only {Run.Epochs}, {Trainer.Prefetch}, output paths, {Metrics}, {Quiet}, {Run.CheckpointEvery}, {Run.EvalEvery}, {Store.Transport}/{Store.CacheMB} and what the run's configuration does not hold (threads) may change)", strings.Join(d, "; "))
	}
	return nil
}

// CheckpointSettings returns the settings of checkpoint ck's run on
// `ranks` ranks as (field, value) pairs: the field's path in TrainConfig
// and its value as text (what a command line's flag takes). A resume
// takes them for every setting not given explicitly, so that a
// resubmission needs no more than Resume. Settings that no text value
// reproduces exactly are left out (per-relation fanouts, whose spec the
// run info keeps only resolved); checkResume still names them if they
// differ.
func CheckpointSettings(ck *train.Checkpoint, ranks int) ([][2]string, error) {
	var ri runInfo
	if len(ck.RunInfo) > 0 {
		if err := json.Unmarshal(ck.RunInfo, &ri); err != nil {
			return nil, fmt.Errorf("checkpoint run info: %w", err)
		}
	}
	f32 := func(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }
	ints := func(v []int) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.Itoa(x)
		}
		return strings.Join(s, ",")
	}
	m := ck.Model
	out := [][2]string{
		{"Trainer.Seed", strconv.FormatUint(ck.Seed, 10)},
		{"Trainer.Adam.LR", f32(ck.Adam.LR)},
		{"Trainer.Adam.WeightDecay", f32(ck.Adam.WeightDecay)},
		{"Model.Arch", m.ArchName()},
		{"Model.Hidden", strconv.Itoa(m.Hidden)},
		{"Model.Dropout", f32(m.Dropout)},
		{"Model.InputDropout", f32(m.InputDropout)},
		{"Loader.Replace", strconv.FormatBool(ri.Replace)},
		{"RowNorm", strconv.FormatBool(ri.RowNorm)},
		{"Trainer.MaxSteps", strconv.Itoa(ri.MaxSteps)},
	}
	add := func(name, value string) { out = append(out, [2]string{name, value}) }
	if ri.Metric != "" {
		add("Trainer.Metric", ri.Metric)
	}
	if ri.Precision != "" {
		add("Precision", ri.Precision)
	}
	if r := ri.Recipe; r != nil {
		if r.Optimizer != "" {
			add("Trainer.Recipe.Optimizer", r.Optimizer)
		}
		if r.Optimizer == train.OptSGD {
			add("Trainer.Recipe.Momentum", f32(r.Momentum))
			add("Trainer.Recipe.Nesterov", strconv.FormatBool(r.Nesterov))
		}
		if r.LRSchedule != "" {
			add("Trainer.Recipe.LRSchedule", r.LRSchedule)
		}
		if r.Warmup > 0 {
			add("Trainer.Recipe.Warmup", strconv.Itoa(r.Warmup))
		}
		if r.ClipGradNorm > 0 {
			add("Trainer.Recipe.ClipGradNorm", f32(r.ClipGradNorm))
		}
		if r.EarlyStop > 0 {
			add("Trainer.Recipe.EarlyStop", strconv.Itoa(r.EarlyStop))
		}
	}
	if m.EdgeDim > 0 {
		add("UseEdgeFeat", "true")
	}
	if m.Residual {
		add("Model.Residual", "true")
	}
	if m.Norm != "" {
		add("Model.Norm", m.Norm)
	}
	if m.JK != "" {
		add("Model.JK", m.JK)
	}
	for _, k := range m.Opts.Keys() {
		v, _ := m.Opts.Text(k)
		add("Model."+train.OptField(k), v)
	}
	if m.Hetero != nil && m.Hetero.Bases > 0 {
		add("Hetero.Bases", strconv.Itoa(m.Hetero.Bases))
	}
	// The global batch is what the run took, however it was given: as a
	// per-rank batch where this rank count divides it (the spelling of a
	// resume on the same ranks), else as the global batch itself, so that
	// a run resumes on any number of ranks with the same batches.
	switch {
	case ri.GlobalBatch > 0 && ranks > 0 && ri.GlobalBatch%ranks == 0:
		add("Loader.Batch", strconv.Itoa(ri.GlobalBatch/ranks))
	case ri.GlobalBatch > 0:
		add("Loader.GlobalBatch", strconv.Itoa(ri.GlobalBatch))
	}
	if ri.Hetero == nil || len(ri.Hetero.RelFanouts) == 0 {
		if len(ri.Fanouts) > 0 {
			add("Loader.Fanouts", ints(ri.Fanouts))
		}
		if len(ri.EvalFanouts) > 0 {
			add("Loader.EvalFanouts", ints(ri.EvalFanouts))
		}
	}
	if ri.Eval == EvalLayerwise {
		add("Eval", EvalLayerwise)
	} else {
		add("Eval", EvalSampled)
	}
	t, err := taskNamed(ri.Task)
	if err != nil {
		return nil, fmt.Errorf("checkpoint run info: %w", err)
	}
	t.checkpointSettings(ri, m, add)
	if tp := ri.Temporal; tp != nil {
		add("Loader.Temporal", tp.Strategy)
		add("Loader.Temporal.Strict", strconv.FormatBool(tp.Strict))
		if tp.SeedTime != nil {
			add("Loader.SeedTime", strconv.FormatInt(*tp.SeedTime, 10))
		}
	}
	if h := ri.Hetero; h != nil {
		// Hetero.EmbedTypes as the list of the types that had embeddings (the
		// model config names the types, in the same order).
		if m.Hetero != nil && len(h.EmbedTypes) == len(m.Hetero.NodeTypes) {
			var names []string
			for t, on := range h.EmbedTypes {
				if on {
					names = append(names, m.Hetero.NodeTypes[t])
				}
			}
			if len(names) > 0 {
				add("Hetero.EmbedTypes", strings.Join(names, ","))
			}
		}
		add("Hetero.EmbedDim", strconv.Itoa(h.EmbedDim))
		add("Hetero.SparseOpt", h.SparseOpt)
		add("Hetero.SparseLR", strconv.FormatFloat(h.SparseLR, 'g', -1, 64))
		add("Hetero.Push", h.Push)
	}
	return out, nil
}

// LoadCheckpointSettings reads the checkpoint in dir on rank 0 and
// returns its CheckpointSettings on every rank, or nil when dir holds no
// checkpoint (a fresh run of ResumeAuto; a plain Resume reports the
// missing file later). Only these settings travel, not the checkpoint. It
// is collective.
func LoadCheckpointSettings(c *collectives.Comm, dir string) ([][2]string, error) {
	var data []byte
	var err error
	if c.Rank() == 0 {
		var ck *train.Checkpoint
		ck, err = train.LoadCheckpoint(dir)
		var flags [][2]string
		switch {
		case errors.Is(err, train.ErrNoCheckpoint):
			err = nil
		case err == nil:
			flags, err = CheckpointSettings(ck, c.Size())
		}
		if err == nil {
			data, err = json.Marshal(flags)
		}
	}
	data, err = collectives.BcastBytes(c, 0, data, err)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	var flags [][2]string
	if err := json.Unmarshal(data, &flags); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	return flags, nil
}
