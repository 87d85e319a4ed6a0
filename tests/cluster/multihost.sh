#!/usr/bin/env bash
# multihost.sh — two "hosts" on this machine: network namespaces h1 and h2
# (each with its own UTS name) joined by a veth pair (interface mpi0 on
# both sides), 10.77.0.1 and 10.77.0.2. mpirun starts in h1 and reaches h2
# through an rsh agent that runs the command inside h2's namespace, as ssh
# would on a real cluster, so all MPI traffic crosses the veth over TCP.
# Train on Cora with 2 ranks on 2 hosts and check that (a) the ranks ran on
# different hosts and their traffic crossed the veth, (b) `auto` chose the
# transport that works there (OpenMPI's one-sided fails over TCP, so
# Alltoallv; MPICH's works, so one-sided) while the 1-host run uses
# one-sided, and (c) both runs end with the same weights. Then (d) 2 parts
# shared by 2 ranks per host end with the weights of the same layout on
# one host as pretend nodes (docs/cluster.md, "One partition per node").
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need_root "creates network namespaces"
need_dataset cora
mpi="${MPIGNN_MPI:-openmpi}"
[[ -x "$mpignn" ]] || fail "$mpignn is missing (make build)"
command -v ip >/dev/null || apt_install iproute2
command -v unshare >/dev/null || apt_install util-linux

tmp="$(mktemp -d /tmp/mpignn-multihost.XXXXXX)"
ns1="mpignn-h1-$$" ns2="mpignn-h2-$$"
cleanup() {
	ip netns del "$ns1" 2>/dev/null || true
	ip netns del "$ns2" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add "$ns1" || skip "cannot create network namespaces here"
ip netns add "$ns2"
ip link add "v1-$$" type veth peer name "v2-$$" || skip "cannot create veth pairs here"
ip link set "v1-$$" netns "$ns1"
ip link set "v2-$$" netns "$ns2"
# The same interface name on both hosts, so that MPICH's -iface fits both.
ip netns exec "$ns1" ip link set "v1-$$" name mpi0
ip netns exec "$ns2" ip link set "v2-$$" name mpi0
ip netns exec "$ns1" ip addr add 10.77.0.1/24 dev mpi0
ip netns exec "$ns2" ip addr add 10.77.0.2/24 dev mpi0
for ns in "$ns1" "$ns2"; do
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip link set mpi0 up
done

# The rsh agent: OpenMPI and MPICH's Hydra call it as
# `agent [ssh options] HOST COMMAND...`.
cat >"$tmp/nsrsh" <<AGENT
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
case "\$1" in
10.77.0.1) ns=$ns1 h=h1 ;;
10.77.0.2) ns=$ns2 h=h2 ;;
*) echo "nsrsh: unknown host \$1" >&2; exit 255 ;;
esac
shift
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$h; \$*"
AGENT
chmod +x "$tmp/nsrsh"
printf '10.77.0.1 slots=1\n10.77.0.2 slots=1\n' >"$tmp/hosts"

# on_h1 CMD... runs a command as on host h1.
on_h1() { ip netns exec "$ns1" unshare --uts sh -c 'hostname h1; exec "$@"' sh "$@"; }
case "$mpi" in
openmpi)
	net=(--hostfile "$tmp/hosts" --mca plm_rsh_agent "$tmp/nsrsh"
		--mca oob_tcp_if_include 10.77.0.0/24 --mca btl_tcp_if_include 10.77.0.0/24)
	net_env=()
	want=alltoallv
	;;
mpich)
	# Debian's MPICH runs on UCX, which would use shared memory between
	# the namespaces (they share /dev/shm): force its TCP transport.
	net=(-launcher rsh -launcher-exec "$tmp/nsrsh" -hosts 10.77.0.1:1,10.77.0.2:1 -iface mpi0)
	net_env=(UCX_TLS=tcp,self UCX_NET_DEVICES=mpi0)
	want=rma
	;;
*) fail "MPIGNN_MPI=$mpi: want openmpi or mpich" ;;
esac
# veth_bytes prints the bytes h1 has sent over the veth.
veth_bytes() { ip netns exec "$ns1" cat /sys/class/net/mpi0/statistics/tx_bytes; }

