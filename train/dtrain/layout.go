package dtrain

import (
	"fmt"
	"strings"

	"mpignn/collectives"
	"mpignn/internal/osx"
	"mpignn/partition"
)

// layoutLine says how a shared partition is held: which ranks hold each
// part in one copy; for a part per rank, whether the ranks of a node read
// each other's parts from its memory (c shared by ShareRanks), else "".
func layoutLine(m *partition.Meta, c *collectives.Comm) string {
	sh := m.Shared
	if sh == nil {
		if first, _ := c.Groups(); first != nil {
			return "layout: a part per rank; the ranks of a node read each other's parts from its shared memory"
		}
		return ""
	}
	groups := make([]string, 0, len(sh.First)-1)
	for g := range len(sh.First) - 1 {
		groups = append(groups, fmt.Sprintf("%d-%d", sh.First[g], sh.First[g+1]-1))
	}
	return fmt.Sprintf("layout: %d parts for %d ranks, each part held once in the memory of its ranks (%s)",
		sh.Parts, sh.First[len(sh.First)-1], strings.Join(groups, ", "))
}

// memoryLine measures every rank's PSS now (collective) and returns the
// line rank 0 prints: the mean and the largest over ranks, and the job's
// sum. PSS, not RSS: ranks of a node that map one shared window each count
// a part of it. It is "" where the kernel does not report PSS.
func memoryLine(c *collectives.Comm) (string, error) {
	all, err := collectives.Allgather(c, []int64{osx.PSS()})
	if err != nil {
		return "", fmt.Errorf("memory report: %w", err)
	}
	var sum, top int64
	topRank := 0
	for r, b := range all {
		if b < 0 {
			return "", nil
		}
		sum += b
		if b > top {
			top, topRank = b, r
		}
	}
	return fmt.Sprintf("memory: PSS per rank %s mean, %s largest (rank %d); job %s",
		osx.FormatBytes(float64(sum)/float64(len(all))), osx.FormatBytes(float64(top)), topRank, osx.FormatBytes(float64(sum))), nil
}
