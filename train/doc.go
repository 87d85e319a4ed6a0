// Package train holds the models (a Layer/Head seam with built-in
// architectures: GraphSAGE, GCN, GAT, and for heterogeneous graphs R-GCN
// and HeteroSAGE; more are passed to NewModel as Arch values), the
// training loop over a Reducer, evaluation and checkpoints. The optimizers
// are in train/optim, the matrix kernels in train/kernels, the metrics file
// and the link-ranking figures in train/metrics.
//
// A Model has one training entry (Train) and one evaluation entry
// (Evaluate, with Forward and Predict for outputs) over a sample.Batch,
// which carries both axes a step varies along: the input form (dense rows
// X, CSR rows XS, per-node-type rows XT) and the task (node Labels, or
// link Pairs with PairLabels). The form is resolved once inside the model
// (batch.go), the task by its Head: softmax cross-entropy, or a link
// decoder scoring pairs of seed rows (link.go). Layer-wise inference is the
// Layerwise view of the same model (infer.go), driven over the distributed
// graph by package train/dtrain.
//
// Everything here is pure (no MPI). The distributed parts meet the rest of
// the program at two small interfaces:
//
//   - Reducer: element-wise AllreduceSum over float32 and float64 buffers
//     and Agree on a rank-local error, wired to MPI_Allreduce and
//     collectives.Agree by the caller (LocalReducer for one process).
//   - BatchSource: per step, the sampled blocks, input features and seed
//     labels of this rank, plus the global seed count of the step.
//
// Determinism across rank counts: initial weights are a pure function of the
// seed (counter-based hash, no broadcast needed), dropout masks are a pure
// function of (seed, global step, layer, ORIGINAL node id, unit), gradients
// are sums over the rank's seeds divided by the GLOBAL number of seeds of
// the step, and every rank applies the same Adam update to the same reduced
// gradient. So P ranks with per-rank batch B/P train exactly like one rank
// with batch B, up to float32 summation order.
//
// Heterogeneous graphs (Config.Hetero, architectures "rgcn" and "hsage",
// see HeteroArchs) run on typed blocks (sample.Block.Etype): the node type
// of a block node comes from its original id through the config's
// NodeOrig offsets, each type's input rows (features or learnable
// embeddings, one matrix per type) go through a per-type linear projection
// to Hidden, and the layers keep one weight per relation (R-GCN, optionally
// basis-decomposed) or one GraphSAGE per relation summed per destination
// type (PyG's to_hetero). A batch with typed inputs (Batch.XT) goes
// through the same entry points; InputGrad hands the gradients of
// learnable embedding rows to the caller, which owns the embeddings and
// their sparse optimizer.
//
// Models leave and enter in PyTorch Geometric's layout (pyg.go): ExportPyG
// and ImportPyG map the flat buffer to a state dict with PyG's module and
// parameter names and shapes (GraphSAGE/GCN/GAT, HeteroConv of SAGEConv,
// RGCNConv, OGB's LinkPredictor), stored as safetensors (safetensors.go).
//
// Matrix products and the sparse input products run in package
// train/kernels, which owns every cgo line and build tag of the model
// (oneDNN by default; -tags openblas, gonumblas) and keeps results
// independent of the thread count.
//
// Prefetch (Options.Prefetch, see prefetch.go) fetches the next steps'
// batches on the calling goroutine, which owns MPI, while the current
// step's forward and backward run on a helper goroutine; the fetch
// schedule is fixed by the step number, so every rank makes the same
// collective calls in the same order and the results do not change.
//
// Sparse inputs (sparse.go): a batch may carry its layer-0 inputs as CSR
// rows (sample.Batch.XS, from a sparse-feature partition). Every
// homogeneous architecture then projects them first (X·W, work per stored
// entry) and aggregates in output space, with the weight gradient as
// Xᵀ·dP; input dropout draws the dense path's masks (keyed by original id
// and column) for the stored entries only. Results equal the dense path up
// to float summation order. Heterogeneous models keep dense typed inputs.
//
// RefSource is the single-process reference BatchSource over an
// unpartitioned dataset; package train/dtrain wires the core to MPI and to the
// distributed sampler (dsample.Loader) for `mpignn train` and `mpignn
// predict`.
package train
