package dsample

import (
	"fmt"

	"mpignn/collectives"
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
