#!/usr/bin/env bash
# perf17.sh — the measurements of issue 17, each side by side in one run with one binary:
#   peer      the 200k-node peer graph, 2 ranks, 1 epoch of GraphSAGE (fanout 15,10,5, batch 1024,
#             hidden 256): evaluation sampled vs layer-wise (and the epoch with --prefetch 0 vs 1);
#   products  the products-sized graph, 4 ranks, 1 epoch + layer-wise evaluation of all 2.45 M nodes,
#             peak RSS / PSS of every rank sampled every 2 s;
# (Facebook dense vs sparse: scripts/sparse.sh; kernels: go test -bench Gemm -tags dnnl,xsmm ./train/kernels/).
#
#   scripts/perf17.sh peer|products
#
# Variables: PEER (a 2-part partition of the peer graph, default out/peer-metis-2), PRODUCTS (a 4-part
# partition of the products-sized graph, default out/products-metis-4), REPS (default 1), OUT (default
# out/perf17). `make bench` generates the peer graph; the products-sized one comes from
# `mpignn gen --nodes 2450000 --avg-degree 25 --classes 47 --feat-dim 100 --seed 1` and
# `mpignn partition --parts 4`. Prints one line per run from rank 0's --metrics.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-peer}
PEER=${PEER:-out/peer-metis-2}
PRODUCTS=${PRODUCTS:-out/products-metis-4}
REPS=${REPS:-1}
OUT=${OUT:-out/perf17}
bin=./bin/mpignn
mkdir -p "$OUT"
go build -o "$bin" ./cmd/mpignn
model=(--fanout 15,10,5 --batch 1024 --hidden 256 --lr 0.003 --dropout 0.5 --epochs 1 --quiet)

report() { # metrics-file label
	python3 - "$1" "$2" <<'PY'
import json, sys
m = [json.loads(l) for l in open(sys.argv[1]) if '"epoch"' in l][0]
print(f"{sys.argv[2]:28s} epoch_s {m['epoch_s']:7.1f} eval_s {m['eval_s']:7.1f} val_acc {m['val_acc']:.4f} "
      f"test_acc {m['test_acc']:.4f} sample {m['sample_s']:.1f} gather {m['gather_s']:.1f} fwd {m['forward_s']:.1f} "
      f"bwd {m['backward_s']:.1f} allreduce {m['allreduce_s']:.1f} wait {m.get('wait_s', 0):.1f} loss {m['loss']:.6f}")
PY
}

# memwatch PID FILE: the peak VmHWM and the largest PSS of every mpignn process, every 2 s.
memwatch() {
	while kill -0 "$1" 2>/dev/null; do
		for p in $(pgrep -x mpignn); do
			h=$(awk '/VmHWM/{print $2}' /proc/$p/status 2>/dev/null || true)
			s=$(awk '/^Pss:/{print $2}' /proc/$p/smaps_rollup 2>/dev/null || true)
			[ -n "$h" ] && echo "$p $h ${s:-0}"
		done
		sleep 2
	done >"$2"
}

case "$what" in
peer)
	for rep in $(seq "$REPS"); do
		for v in "layer-wise 1" "sampled 1" "layer-wise 0"; do
			set -- $v
			m="$OUT/peer-$1-prefetch$2-$rep.jsonl"
			./mpirun.sh -n 2 "$bin" train --parts "$PEER" "${model[@]}" --eval "$1" --prefetch "$2" --metrics "$m" >/dev/null
			report "$m" "peer eval=$1 prefetch=$2"
		done
	done
	;;
products)
	m="$OUT/products.jsonl"
	./mpirun.sh -n 4 "$bin" train --parts "$PRODUCTS" "${model[@]}" --metrics "$m" >"$OUT/products.log" 2>&1 &
	job=$!
	memwatch "$job" "$OUT/products-mem.txt" &
	wait "$job"
	report "$m" "products eval=layer-wise"
	awk '{h[$1]=($2>h[$1]?$2:h[$1]); s[$1]=($3>s[$1]?$3:s[$1])} END {for (p in h) printf "pid %s peak RSS %.0f MB, PSS at most %.0f MB\n", p, h[p]*1.024/1000, s[p]*1.024/1000}' "$OUT/products-mem.txt"
	;;
*)
	echo "usage: scripts/perf17.sh peer|products" >&2
	exit 2
	;;
esac
