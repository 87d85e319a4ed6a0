#!/usr/bin/env bash
# mpirun.sh — start an mpignn job with sensible defaults.
#
#   ./mpirun.sh [-v] [-n P] [--hostfile FILE] [other launcher flags...] ./bin/mpignn CMD ...
#   ./mpirun.sh -n 1 ./bin/mpignn CMD ... : -n 1 ./bin/mpignn CMD ...   (MPMD, mpirun only)
#
# Where it runs:
#   - inside a Slurm allocation (SLURM_JOB_ID set): across the allocation, with
#     `srun --mpi=pmix` when Slurm offers PMIx, else with mpirun's own Slurm support;
#   - with --hostfile FILE: across the hosts listed there;
#   - otherwise on this machine, oversubscribed (more ranks than cores is fine).
# Which MPI: MPIGNN_MPI=openmpi (default) or mpich. Every argument this script
# does not know is passed to the launcher unchanged. -v prints the command.
set -euo pipefail

mpi="${MPIGNN_MPI:-openmpi}"
verbose=0
np=""
hostfile=""
args=()
while [[ $# -gt 0 ]]; do
	case "$1" in
	-v | --verbose) verbose=1; shift ;;
	-n | -np | --np)
		[[ $# -ge 2 ]] || { echo "mpirun.sh: $1 needs a number" >&2; exit 2; }
		np="$2"; shift 2 ;;
	--hostfile | -hostfile | --machinefile | -machinefile | -f)
		[[ $# -ge 2 ]] || { echo "mpirun.sh: $1 needs a file" >&2; exit 2; }
		hostfile="$2"; shift 2 ;;
	# MPMD: everything from the first ":" on ("-n 1 ./other ...") goes to
	# the launcher as it is, -n included.
	:) args+=("$@"); break ;;
	*) args+=("$1"); shift ;;
	esac
done
if [[ ${#args[@]} -eq 0 ]]; then
	echo "usage: mpirun.sh [-v] [-n P] [--hostfile FILE] [launcher flags] PROGRAM [ARGS...]" >&2
	exit 2
fi
if [[ -n "$hostfile" && ! -r "$hostfile" ]]; then
	echo "mpirun.sh: hostfile $hostfile is not readable" >&2
	exit 2
fi

# Every rank is single-threaded towards MPI but uses goroutines for compute:
# do not pin a rank to one core.
cmd=()
case "$mpi" in
openmpi)
	if [[ $(id -u) -eq 0 ]]; then
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	fi
	# With MPICH installed too, plain `mpirun` may be either; name OpenMPI's.
	launcher="${MPIRUN:-$(command -v mpirun.openmpi || echo mpirun)}"
	if [[ -n "${SLURM_JOB_ID:-}" && -z "$hostfile" ]] && command -v srun >/dev/null &&
		srun --mpi=list 2>&1 | grep -q pmix; then
		cmd=(srun --mpi=pmix --cpu-bind=none)
		[[ -n "$np" ]] && cmd+=(-n "$np")
	else
		cmd=("$launcher" --bind-to none)
		if [[ -n "$hostfile" ]]; then
			cmd+=(--hostfile "$hostfile")
		elif [[ -z "${SLURM_JOB_ID:-}" ]]; then
			cmd+=(--oversubscribe)
		fi
		[[ -n "$np" ]] && cmd+=(-n "$np")
	fi
	;;
mpich)
	launcher="${MPIRUN:-mpirun.mpich}"
	if [[ -n "${SLURM_JOB_ID:-}" && -z "$hostfile" ]] && command -v srun >/dev/null &&
		srun --mpi=list 2>&1 | grep -q pmi2; then
		cmd=(srun --mpi=pmi2 --cpu-bind=none)
		[[ -n "$np" ]] && cmd+=(-n "$np")
	else
		# Hydra does not bind by default and allows oversubscription.
		cmd=("$launcher")
		# MPICH's ch4 device busy-polls while it waits, so ranks that share
		# a core take it from each other. When this machine has fewer cores
		# than ranks, ask MPICH to back off in its progress loop: these are
		# the settings MPICH's own CI uses for oversubscribed runs (MPICH
		# 4.3 and later; older versions, such as Debian 12's 4.0.2, ignore
		# them). mpignn's own waits (the --timeout gates before every
		# collective) already sleep while peers are missing. A value in the
		# environment wins.
		if [[ -z "$hostfile" && -n "$np" ]] && ((np > $(nproc))); then
			export MPIR_CVAR_CH4_PROGRESS_THROTTLE="${MPIR_CVAR_CH4_PROGRESS_THROTTLE:-1}"
			export MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT="${MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT:-1}"
			export MPIR_CVAR_POLLS_BEFORE_YIELD="${MPIR_CVAR_POLLS_BEFORE_YIELD:-1}"
		fi
		[[ -n "$hostfile" ]] && cmd+=(-f "$hostfile")
		[[ -n "$np" ]] && cmd+=(-n "$np")
	fi
	;;
*)
	echo "mpirun.sh: MPIGNN_MPI=$mpi: want openmpi or mpich" >&2
	exit 2
	;;
esac
cmd+=("${args[@]}")
if [[ $verbose -eq 1 ]]; then
	echo "mpirun.sh: ${cmd[*]}" >&2
fi
if [[ $mpi != mpich || ${cmd[0]} == srun ]]; then
	exec "${cmd[@]}"
fi

# MPICH's Hydra: once mpiexec has forwarded a signal to the ranks, its
# proxies may report exit code 0 for a rank whatever it exited with (they
# count the exit as part of a cleanup they forced), and the first rank to
# exit without MPI_Finalize makes them SIGKILL the others, noting 0 for
# them. So a job that stopped on SIGUSR1 with its checkpoint (75), or was
# interrupted, exited 0 in most runs (MPICH 4.0.2).
# Hydra itself is not fixable from here; instead mpiexec runs as a child,
# each rank notes the non-zero code it exits with in a file (spmd.Exit,
# MPIGNN_EXIT_FILE), and when mpiexec says 0 this script exits with the
# largest code noted, or 128+N after it relayed a terminating signal N
# that no rank answered with a code of its own. srun (above) reports the
# ranks' codes itself. With --hostfile the file is made in the working
# directory, which Hydra gives the remote ranks too (a shared file system
# lets them note there; a rank that cannot open the file notes nothing).
note=""
if [[ -n "$hostfile" ]]; then
	note=$(mktemp "$PWD/.mpignn-exit.XXXXXX" 2>/dev/null) || note=""
fi
[[ -n "$note" ]] || note=$(mktemp "${TMPDIR:-/tmp}/mpignn-exit.XXXXXX")
export MPIGNN_EXIT_FILE="$note"
relayed=0
child=""
pending=""
# A signal to this script goes to mpiexec, which forwards it to the ranks
# (one that arrives before mpiexec is started goes once it is). SIGINT
# goes as SIGTERM (as OpenMPI's mpirun forwards it): at a terminal, Ctrl-C
# reaches mpiexec directly too, and Hydra takes a second SIGINT as "abort
# now" and SIGKILLs the ranks before they can remove their temporary
# output.
relay() {
	case "$1" in
	TERM) relayed=15 ;;
	HUP) relayed=1 ;;
	esac
	if [[ -z "$child" ]]; then
		pending="$1"
	else
		kill -s "$1" "$child" 2>/dev/null || true
	fi
}
trap 'relay TERM' INT TERM
trap 'relay HUP' HUP
trap 'relay USR1' USR1
trap 'relay USR2' USR2
# <&0: a background command's stdin would otherwise be /dev/null, and
# Hydra passes this script's stdin on to rank 0.
"${cmd[@]}" <&0 &
child=$!
if [[ -n "$pending" ]]; then
	kill -s "$pending" "$child" 2>/dev/null || true
fi
while :; do
	rc=0
	wait "$child" || rc=$?
	# A trapped signal cuts wait short (status >128) while mpiexec runs on;
	# bash keeps the status of a child it has reaped, so waiting again
	# after it ended gives its own.
	kill -0 "$child" 2>/dev/null && continue
	rc=0
	wait "$child" || rc=$?
	break
done
noted=0
while read -r c; do
	if [[ "$c" =~ ^[0-9]+$ ]] && ((c > noted)); then
		noted=$c
	fi
done <"$note"
rm -f "$note"
if ((rc == 0 && noted > 0)); then
	rc=$noted
elif ((rc == 0 && relayed > 0)); then
	rc=$((128 + relayed))
fi
exit "$rc"
