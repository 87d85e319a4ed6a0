#!/usr/bin/env bash
# slurm.sh — a real one-node Slurm cluster on this machine: install
# slurm-wlm and munge, write a slurm.conf for this host, start munged,
# slurmctld and slurmd, then submit hostfiles/slurm/partition.sbatch and
# hostfiles/slurm/train.sbatch (2 tasks, Cora) with `sbatch --wait` and check
# the job log. Then the same training as a preemptible job with
# --signal=B:USR1@100: stopped once by `scancel --signal=USR1` and once by a
# 2-minute time limit's signal, rank 0 holding (MPIGNN_TEST_HOLD) until the
# signal has arrived, requeued by the script each time, it must end with the
# uninterrupted job's weights. The daemons are stopped on exit, whatever
# happens.
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
	# A limit for a daemon that does not start at all, not a timing: a loaded
	# machine only makes the loop run longer.
	for _ in $(seq 600); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
	munge -n >/dev/null 2>&1 || fail "munged did not start: $(cat "$tmp/munged.log")"
fi

host="$(hostname -s)"
mem_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 - 1024))
mkdir -p "$tmp/state" "$tmp/spool"
export SLURM_CONF="$tmp/slurm.conf"
# linuxproc/none plugins: no cgroups or systemd needed (containers, CI).
cat >"$SLURM_CONF" <<CONF
ClusterName=mpignntest
SlurmctldHost=$host(127.0.0.1)
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
# The node is described, not measured: config_overrides keeps its 2 CPUs on
# a 1-core machine too (slurmd would else mark it invalid), and NodeAddr
# spares the test a host name that resolves.
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
slurmctld -D -c >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 300); do
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
# One node with 2 CPUs: both tasks on it (the script asks one per node).
MPIGNN_PARTS="$job/cora-2" MPIGNN_OUT="$job/out" MPIGNN_TRAIN_ARGS="--epochs 30 --quiet" \
	timeout 900 sbatch --wait --nodes=1 --ntasks-per-node=2 "$repo/hostfiles/slurm/train.sbatch" || rc=$?
log="$(ls logs/mpignn-train-*.out)"
say "train.sbatch log ($log):"
sed 's/^/    /' "$log"
[[ $rc -eq 0 ]] || fail "sbatch --wait train.sbatch exited $rc"
final_line "$log" | grep -Eq 'test_acc=0\.[0-9]+' || fail "no test accuracy line in the job log"
grep -q 'srun --mpi=pmix' "$log" || grep -q 'mpirun' "$log" || fail "the log does not show the launch command"
[[ -s "$job/out/metrics.jsonl" ]] || fail "no metrics written to MPIGNN_OUT"
say "uninterrupted: $(final_line "$log")"

# Preemption and time limits. The job starts with a 10-minute limit, so that
# its signal (due 100 s before the limit; Slurm may send it up to a minute
# early) cannot come in the first run. Rank 0 holds at step 5 until the
# test's `scancel --signal=USR1 --batch` has reached it: the first stop comes
# after step 6, certainly. The requeued job gets a 2-minute limit (its
# signal is then due 0-20 s into the run, on Slurm's timer) and rank 0 holds
# at its first step (7) until that signal has reached it: the second stop
# lands at the end of epoch 3 (step 6, if the signal came during start-up)
# or after step 7 or 8, certainly in that run. The third run gets 10 minutes
# again and finishes. The final weights must not depend on any of this.
want="$(weights "$log")"
[[ -n "$want" ]] || fail "no weights digest in the uninterrupted job's log"
holds="$tmp/holds"
mkdir -p "$holds"
jobid="$(MPIGNN_PARTS="$job/cora-2" MPIGNN_OUT="$job/pre" MPIGNN_TRAIN_ARGS="--epochs 30 --quiet" \
	MPIGNN_TEST_HOLD="train-step:5@0,train-step:7@0" MPIGNN_TEST_HOLD_DIR="$holds" \
	sbatch --parsable --job-name=mpignn-preempt --nodes=1 --ntasks-per-node=2 --time=10 --signal=B:USR1@100 \
	"$repo/hostfiles/slurm/train.sbatch")"
