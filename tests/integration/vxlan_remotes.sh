#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vxlan_remotes.sh - one VXLAN uplink to two Linux vxlan devices (remote= twice): a guest
# attached to pvnetd reaches both (8 TCP streams from several UDP source ports); once it has heard a MAC behind one remote, its unicast
# frames go to that remote alone (the other's device counts none of them); broadcasts go to
# both; the two remotes do not reach each other through pvnetd (a frame never goes back out
# of the port it came in by).
# usage: vxlan_remotes.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
need_tool ethtool
trap tap_cleanup EXIT

P=pvrp$$  # pvnetd's tunnel socket
K1=pvr1$$ # a Linux VTEP at 192.168.83.1
K2=pvr2$$ # another at 192.168.84.1
G=pvrg$$  # the guest
for ns in "$P" "$K1" "$K2" "$G"; do tap_ns "$ns" || exit 1; done
for i in 1 2; do
	k=K$i
	ip link add vr$i netns "${!k}" type veth peer name vq$i netns "$P" &&
		ip -n "${!k}" addr add 192.168.8$((2 + i)).1/24 dev vr$i &&
		ip -n "$P" addr add 192.168.8$((2 + i)).2/24 dev vq$i &&
		ip -n "${!k}" link set vr$i up && ip -n "$P" link set vq$i up || exit 1
	if ! ip -n "${!k}" link add vx0 type vxlan id 42 local 192.168.8$((2 + i)).1 \
		remote 192.168.8$((2 + i)).2 dstport 4789 2>/dev/null; then
		echo "SKIP: no vxlan support in this kernel"
		exit 77
	fi
	# The inner checksum filled in by the kernel, not left for hardware (see vxlan_uplink.sh).
	ip netns exec "${!k}" ethtool -K vx0 tx off >/dev/null
	ip -n "${!k}" addr add 10.83.0.$((2 * i - 1))/24 dev vx0 && ip -n "${!k}" link set vx0 up ||
		exit 1
done

# refused VAR ARGS...: pvnetd exits at once with status 2 (usage); VAR gets its message.
refused() {
	local var=$1 out rc
	shift
	out=$(timeout 10 "$PVNETD" --run-dir "$TAP_TMP/y" "$@" 2>&1)
	rc=$?
	printf -v "$var" '%s' "$out"
	[ "$rc" = 2 ]
}
check "pvnetd refuses a remote given twice" refused msg \
	--uplink "vxlan:id=42,remote=192.168.83.1,remote=192.168.83.1,netns=$P"
check "saying so" grep -q "remote 192.168.83.1 given twice" <<<"$msg"
check "and a second tunnel sharing a remote with the first" refused msg \
	--uplink "vxlan:id=42,remote=192.168.83.1,remote=192.168.84.1,netns=$P" \
	--uplink "vxlan:id=42,remote=192.168.84.1,local=192.168.84.2,netns=$P"
check "saying why" grep -q "is a tunnel given before" <<<"$msg"
start_pvnetd "$RUN" --uplink "vxlan:id=42,remote=192.168.83.1,remote=192.168.84.1,netns=$P" ||
	exit 1
check "pvnetd names both remotes" grep -q 'remotes 192.168.83.1 192.168.84.1 port 4789' \
	"$RUN.log"
tap_attach PG "$G" eth0 || exit 1
ip -n "$G" addr add 10.83.0.2/24 dev eth0
check "ping guest -> first remote's stack" tap_ping "$G" 10.83.0.1
check "ping guest -> second remote's stack" tap_ping "$G" 10.83.0.3
check "ping first -> guest" tap_ping "$K1" 10.83.0.2
check "ping second -> guest" tap_ping "$K2" 10.83.0.2

# rx_packets of vx0 in namespace $1
vx_rx() { ip -n "$1" -s -j link show vx0 | sed -n 's/.*"rx":{[^}]*"packets":\([0-9]*\).*/\1/p'; }
a1=$(vx_rx "$K1") a2=$(vx_rx "$K2")
check "100 pings to the first remote's stack" \
	timeout 20 ip netns exec "$G" ping -q -c 100 -i 0.01 -W 2 10.83.0.1
b1=$(vx_rx "$K1") b2=$(vx_rx "$K2")
check "reach the first remote ($a1 -> $b1 frames)" test $((b1 - a1)) -ge 100
# A neighbour probe may be broadcast again meanwhile: a few frames, not a hundred.
check "and not the second ($a2 -> $b2 frames)" test $((b2 - a2)) -le 4
# Eight TCP flows: their datagrams leave pvnetd from several source ports (one per flow),
# which the kernel's VTEP takes as any other (its RSS would spread them).
if have_tool tcpdump; then
	timeout 15 ip netns exec "$K2" tcpdump -i vr2 -n -l -c 2000 \
		"udp and dst port 4789 and src host 192.168.84.2" >"$TAP_TMP/dump" 2>/dev/null &
	TD=$!
	TAP_PIDS+=("$TD")
	sleep 1
fi
if r=$(tap_iperf "$K2" "$G" 10.83.0.3 -t 1 -P 8); then
	ok "iperf3 TCP guest -> second remote, 8 streams: $r"
else not_ok "iperf3 TCP guest -> second remote, 8 streams"; fi
if [ -n "${TD:-}" ]; then
	wait "$TD"
	n=$(sed -n 's/.* 192\.168\.84\.2\.\([0-9]*\) > .*/\1/p' "$TAP_TMP/dump" | sort -u | wc -l)
	check "their datagrams left from several source ports ($n)" test "$n" -ge 2
fi
check_fails "the remotes do not reach each other through pvnetd" \
	timeout 5 ip netns exec "$K1" ping -c 2 -i 0.2 -W 1 10.83.0.3
check "pvnet status shows the frames flooded to both" bash -c \
	"'$PVNET' -d '$RUN' status | grep -Eq '^  vxlan42 \(vxlan\): .*tx_flooded [1-9]'"
check "the adapter detaches cleanly" tap_stop "$PG"
check "pvnetd stops cleanly" stop_pvnetd
check "no datagram from a stranger, none lost to the socket" \
	grep -Eq 'uplink vxlan42: .*rx_bad_source 0 .*tx_eagain 0 tx_errors 0' "$RUN.log"
finish
