#!/usr/bin/env bash
# ogbn-mag-sized heterogeneous benchmark (issue 15): generate the graph (1.94 M nodes, 21 M edges;
# `gen --hetero --scale 1`), partition it into 4 parts (time, peak RSS), train one epoch of HeteroSAGE
# on 4 ranks with learnable embeddings for authors, institutions and fields of study (epoch and
# evaluation time), then time the embedding gradient push, alltoallv against MPI_Accumulate, over the
# same first STEPS steps, one run after the other.
#
#   scripts/mag.sh                 # about 25 minutes on 2 cores, 12 GB of RAM at the peak
#   SKIP_EPOCH=1 STEPS=20 scripts/mag.sh
#
# Variables: OUT (work directory, default demo/mag), NP (default 4), STEPS (push comparison, default
# 30), TRAIN (extra train flags, default "--fanout 10,10 --batch 1024 --hidden 64 --embed-dim 64").
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-demo/mag}
NP=${NP:-4}
STEPS=${STEPS:-30}
TRAIN=${TRAIN:---fanout 10,10 --batch 1024 --hidden 64 --embed-dim 64}
mkdir -p "$OUT"
[ -x bin/mpignn ] || go build -o bin/mpignn ./cmd/mpignn
peak() { sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$1" | awk '{printf "%.2f GB", $1/1048576}'; }
wall() { sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1"; }

if [ ! -f "$OUT/graph/raw/num-node-dict.csv.gz" ]; then
  /usr/bin/time -v ./bin/mpignn gen --hetero --scale 1 --seed 1 --out "$OUT/graph" >"$OUT/gen.log" 2>&1
  echo "gen: $(head -1 "$OUT/gen.log"); wall $(wall "$OUT/gen.log"), peak RSS $(peak "$OUT/gen.log")"
fi
if [ ! -f "$OUT/parts-$NP/META.json" ]; then
  /usr/bin/time -v ./bin/mpignn partition --data "$OUT/graph" --parts "$NP" --seed 0 --out "$OUT/parts-$NP" --force >"$OUT/partition.log" 2>&1
  grep -E '^(read|partitioned)' "$OUT/partition.log"
  echo "partition: wall $(wall "$OUT/partition.log"), peak RSS $(peak "$OUT/partition.log")"
fi
# shellcheck disable=SC2086
if [ -z "${SKIP_EPOCH:-}" ]; then
  ./mpirun.sh -n "$NP" ./bin/mpignn train --parts "$OUT/parts-$NP" --epochs 1 $TRAIN --quiet \
    --metrics "$OUT/epoch.jsonl" >"$OUT/epoch.log" 2>&1
  grep -E '^(embedding push|final)' "$OUT/epoch.log"
  python3 - "$OUT/epoch.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") == "epoch":
        print("epoch: %.1f s (%.3f steps/s), evaluation %.1f s; sample %.1f, gather %.1f, forward %.1f, backward %.1f, allreduce %.1f, optimizer+push %.1f s; test acc %.4f" % (
            d["epoch_s"], d["steps_per_s"], d["eval_s"], d["sample_s"], d["gather_s"], d["forward_s"],
            d["backward_s"], d["allreduce_s"], d["optimizer_s"], d["test_acc"]))
EOF
fi
for push in alltoallv accumulate; do
  # shellcheck disable=SC2086
  ./mpirun.sh -n "$NP" ./bin/mpignn train --parts "$OUT/parts-$NP" --epochs 1 --max-steps "$STEPS" $TRAIN \
    --eval-every 1000 --embed-push "$push" --quiet >"$OUT/push-$push.log" 2>&1
  s=$(sed -n 's/^embedding push: \([0-9.]*\)s.*/\1/p' "$OUT/push-$push.log")
  echo "push $push: ${s}s over $STEPS steps ($(awk -v s="$s" -v n="$STEPS" 'BEGIN{printf "%.0f", 1000*s/n}') ms/step)"
done
