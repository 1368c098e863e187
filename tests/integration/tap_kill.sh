#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_kill.sh - the adapter of one side is killed (SIGKILL) in the middle of an iperf3
# stream: pvnetd and the other side survive, the vif and domain are released, the TAP is
# gone, and a new attach in the same namespace works.  Then the toolstack turns the other
# side's carrier off and on (the backend's "carrier" key): its TAP follows; and detaches it
# (online=0): its adapter exits by itself.  Then the adapter's life cycle (below).
# usage: tap_kill.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
trap tap_cleanup EXIT

A=pvka$$
B=pvkb$$
start_pvnetd "$RUN" || exit 1
tap_ns "$A" && tap_ns "$B" || exit 1
tap_attach PA "$A" eth0 --queues 2 || exit 1
tap_attach PB "$B" eth0 --queues 2 || exit 1
DOMA=$(tap_domain "$A")
tap_addr "$A" eth0 10.78.0.1 fd78::1 && tap_addr "$B" eth0 10.78.0.2 fd78::2
check "ping A -> B before the kill" tap_ping "$A" 10.78.0.2

# A 3 s stream from A to B; A's adapter dies after 1 s of it.
tap_iperf "$B" "$A" 10.78.0.2 -t 3 >/dev/null 2>&1 &
IPERF=$!
sleep 1.5
kill -KILL "$PA"
wait "$PA" 2>/dev/null
# A's iperf3 client lost its interface and B's server its peer (no FIN or RST will come):
# end both rather than wait for their timeouts.
for p in $(ip netns pids "$A") $(ip netns pids "$B"); do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = iperf3 ] && kill -TERM "$p" 2>/dev/null
done
wait "$IPERF" 2>/dev/null

check "pvnetd survives" kill -0 "$PVNETD_PID"
check "the other adapter survives" kill -0 "$PB"
check_fails "A's TAP is gone with its adapter" ip -n "$A" link show eth0
released() {
	local i
	for ((i = 0; i < 100; i++)); do
		if ! "$PVNET" -d "$RUN" show 2>/dev/null | grep -q "^vif$DOMA\.0:" &&
			! "$PVNET" -d "$RUN" status 2>/dev/null | grep -q "domain $DOMA "; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}
check "vif$DOMA.0 and domain $DOMA are released" released
# The dead guest's own grants and ports were still open when it died (it never ended
# them); what must be 0 is what pvnetd had mapped of it.
check "pvnet status: no mapping of the dead domain left" \
	bash -c "'$PVNET' -d '$RUN' status | grep -q 'left in use: 0 mappings'"
check "B's vif is still connected" bash -c "'$PVNET' -d '$RUN' show | grep -q 'state Connected'"

tap_attach PA "$A" eth0 --queues 2 || exit 1
tap_addr "$A" eth0 10.78.0.1 fd78::1
check "a new attach in A works: ping A -> B" tap_ping "$A" 10.78.0.2
check "and B -> A over IPv6" tap_ping "$B" fd78::1
if r=$(tap_iperf "$B" "$A" 10.78.0.2 -t 1); then ok "iperf3 after the re-attach: $r"; else
	not_ok "iperf3 after the re-attach"; fi

