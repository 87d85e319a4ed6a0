// Package dtrain runs the pure training core of package train as an MPI SPMD
// program: a Reducer over collectives.Allreduce, an adapter from the
// sampler's distributed Loader to train.BatchSource, agreement on rank-local
// errors, checkpoints read by rank 0 and broadcast, and the complete
// drivers behind `mpignn train` (node classification, and link prediction
// with a distributed ranking evaluator: train.Evaluator over every node's
// embedding), `mpignn predict` (classes, or pair scores) and `mpignn embed`.
// It also holds the learnable inputs of featureless node types
// (embedding.go): tables sharded by owner over dsample.TypeRows, trained
// by sparse pushes to the rows' owners, checkpointed by original id
// (embedding_ckpt.go) so that any rank count resumes them.
//
// Layer-wise inference (Infer, layerwise.go) lives here, beside the model
// it drives: it runs train.Layerwise one layer at a time over the store's
// distributed graph. Predict, Embed and PredictLink open a checkpoint's
// model over a partition through one path (openInference, inference.go).
//
// Every exported function that takes a *collectives.Comm is collective:
// every rank must call it, in the same order, with the same arguments
// (except where a field is documented as rank-0 only).
//
// TrainConfig, PredictConfig and EmbedConfig are checked by their Validate
// (Train, Predict and Embed call it first), which nests the Validate of
// the option types they hold (dsample.LoaderOptions, train.Options,
// train.Config's settings). Errors and printed lines name fields by their
// path in the configuration ("Loader.Batch", config.FieldError), never a
// command-line flag: cmd/mpignn spells each field as its flag.
package dtrain
