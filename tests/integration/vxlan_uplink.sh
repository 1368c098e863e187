#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vxlan_uplink.sh - pvnetd --uplink vxlan:...: a guest attached to pvnetd reaches a Linux vxlan
# device in another namespace over the tunnel (ping both ways, IPv4 and IPv6, iperf3 both ways;
# a second kernel device over an IPv6 tunnel; a third, of VNI 45, whose uplink shares the
# first's address and port, and a fourth, of VNI 46, sharing the second's);
# the kernel's datagrams of another VNI or from another address are dropped and counted; a
# second pvnetd joined to the first by its own tunnel reaches both.
# usage: vxlan_uplink.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
need_tool ethtool
need_tool tcpdump
trap tap_cleanup EXIT

K=pvxk$$ # the kernel's VTEP: vx0 (VNI 42), and the second pvnetd's tunnel socket
P=pvxp$$ # the first pvnetd's tunnel sockets
G=pvxg$$ # a guest of the first pvnetd
H=pvxh$$ # a guest of the second
S=pvxs$$ # a VTEP the first pvnetd does not know
K6=pvx6$$ # a kernel VTEP over IPv6
T=pvxt$$ # a kernel VTEP of VNI 45, whose uplink shares 192.168.79.2:4789 with VNI 42's
U=pvxu$$ # a kernel VTEP of VNI 46, whose uplink shares [fd79:8::2]:4789 with VNI 44's
for ns in "$K" "$P" "$G" "$H"; do tap_ns "$ns" || exit 1; done
ip link add vxk netns "$K" type veth peer name vxp netns "$P" || exit 1
ip -n "$K" addr add 192.168.79.1/24 dev vxk &&
	ip -n "$P" addr add 192.168.79.2/24 dev vxp && ip -n "$K" link set vxk up &&
	ip -n "$P" link set vxp up || exit 1
if ! ip -n "$K" link add vx0 type vxlan id 42 local 192.168.79.1 remote 192.168.79.2 \
	dstport 4789 2>/dev/null; then
	echo "SKIP: no vxlan support in this kernel"
	exit 77
fi
# On one host the kernel leaves an inner checksum for the hardware to fill (veth carries it
# as "partial"): a program reading the datagram would see it unfilled. Compute it instead.
ip netns exec "$K" ethtool -K vx0 tx off >/dev/null
tap_addr "$K" vx0 10.79.7.1 fd79:7::1 && ip -n "$K" link set vx0 up || exit 1
# Over IPv6 too: a kernel VTEP of VNI 44 at fd79:8::1, pvnetd at fd79:8::2, same segment.
tap_ns "$K6" && ip link add vx6k netns "$K6" type veth peer name vx6p netns "$P" &&
	ip -n "$K6" -6 addr add fd79:8::1/64 dev vx6k nodad &&
	ip -n "$P" -6 addr add fd79:8::2/64 dev vx6p nodad && ip -n "$K6" link set vx6k up &&
	ip -n "$P" link set vx6p up &&
	ip -n "$K6" link add vx6 type vxlan id 44 local fd79:8::1 remote fd79:8::2 dstport 4789 &&
	ip netns exec "$K6" ethtool -K vx6 tx off >/dev/null &&
	ip -n "$K6" addr add 10.79.7.4/24 dev vx6 && ip -n "$K6" link set vx6 up || exit 1
# VNI 45 from 192.168.82.1, routed through P to the address and port VNI 42's uplink has.
tap_ns "$T" && ip link add vxt netns "$T" type veth peer name vxu netns "$P" &&
	ip -n "$T" addr add 192.168.82.1/24 dev vxt && ip -n "$P" addr add 192.168.82.2/24 dev vxu &&
	ip -n "$T" link set vxt up && ip -n "$P" link set vxu up &&
	ip -n "$T" route add 192.168.79.0/24 via 192.168.82.2 &&
	ip -n "$T" link add vx45 type vxlan id 45 local 192.168.82.1 remote 192.168.79.2 \
		dstport 4789 && ip netns exec "$T" ethtool -K vx45 tx off >/dev/null &&
	ip -n "$T" addr add 10.79.7.6/24 dev vx45 || exit 1