cd "$repo"
where="$(on_h1 env "${net_env[@]}" ./mpirun.sh -n 2 "${net[@]}" hostname | sort | tr '\n' ' ')"
[[ "$where" == "h1 h2 " ]] || fail "ranks did not land on h1 and h2: $where"
say "ranks run on: $where"

partition_cora "$tmp/cora-2" 2
train=("$mpignn" train --parts "$tmp/cora-2" --epochs 10 --seed 3 --quiet --transport auto)
./mpirun.sh -n 2 "${train[@]}" >"$tmp/one-host.log" 2>&1 || fail "1-host run: $(tail -20 "$tmp/one-host.log")"
sent0="$(veth_bytes)"
on_h1 env "${net_env[@]}" ./mpirun.sh -v -n 2 "${net[@]}" "${train[@]}" >"$tmp/two-hosts.log" 2>&1 ||
	fail "2-host run: $(tail -20 "$tmp/two-hosts.log")"
sent=$(($(veth_bytes) - sent0))
say "2-host log:"
sed 's/^/    /' "$tmp/two-hosts.log"

grep -q 'transport: rma' "$tmp/one-host.log" || fail "the 1-host run did not use one-sided: $(grep transport "$tmp/one-host.log")"
grep -q "transport: $want" "$tmp/two-hosts.log" || fail "over TCP with $mpi, auto did not pick $want: $(grep transport "$tmp/two-hosts.log")"
# Cora's features alone are 15 MB; two ranks exchange megabytes of rows
# and gradients, so a few kB would mean the ranks talked another way.
((sent > 1000000)) || fail "only $sent bytes crossed the veth: the ranks did not talk over TCP"
w1="$(weights "$tmp/one-host.log")" w2="$(weights "$tmp/two-hosts.log")"
[[ -n "$w1" ]] || fail "no weights digest in the 1-host log"
[[ "$w1" == "$w2" ]] || fail "weights differ: 1 host $w1, 2 hosts $w2"
say "PASS ($mpi): 1 host (rma) and 2 hosts over TCP ($want, $((sent / 1000000)) MB sent from h1) end with $w1; $(final_line "$tmp/two-hosts.log")"

# Shared partitions: the same 2 parts on 2 ranks per host, each host's
# ranks holding their part once. The hosts are real nodes to MPI (each its
# own MPI_COMM_TYPE_SHARED); one host with pretend nodes of 2 ranks is the
# same layout, so it must end with the same weights. (MPICH on UCX over TCP
# often hangs in MPI_Finalize with 2 ranks per host, a part per rank or
# shared alike, after the run's last line: every rank in MPI_Finalize, one
# polling ucp_worker_progress on TCP, as in openucx/ucx#8738; CI runs this
# script with OpenMPI.)
printf '10.77.0.1 slots=2\n10.77.0.2 slots=2\n' >"$tmp/hosts"
[[ "$mpi" == mpich ]] && net=(-launcher rsh -launcher-exec "$tmp/nsrsh" -hosts 10.77.0.1:2,10.77.0.2:2 -iface mpi0)
MPIGNN_NODE_RANKS=2 ./mpirun.sh -n 4 "${train[@]}" >"$tmp/one-host-shared.log" 2>&1 ||
	fail "1-host shared run: $(tail -20 "$tmp/one-host-shared.log")"
on_h1 env "${net_env[@]}" ./mpirun.sh -v -n 4 "${net[@]}" "${train[@]}" >"$tmp/two-hosts-shared.log" 2>&1 ||
	fail "2-host shared run: $(tail -20 "$tmp/two-hosts-shared.log")"
grep -q 'layout: 2 parts for 4 ranks' "$tmp/two-hosts-shared.log" || fail "the 2-host run did not share its parts: $(cat "$tmp/two-hosts-shared.log")"
w3="$(weights "$tmp/one-host-shared.log")" w4="$(weights "$tmp/two-hosts-shared.log")"
[[ -n "$w3" ]] || fail "no weights digest in the 1-host shared log"
[[ "$w3" == "$w4" ]] || fail "shared parts: weights differ: 1 host $w3, 2 hosts $w4"
say "PASS ($mpi): 2 parts shared by 2 ranks per host, 1 host (pretend nodes) and 2 hosts over TCP ($(grep -m1 '^transport:' "$tmp/two-hosts-shared.log")) end with $w4"
