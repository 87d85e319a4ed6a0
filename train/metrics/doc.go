// Package metrics owns the metrics file of a run and the figures in it:
// the JSON lines (Epoch per epoch, Summary at the end), their writer
// (Create continues the file of a resumed run, one fsync per line, a torn
// last line repaired) and reader (Read, for `mpignn plot` and the tests),
// and link prediction's ranking figures with OGB's semantics (AUC, MRR,
// Hits@K).
//
// It knows nothing of the trainer: package train turns its per-epoch
// results into an Epoch line (train/epochline.go), so the arrow points from
// the loop to its report and never back.
package metrics
