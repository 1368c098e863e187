#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_ageing.sh - pvnetd's switch forgets MACs it no longer sees: A's namespace speaks from
# a second MAC (a macvlan on its TAP), the switch learns it on A's port, the macvlan goes,
# and under --mac-ageing 2 its MAC leaves the table within seconds (fdb_entries in
# pvnet show); A's own MAC is learned again by its next frame.
# usage: tap_ageing.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
trap tap_cleanup EXIT

A=pvga$$
B=pvgb$$
start_pvnetd "$RUN" --mac-ageing 2 || exit 1
tap_ns "$A" && tap_ns "$B" || exit 1
tap_attach PA "$A" eth0 || exit 1
tap_attach PB "$B" eth0 || exit 1
DOMA=$(tap_domain "$A")
tap_addr "$A" eth0 10.80.0.1 fd80::1 && tap_addr "$B" eth0 10.80.0.2 fd80::2

# MACs the switch has learned on A's port now
fdb_a() { "$PVNET" -d "$RUN" show "vif$DOMA.0" | awk '$1 == "fdb_entries:" { print $2 }'; }
# fdb_a_below N: wait (8 s at most) until fewer than N
fdb_a_below() {
	local i
	for ((i = 0; i < 80; i++)); do
		[ "$(fdb_a)" -lt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

check "ping A -> B" tap_ping "$A" 10.80.0.2
ip -n "$A" link add link eth0 name mv0 type macvlan mode bridge &&
	ip -n "$A" addr add 10.80.0.3/24 dev mv0 && ip -n "$A" link set mv0 up
# Its ARP request alone makes the switch learn the macvlan's MAC.
timeout 10 ip netns exec "$A" ping -c 2 -i 0.2 -W 1 -I mv0 10.80.0.2 >/dev/null 2>&1
n=$(fdb_a)
check "A's port has learned its second MAC (fdb_entries $n)" test "$n" -ge 2
ip -n "$A" link del mv0
check "the macvlan's MAC is forgotten once unseen for 2 s" fdb_a_below "$n"
check "pvnetd carries on" kill -0 "$PVNETD_PID"
check "ping A -> B after ageing" tap_ping "$A" 10.80.0.2
check "A's MAC learned again" test "$(fdb_a)" -ge 1
check "adapter A detaches cleanly" tap_stop "$PA"
check "adapter B detaches cleanly" tap_stop "$PB"
check "pvnetd stops cleanly" stop_pvnetd
finish
