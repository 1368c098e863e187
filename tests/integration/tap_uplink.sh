#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_uplink.sh - pvnetd --uplink tap:NAME@NS: a namespace on the TAP uplink reaches a
# namespace attached through a vif (ping both ways, IPv4 and IPv6, iperf3 both ways), also
# after both sides raised their MTU; a frame whose checksum the uplink computes is counted
# (rx_sw_csum); a second uplink in a third namespace reaches both, and stops by itself when
# its TAP is deleted.
# usage: tap_uplink.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
trap tap_cleanup EXIT

U=pvuu$$
V=pvuv$$
A=pvua$$
tap_ns "$U" && tap_ns "$V" && tap_ns "$A" || exit 1
check_fails "pvnetd refuses the same uplink twice" timeout 10 \
	"$PVNETD" --run-dir "$TAP_TMP/y" --uplink "tap:up0@$U" --uplink "tap:up0@$U"
start_pvnetd "$RUN" --uplink "tap:up0@$U" --uplink "tap:up1@$V" || exit 1
check "the uplinks' MACs get room of their own in the switch" \
	grep -q "switch: room for 18432 MACs, 2048 of them for the uplinks" "$RUN.log"
check "the uplink TAP exists in its namespace and is up" \
	bash -c "ip -n '$U' link show up0 | grep -q ',UP'"
check "and the second one in its own" bash -c "ip -n '$V' link show up1 | grep -q ',UP'"
tap_attach PA "$A" eth0 || exit 1
tap_addr "$U" up0 10.79.0.1 fd79::1 && tap_addr "$A" eth0 10.79.0.2 fd79::2
tap_addr "$V" up1 10.79.0.3 fd79::3
check "ping uplink -> vif (IPv4)" tap_ping "$U" 10.79.0.2
check "ping uplink -> the other uplink, through pvnetd's switch" tap_ping "$U" 10.79.0.3
check "ping the other uplink -> vif (IPv6)" tap_ping "$V" fd79::2
check "ping vif -> uplink (IPv4)" tap_ping "$A" 10.79.0.1
check "ping uplink -> vif (IPv6)" tap_ping "$U" fd79::2
check "ping vif -> uplink (IPv6)" tap_ping "$A" fd79::1
for dir in "" -R; do
	what="iperf3 ${dir:+reverse }TCP vif -> uplink"
	if r=$(tap_iperf "$U" "$A" 10.79.0.1 -t 2 $dir); then ok "$what: $r"; else not_ok "$what"; fi
done
if r=$(tap_iperf "$U" "$A" fd79::1 -t 1 -P 2); then ok "iperf3 IPv6, 2 streams: $r"; else
	not_ok "iperf3 IPv6, 2 streams"; fi
# A frame over the TAP's MTU (a route that allows more: the TAP does not check): the uplink
# drops it and counts it as what it is.
ip -n "$U" route add 10.79.0.99/32 dev up0 mtu lock 9000 &&
	ip -n "$U" neigh add 10.79.0.99 lladdr 02:00:00:00:00:99 dev up0
check "a 3000-byte datagram goes out on the uplink's TAP in one frame" timeout 5 \
	ip netns exec "$U" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER: IP_PMTUDISC_DONT
s.sendto(bytes(3000), ("10.79.0.99", 9))'
# A frame whose checksum the uplink must compute (ICMP with NEEDS_CSUM: no transport's
# blank a guest could take): sent on up0 with a virtio-net header, as a packet socket with
# PACKET_VNET_HDR passes it to the TAP's reader: pvnetd computes the checksum and counts it
# (rx_sw_csum, checked with the other counters below), and A's stack takes the echo request.
echos() { ip netns exec "$A" nstat -az IcmpInEchos | awk '$1 == "IcmpInEchos" { print $2 }'; }
echos0=$(echos)
maca=$(ip -n "$A" -br link show eth0 | awk '{ print $3 }')
check "an ICMP echo request with its checksum left to the uplink goes out on up0" timeout 5 \
	ip netns exec "$U" python3 -c '