# And over IPv6: VNI 46 from fd79:a::1, to the address and port VNI 44's uplink has.
tap_ns "$U" && ip link add vxv netns "$U" type veth peer name vxw netns "$P" &&
	ip -n "$U" -6 addr add fd79:a::1/64 dev vxv nodad &&
	ip -n "$P" -6 addr add fd79:a::2/64 dev vxw nodad && ip -n "$U" link set vxv up &&
	ip -n "$P" link set vxw up && ip -n "$U" -6 route add fd79:8::/64 via fd79:a::2 &&
	ip -n "$U" link add vx46 type vxlan id 46 local fd79:a::1 remote fd79:8::2 dstport 4789 &&
	ip netns exec "$U" ethtool -K vx46 tx off >/dev/null &&
	ip -n "$U" addr add 10.79.7.8/24 dev vx46 || exit 1

check_fails "pvnetd refuses the same tunnel twice" timeout 10 "$PVNETD" --run-dir "$TAP_TMP/y" \
	--uplink "vxlan:id=42,remote=192.168.79.1,netns=$P" \
	--uplink "vxlan:remote=192.168.79.1,id=42,mtu=9000,netns=$P"
check_fails "pvnetd refuses a tunnel to a multicast group" timeout 10 "$PVNETD" \
	--run-dir "$TAP_TMP/y" --uplink "vxlan:id=42,remote=239.1.1.1"
start_pvnetd "$RUN" --uplink "vxlan:id=42,remote=192.168.79.1,local=192.168.79.2,netns=$P" \
	--uplink "vxlan:id=42,remote=192.168.79.1,local=192.168.79.2,dstport=4790,netns=$P" \
	--uplink "vxlan:id=44,remote=fd79:8::1,local=fd79:8::2,netns=$P" \
	--uplink "vxlan:id=45,remote=192.168.82.1,local=192.168.79.2,netns=$P" \
	--uplink "vxlan:id=46,remote=fd79:a::1,local=fd79:8::2,netns=$P" || exit 1
check "the VXLAN uplinks' MACs get room of their own in the switch (5 x 1024)" \
	grep -q "switch: room for 21504 MACs, 5120 of them for the uplinks" "$RUN.log"
# VNIs 45 and 46 come up only now: what their devices send on coming up (IPv6 neighbour
# and MLD messages, repeated) would otherwise reach the port before their uplinks join it,
# and VNI 44's uplink, the first on its port, would count it (rx_bad_source).
ip -n "$T" link set vx45 up && ip -n "$U" link set vx46 up || exit 1
check "pvnetd's tunnel sockets are bound in their namespace, two on each shared port" \
	bash -c "ip netns exec '$P' ss -ulnH >'$TAP_TMP/ss' &&
	 [ \$(grep -c '192.168.79.2:4789 ' '$TAP_TMP/ss') -eq 2 ] &&
	 [ \$(grep -c '\[fd79:8::2\]:4789 ' '$TAP_TMP/ss') -eq 2 ]"
