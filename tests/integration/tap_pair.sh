#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_pair.sh - two namespaces attached to one pvnetd (pvnet attach): ping both ways and
# iperf3 TCP both ways, IPv4 and IPv6, 1 queue and 4 queues with 4 parallel streams.
# The 1-queue round runs with a 9000-byte MTU (jumbo frames need feature-sg) and checks
# that a full-MTU packet crosses unfragmented.  Each adapter's counters, summed over its
# queues, agree with libpvnet's at exit.
# usage: tap_pair.sh PVNETD PVNET map|copy|persistent
set -u
PVNETD=$1
PVNET=$2
MODE=${3:-map}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
trap tap_cleanup EXIT

# counters_agree LOG: an adapter's counters, each summed over its queues, agree with each
# other: the frames and bytes it read from its TAP are those libpvnet sent on the vif, and
# the frames libpvnet received are those it wrote to the TAP or dropped; both directions
# carried traffic.
counters_agree() {
	awk '{ c[$1] = $2 }
	END {
		to_tap = c["tap_tx_packets:"] + c["tap_tx_dropped:"] + c["tap_tx_bad_offload:"]
		exit !(c["tap_rx_packets:"] > 0 && c["tap_rx_packets:"] == c["vif_tx_packets:"] &&
		       c["tap_rx_bytes:"] == c["vif_tx_bytes:"] && c["tap_tx_packets:"] > 0 &&
		       to_tap == c["vif_rx_packets:"])
	}' "$1"
}

for q in 1 4; do
	# Names of this round's own: a namespace deleted by the last round may linger in the kernel.
	A=pvta$$-$q
	B=pvtb$$-$q
	RUN="$TAP_TMP/run$q" # a fresh run directory: no socket left from the last round
	start_pvnetd "$RUN" --tx-mode "$MODE" || exit 1
	tap_ns "$A" && tap_ns "$B" || exit 1
	mtu=1500
	[ "$q" = 1 ] && mtu=9000
	tap_attach PA "$A" eth0 --queues "$q" --mtu $mtu || exit 1
	tap_attach PB "$B" eth0 --queues "$q" --mtu $mtu || exit 1
	tap_addr "$A" eth0 10.77.0.1 fd77::1 && tap_addr "$B" eth0 10.77.0.2 fd77::2
	par=1
	[ "$q" = 4 ] && par=4
	tag="$MODE, $q queue(s), mtu $mtu"
	check "$tag: ping A -> B (IPv4)" tap_ping "$A" 10.77.0.2
	# Threads named for top -H and perf: netback's as Linux names them, the adapter's per queue.
	last="vif$(tap_domain "$A").0-q$((q - 1))"
	check "$tag: pvnetd's worker threads are named ($last)" \
		grep -qx "$last" /proc/"$PVNETD_PID"/task/*/comm
	check "$tag: the adapter's queue threads are named (attach-q$((q - 1)))" \
		grep -qx "attach-q$((q - 1))" /proc/"$PA"/task/*/comm
	check "$tag: ping B -> A (IPv4)" tap_ping "$B" 10.77.0.1
	if [ "$q" = 1 ]; then
		# Each adapter's domain is named NS:IFNAME; a second adapter for the same interface,
		# or one for an interface the namespace has already, is refused (never joins a TAP).
		check "$tag: pvnet status names the domains ($A:eth0)" \
			bash -c "'$PVNET' -d '$RUN' status | grep -qF 'domain $(tap_domain "$A") ($A:eth0)'"
		check "$tag: pvnet show names the vif's domain" bash -c \
			"'$PVNET' -d '$RUN' show vif$(tap_domain "$A").0 | grep -qF 'domain $A:eth0'"
		out=$(timeout 20 "$PVNET" -d "$RUN" attach --netns "$A" --ifname eth0 2>&1)
		rc=$?
		check "$tag: a second adapter for $A's eth0 is refused (exit status $rc)" test "$rc" = 1
		check "$tag: ... by its domain's name, before it asks for a vif" \
			test "$out" = "pvnet attach: $A:eth0 is attached already (pvnet status)"
		ip -n "$A" tuntap add dev eth9 mode tap multi_queue
		out=$(timeout 20 "$PVNET" -d "$RUN" attach --netns "$A" --ifname eth9 2>&1)
		check "$tag: an adapter for an interface $A has already is refused" \
			grep -q "has an interface eth9 already" <<<"$out"
		ip -n "$A" link del eth9
		check "$tag: A's adapter is still there" kill -0 "$PA"
	fi
	check "$tag: ping A -> B (IPv6)" tap_ping "$A" fd77::2
	check "$tag: ping B -> A (IPv6)" tap_ping "$B" fd77::1
	check "$tag: a full-MTU ping, don't fragment" timeout 10 ip netns exec "$A" \
		ping -c 2 -i 0.2 -W 2 -M do -s $((mtu - 28)) 10.77.0.2 >/dev/null
	check_fails "$tag: one byte more does not leave unfragmented" timeout 10 \
		ip netns exec "$A" ping -c 1 -W 1 -M do -s $((mtu - 27)) 10.77.0.2
	# Both directions and both families, each once: A -> B over IPv4, B -> A over IPv6.
	for run in "10.77.0.2" "fd77::2 -R"; do
		what="$tag: iperf3 TCP ${run/ -R/ reverse}, $par stream(s)"
		if r=$(tap_iperf "$B" "$A" $run -t 1 -P "$par"); then
			ok "$what: $r"
		else
			not_ok "$what"
		fi
	done
	check "$tag: adapter A detaches cleanly on SIGTERM" tap_stop "$PA"
	check "$tag: adapter B detaches cleanly on SIGTERM" tap_stop "$PB"
	for ns in "$A" "$B"; do
		check "$tag: $ns's adapter counted what it read and wrote as libpvnet did" \
			counters_agree "$TAP_TMP/attach-$ns.log"
	done
	check_fails "$tag: the TAP is gone with its adapter" ip -n "$A" link show eth0
	grep -E 'tap_rx_(runt|oversize|bad_gso|bad_csum)|tap_tx_(dropped|bad_offload)' \
		"$TAP_TMP"/attach-*.log | grep -v ': 0$' && not_ok "$tag: adapter drop counters"
	check "$tag: pvnetd stops cleanly" stop_pvnetd
	ip netns del "$A" && ip netns del "$B"
	TAP_NS=()
done
finish
