// Package dist runs the pure training core of package train as an MPI SPMD
// program: a Reducer over collectives.Allreduce, an adapter from the
// sampler's distributed Loader to train.BatchSource, agreement on rank-local
// errors, checkpoints read by rank 0 and broadcast, and the complete
// drivers behind `mpignn train` (node classification, and link prediction
// with a distributed ranking evaluator: train.Evaluator over every node's
// embedding), `mpignn predict` (classes, or pair scores) and `mpignn embed`.
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
package dist