# The toolstack detaches B as xl network-detach does: "online" = 0 in B's backend directory.
# Netback closes, B's adapter sees its backend go and exits by itself; A carries on.
DOMB=$(tap_domain "$B")
if command -v xenstore-write >/dev/null; then
	# First the link state: netif.h's "carrier" key in B's backend directory (pvnetd writes
	# it when a vif's RX stalls and recovers); B's adapter follows it with its TAP's carrier.
	xsw() { env XENSTORED_PATH="$RUN/xenstore.sock" xenstore-write "$@"; }
	tap_carrier() { # tap_carrier NS on|off: wait until the TAP's link says so
		local i c
		for ((i = 0; i < 50; i++)); do
			c=on
			ip -n "$1" link show eth0 | grep -q NO-CARRIER && c=off
			[ "$c" = "$2" ] && return 0
			sleep 0.1
		done
		return 1
	}
	check "B's TAP has carrier" tap_carrier "$B" on
	check "xenstore-write .../backend/vif/$DOMB/0/carrier 0" \
		xsw "/local/domain/0/backend/vif/$DOMB/0/carrier" 0
	check "B's TAP loses its carrier (NO-CARRIER)" tap_carrier "$B" off
	check "B's adapter said why" grep -q "carrier off (the backend says" "$TAP_TMP/attach-$B.log"
	check "xenstore-write .../carrier 1" xsw "/local/domain/0/backend/vif/$DOMB/0/carrier" 1
	check "B's TAP has its carrier back" tap_carrier "$B" on
	check "ping A -> B with the carrier back" tap_ping "$A" 10.78.0.2

	check "xenstore-write .../backend/vif/$DOMB/0/online 0" env XENSTORED_PATH="$RUN/xenstore.sock" \
		xenstore-write "/local/domain/0/backend/vif/$DOMB/0/online" 0
	exited() {
		local i
		for ((i = 0; i < 100; i++)); do
			kill -0 "$PB" 2>/dev/null || return 0
			sleep 0.1
		done
		return 1
	}
	check "B's adapter sees its backend close and exits" exited
	check "B's adapter said why" grep -q "the backend disconnected" "$TAP_TMP/attach-$B.log"
	check "A's adapter carries on" kill -0 "$PA"
else
	ok "# SKIP toolstack detach: xenstore-write not installed"
	tap_stop "$PB"
fi