tap_attach PG "$G" eth0 || exit 1
tap_addr "$G" eth0 10.79.7.2 fd79:7::2
check "ping guest -> kernel VTEP (IPv4)" tap_ping "$G" 10.79.7.1
check "ping kernel VTEP -> guest (IPv4)" tap_ping "$K" 10.79.7.2
check "ping guest -> kernel VTEP (IPv6)" tap_ping "$G" fd79:7::1
check "ping kernel VTEP -> guest (IPv6)" tap_ping "$K" fd79:7::2
check "ping guest -> the kernel's VTEP over IPv6 (VNI 44)" tap_ping "$G" 10.79.7.4
check "and back" tap_ping "$K6" 10.79.7.2
check "ping guest -> the kernel's VTEP of VNI 45, on VNI 42's port" tap_ping "$G" 10.79.7.6
check "and back" tap_ping "$T" 10.79.7.2
check "ping guest -> the kernel's VTEP of VNI 46, on VNI 44's IPv6 port" tap_ping "$G" 10.79.7.8
check "and back" tap_ping "$U" 10.79.7.2
# pvnetd's IPv4 datagrams carry no DF bit, as a Linux vxlan device's without "df set": a
# router on a narrower path may fragment them (RFC 7348, 4.3). Read off the wire: the outer
# header is on the stamped lines (tcpdump also decodes the inner frame, without a stamp).
DFCAP=$TAP_TMP/df.txt
ip netns exec "$K" timeout 10 tcpdump -l -c 3 -nv -i vxk \
	'udp dst port 4789 and src host 192.168.79.2' >"$DFCAP" 2>"$DFCAP.err" &
DFPID=$!
for _ in $(seq 1 50); do grep -q listening "$DFCAP.err" 2>/dev/null && break; sleep 0.1; done
tap_ping "$G" 10.79.7.1
wait "$DFPID"
check "pvnetd's tunnel datagrams leave without DF" bash -c \
	"grep -E '^[0-9:.]+ IP ' '$DFCAP' >'$DFCAP.outer' && ! grep -q DF '$DFCAP.outer' &&
	[ \$(grep -c 'proto UDP' '$DFCAP.outer') -eq 3 ]"
# TCP: the guest's 64 KiB TSO frames are cut into MTU-sized datagrams with full checksums.
for dir in "" -R; do
	what="iperf3 ${dir:+reverse }TCP guest -> kernel VTEP"
	if r=$(tap_iperf "$K" "$G" 10.79.7.1 -t 2 $dir); then ok "$what: $r"; else not_ok "$what"; fi
done
# A second pvnetd, its tunnel socket in the kernel VTEP's namespace on port 4790, is the
# first one's second uplink: its guest reaches both across one or two tunnels.
"$PVNETD" --run-dir "$RUN-2" --log-level debug \
	--uplink "vxlan:id=42,remote=192.168.79.2,local=192.168.79.1,dstport=4790,netns=$K" \
	2>>"$RUN-2.log" &
P2=$!
TAP_PIDS+=("$P2")
wait_for_file "$RUN-2/pvnetd.sock" 10 || not_ok "second pvnetd starts"
RUN1=$RUN
RUN=$RUN-2 tap_attach PH "$H" eth0 || exit 1
tap_addr "$H" eth0 10.79.7.3 fd79:7::3
check "ping second pvnetd's guest -> first pvnetd's guest (IPv4)" tap_ping "$H" 10.79.7.2
check "ping first pvnetd's guest -> second pvnetd's guest (IPv6)" tap_ping "$G" fd79:7::3
check "ping second pvnetd's guest -> kernel VTEP, across two tunnels" tap_ping "$H" 10.79.7.1
if r=$(tap_iperf "$G" "$H" 10.79.7.2 -t 2); then ok "iperf3 TCP between the pvnetds: $r"; else
	not_ok "iperf3 TCP between the pvnetds"; fi
RUN=$RUN1
# What the first pvnetd must not take: another segment (VNI 43), and its own from another VTEP.
ip -n "$K" link add vx1 type vxlan id 43 local 192.168.79.1 remote 192.168.79.2 dstport 4789 &&
	ip netns exec "$K" ethtool -K vx1 tx off >/dev/null && ip -n "$K" addr add 10.79.8.1/24 dev vx1 &&
	ip -n "$K" link set vx1 up
