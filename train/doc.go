// Package train holds the GraphSAGE model, the Adam optimizer, the
// distributed training loop, evaluation, checkpoints and metrics.
package train
