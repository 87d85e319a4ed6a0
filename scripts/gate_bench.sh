#!/usr/bin/env bash
# gate_bench.sh — the watchdog gate's cost when ranks share cores, before and after a change
# (BENCHMARKS.md, "Stall watchdog"): the oversubscribed job of that section, run alternately
# with two builds under both MPIs, on a QUIET machine (nothing else running).
#
#   scripts/gate_bench.sh BEFORE [AFTER]   # git revisions; AFTER defaults to the working tree
#
# BEFORE and AFTER are built for OpenMPI and MPICH (-tags mpich) into a scratch directory;
# the graph (gen --nodes 50000 --avg-degree 20 --classes 8 --feat-dim 64 --seed 1) and its
# 4-part METIS partition are made once there. Then, RUNS times (default 3) per MPI, each build
# runs `train --fanout 10,5 --batch 256 --hidden 64 --epochs 2 --seed 1` on NP ranks (default
# 4; on a 2-core machine that is the oversubscribed case), alternating before, after, and
# "off" (AFTER with --timeout 0: no watchdog, no gate, the target the gate should cost nothing
# against). One line per run: MPI, build, wall seconds, user + sys CPU seconds of all ranks,
# and the weights (the same for every run: the gate changes no result). Extra train flags:
# TRAIN_ARGS.
# The scratch directory is removed at the end (KEEP=1 keeps it).
set -euo pipefail
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: scripts/gate_bench.sh BEFORE [AFTER]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
np=${NP:-4}
work=$(mktemp -d "${TMPDIR:-/tmp}/mpignn-gate.XXXXXX")
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT

# src NAME REV: the source of REV (or of the working tree when REV is empty) in $work/NAME.
src() {
	mkdir -p "$work/$1"
	if [[ -z "$2" ]]; then
		(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/$1"
	else
		(cd "$root" && git archive "$2") | tar -xf - -C "$work/$1"
	fi
}
src before "$1"
src after "${2:-}"
for b in before after; do
	(cd "$work/$b" && go build -o "$work/$b/mpignn-openmpi" ./cmd/mpignn &&
		go build -tags mpich -o "$work/$b/mpignn-mpich" ./cmd/mpignn)
done
bin=$work/after/mpignn-openmpi
"$bin" gen --nodes 50000 --avg-degree 20 --classes 8 --feat-dim 64 --seed 1 --out "$work/g" >/dev/null
"$bin" partition --data "$work/g" --parts "$np" --out "$work/parts" >/dev/null

echo "gate_bench: $np ranks on $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); before=$1 after=${2:-working tree}"
printf '%-8s %-7s %8s %12s  %s\n' mpi build wall_s user+sys_s weights
for mpi in openmpi mpich; do
	for ((i = 1; i <= runs; i++)); do
		for v in before after off; do
			b=$v extra=()
			[[ $v == off ]] && b=after extra=(--timeout 0)
			out=$work/out.txt
			# Each build runs with its own mpirun.sh (the launcher settings are part of it).
			/usr/bin/time -f '%e %U %S' -o "$work/time.txt" env MPIGNN_MPI=$mpi "$work/$b/mpirun.sh" -n "$np" \
				"$work/$b/mpignn-$mpi" train --parts "$work/parts" --fanout 10,5 --batch 256 --hidden 64 \
				--epochs 2 --seed 1 --quiet "${extra[@]}" ${TRAIN_ARGS:-} >"$out" 2>&1 || { tail -20 "$out" >&2; exit 1; }
			read -r wall user sys <"$work/time.txt"
			weights=$(grep -o 'weights=[0-9a-f]*' "$out" | head -1)
			printf '%-8s %-7s %8.2f %12.2f  %s\n' "$mpi" "$v" "$wall" "$(echo "$user + $sys" | bc)" "$weights"
		done
	done
done