# Life cycle: the MTU the namespace sets later, the namespace deleted under the adapter,
# options refused before pvnetd is asked, a namespace made for a failed attach, a stuck
# pvnetd (while detaching, and while setting up).  B's adapter is gone by now: a new one.
gone() { # gone PID SECS: the process has exited within SECS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}
tap_attach PB "$B" eth0 --queues 2 || exit 1
tap_addr "$B" eth0 10.78.0.2 fd78::2
ip -n "$A" link set eth0 mtu 9000 && ip -n "$B" link set eth0 mtu 9000
# From B: A's neighbour entry for 10.78.0.2 still has the MAC of B's last adapter.
check "MTU 9000 set in both namespaces afterwards: a full-MTU ping, don't fragment" \
	timeout 10 ip netns exec "$B" ping -c 2 -i 0.2 -W 2 -M do -s 8972 10.78.0.1
check "A's adapter followed its TAP's MTU" grep -q "MTU now 9000" "$TAP_TMP/attach-$A.log"
check "B's adapter too" grep -q "MTU now 9000" "$TAP_TMP/attach-$B.log"
if r=$(tap_iperf "$A" "$B" 10.78.0.1 -t 1); then ok "iperf3 at MTU 9000: $r"; else
	not_ok "iperf3 at MTU 9000"; fi

ip netns del "$B"
check "namespace B deleted: its adapter detaches by itself" gone "$PB" 5
check "and says why" grep -q "namespace $B was deleted" "$TAP_TMP/attach-$B.log"

# Deleted while an adapter sets up, after its TAP is made and before it watches /run/netns
# (strace holds its inotify_init1 for 3 s): noticed all the same, it detaches, exit 0.
if command -v strace >/dev/null &&
	strace -o /dev/null -e inject=getpid:delay_enter=1 true 2>/dev/null; then
	before=$("$PVNET" -d "$RUN" status | sed -n 's/^domains: //p')
	tap_ns "$B" || exit 1
	# LeakSanitizer cannot run under ptrace: without leak checks in an ASan build.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -o /dev/null -e inject=inotify_init1:delay_enter=3000000 \
		"$PVNET" -d "$RUN" attach --netns "$B" --ifname eth0 >"$TAP_TMP/late.log" 2>&1 &
	LP=$!
	TAP_PIDS+=("$LP")
	for ((i = 0; i < 100; i++)); do
		ip -n "$B" link show eth0 >/dev/null 2>&1 && break
		sleep 0.05
	done
	ip netns del "$B"
	if gone "$LP" 10; then
		wait "$LP"
		rc=$?
	else
		rc="still running after 10 s"
		kill "$LP" 2>/dev/null
	fi
	check "namespace deleted while the adapter set up: it detaches, exit 0 ($rc)" \
		test "$rc" = 0
	check "... saying why" grep -q "namespace $B was deleted while we attached" \
		"$TAP_TMP/late.log"
	check "... and pvnetd has its domain back" \
		test "$("$PVNET" -d "$RUN" status | sed -n 's/^domains: //p')" = "$before"
else
	ok "# SKIP namespace deleted during set-up: strace cannot run (or delay a call) here"
fi

domains() { "$PVNET" -d "$RUN" status | sed -n 's/^domains: //p'; }
bad_opts() { # the adapter exits 2 (usage) without asking pvnetd for a domain
	local before rc
	before=$(domains)
	timeout 10 "$PVNET" -d "$RUN" attach --netns "$A" "$@" >/dev/null 2>&1
	rc=$?
	[ "$rc" = 2 ] && [ "$(domains)" = "$before" ]
}
check "--ifname a/b refused at once" bad_opts --ifname a/b
check "--ifname e%d refused at once (TUNSETIFF would number it)" bad_opts --ifname 'e%d'
check "--ifname of 16 bytes refused at once" bad_opts --ifname 0123456789abcdef
check "--mac 0x2:0:0:0:0:1 refused" bad_opts --ifname eth5 --mac 0x2:0:0:0:0:1
check "--queues ' 3' refused" bad_opts --ifname eth5 --queues ' 3'
check "--netns with a slash refused" bad_opts --ifname eth5 --netns a/b
C=pvkc$$
TAP_NS+=("$C")
out=$(timeout 20 "$PVNET" -d "$RUN" attach --netns "$C" --ifname lo 2>&1)
check "an attach in a new namespace C that fails (C has lo already)" \
	grep -q "has an interface lo already" <<<"$out"
check_fails "removes namespace C again" bash -c "ip netns list | grep -qw '$C'"

# pvnetd stopped: the detach waits (bounded), and a second SIGTERM ends the adapter at once.
kill -STOP "$PVNETD_PID"
kill -TERM "$PA"
sleep 1
kill -TERM "$PA"
check "pvnetd stopped: a second SIGTERM ends the adapter at once" gone "$PA" 3
out=$(timeout 15 "$PVNET" -d "$RUN" status 2>&1)
check "and pvnet status says pvnetd does not answer, rather than hang" \
	grep -q "did not answer within 5 s" <<<"$out"
# ... and an adapter setting up, waiting for pvnetd's answer: SIGINT ends it at once (it
# had made neither TAP nor namespace; pvnetd releases the domain when the connection
# closes), where it used to wait for libpvnet's 20 s timeout.
D=pvkd$$
"$PVNET" -d "$RUN" attach --netns "$D" --ifname eth0 >"$TAP_TMP/attach-$D.log" 2>&1 &
PD=$!
TAP_PIDS+=("$PD")
sleep 1
kill -INT "$PD"
check "pvnetd stopped: SIGINT ends an adapter still setting up at once" gone "$PD" 3
wait "$PD"
check "... as the signal's (exit status 130)" test $? = 130
check_fails "... with no namespace made" bash -c "ip netns list | grep -qw '$D'"
kill -CONT "$PVNETD_PID"
wait "$PA" 2>/dev/null
check "pvnetd carries on" "$PVNET" -d "$RUN" status
check "and keeps no domain of the interrupted adapter" timeout 10 bash -c \
	"while '$PVNET' -d '$RUN' status | grep -q '$D:eth0'; do sleep 0.1; done"
check "pvnetd stops cleanly" stop_pvnetd
finish
