package dtrain

import (
	"encoding/json"
	"fmt"
	"strings"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/internal/intrange"
	"mpignn/train"
	"mpignn/train/kernels"
)

// jobKernels describes the numeric path of the job's float32 products: one
// kernels.Path when every rank has the same ("onednn fp32 avx2"), else each
// path with its ranks, widest first as ranks list them ("onednn fp32
// avx512_core on ranks 0-3; onednn fp32 avx2 on ranks 4-7"). Such a job
// runs as well (each rank's gradients are summed as always), but its bits
// differ from a job on one path; uniform says whether it is on one.
// Collective.
func jobKernels(c *collectives.Comm, path string) (desc string, uniform bool, err error) {
	all, counts, err := collectives.Allgatherv(c, []byte(path))
	if err != nil {
		return "", false, fmt.Errorf("kernels: gather the ranks' paths: %w", err)
	}
	paths := make([]string, len(counts))
	off := int64(0)
	for r, n := range counts {
		paths[r] = string(all[off : off+n])
		off += n
	}
	desc, uniform = describePaths(paths)
	return desc, uniform, nil
}

// describePaths is jobKernels' text for the ranks' paths (index = rank).
func describePaths(paths []string) (string, bool) {
	var order []string
	ranks := map[string][]int{}
	for r, p := range paths {
		if _, ok := ranks[p]; !ok {
			order = append(order, p)
		}
		ranks[p] = append(ranks[p], r)
	}
	if len(order) == 1 {
		return order[0], true
	}
	parts := make([]string, len(order))
	for i, p := range order {
		noun := " on ranks "
		if len(ranks[p]) == 1 {
			noun = " on rank "
		}
		parts[i] = p + noun + intrange.Compact(ranks[p])
	}
	return strings.Join(parts, "; "), false
}

// KernelsLine is the start-up line about the job's numeric path
// (jobKernels) that train prints, for the other commands that compute
// (predict, embed). Collective.
func KernelsLine(c *collectives.Comm) (string, error) {
	desc, uniform, err := jobKernels(c, rankPath(nil))
	if err != nil {
		return "", err
	}
	return kernelsLine(desc, uniform), nil
}

// rankPath is this rank's numeric path: kernels.Path, and with bf16 layer
// products (bf16 not nil) theirs beside it ("onednn fp32 avx512_core,
// layers bf16 on onednn avx512_core_amx"): the heads and the maps between
// the layers stay fp32.
func rankPath(bf16 *kernels.BF16) string {
	if bf16 == nil {
		return kernels.Path()
	}
	return kernels.Path() + ", layers bf16 on " + bf16.Path()
}

// openBF16 returns the layers' bf16 product of a run at Precision bf16
// (nil at fp32), refused with one line naming the field where a rank's CPU
// has none (kernels.ErrNoBF16). It is collective: every rank fails
// together.
func openBF16(c *collectives.Comm, cfg TrainConfig) (*kernels.BF16, error) {
	if cfg.Precision != kernels.PrecisionBF16 {
		return nil, nil
	}
	var bf16 *kernels.BF16
	var err error
	if cfg.EmulateBF16 {
		bf16 = kernels.NewBF16Emulated()
	} else if bf16, err = kernels.NewBF16(); err != nil {
		err = config.Errorf("{Precision} %s: %v", cfg.Precision, err)
	}
	if err := collectives.Agree(c, err); err != nil {
		if bf16 != nil {
			bf16.Close()
		}
		return nil, err
	}
	return bf16, nil
}

// kernelsLine is the start-up line rank 0 prints about the numeric path.
func kernelsLine(desc string, uniform bool) string {
	if uniform {
		return "kernels: " + desc
	}
	return "kernels: " + desc + ": the ranks compute on different paths, which is allowed, but the results are not bit-identical to a run on one path (pin one instruction set to make them agree)"
}

// resumeKernelsLine is the line a resumed run prints when its path is not
// the one its checkpoint was written on ("" when they are the same, or the
// checkpoint predates the record).
func resumeKernelsLine(saved, now string) string {
	if saved == "" || saved == now {
		return ""
	}
	return fmt.Sprintf("kernels: the checkpoint was written on %s, this run computes on %s: it continues, but not bit-identically to a run that was not interrupted (pin one instruction set to make them agree)", saved, now)
}

// checkpointKernels is the path recorded in ck's run info ("" for a
// checkpoint written before it was recorded, or unreadable run info, which
// checkResume reports).
func checkpointKernels(ck *train.Checkpoint) string {
	var ri runInfo
	if json.Unmarshal(ck.RunInfo, &ri) != nil {
		return ""
	}
	return ri.Kernels
}
