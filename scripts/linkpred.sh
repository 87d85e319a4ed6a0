#!/usr/bin/env bash
# Link-prediction accuracy table (issue 14): Cora, CiteSeer and Facebook with a random link split
# (random:0.85,0.05,0.10, partition --seed 0, the default when the table was first recorded), bitcoin-alpha with its time split; 2 ranks.
# Reports test AUC and MRR (100 fixed negatives per positive, OGB semantics) of the best-validation-MRR
# epoch, mean ± sample std over the seeds. Settings were chosen on validation MRR only (seed 1),
# see BENCHMARKS.md for the grid.
#
#   scripts/linkpred.sh                              # all four datasets, seeds 1 2 3
#   DATASETS="cora citeseer" SEEDS=1 scripts/linkpred.sh
#
# Variables: DATA (default ../shared/data), NP (ranks, default 2), SEEDS (default "1 2 3"),
# DATASETS (default "cora citeseer facebook bitcoinalpha"), PARTS (partition cache directory,
# default out/linkpred-parts; partitions are made once per dataset and NP), LOG (every final line,
# default out/linkpred.log). Prints one markdown row per dataset.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
NP=${NP:-2}
SEEDS=${SEEDS:-1 2 3}
DATASETS=${DATASETS:-cora citeseer facebook bitcoinalpha}
PARTS=${PARTS:-out/linkpred-parts}
LOG=${LOG:-out/linkpred.log}; mkdir -p "$(dirname "$LOG")" "$PARTS"
[ -x bin/mpignn ] || go build -o bin/mpignn ./cmd/mpignn

split() { # dataset -> --link-split value
  case "$1" in bitcoinalpha|movielens100k) echo time ;; *) echo random:0.85,0.05,0.10 ;; esac
}

# Extra partition flags: bitcoin-alpha has no node features; of the partitioner's structural
# features only the two log-degree columns are kept (the 30 fixed +-1 id codes let the model
# memorise nodes and it overfits within a few epochs; chosen on validation MRR, see BENCHMARKS.md).
partflags() { # dataset
  case "$1" in bitcoinalpha) echo "--struct-feats 2" ;; *) echo "" ;; esac
}

# The chosen settings (validation MRR, seed 1). Common to all: --hidden 128 --lr 0.01 --weight-decay 0.
settings() { # dataset
  case "$1" in
  cora)         echo "--model sage --decoder mlp --dropout 0 --norm-feat --fanout -1,-1 --batch 512 --epochs 100" ;;
  citeseer)     echo "--model sage --decoder mlp --dropout 0 --norm-feat --fanout -1,-1 --batch 512 --epochs 100" ;;
  facebook)     echo "--model sage --decoder mlp --dropout 0 --norm-feat --fanout 10,5 --batch 2048 --epochs 4" ;;
  bitcoinalpha) echo "--model sage --decoder dot --dropout 0.5 --norm-feat=false --fanout -1,-1 --batch 512 --epochs 30" ;;
  *) echo "no settings for $1" >&2; exit 2 ;;
  esac
}

: > "$LOG"
echo "| dataset | split | model / decoder | test AUC mean ± std | test MRR mean ± std | val MRR mean | test Hits@50 mean | s per run |"
echo "|---|---|---|---|---|---|---|---|"
for ds in $DATASETS; do
  sp=$(split "$ds")
  pdir="$PARTS/$ds-$NP"
  if [ ! -f "$pdir/.done" ]; then
    ./bin/mpignn partition --data "$DATA/$ds" --parts "$NP" --seed 0 --link-split "$sp" $(partflags "$ds") --out "$pdir" --force >/dev/null
    touch "$pdir/.done"
  fi
  args=$(settings "$ds")
  rows=""
  for s in $SEEDS; do
    t0=$(date +%s)
    line=$(./mpirun.sh -n "$NP" ./bin/mpignn train --task link --parts "$pdir" --hidden 128 --lr 0.01 \
      --weight-decay 0 --seed "$s" --quiet $args 2>&1 | grep '^final:') || {
      echo "run failed: $ds seed $s" >&2; exit 1; }
    secs=$(( $(date +%s) - t0 ))
    echo "$ds seed=$s secs=$secs $args :: $line" >> "$LOG"
    get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }
    rows="$rows $(get test_auc) $(get test_mrr) $(get best_val_mrr) $(get test_hits@50) $secs"
  done
  md=$(sed -n 's/.*--model \([a-z]*\).*--decoder \([a-z]*\).*/\1 \/ \2/p' <<<"$args")
  echo "$ds|${sp%%:*}|$md|$rows" | awk -F'|' '{
    n = split($4, v, " ") / 5
    for (i = 0; i < n; i++) { a[i] = v[5*i+1]; m[i] = v[5*i+2]; sa += a[i]; sm += m[i]; sv += v[5*i+3]; sh += v[5*i+4]; st += v[5*i+5] }
    ma = sa / n; mm = sm / n; qa = 0; qm = 0
    for (i = 0; i < n; i++) { qa += (a[i] - ma) ^ 2; qm += (m[i] - mm) ^ 2 }
    da = n > 1 ? sqrt(qa / (n - 1)) : 0; dm = n > 1 ? sqrt(qm / (n - 1)) : 0
    printf "| %s | %s | %s | %.4f ± %.4f | %.4f ± %.4f | %.4f | %.4f | %.0f |\n", $1, $2, $3, ma, da, mm, dm, sv / n, sh / n, st / n }'
done
