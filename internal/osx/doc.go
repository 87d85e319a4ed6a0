// Package osx holds the file and memory helpers every layer of mpignn
// shares, one definition each: WriteFileAtomic (temporary, fsync, rename,
// fsync of the directory: every output of a run is written this way),
// SyncDir, Pathless (drop the temporary's name from an error that will
// name the real path), and what this machine can hold (AvailableMemory,
// FitsMemory, FormatBytes).
//
// It sits below graph, partition, train and cmd, so it imports nothing of
// theirs; it builds on internal/tempout (the temporaries' names, removed on
// a signal) and internal/testhold (a test can hold a writer while its
// temporary exists). It uses no MPI.
package osx
