#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_stall.sh - a guest that stops taking frames: B's adapter is stopped (SIGSTOP) while A
# sends to it. Once B's queue has held a frame without buffers for pvnetd's
# --rx-stall-timeout, it is stalled: the carrier goes off (pvnet show, the backend's carrier
# key), later frames are refused at once, A and pvnetd carry on. When B's adapter runs again
# (SIGCONT) and posts its buffers, the carrier comes back and B answers pings again.
# usage: tap_stall.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
# A stopped process ignores SIGTERM until it runs again: let it run before cleaning up.
trap 'kill -CONT "${PB:-0}" 2>/dev/null; tap_cleanup' EXIT

A=pvsa$$
B=pvsb$$
start_pvnetd "$RUN" --rx-stall-timeout 300 || exit 1
tap_ns "$A" && tap_ns "$B" || exit 1
tap_attach PA "$A" eth0 || exit 1
tap_attach PB "$B" eth0 || exit 1
DOMB=$(tap_domain "$B")
tap_addr "$A" eth0 10.79.0.1 fd79::1 && tap_addr "$B" eth0 10.79.0.2 fd79::2
check "ping A -> B" tap_ping "$A" 10.79.0.2

# carrier_is on|off: wait (5 s at most) until pvnet show says so of B's vif
carrier_is() {
	local i
	for ((i = 0; i < 50; i++)); do
		"$PVNET" -d "$RUN" show "vif$DOMB.0" | grep -q "carrier $1" && return 0
		sleep 0.1
	done
	return 1
}
stat_b() { "$PVNET" -d "$RUN" show "vif$DOMB.0" | awk -v k="$1:" '$1 == k { s += $2 } END { print s + 0 }'; }
key_b() { env XENSTORED_PATH="$RUN/xenstore.sock" xenstore-read "/local/domain/0/backend/vif/$DOMB/0/carrier"; }

check "B's carrier is on" carrier_is on
kill -STOP "$PB"
# A floods B for 2 s with UDP (B's address is resolved: unicast frames for B's vif), far
# more than the 256 buffers B posted before it stopped.
timeout 2 ip netns exec "$A" bash -c 'exec 3<>/dev/udp/10.79.0.2/9; while :; do echo x >&3; done' \
	2>/dev/null
check "B's queue stalled: carrier off" carrier_is off
stalls=$(stat_b rx_stalls)
check "counted: rx_stalls $stalls" test "$stalls" -ge 1
refused=$(stat_b rx_carrier_off)
check "later frames refused at once: rx_carrier_off $refused" test "$refused" -ge 1
if have_tool xenstore-read; then
	check "the backend's carrier key says 0" test "$(key_b)" = 0
fi
check "pvnetd carries on" kill -0 "$PVNETD_PID"
check "A's adapter carries on" kill -0 "$PA"

kill -CONT "$PB"
check "B's adapter runs again: carrier on" carrier_is on
have_tool xenstore-read && check "the carrier key says 1" test "$(key_b)" = 1
check "ping A -> B again" tap_ping "$A" 10.79.0.2
check "adapter B detaches cleanly" tap_stop "$PB"
check "adapter A detaches cleanly" tap_stop "$PA"
check "pvnetd stops cleanly" stop_pvnetd
finish