jobid="${jobid%%;*}"
plog="$job/logs/mpignn-preempt-$jobid.out"
# wait_for SECONDS WHAT CMD... polls CMD until it succeeds.
wait_for() {
	local limit=$1 what=$2
	shift 2
	for _ in $(seq $((limit * 5))); do
		"$@" && return 0
		sleep 0.2
	done
	fail "no $what within ${limit}s: $(cat "$plog" 2>&1; scontrol show job "$jobid" 2>&1 | head -8)"
}
# signals N succeeds once rank 0 has reported N stop requests (the batch
# script's SIGUSR1, relayed by its stop file) in the job log.
signals() { [[ "$(grep -c 'rank 0: stop requested by .*SIGUSR1 to the batch script' "$plog" 2>/dev/null)" -ge "$1" ]]; }
held() { test -e "$holds/$1@0"; }
state() { scontrol show job "$jobid" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
pending() { [[ "$(state)" == PENDING ]]; }
# requeued MINUTES waits for the job to be requeued and pending, gives it a
# time limit of MINUTES and, like an admin, makes it eligible soon (Slurm
# keeps a requeued job pending for a while: Reason=BeginTime, 2 minutes).
# Not at once: slurmd refuses to launch a job in the same second as it
# revoked the job's previous credential ("Job credential revoked"; its
# times have a one-second grain), which failed the job now and then.
requeued() {
	wait_for 120 "a requeue" pending
	scontrol update JobId="$jobid" TimeLimit="$1" StartTime=now+3
}
wait_for 300 "hold at step 5" held train-step:5
scancel --signal=USR1 --batch "$jobid"
wait_for 60 "SIGUSR1 on rank 0" signals 1
touch "$holds/train-step:5@0.go"
say "scancel --signal=USR1 delivered at step 5"
requeued 2
wait_for 200 "the time limit's SIGUSR1 on rank 0 in the requeued job" signals 2
# Releases the hold at step 7 now or, if the run stopped before it, in the
# next run.
touch "$holds/train-step:7@0.go"
say "the time limit's SIGUSR1 delivered in the requeued run"
requeued 10
ended() {
	[[ "$(state)" =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]]
}
wait_for 600 "the end of the requeued job" ended
say "preempted job log ($plog):"
sed 's/^/    /' "$plog"
[[ "$(state)" == COMPLETED ]] || fail "the requeued job ended $(state): $(scontrol show job "$jobid" 2>&1 | head -12; grep -i -E "job(id=)? ?$jobid|requeue" "$tmp/slurmctld.log" | tail -20; tail -10 "$tmp/slurmd.log")"
restarts="$(scontrol show job "$jobid" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)"
[[ "${restarts:-0}" -eq 2 ]] || fail "the job was requeued ${restarts:-0} times, want 2"
[[ "$(grep -c 'stopped on request after step' "$plog")" -ge 2 ]] || fail "fewer than 2 checkpoint stops in the log"
# Cora's public split is 2 steps an epoch on 2 ranks: the first signal is
# seen in step 6's Allreduce (the last step of epoch 3: checkpointed at once,
# mid-epoch), the second at the end of epoch 3 or in step 7's or 8's.
grep -q 'stopped on request after step 6 (2 epochs complete)' "$plog" || fail "the first stop was not after step 6"
grep -Eq 'stopped on request after step (6 \(3 epochs|7 |8 )' "$plog" || fail "the second stop was not in the requeued run's first steps"
got="$(weights "$plog")"
[[ "$got" == "$want" ]] || fail "requeued job ended with $got, the uninterrupted one with $want"
say "PASS: requeued $restarts times, $got as uninterrupted"
