// Package optim owns the optimizers: Adam for the model's dense weights
// (torch.optim.Adam's update, bias correction included) and the sparse
// optimizers of learnable node embeddings (SparseAdam, SparseAdagrad:
// DGL's, with state per row), each with its hyper-parameters and their
// Validate.
//
// Every update is element-wise over fixed ranges, so it gives the same
// bits on any thread count; ranks that apply it to the same reduced
// gradient stay identical without exchanging weights. The trainer (package
// train) steps Adam once per step; train/dtrain's embedding tables step a
// SparseOptimizer over the rows a step touched. Nothing here knows models
// or MPI.
package optim
