// Package intrange writes ascending integers (ranks, epochs) as compact
// ranges for messages: [0 1 2 3 7] -> "0-3, 7". A leaf: the standard
// library only.
package intrange
