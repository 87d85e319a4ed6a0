#!/usr/bin/env bash
# slurm.sh — a real one-node Slurm cluster on this machine: install
# slurm-wlm and munge, write a slurm.conf for this host, start munged,
# slurmctld and slurmd, then submit hostfiles/slurm/partition.sbatch and
# hostfiles/slurm/train.sbatch (2 tasks, Cora) with `sbatch --wait` and check
# the job log. The daemons are stopped on exit, whatever happens.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need_root "starts Slurm daemons"
need_dataset cora
[[ -x "$mpignn" ]] || fail "$mpignn is missing (make build)"
apt_install slurm-wlm munge

tmp="$(mktemp -d /tmp/mpignn-slurm.XXXXXX)"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# munge authenticates Slurm's messages; reuse a running munged.
if ! munge -n >/dev/null 2>&1; then
	[[ -s /etc/munge/munge.key ]] || { dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none &&
		chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key; }
	mkdir -p /run/munge /var/log/munge /var/lib/munge
	chown munge:munge /run/munge /var/log/munge /var/lib/munge
	munged --force --foreground >"$tmp/munged.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
	munge -n >/dev/null 2>&1 || fail "munged did not start: $(cat "$tmp/munged.log")"
fi

host="$(hostname -s)"
mem_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 - 1024))
mkdir -p "$tmp/state" "$tmp/spool"
export SLURM_CONF="$tmp/slurm.conf"
# linuxproc/none plugins: no cgroups or systemd needed (containers, CI).
cat >"$SLURM_CONF" <<CONF
ClusterName=mpignntest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldPort=16817
SlurmdPort=16818
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=2 RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
slurmctld -D -c >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	sinfo -h -o %T 2>/dev/null | grep -qx idle && break
	sleep 0.2
done
sinfo -h -o %T 2>/dev/null | grep -qx idle ||
	fail "the node did not become idle: $(sinfo 2>&1; tail -5 "$tmp/slurmctld.log" "$tmp/slurmd.log" 2>&1)"
say "slurm up: $(sinfo -h -o '%P %D %T %c CPUs') ($(sbatch --version))"
say "srun MPI plugins: $(srun --mpi=list 2>&1 | grep -v '^MPI plugin' | tr -s ' \n\t' ' ')"

# Submit the way the README says: from a directory with logs/ in it.
job="$tmp/job"
mkdir -p "$job/logs"
cd "$job"
export MPIGNN_HOME="$repo"
# This node is small: ask for what it has instead of the script's defaults.
MPIGNN_DATA="$data_root/cora" MPIGNN_SPLIT=public MPIGNN_NPARTS=2 MPIGNN_PARTS="$job/cora-2" \
	timeout 600 sbatch --wait --cpus-per-task=1 --mem=2G "$repo/hostfiles/slurm/partition.sbatch" ||
	fail "partition.sbatch failed: $(cat logs/mpignn-partition-*.out)"
say "partition.sbatch: $(tail -1 logs/mpignn-partition-*.out)"
rc=0
MPIGNN_PARTS="$job/cora-2" MPIGNN_OUT="$job/out" MPIGNN_TRAIN_ARGS="--epochs 30 --quiet" \
	timeout 900 sbatch --wait --ntasks=2 --mem-per-cpu=2G "$repo/hostfiles/slurm/train.sbatch" || rc=$?
log="$(ls logs/mpignn-train-*.out)"
say "train.sbatch log ($log):"
sed 's/^/    /' "$log"
[[ $rc -eq 0 ]] || fail "sbatch --wait train.sbatch exited $rc"
final_line "$log" | grep -Eq 'test_acc=0\.[0-9]+' || fail "no test accuracy line in the job log"
grep -q 'srun --mpi=pmix' "$log" || grep -q 'mpirun' "$log" || fail "the log does not show the launch command"
[[ -s "$job/out/metrics.jsonl" ]] || fail "no metrics written to MPIGNN_OUT"
say "PASS: $(final_line "$log")"
