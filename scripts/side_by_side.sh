#!/usr/bin/env bash
# Issue 43's side-by-side speed measurement: two mpignn binaries (BEFORE, AFTER) alternating,
# ROUNDS rounds, on the peer graph. Per round and binary: SAGE 3x256 (fanout 15,10,5, batch 1024)
# on 1 rank x 1 thread and 2 ranks x 1 thread, STEPS steps then the layer-wise evaluation; GAT
# (4 heads, attention dropout 0.5) on 1 x 1 for GSTEPS steps; and, for AFTER, the same SAGE runs
# on bf16 partitions when they exist. Each run leaves its metrics (JSON lines) and log in OUT;
# round 1's 1 x 1 SAGE runs also leave a CPU profile.
#
#   mpignn gen --nodes 200000 --avg-degree 40 --classes 47 --feat-dim 100 --train 100000 \
#       --valid 20000 --test 80000 --seed 1 --out $PEER/data
#   mpignn partition --data $PEER/data --parts 1 --out $PEER/p1          # and --parts 2: $PEER/p2
#   mpignn partition --data $PEER/data --parts 1 --feat-dtype bf16 --out $PEER/bf16-p1   # and bf16-p2
#   BEFORE=old/mpignn AFTER=bin/mpignn PEER=$PEER OUT=sbs scripts/side_by_side.sh
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BEFORE=${BEFORE:?BEFORE: the old binary}; AFTER=${AFTER:-$ROOT/bin/mpignn}; PEER=${PEER:?PEER: the peer graph directory}
OUT=${OUT:-sbs}; ROUNDS=${ROUNDS:-3}; STEPS=${STEPS:-40}; GSTEPS=${GSTEPS:-10}
mkdir -p "$OUT"
SAGE="--fanout 15,10,5 --batch 1024 --hidden 256 --layers 3 --lr 0.003 --dropout 0.5 --seed 1 --epochs 1 --threads 1"
run() { # name ranks parts binary steps [flags...]
  local n=$1 np=$2 parts=$3 bin=$4 steps=$5; shift 5
  "$ROOT/mpirun.sh" -n "$np" "$bin" train --parts "$parts" $SAGE --max-steps "$steps" --metrics "$OUT/$n.json" "$@" >"$OUT/$n.log" 2>&1
  echo "$n $(grep -o 'weights=[0-9a-f]*' "$OUT/$n.log")"
}
for r in $(seq 1 "$ROUNDS"); do
  for who in before after; do
    bin=$BEFORE; [ "$who" = after ] && bin=$AFTER
    prof=(); [ "$r" = 1 ] && prof=(--cpuprofile "$OUT/sage-1x1-$who.prof")
    run "sage-1x1-$who-r$r" 1 "$PEER/p1" "$bin" "$STEPS" "${prof[@]}"
    run "sage-2x1-$who-r$r" 2 "$PEER/p2" "$bin" "$STEPS"
    run "gat-1x1-$who-r$r" 1 "$PEER/p1" "$bin" "$GSTEPS" --model gat --heads 4 --attn-dropout 0.5 --eval sampled --eval-fanout 1,1,1
    if [ "$who" = after ]; then
      [ -d "$PEER/bf16-p2" ] && run "sage-2x1-bf16-r$r" 2 "$PEER/bf16-p2" "$bin" "$STEPS"
      [ -d "$PEER/bf16-p1" ] && run "sage-1x1-bf16-r$r" 1 "$PEER/bf16-p1" "$bin" "$STEPS"
    fi
  done
done
