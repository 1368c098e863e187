#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_offload.sh - a guest without offloads beside one with them (pvnet attach --no-offload):
# TCP both ways, IPv4 and IPv6, with an attached namespace and with one on the TAP uplink
# (whose kernel is offered TSO too).  They send 64 KiB segments with blank checksums;
# pvnetd must segment them and fill the checksums in for the guest without offloads,
# whose kernel drops anything with a bad checksum, so every byte iperf3 counts proves it.
# usage: tap_offload.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
command -v ethtool >/dev/null || { echo "SKIP: ethtool not installed"; exit 77; }
trap tap_cleanup EXIT

A=pvoa$$
B=pvob$$
U=pvou$$
RUN="$TAP_TMP/run"
tap_ns "$A" && tap_ns "$B" && tap_ns "$U" || exit 1
start_pvnetd "$RUN" --tx-mode map --uplink "tap:up0@$U" || exit 1
tap_attach PA "$A" eth0 || exit 1
tap_attach PB "$B" eth0 --no-offload || exit 1
tap_addr "$A" eth0 10.78.0.1 fd78::1 && tap_addr "$B" eth0 10.78.0.2 fd78::2
tap_addr "$U" up0 10.78.0.3 fd78::3
check "A's TAP offers TSO to its kernel" \
	sh -c "ip netns exec $A ethtool -k eth0 | grep -q '^tcp-segmentation-offload: on'"
check "B's TAP offers none" \
	sh -c "ip netns exec $B ethtool -k eth0 | grep -q '^tcp-segmentation-offload: off'"
check "ping A -> B" tap_ping "$A" 10.78.0.2
check "ping B -> A (IPv6)" tap_ping "$B" fd78::1
# From (client) A, then from the uplink's namespace, to B; "-R": B sends.
for spec in "A 10.78.0.2" "A fd78::2" "A 10.78.0.2 -R" "A fd78::2 -R" "uplink 10.78.0.2" \
	"uplink fd78::2 -R"; do
	read -r from run <<<"$spec"
	cli=$A
	[ "$from" = uplink ] && cli=$U
	what="iperf3 TCP $from -> B ${run/ -R/, reverse (B -> $from)}"
	if r=$(tap_iperf "$B" "$cli" $run -t 1); then
		ok "$what: $r"
	else
		not_ok "$what"
	fi
done
# pvnet show: B's vif did the work (the first vif of domain B's adapter).
vb="vif$(tap_domain "$B").0"
show=$("$PVNET" -d "$RUN" show "$vb" 2>&1)
gso=$(awk '$1 == "rx_sw_gso:" { s += $2 } END { print s + 0 }' <<<"$show")
segs=$(awk '$1 == "rx_sw_gso_segs:" { s += $2 } END { print s + 0 }' <<<"$show")
bad=$(awk '$1 == "rx_sw_bad:" || $1 == "rx_oversize:" { s += $2 } END { print s + 0 }' <<<"$show")
check "$vb segmented GSO frames for B ($gso frames, $segs segments)" test "$gso" -gt 0 -a "$segs" -gt "$gso"
check "$vb found none it could not segment or deliver (rx_sw_bad, rx_oversize)" test "$bad" -eq 0
# ... and says what it negotiated: B took no offload, A took them all.
va="vif$(tap_domain "$A").0"
check "pvnet show: $vb negotiated no checksum offload and no GSO" \
	grep -qx '  features: sg rx-notify[a-z -]*' <<<"$show"
check "pvnet show: $va negotiated TSO and checksum offload" \
	grep -q '^  features: sg gso-tcpv4 gso-tcpv6 csum-ipv4 csum-ipv6 rx-notify' \
	<<<"$("$PVNET" -d "$RUN" show "$va" 2>&1)"
check "adapter A detaches cleanly" tap_stop "$PA"
check "adapter B detaches cleanly" tap_stop "$PB"
check "pvnetd stops cleanly" stop_pvnetd
finish
