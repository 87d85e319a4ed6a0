package dtrain

import (
	"strings"

	"mpignn/config"
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
	_, err := inferenceMode(cfg.Eval, cfg.Fanouts, cfg.Full)
	return err
}

// Validate reports a PredictConfig that Predict cannot run, naming the
// field at fault, as EmbedConfig.Validate does; logits go to a .npy file.
func (cfg PredictConfig) Validate() error {
	err := EmbedConfig{
		PartDir: cfg.PartDir, CheckpointDir: cfg.CheckpointDir, Out: cfg.Out, Fanouts: cfg.Fanouts, Full: cfg.Full,
		Eval: cfg.Eval, Batch: cfg.Batch,
	}.Validate()
	if err == nil && cfg.Logits && !strings.HasSuffix(cfg.Out, ".npy") {
		err = config.Errorf("{Logits}: {Out} %s must end in .npy", cfg.Out)
	}
	return err
}