# The other sender: a VTEP of VNI 42 in its own namespace, routed to the tunnel's address.
tap_ns "$S" && ip link add vxs netns "$S" type veth peer name vxq netns "$P" &&
	ip -n "$S" addr add 192.168.80.1/24 dev vxs && ip -n "$P" addr add 192.168.80.2/24 dev vxq &&
	ip -n "$S" link set vxs up && ip -n "$P" link set vxq up &&
	ip -n "$S" route add 192.168.79.0/24 via 192.168.80.2 &&
	ip -n "$S" link add vx2 type vxlan id 42 local 192.168.80.1 remote 192.168.79.2 dstport 4789 &&
	ip -n "$S" addr add 10.79.7.9/24 dev vx2 && ip -n "$S" link set vx2 up ||
	not_ok "a second kernel VTEP"
check_fails "nothing answers on another VNI" \
	timeout 5 ip netns exec "$K" ping -c 2 -i 0.2 -W 1 -I vx1 10.79.8.2
check_fails "nor from another address" timeout 5 ip netns exec "$S" ping -c 2 -i 0.2 -W 1 10.79.7.2
check "the guest still reaches the kernel VTEP" tap_ping "$G" 10.79.7.1
check "pvnet status lists the tunnels, the first with its drops, the sharing ones without" bash -c \
	"'$PVNET' -d '$RUN' status >'$TAP_TMP/st' &&
	 grep -Eq '^  vxlan42 \(vxlan\): [1-9][0-9]* frames in, [1-9][0-9]* out.*rx_bad_vni [1-9].*rx_bad_source [1-9]' '$TAP_TMP/st' &&
	 grep -q '^  vxlan42:4790 (vxlan): ' '$TAP_TMP/st' &&
	 grep -Eq '^  vxlan44 \(vxlan\): [1-9][0-9]* frames in' '$TAP_TMP/st' &&
	 grep -Eq '^  vxlan45 \(vxlan\): [1-9][0-9]* frames in' '$TAP_TMP/st' &&
	 ! grep -Eq '^  vxlan45 .*rx_bad' '$TAP_TMP/st' &&
	 grep -Eq '^  vxlan46 \(vxlan\): [1-9][0-9]* frames in' '$TAP_TMP/st' &&
	 ! grep -Eq '^  vxlan4[46] .*rx_bad' '$TAP_TMP/st'"
check "and its JSON the counters, and each uplink's --uplink argument" bash -c \
	"'$PVNET' -d '$RUN' status --json >'$TAP_TMP/st.json' &&
	 grep -q '\"rx_bad_header\": 0' '$TAP_TMP/st.json' &&
	 grep -qF '\"spec\": \"vxlan:id=45,remote=192.168.82.1,local=192.168.79.2,netns=$P\"' \
		'$TAP_TMP/st.json'"
check "the adapters detach cleanly" tap_stop "$PG"
check "both of them" tap_stop "$PH"
check "the second pvnetd stops cleanly" tap_stop "$P2"
check "pvnetd stops cleanly" stop_pvnetd
check "pvnetd counted the other VNI's datagrams" \
	grep -Eq 'uplink vxlan42: .*rx_bad_vni [1-9]' "$RUN.log"
check "and the other sender's" grep -Eq 'uplink vxlan42: .*rx_bad_source [1-9]' "$RUN.log"
check "the uplink sharing its port got only its own VNI's" \
	grep -q 'uplink vxlan45: rx_runt 0 rx_bad_header 0 rx_bad_vni 0 ' "$RUN.log"
check "and no malformed one" \
	grep -q 'uplink vxlan42: rx_runt 0 rx_bad_header 0 .*rx_oversize 0' "$RUN.log"
check "it cut TSO frames into segments" grep -Eq 'uplink vxlan42: .*tx_segmented [1-9]' "$RUN.log"
check "and lost none to the socket" grep -q 'uplink vxlan42: .*tx_eagain 0 tx_errors 0' "$RUN.log"
check_fails "its tunnel sockets are gone" bash -c "ip netns exec '$P' ss -ulnH | grep -q 4789"
check_fails "pvnetd refuses a bad vxlan uplink" "$PVNETD" --run-dir "$TAP_TMP/x" \
	--uplink "vxlan:id=42"
finish
