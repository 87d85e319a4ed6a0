#!/usr/bin/env bash
# Temporal link prediction (issue 16): bitcoin-alpha and MovieLens 100K on their chronological
# (time) splits, 2 ranks, the same model and settings with and without temporal sampling.
#
#   plain      the issue-14/15 run: training-edge graph without times, time-blind sampling
#              (training positives see neighbours from their future);
#   temporal   the same training-edge graph with times (partition --time), every positive and its
#              negatives sampled at the positive's time, strictly older edges only, evaluation
#              pairs at their own times;
#   streaming  partition --time --link-graph all: the graph holds every event (train, valid,
#              test) and strict temporal sampling keeps each scored pair to the events before it,
#              so a test edge sees the earlier valid and test events too (the protocol of
#              streaming temporal-graph benchmarks), never itself or anything later.
#
#   scripts/temporal.sh                     # both datasets, seeds 1 2 3
#   DATASETS=movielens100k SEEDS=1 scripts/temporal.sh
#
# Variables: DATA (default ../shared/data), NP (default 2), SEEDS (default "1 2 3"), DATASETS
# (default "bitcoinalpha movielens100k"), PARTS (default out/temporal-parts), LOG (default
# out/temporal.log), VARIANTS (default "plain temporal streaming"). Evaluation runs every 10
# (bitcoin-alpha) or 5 (MovieLens) epochs: exact temporal evaluation embeds each of the 101 pairs of
# a positive at its own time, which costs far more than embedding every node once. Prints one markdown row per dataset and variant: test AUC / MRR mean ± std of
# the best-validation-MRR epoch, and seconds per run.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
NP=${NP:-2}
SEEDS=${SEEDS:-1 2 3}
DATASETS=${DATASETS:-bitcoinalpha movielens100k}
PARTS=${PARTS:-out/temporal-parts}
LOG=${LOG:-out/temporal.log}; mkdir -p "$(dirname "$LOG")" "$PARTS"
[ -x bin/mpignn ] || go build -o bin/mpignn ./cmd/mpignn

partflags() { # dataset -> partition flags common to the variants
  case "$1" in
  bitcoinalpha) echo "--link-split time --struct-feats 2" ;;            # as scripts/linkpred.sh
  movielens100k) echo "--link-split time --relation user___rates___movie" ;;
  esac
}
settings() { # dataset -> train flags common to the variants (the issue-14/15 settings; since issue 24
  # --task link has other defaults, so the ones these runs had are given)
  case "$1" in
  bitcoinalpha) echo "--model sage --decoder dot --dropout 0.5 --norm-feat=false --fanout 10,10 --batch 512 --epochs 30 --eval-every 10 --hidden 128 --lr 0.01 --weight-decay 0" ;;
  movielens100k) echo "--embed-types all --decoder dot --dropout 0.5 --weight-decay 5e-4 --norm-feat=false --fanout 10,10 --batch 256 --hidden 64 --epochs 10 --eval-every 5" ;;
  esac
}
variant() { # name -> "partition flags|train flags"
  case "$1" in
  plain) echo "|" ;;
  temporal) echo "--time|--temporal uniform --temporal-strict" ;;
  streaming) echo "--time --link-graph all|--temporal uniform --temporal-strict" ;;
  streaming-last) echo "--time --link-graph all|--temporal last --temporal-strict" ;;
  esac
}
VARIANTS=${VARIANTS:-plain temporal streaming}

stats() { # values... -> "mean ± std"
  python3 -c 'import sys,statistics as s; v=[float(x) for x in sys.argv[1:]]; print("%.3f ± %.3f" % (s.mean(v), s.stdev(v) if len(v)>1 else 0.0))' "$@"
}

: > "$LOG"
echo "| dataset | variant | test AUC | test MRR | val MRR | s per run |"
echo "|---|---|---|---|---|---|"
for ds in $DATASETS; do
  for v in $VARIANTS; do
    spec=$(variant "$v"); pf=${spec%%|*}; tf=${spec#*|}
    pdir="$PARTS/$ds-$NP-$(echo "$pf" | tr -c 'a-z0-9\n' '_')"
    if [ ! -f "$pdir/.done" ]; then
      ./bin/mpignn partition --data "$DATA/$ds" --parts "$NP" --seed 0 $(partflags "$ds") $pf --out "$pdir" --force >/dev/null
      touch "$pdir/.done"
    fi
    aucs=""; mrrs=""; vals=""; secs=""
    for s in $SEEDS; do
      t0=$(date +%s.%N)
      line=$(./mpirun.sh -n "$NP" ./bin/mpignn train --task link --parts "$pdir" $(settings "$ds") $tf --seed "$s" --quiet | grep '^final:')
      t1=$(date +%s.%N)
      echo "$ds $v seed $s: $line" >> "$LOG"
      aucs="$aucs $(sed -E 's/.*test_auc=([0-9.]+).*/\1/' <<<"$line")"
      mrrs="$mrrs $(sed -E 's/.*test_mrr=([0-9.]+).*/\1/' <<<"$line")"
      vals="$vals $(sed -E 's/.*best_val_mrr=([0-9.]+).*/\1/' <<<"$line")"
      secs="$secs $(python3 -c "print($t1-$t0)")"
    done
    echo "| $ds | $v | $(stats $aucs) | $(stats $mrrs) | $(stats $vals | cut -d' ' -f1) | $(stats $secs | cut -d' ' -f1) |"
  done
done
