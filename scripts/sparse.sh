#!/usr/bin/env bash
# sparse.sh — Facebook, 2 ranks, 1 epoch: dense vs CSR feature partitions
# side by side with the same binary, alternated REPS times (the machine is
# shared, so pairs are compared, not single runs). Prints one line per run:
# epoch s, steps/s and the per-phase seconds of rank 0, and the accuracies.
# Usage: scripts/sparse.sh [DATA_DIR] (default ../shared/data/facebook).
set -euo pipefail
cd "$(dirname "$0")/.."
data="${1:-../shared/data/facebook}"
reps="${REPS:-2}"
work="${WORK:-$(mktemp -d)}"
bin=./bin/mpignn
go build -o "$bin" ./cmd/mpignn
for mode in off auto; do
	[ -d "$work/fb-$mode" ] || "$bin" partition --data "$data" --parts 2 --seed 0 --sparse-features "$mode" --out "$work/fb-$mode" >/dev/null
done
for rep in $(seq "$reps"); do
	for mode in off auto; do
		m="$work/m-$mode-$rep.jsonl"
		./mpirun.sh -n 2 "$bin" train --parts "$work/fb-$mode" --epochs 1 --fanout 10,5 --batch 64 --hidden 128 \
			--dropout 0.5 --lr 0.01 --seed 1 --quiet --metrics "$m" >/dev/null
		python3 - "$m" "$mode" "$rep" <<'PY'
import json, sys
m = json.loads(open(sys.argv[1]).readline())
name = "dense" if sys.argv[2] == "off" else "sparse"
print(f"{name:6s} rep{sys.argv[3]} epoch_s {m['epoch_s']:.2f} steps/s {m['steps_per_s']:.1f} eval_s {m['eval_s']:.2f} "
      f"sample {m['sample_s']:.2f} gather {m['gather_s']:.2f} fwd {m['forward_s']:.2f} bwd {m['backward_s']:.2f} "
      f"allreduce {m['allreduce_s']:.2f} opt {m['optimizer_s']:.2f} loss {m['loss']:.6f} val {m['val_acc']:.4f} test {m['test_acc']:.4f}")
PY
	done
done
