#!/usr/bin/env bash
# readme.sh — run the documentation's commands as a new user would, in order, on a fresh state.
#
#   scripts/readme.sh            # from the checkout (make test runs it as `make test-readme`)
#   README=FILE scripts/readme.sh    # only FILE's blocks
#
# Which commands: every line of the ```sh blocks that directly follow a line
# `<!-- readme-test -->` (other blocks — Slurm, hostfiles, `make test` itself — are not run), with
# `\` continuations joined and `# comments` dropped, first in README.md, then in docs/*.md in name
# order. Mark a new block the same way to have it run; a marked block must run as written from the
# checkout on one machine, and a block in docs/ may use what README.md's blocks made (parts/cora-2,
# data/peer-200k), not what another page's made, so the pages stay free to move.
#
# Where: a scratch directory (removed at the end) that holds the checkout's bin/mpignn,
# mpirun.sh, scripts/ and hostfiles/ and, beside it, shared/data/<name> links to the data sets of ../shared/data, so a run
# writes nothing into the checkout, the data sets or the user's cache (XDG_CACHE_HOME is scratch).
#
# Shortened so that the whole run takes a few minutes (flags appended to a command override
# the same flag given earlier on its line):
#   train             --epochs $README_EPOCHS --max-steps $README_STEPS (defaults 1 and 3: each
#                     epoch trains 3 steps, then evaluates as usual)
#   gen (homogeneous) --nodes 20000 --train 10000 --valid 2000 --test 8000
#   gen --hetero      --scale 0.01
#   bench comm        --iters 3 --warmup 1;  bench sample --steps 3 --warmup 1;  bench infer --reps 1
#   bench threads     --steps 3 --warmup 1 --threads 1,2
#   (a train with --epochs 0 only imports a model and runs as written)
# Skipped, each with a line saying why: `make ...` (the binary is built first), `download`
# (needs the internet: README_DOWNLOAD=1 runs it), commands that need a cluster (sbatch, srun,
# --hostfile, /shared/...), commands reading ../shared/data/NAME when that data set is missing, and
# commands that use what a skipped command would have made (its --out, --checkpoint, --metrics).
# A failing command stops the run with its output and exit code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n "${README:-}" ]]; then
	docs=("$README")
else
	docs=("$root/README.md" "$root"/docs/*.md)
fi
epochs=${README_EPOCHS:-1}
steps=${README_STEPS:-3}
data=${MPIGNN_DATA:-$root/../shared/data}

# extract FILE: the commands of FILE's marked blocks, one a line.
extract() {
	awk '
	/^<!-- readme-test -->[[:space:]]*$/ { marked = 1; next }
	marked && /^```sh[[:space:]]*$/ { inblock = 1; marked = 0; next }
	{ marked = 0 }
	inblock && /^```/ { inblock = 0; if (cur != "") print cur; cur = ""; next }
	inblock {
		line = $0
		sub(/[[:space:]]+#.*$/, "", line)   # a trailing comment
		if (line ~ /^[[:space:]]*#/ || line ~ /^[[:space:]]*$/) { if (cur == "") next; line = "" }
		if (line ~ /\\[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", line); cur = cur line " "; next }
		cur = cur line
		if (cur != "") print cur
		cur = ""
	}' "$1"
}
cmds=""
for f in "${docs[@]}"; do
	[[ -f "$f" ]] || { echo "readme.sh: $f: no such file" >&2; exit 1; }
	c=$(extract "$f")
	[[ -n "$c" ]] || continue
	echo "readme: $(grep -c '' <<<"$c") commands from ${f#"$root"/}"
	cmds+="$c"$'\n'
done
cmds=${cmds%$'\n'}
[[ -n "$cmds" ]] || { echo "readme.sh: no marked command blocks in ${docs[*]}" >&2; exit 1; }

[[ -x "$root/bin/mpignn" ]] || { echo "readme.sh: build first (make build)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/mpignn-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/repo/bin" "$work/shared/data" "$work/cache"
cp "$root/bin/mpignn" "$work/repo/bin/"
cp "$root/mpirun.sh" "$work/repo/"
cp -r "$root/scripts" "$root/hostfiles" "$work/repo/"
if [[ -d "$data" ]]; then
	for d in "$data"/*/; do ln -s "$(cd "$d" && pwd)" "$work/shared/data/$(basename "$d")"; done
fi
export XDG_CACHE_HOME="$work/cache"

ran=0 skipped=0 start=$SECONDS
missing=() # what skipped commands would have written
while IFS= read -r cmd; do
	cmd=$(sed -E 's/[[:space:]]+/ /g; s/^ //; s/ $//' <<<"$cmd")
	why=""
	case "$cmd" in
	make\ *) why="make: the binary is built already" ;;
	sbatch\ * | *" sbatch "* | *srun\ * | *--hostfile* | *" /shared/"*) why="needs a cluster" ;;
	*" download "*) [[ "${README_DOWNLOAD:-0}" == 1 ]] || why="download needs the internet (README_DOWNLOAD=1 runs it)" ;;
	esac
	if [[ -z "$why" ]]; then
		for ds in $(grep -oE '\.\./shared/data/[A-Za-z0-9_.-]+' <<<"$cmd" | sort -u); do
			[[ -e "$work/repo/$ds" ]] || why="$ds is missing"
		done
	fi
	if [[ -z "$why" ]]; then
		read -ra words <<<"$cmd"
		for m in "${missing[@]}"; do
			for w in "${words[@]}"; do
				[[ "$w" == "$m" ]] && why="uses $m, which a skipped command makes"
			done
		done
	fi
	if [[ -n "$why" ]]; then
		read -ra words <<<"$cmd"
		for ((i = 0; i + 1 < ${#words[@]}; i++)); do
			case "${words[i]}" in --out | --checkpoint | --metrics | --root) missing+=("${words[i + 1]}") ;; esac
		done
		echo "readme: skip ($why): $cmd"
		skipped=$((skipped + 1))
		continue
	fi
	run="$cmd"
	case "$cmd" in
	*" train "*"--epochs 0"*) ;;
	*" train "*) run="$cmd --epochs $epochs --max-steps $steps" ;;
	*" gen "*--hetero*) run="$cmd --scale 0.01" ;;
	*" gen "*) run="$cmd --nodes 20000 --train 10000 --valid 2000 --test 8000" ;;
	*" bench comm"*) run="$cmd --iters 3 --warmup 1" ;;
	*" bench sample "*) run="$cmd --steps 3 --warmup 1" ;;
	*" bench infer "*) run="$cmd --reps 1" ;;
	*" bench threads "*) run="$cmd --steps 3 --warmup 1 --threads 1,2" ;;
	esac
	t0=$SECONDS
	code=0
	out=$(cd "$work/repo" && timeout 300 bash -c "$run" 2>&1 </dev/null) || code=$?
	if ((code != 0)); then
		echo "readme: FAILED (exit $code): $cmd" >&2
		echo "  ran as: $run" >&2
		tail -n 30 <<<"$out" | sed 's/^/  | /' >&2
		exit 1
	fi
	echo "readme: ok ($((SECONDS - t0)) s): $cmd"
	ran=$((ran + 1))
done <<<"$cmds"
echo "readme: $ran commands ran, $skipped skipped, in $((SECONDS - start)) s"
