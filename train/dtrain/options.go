package dtrain

import (
	"strings"

	"mpignn/config"
	"mpignn/sample"
)

// Validate reports an EmbedConfig that Embed and PredictLink cannot run,
// naming the field at fault (config.FieldError). What depends on the
// checkpoint (its model, its run's settings) is checked when it is read.
func (cfg EmbedConfig) Validate() error {
	switch {
	case cfg.PartDir == "" || cfg.CheckpointDir == "" || cfg.Out == "":
		return config.Errorf("{PartDir}, {CheckpointDir} and {Out} are required")
	case cfg.Batch < 1:
		return config.Errorf("{Batch} %d must be positive", cfg.Batch)
	}
	if err := sample.CheckFanouts(cfg.Fanouts); err != nil {
		return config.Errorf("{Fanouts}: %s", err)
	}
	if err := config.In("Store", cfg.Store.Validate()); err != nil {
		return err
	}
	_, err := inferenceMode(cfg.Eval, cfg.Fanouts, cfg.Full)
	return err
}

// Validate reports a PredictConfig that Predict cannot run, naming the
// field at fault, as EmbedConfig.Validate does; logits (of the node task)
// go to a .npy file, and the link task scores the pairs of a file.
func (cfg PredictConfig) Validate() error {
	if cfg.Logits && cfg.Task != "" && cfg.Task != TaskNode && cfg.Task != TaskMultilabel {
		return config.Errorf("{Logits} applies to {Task} node and multilabel only")
	}
	if err := cfg.EmbedConfig.Validate(); err != nil {
		return err
	}
	if cfg.Logits && !strings.HasSuffix(cfg.Out, ".npy") {
		return config.Errorf("{Logits}: {Out} %s must end in .npy", cfg.Out)
	}
	t, err := taskNamed(cfg.Task)
	if err != nil {
		return err
	}
	return t.validatePredict(cfg)
}
