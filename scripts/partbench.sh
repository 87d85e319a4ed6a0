#!/usr/bin/env bash
# Partitioner benchmark (issues 25 and 32): one partition run measured with /usr/bin/time -v per
# process, the ranks through a wrapper (mpirun.sh takes -v for itself), with the load average and
# free memory logged before and after, since the machine it was written for is shared: wall times
# are upper bounds there, CPU seconds and peak RSS are not load-dependent.
#
#   scripts/partbench.sh NAME P METHOD DATA PARTS
#
#   METHOD metis  the single-process partitioner (DATA in the OGB raw layout; P is ignored)
#   METHOD lp|ml|parmetis|random
#                 ./mpirun.sh -n P ... partition --method METHOD (DATA chunked)
#
# Writes RES/NAME/{before,after,out,time.R} (R: the rank) and prints per rank CPU (user + system),
# wall and peak RSS, then the partitioner's cut and balance line. The partition goes to
# OUT/NAME and is removed afterwards unless KEEP=1 (for training on it). Variables: BIN (default
# bin/mpignn), RES (default out/partbench), OUT (default out/partbench-parts), NICE (default 5),
# MIN_FREE_GB (wait until MemAvailable is at least this, default 0).
#
# The products-sized runs of BENCHMARKS.md ("Multilevel"):
#   bin/mpignn gen --out prod-ogb --nodes 2450000 --avg-degree 25 --classes 47 --feat-dim 100 --seed 1
#   bin/mpignn convert --data prod-ogb --out prod-ch --chunk-nodes 100000 --chunk-edges 4000000
#   scripts/partbench.sh p-ml4 4 ml prod-ch 4; scripts/partbench.sh p-lp4 4 lp prod-ch 4
#   MIN_FREE_GB=12 scripts/partbench.sh p-metis4 1 metis prod-ogb 4
set -uo pipefail
if [[ $# -ne 5 ]]; then
	echo "usage: scripts/partbench.sh NAME P METHOD DATA PARTS" >&2
	exit 2
fi
name=$1 np=$2 method=$3 data=$4 parts=$5
root="$(cd "$(dirname "$0")/.." && pwd)"
BIN=$(realpath "${BIN:-$root/bin/mpignn}")
RES=${RES:-$root/out/partbench}
OUT=${OUT:-$root/out/partbench-parts}
NICE=${NICE:-5}
d=$RES/$name
rm -rf "$d" "${OUT:?}/$name"
mkdir -p "$d" "$OUT"
d=$(realpath "$d")

need=$((${MIN_FREE_GB:-0} * 1048576))
while (($(awk '/MemAvailable/{print $2}' /proc/meminfo) < need)); do
	echo "partbench: waiting for ${MIN_FREE_GB} GB of free memory" >&2
	sleep 20
done

# The per-rank wrapper: OpenMPI and MPICH name the rank differently.
wrap=$d/time-wrapper.sh
cat >"$wrap" <<EOF
#!/usr/bin/env bash
exec /usr/bin/time -v -o "$d/time.\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}" "\$@"
EOF
chmod +x "$wrap"

{ date; uptime; grep MemAvailable /proc/meminfo; } >"$d/before"
if [[ $method == metis ]]; then
	nice -n "$NICE" /usr/bin/time -v -o "$d/time.0" "$BIN" partition --data "$data" --parts "$parts" \
		--out "$OUT/$name" >"$d/out" 2>&1
else
	nice -n "$NICE" "$root/mpirun.sh" -n "$np" "$wrap" "$BIN" partition --data "$data" --parts "$parts" \
		--method "$method" --out "$OUT/$name" >"$d/out" 2>&1
fi
echo "rc=$?" >>"$d/out"
{ date; uptime; } >"$d/after"
[[ ${KEEP:-0} == 1 ]] || rm -rf "${OUT:?}/$name"

echo "== $name: $(sed -n 2p "$d/before" | sed 's/.*load/load/') -> $(sed -n 2p "$d/after" | sed 's/.*load/load/')"
for f in "$d"/time.*; do
	awk -v f="$(basename "$f")" '/User time/{u=$NF} /System time/{s=$NF} /Elapsed/{w=$NF}
		/Maximum resident/{r=$NF} END{printf "%s  cpu %.1f s  wall %s  rss %.2f GB\n", f, u+s, w, r/1048576}' "$f"
done
grep -E "steps:|edge_cut|rc=" "$d/out"
