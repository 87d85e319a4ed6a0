# lib.sh — shared helpers of the cluster tests (sourced, not run).
# Each test prints "[name] PASS", "[name] SKIP: why" or "[name] FAIL: why"
# and exits 0 on PASS, 77 on SKIP and anything else on FAIL.

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mpignn="$repo/bin/mpignn"
name="$(basename "$0" .sh)"
# The shared datasets live beside the repository; MPIGNN_DATA overrides
# the root, as for the Go tests.
data_root="${MPIGNN_DATA:-$repo/../shared/data}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

say() { echo "[$name] $*"; }
fail() {
	say "FAIL: $*"
	exit 1
}
# skip exits with 77 (the automake convention) so that run.sh can tell a
# skipped test from a passed one; neither fails the run.
skip() {
	say "SKIP: $*"
	exit 77
}

need_root() { [[ $(id -u) -eq 0 ]] || skip "needs root ($1)"; }

need_dataset() {
	[[ -d "$data_root/$1/raw" ]] || skip "dataset $1 not found under $data_root (set MPIGNN_DATA)"
}

# apt_install PKG... installs missing Debian packages (the tests bring their
# own dependencies so that a clean machine can run them).
apt_install() {
	local missing=() p
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	command -v apt-get >/dev/null || skip "needs ${missing[*]} and there is no apt-get"
	say "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
		fail "apt-get install ${missing[*]}"
}

# final_line LOG prints the training summary line ("final: ...") of a log.
final_line() { grep -m1 '^final:' "$1" || true; }

# weights LOG prints the digest of the final weights from the summary line.
weights() { final_line "$1" | grep -o 'weights=[0-9a-f]*' || true; }

# partition_cora DIR P partitions Cora's public split into P parts in DIR.
partition_cora() {
	"$mpignn" partition --data "$data_root/cora" --split public --parts "$2" --out "$1" >/dev/null ||
		fail "partition cora into $2"
}
