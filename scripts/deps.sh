#!/usr/bin/env bash
# deps.sh — make sure the system packages mpignn builds against are present:
# Go 1.26, a C compiler, OpenMPI (or MPICH with MPI=mpich), libmetis,
# oneDNN, OpenBLAS and pkg-config, and PyTorch, NumPy and scikit-learn for the export and metric tests.
# As root it installs what is missing with apt-get; otherwise it prints the
# command to run and fails.
set -euo pipefail

mpi="${MPI:-openmpi}"
missing=()
case "$mpi" in
openmpi)
	command -v mpirun >/dev/null && pkg-config --exists ompi 2>/dev/null || missing+=(openmpi-bin libopenmpi-dev)
	# PT-Scotch (the distributed partitioner's --method parmetis); Debian
	# builds it against OpenMPI only, so MPICH builds leave it out.
	[[ -f /usr/include/scotch/ptscotch.h ]] || missing+=(libptscotch-dev)
	;;
mpich)
	command -v mpirun.mpich >/dev/null && pkg-config --exists mpich 2>/dev/null || missing+=(mpich libmpich-dev)
	;;
*)
	echo "deps.sh: MPI=$mpi: want openmpi or mpich" >&2
	exit 2
	;;
esac
command -v pkg-config >/dev/null || missing+=(pkg-config)
[[ -f /usr/include/metis.h ]] || missing+=(libmetis-dev)
# The model's float32 matrix products run on oneDNN (train/kernels/blas_dnnl.go,
# dnnl_sgemm.go; it links libgomp, a dependency of libdnnl-dev), float64
# ones and `-tags openblas` builds on OpenBLAS (train/kernels/blas_openblas.go).
[[ -f /usr/include/oneapi/dnnl/dnnl.h ]] || missing+=(libdnnl-dev)
pkg-config --exists openblas 2>/dev/null || [[ -f /usr/include/x86_64-linux-gnu/cblas.h || -f /usr/include/cblas.h ]] ||
	missing+=(libopenblas-dev)
command -v gcc >/dev/null || missing+=(gcc)
# The test of `mpignn export` (tests/pyg_test.go) rebuilds the exported
# models in PyTorch (scripts/pyg_check.py); Debian's python3-torch is
# 1.13 and lives under /usr/bin (a pyenv python3 on PATH would not see it).
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || missing+=(python3-torch python3-numpy)
# The real-target tests recompute ROC-AUC with scikit-learn
# (scripts/target_check.py, tests/targets_test.go).
/usr/bin/python3 -c 'import sklearn' 2>/dev/null || missing+=(python3-sklearn)

if [[ ${#missing[@]} -gt 0 ]]; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "deps.sh: installing ${missing[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	else
		echo "deps.sh: missing system packages. Run:" >&2
		echo "  sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
fi

go_bin="${GO:-go}"
if ! command -v "$go_bin" >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
	echo "deps.sh: Go is installed in /usr/local/go but not on your PATH. Run:" >&2
	echo "  export PATH=\$PATH:/usr/local/go/bin" >&2
	echo "(add it to ~/.profile to keep it), or give it to make: make GO=/usr/local/go/bin/go ..." >&2
	exit 1
fi
if ! command -v "$go_bin" >/dev/null; then
	echo "deps.sh: Go is not installed; mpignn needs Go 1.26 or newer (https://go.dev/dl/, install to /usr/local/go)." >&2
	exit 1
fi
minor=$("$go_bin" env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if [[ "$minor" =~ ^[0-9]+$ ]] && ((minor < 26)); then
	echo "deps.sh: $("$go_bin" env GOVERSION) is too old; mpignn needs Go 1.26 or newer (https://go.dev/dl/)." >&2
	exit 1
fi
