package dsample

import (
	"fmt"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/sample"
)

// GatherText builds the canonical text of all ranks' blocks of one batch.
// Every rank gets the same text. It is collective; every rank passes
// blocks with the same number of layers.
func GatherText(c *collectives.Comm, blocks []sample.Block) ([]byte, error) {
	all, _, err := collectives.Allgatherv(c, sample.EdgeRecords(blocks, nil))
	if err != nil {
		return nil, fmt.Errorf("gather text: %w", err)
	}
	return sample.CanonicalText(all, len(blocks))
}

// GatherTextRel is GatherText for typed blocks (a relation plan on a
// heterogeneous graph): every edge line names its relation, from schema.
// It is collective.
func GatherTextRel(c *collectives.Comm, blocks []sample.Block, schema *graph.Schema) ([]byte, error) {
	if schema == nil {
		return nil, fmt.Errorf("gather text: no schema (homogeneous graph: use GatherText)")
	}
	all, _, err := collectives.Allgatherv(c, sample.EdgeRecordsRel(blocks, nil))
	if err != nil {
		return nil, fmt.Errorf("gather text: %w", err)
	}
	names := make([]string, schema.NumRels())
	for r, rel := range schema.Relations {
		names[r] = rel.String()
	}
	return sample.CanonicalTextRel(all, len(blocks), names)
}

// GatherTextAt is GatherText for temporal blocks (seed times): every
// destination with its seed time and every edge with its time, and with
// its relation when schema is not nil. It is collective.
func GatherTextAt(c *collectives.Comm, blocks []sample.Block, schema *graph.Schema) ([]byte, error) {
	all, _, err := collectives.Allgatherv(c, sample.EdgeRecordsAt(blocks, nil))
	if err != nil {
		return nil, fmt.Errorf("gather text: %w", err)
	}
	var names []string
	if schema != nil {
		names = make([]string, schema.NumRels())
		for r, rel := range schema.Relations {
			names[r] = rel.String()
		}
	}
	return sample.CanonicalTextAt(all, len(blocks), names)
}
