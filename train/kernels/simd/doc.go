// Package simd holds the model's hand-written vector kernels in Go
// assembly. It is its own package because train/kernels uses cgo, and a
// cgo package cannot hold Go assembly; kernels calls these and falls back
// to its portable loops where they report that they did not run.
//
// Every kernel here gives the bits of the scalar loop it replaces: lanes
// are independent elements, each receives the same rounded operations in
// the same order, and nothing is fused.
package simd
