#!/usr/bin/env bash
# DBLP (heterogeneous: author/paper/term/conference, public MAGNN split 400/400/3257 authors) accuracy
# table (issue 15): HeteroSAGE and R-GCN on 2 ranks, seeds 1..3, test accuracy of the best-validation
# epoch. The conference type has no features, so it trains learnable embeddings (sparse Adam).
#
#   scripts/hetero.sh                        # both models (about 4 minutes on 2 cores)
#   MODELS=hsage SEEDS="1 2" scripts/hetero.sh
#   EXTRA="--fanout 10,10 --hidden 64" scripts/hetero.sh   # other settings, added to every run
#
# Variables: DATA (default ../shared/data), NP (ranks, default 2), SEEDS (default "1 2 3"),
# MODELS (default "hsage rgcn"), EXTRA (more train flags), LOG (every final line, default
# out/hetero.log). Prints one markdown row per model: test mean ± std (sample std over the seeds),
# validation mean, and the individual test accuracies.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
NP=${NP:-2}
SEEDS=${SEEDS:-1 2 3}
MODELS=${MODELS:-hsage rgcn}
EXTRA=${EXTRA:-}
LOG=${LOG:-out/hetero.log}; mkdir -p "$(dirname "$LOG")"
[ -x bin/mpignn ] || go build -o bin/mpignn ./cmd/mpignn
[ -d "$DATA/dblp/raw" ] || { echo "DBLP not found at $DATA/dblp" >&2; exit 2; }

: > "$LOG"
echo "| dataset | model | test mean ± std | val mean | test per seed |"
echo "|---|---|---|---|---|"
for m in $MODELS; do
  tests=(); vals=()
  for s in $SEEDS; do
    # The plain command: defaults everywhere but the model and the seed.
    # shellcheck disable=SC2086
    line=$(./mpirun.sh -n "$NP" ./bin/mpignn train --data "$DATA/dblp" --model "$m" --seed "$s" --quiet $EXTRA 2>&1 |
      grep '^final:') || { echo "run failed: dblp $m seed $s" >&2; exit 1; }
    echo "dblp $m seed $s $line" >> "$LOG"
    tests+=("$(sed -n 's/.*test_acc=\([0-9.]*\).*/\1/p' <<<"$line")")
    vals+=("$(sed -n 's/.*best_val_acc=\([0-9.]*\).*/\1/p' <<<"$line")")
  done
  printf '%s\n' "${tests[@]}" | awk -v m="$m" -v vals="${vals[*]}" '
    { x[NR] = $1; s += $1 }
    END {
      mean = s / NR; v = 0
      for (i = 1; i <= NR; i++) v += (x[i] - mean) ^ 2
      sd = NR > 1 ? sqrt(v / (NR - 1)) : 0
      n = split(vals, a, " "); vs = 0
      for (i = 1; i <= n; i++) vs += a[i]
      per = ""
      for (i = 1; i <= NR; i++) per = per (i > 1 ? ", " : "") sprintf("%.4f", x[i])
      printf "| dblp | %s | %.4f ± %.4f | %.4f | %s |\n", m, mean, sd, vs / n, per
    }'
done