import socket, struct, sys
dst = bytes.fromhex(sys.argv[1].replace(":", ""))
icmp = struct.pack("!BBHHH", 8, 0, 0, 0x77, 1) + bytes(range(56))  # checksum field 0
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), 1, 0x4000, 64, 1, 0,
                 bytes([10, 79, 0, 1]), bytes([10, 79, 0, 2]))
s = sum(struct.unpack("!10H", ip))
while s >> 16:
    s = (s & 0xffff) + (s >> 16)
ip = ip[:10] + struct.pack("!H", ~s & 0xffff) + ip[12:]
frame = dst + bytes([2, 0, 0, 0, 0x79, 1]) + bytes([8, 0]) + ip + icmp
vnet = struct.pack("=BBHHHH", 1, 0, 0, 0, 34, 2)  # NEEDS_CSUM from 34, the field at 34 + 2
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(263, 15, 1)  # SOL_PACKET, PACKET_VNET_HDR
s.bind(("up0", 0))
s.send(vnet + frame)' "$maca"
waited_echo() { until [ "$(echos)" -gt "$echos0" ]; do sleep 0.1; done; }
check "A's stack took the echo request" timeout 5 \
	bash -c "$(declare -f echos waited_echo); A='$A' echos0='$echos0' waited_echo"
# A bigger MTU set on both sides later: pvnetd's uplink follows its TAP's, as the adapter does.
ip -n "$U" link set up0 mtu 9000 && ip -n "$A" link set eth0 mtu 9000
check "MTU 9000 set later on both sides: a full-MTU ping from the uplink, don't fragment" \
	timeout 10 ip netns exec "$U" ping -c 2 -i 0.2 -W 2 -M do -s 8972 10.79.0.2
check "pvnetd followed the uplink's MTU" grep -q "uplink up0: mtu 9000" "$RUN.log"
check "pvnet status lists both uplinks with their traffic" bash -c \
	"'$PVNET' -d '$RUN' status >'$TAP_TMP/st' &&
	 grep -Eq '^  up0 \(tap\): [1-9][0-9]* frames in, [1-9][0-9]* out' '$TAP_TMP/st' &&
	 grep -Eq '^  up1 \(tap\): [1-9][0-9]* frames in' '$TAP_TMP/st'"
# Each uplink's own: the --uplink argument as given, and its counters each from its own (the
# one oversized frame above counted as that, not as the first counter's value); the text
# gives those that are not zero, after a ';', separated by ','.
check "pvnet status --json: each uplink's spec, and up0's oversized frame, counted as such" bash -c \
	"'$PVNET' -d '$RUN' status --json | python3 -c '
