#!/usr/bin/env bash
# run.sh — the cluster tests (make test-cluster): real Slurm, two hosts over
# TCP, and a rank killed mid-epoch. Runs them all, reports each, and fails if
# any failed. One test: tests/cluster/run.sh slurm
set -uo pipefail
dir="$(dirname "$0")"
tests=("$@")
[[ ${#tests[@]} -gt 0 ]] || tests=(fault multihost slurm)
failed=() passed=() skipped=()
for t in "${tests[@]}"; do
	start=$SECONDS
	bash "$dir/$t.sh"
	case $? in
	0)
		passed+=("$t")
		echo "[$t] done in $((SECONDS - start)) s"
		;;
	77) skipped+=("$t") ;;
	*) failed+=("$t") ;;
	esac
done
echo "cluster tests: passed: ${passed[*]:-none}; skipped: ${skipped[*]:-none}; failed: ${failed[*]:-none}"
[[ ${#failed[@]} -eq 0 ]]
