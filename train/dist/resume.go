package dist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"mpignn/train"
)

// Resuming: a checkpoint records the settings of its run (the model
// config, the optimizer, the seed and the run info). A resume compares all
// of them with its own, key by key over their canonical JSON, so that no
// setting can be forgotten by a hand-written list, and names every
// difference by the flag that sets it.

// setting names a key of the canonical settings for the user: the flag
// that sets it and how its absence reads.
type setting struct {
	flag   string
	absent string // the value shown when the key is absent ("" = "unset")
}

// settingNames maps the dotted keys of the canonical settings (see
// resumeSettings) to their flags. Every key a checkpoint can hold must be
// here (TestResumeNamesEverySetting).
func settingNames() map[string]setting {
	return map[string]setting{
		"run.dataset":                 {"the dataset (--data/--parts)", ""},
		"run.split":                   {"--split", ""},
		"run.global_batch":            {"--batch × ranks", ""},
		"run.fanouts":                 {"--fanout", ""},
		"run.eval_fanouts":            {"--eval-fanout", ""},
		"run.replace":                 {"--replace", ""},
		"run.row_norm":                {"--norm-feat", ""},
		"run.task":                    {"--task", "node"},
		"run.link_split":              {"--link-split", "none"},
		"run.link.neg_ratio":          {"--neg-ratio", "none (node task)"},
		"run.link.neg_strict":         {"--neg-strict", "false"},
		"run.link.use_valid_edges":    {"--use-valid-edges", "false"},
		"run.link.keep_seed_edges":    {"--keep-seed-edges", "false"},
		"run.max_steps":               {"--max-steps", "0"},
		"run.hetero.rel_fanouts":      {"--fanout (per relation)", "none"},
		"run.hetero.eval_rel_fanouts": {"--eval-fanout (per relation)", "none"},
		"run.hetero.embed_dim":        {"--embed-dim", "none (homogeneous)"},
		"run.hetero.embed_types":      {"--embed-types", "none"},
		"run.hetero.sparse_opt":       {"--sparse-opt", "none (homogeneous)"},
		"run.hetero.sparse_lr":        {"--sparse-lr", "none (homogeneous)"},
		"run.hetero.push":             {"--embed-push", "none (homogeneous)"},
		"run.temporal.strategy":       {"--temporal", "none"},
		"run.temporal.strict":         {"--temporal-strict", "false"},
		"run.temporal.seed_time":      {"--seed-time", "unset"},
		"run.eval":                    {"--eval", "sampled"},
		"model.arch":                  {"--model", ""},
		"model.in_dim":                {"the partition's feature width", ""},
		"model.hidden":                {"--hidden", ""},
		"model.classes":               {"the partition's classes (link task: --hidden)", ""},
		"model.layers":                {"the number of layers (--fanout)", ""},
		"model.dropout":               {"--dropout", ""},
		"model.input_dropout":         {"--input-dropout", "0"},
		"model.heads":                 {"--heads", "none (not gat)"},
		"model.attn_dropout":          {"--attn-dropout", "0"},
		"model.decoder":               {"--decoder", "none (node task)"},
		"model.hetero.node_types":     {"the partition's node types", "none (homogeneous)"},
		"model.hetero.node_orig":      {"the partition's node type sizes", "none (homogeneous)"},
		"model.hetero.relations":      {"the partition's relations", "none (homogeneous)"},
		"model.hetero.in_dims":        {"the input widths of the node types (--embed-dim)", "none (homogeneous)"},
		"model.hetero.bases":          {"--bases", "0"},
		"model.hetero.learnable":      {"--embed-types", "none"},
		"adam.lr":                     {"--lr", ""},
		"adam.weight_decay":           {"--weight-decay", ""},
		"adam.beta1":                  {"Adam's beta1", ""},
		"adam.beta2":                  {"Adam's beta2", ""},
		"adam.eps":                    {"Adam's eps", ""},
		"seed":                        {"--seed", ""},
	}
}

// resumeSettings is the canonical form of everything a resumed run must
// share with its checkpoint: run info, model config (with its arch), the
// optimizer and the seed, as one JSON object.
func resumeSettings(model train.Config, adam train.AdamConfig, seed uint64, runInfo []byte) (map[string]any, error) {
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

// diffSettings lists, sorted by flag, every setting that differs between
// the checkpoint (saved) and this run (now), as "--temporal was uniform,
// now last". A key that has no name in settingNames is shown by its key.
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
			n = setting{flag: k}
		}
		line := fmt.Sprintf("%s was %s, now %s", n.flag, showSetting(a[k], n.absent), showSetting(b[k], n.absent))
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	sort.Strings(out)
	return out
}

// checkResume refuses to resume checkpoint ck under settings that differ
// from its run's, naming each differing setting by its flag.
func checkResume(ck *train.Checkpoint, model train.Config, adam train.AdamConfig, seed uint64, runInfo []byte) error {
	saved, err := resumeSettings(ck.Model, ck.Adam, ck.Seed, ck.RunInfo)
	if err != nil {
		return fmt.Errorf("checkpoint %w", err)
	}
	now, err := resumeSettings(model, adam, seed, runInfo)
	if err != nil {
		return err
	}
	if d := diffSettings(saved, now); len(d) > 0 {
		return fmt.Errorf("the checkpoint's run differs: %s (a resume continues the checkpoint's run: leave these flags out to take its values; only --epochs, --threads, --prefetch, output paths, --metrics, --quiet, --checkpoint-every, --eval-every and --transport/--cache-mb may change)", strings.Join(d, "; "))
	}
	return nil
}
