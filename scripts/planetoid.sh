#!/usr/bin/env bash
# Planetoid public-split accuracy table (issue 13): every model on Cora and CiteSeer, seeds 1..5,
# full neighborhoods, one full-batch step per epoch on 2 ranks; test accuracy of the
# best-validation epoch. Hyperparameters were chosen on validation accuracy only (BENCHMARKS.md).
#
#   scripts/planetoid.sh                 # all models, both datasets (about 12 minutes on 2 cores)
#   DATASETS=cora MODELS="gcn gat" SEEDS="1 2" scripts/planetoid.sh
#
#   SETTINGS=published scripts/planetoid.sh   # the papers' / DGL's settings instead, for comparison
#
# Variables: DATA (default ../shared/data), NP (ranks, default 2), SEEDS (default "1 2 3 4 5"),
# DATASETS (default "cora citeseer"), MODELS (default "gcn sage gat"), LOG (every final line,
# default out/planetoid.log). Prints one markdown row per (dataset, model): test mean ± std (sample std
# over the seeds), validation mean, and the individual test accuracies.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
NP=${NP:-2}
SEEDS=${SEEDS:-1 2 3 4 5}
DATASETS=${DATASETS:-cora citeseer}
MODELS=${MODELS:-gcn sage gat}
LOG=${LOG:-out/planetoid.log}; mkdir -p "$(dirname "$LOG")"
SETTINGS=${SETTINGS:-chosen}
[ -x bin/mpignn ] || go build -o bin/mpignn ./cmd/mpignn

# The chosen settings (docs/models.md). Everything else is the default (--norm-feat on,
# --input-dropout = --dropout, Adam).
settings() { # dataset model
  if [ "$SETTINGS" = published ]; then
    case "$2" in
    gcn|sage) echo "--hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200" ;;
    gat) echo "--heads 8 --hidden 64 --dropout 0.6 --attn-dropout 0.6 --lr 0.005 --weight-decay 5e-4 --epochs 200" ;;
    *) echo "no settings for $2" >&2; exit 2 ;;
    esac
    return
  fi
  case "$1/$2" in
  cora/gcn)      echo "--hidden 64 --dropout 0.8 --lr 0.01 --weight-decay 5e-4 --epochs 500" ;;
  cora/sage)     echo "--hidden 64 --dropout 0.8 --lr 0.01 --weight-decay 5e-4 --epochs 500" ;;
  cora/gat)      echo "--heads 8 --hidden 64 --dropout 0.6 --attn-dropout 0.6 --lr 0.01 --weight-decay 5e-4 --epochs 400" ;;
  citeseer/gcn)  echo "--hidden 64 --dropout 0.8 --lr 0.01 --weight-decay 5e-4 --epochs 300" ;;
  citeseer/sage) echo "--hidden 64 --dropout 0.8 --lr 0.01 --weight-decay 5e-4 --epochs 500" ;;
  citeseer/gat)  echo "--heads 8 --hidden 64 --dropout 0.6 --attn-dropout 0.6 --lr 0.005 --weight-decay 5e-4 --epochs 200" ;;
  *) echo "no settings for $1/$2" >&2; exit 2 ;;
  esac
}

: > "$LOG"
echo "| dataset | model | test mean ± std | val mean | test per seed |"
echo "|---|---|---|---|---|"
for ds in $DATASETS; do
  case $ds in cora) train=140 ;; citeseer) train=120 ;; *) echo "unknown dataset $ds" >&2; exit 2 ;; esac
  batch=$(( (train + NP - 1) / NP ))   # one full-batch step per epoch
  for m in $MODELS; do
    args=$(settings "$ds" "$m")
    tests=(); vals=()
    for s in $SEEDS; do
      line=$(./mpirun.sh -n "$NP" ./bin/mpignn train --data "$DATA/$ds" --split public --model "$m" \
        --fanout -1,-1 --eval-full --batch "$batch" --seed "$s" --quiet $args 2>&1 | grep '^final:') || {
        echo "run failed: $ds $m seed $s" >&2; exit 1; }
      echo "$ds $m seed=$s $args :: $line" >> "$LOG"
      tests+=("$(sed -n 's/.* test_acc=\([0-9.]*\).*/\1/p' <<<"$line")")
      vals+=("$(sed -n 's/.* best_val_acc=\([0-9.]*\).*/\1/p' <<<"$line")")
    done
    echo "$ds $m ${tests[*]} / ${vals[*]}" | awk '{
      n = (NF - 3) / 2; st = 0; sv = 0
      for (i = 0; i < n; i++) { t[i] = $(3 + i) * 100; st += t[i]; sv += $(4 + n + i) * 100 }
      mt = st / n; ss = 0; for (i = 0; i < n; i++) ss += (t[i] - mt) ^ 2
      sd = n > 1 ? sqrt(ss / (n - 1)) : 0
      per = ""; for (i = 0; i < n; i++) per = per (i ? ", " : "") sprintf("%.1f", t[i])
      printf "| %s | %s | %.1f ± %.1f | %.1f | %s |\n", $1, $2, mt, sd, sv / n, per }'
  done
done
