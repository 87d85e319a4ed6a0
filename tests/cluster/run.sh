#!/usr/bin/env bash
# run.sh — the cluster tests (make test-cluster): real Slurm, two hosts over
# TCP, and a rank killed mid-epoch. Runs them all, reports each, and fails if
# any failed. One test: tests/cluster/run.sh slurm
set -uo pipefail
dir="$(dirname "$0")"
tests=("$@")
[[ ${#tests[@]} -gt 0 ]] || tests=(fault multihost slurm)
failed=()
for t in "${tests[@]}"; do
	start=$SECONDS
	if bash "$dir/$t.sh"; then
		echo "[$t] done in $((SECONDS - start)) s"
	else
		failed+=("$t")
	fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "cluster tests FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "cluster tests passed: ${tests[*]}"