import json, sys
u = {x[\"name\"]: x for x in json.load(sys.stdin)[\"uplinks\"]}
sys.exit(0 if u[\"up0\"][\"spec\"] == \"tap:up0@$U\" and u[\"up1\"][\"spec\"] == \"tap:up1@$V\" and
         u[\"up0\"][\"counters\"][\"rx_oversize\"] == 1 and u[\"up0\"][\"counters\"][\"rx_runt\"] == 0 and
         u[\"up0\"][\"counters\"][\"rx_sw_csum\"] == 1
         else 1)'"
check "pvnet status: up0's counters that are not zero, rx_oversize among them" \
	grep -Eq '^  up0 \(tap\): .* out; ([a-z0-9_]+ [1-9][0-9]*, )*rx_oversize 1(,|$)' "$TAP_TMP/st"
check "... and none that is zero" bash -c "! grep -Eq '^  up0 \(tap\):.*[;,] [a-z0-9_]+ 0(,|\$)' '$TAP_TMP/st'"
# The second uplink's TAP deleted under pvnetd (as a Linux bridge loses a deleted port): one
# line says so, not an error a second; what the switch sends it is refused and counted; the
# other uplink and the vif carry on.
ip -n "$V" link del up1
check "pvnetd says the uplink's TAP is gone" timeout 10 bash -c \
	"until grep -q 'uplink up1: its TAP device is gone' '$RUN.log'; do sleep 0.1; done"
timeout 10 ip netns exec "$A" ping -c 3 -i 0.2 -W 1 10.79.0.3 >/dev/null 2>&1
check "frames for it are dropped at its switch port, counted" bash -c \
	"'$PVNET' -d '$RUN' status --json | python3 -c '
import json, sys
u = [x for x in json.load(sys.stdin)[\"uplinks\"] if x[\"name\"] == \"up1\"][0]
sys.exit(0 if u[\"switch\"][\"tx_dropped\"] > 0 else 1)'"
check "pvnet status says it stopped, and why; the other runs" bash -c \
	"'$PVNET' -d '$RUN' status >'$TAP_TMP/st2' &&
	 grep -Eq '^  up1 \(tap\): .*; stopped: its TAP device is gone' '$TAP_TMP/st2' &&
	 ! grep -q 'up0 (tap): .*stopped' '$TAP_TMP/st2' &&
	 '$PVNET' -d '$RUN' status --json | python3 -c '
import json, sys
u = {x[\"name\"]: x for x in json.load(sys.stdin)[\"uplinks\"]}
sys.exit(0 if u[\"up1\"][\"running\"] is False and \"stopped\" not in u[\"up0\"] and
         u[\"up0\"][\"running\"] is True else 1)'"
# Each of an uplink's four numbers in pvnet status's text comes from its own counter in the
# JSON: frames in and out, dropped in and out (the two reads are a moment apart: tried again
# should a frame have come between them).  up0 carried the tests' traffic both ways, never in
# equal numbers; up1, its TAP gone, has frames dropped out and none dropped in.
uplink_text_is_json() { # NAME
	local i
	for i in 1 2 3 4 5; do
		"$PVNET" -d "$RUN" status >"$TAP_TMP/st3" &&
			"$PVNET" -d "$RUN" status --json >"$TAP_TMP/st3.json" &&
			python3 - "$1" "$TAP_TMP/st3" "$TAP_TMP/st3.json" <<'PY' && return 0
import json, re, sys
name, text, doc = sys.argv[1], open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
sw = [u for u in doc["uplinks"] if u["name"] == name][0]["switch"]
m = re.search(r"^  %s \(tap\): (\d+) frames in, (\d+) out, (\d+) dropped in, (\d+) out" % re.escape(name),
              text, re.M)
want = [sw["rx_packets"], sw["tx_packets"], sw["rx_dropped"], sw["tx_dropped"]]
sys.exit(0 if m and [int(x) for x in m.groups()] == want else 1)
PY
	done
	return 1
}
check "pvnet status: up0's frames in and out each its own counter's" uplink_text_is_json up0
check "... and up1's dropped in and out" uplink_text_is_json up1
check "said once, no read error logged after it" bash -c \
	"[ \$(grep -c 'uplink up1: its TAP device is gone' '$RUN.log') = 1 ] &&
	 ! grep -q 'uplink up1: read:' '$RUN.log'"
check "the other uplink and the vif carry on" tap_ping "$A" 10.79.0.1
check "adapter detaches cleanly" tap_stop "$PA"
check "pvnetd stops cleanly" stop_pvnetd
check_fails "the uplink TAP is gone with pvnetd" ip -n "$U" link show up0
check "pvnetd logged that one drop, counted where it belongs, and the one checksum it computed" \
	grep -q 'uplink up0: rx_runt 0 rx_oversize 1 rx_bad_gso 0 rx_bad_csum 0 rx_sw_csum 1 ' \
	"$RUN.log"
check_fails "pvnetd refuses a bad --uplink" "$PVNETD" --run-dir "$TAP_TMP/x" --uplink bogus
finish
