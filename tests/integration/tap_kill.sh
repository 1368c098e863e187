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
if have_tool xenstore-write; then
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
	check "B's adapter said so, once for each of the two changes" \
		test "$(grep -c '^pvnet attach: carrier' "$TAP_TMP/attach-$B.log")" = 2
	check_fails "... and nothing of its MTU, which its link changes left as it was" \
		grep -q "MTU now" "$TAP_TMP/attach-$B.log"
	check "ping A -> B with the carrier back" tap_ping "$A" 10.78.0.2
	# The carrier changes parked B's queue threads and started them again: idle, they sleep
	# (at most 0.2 s of CPU in a second), where a stale stop event would make them spin.
	cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
	t0=$(cpu_ticks "$PB")
	sleep 1
	t1=$(cpu_ticks "$PB")
	check "B's adapter is idle after its threads restarted ($((t1 - t0)) ticks of CPU in 1 s)" \
		test $((t1 - t0)) -le $(($(getconf CLK_TCK) / 5))

	# B's TAP down: the kernel refuses what B's adapter writes to it, each frame counted as
	# dropped (printed when it exits, below).
	ip -n "$B" link set eth0 down
	timeout 10 ip netns exec "$A" ping -c 3 -i 0.2 -W 1 10.78.0.2 >/dev/null 2>&1

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
	wait "$PB"
	rc=$?
	check "... with exit status 1, as the usage says of a backend that disconnected ($rc)" \
		test "$rc" = 1
	check "... counting the frames its TAP refused while down as dropped" awk \
		'$1 == "tap_tx_dropped:" { d = $2 } $1 == "tap_tx_bad_offload:" { b = $2 }
		 END { exit !(d >= 3 && b == 0) }' "$TAP_TMP/attach-$B.log"
	check "A's adapter carries on" kill -0 "$PA"
else
	tap_stop "$PB"
fi

# Life cycle: the MTU the namespace sets later, the namespace deleted under the adapter,
# options refused before pvnetd is asked, a namespace made for a failed attach and for one
# that ran, a reader of its output that goes, its TAP deleted under it, a stuck pvnetd
# (while detaching, and while setting up).  B's adapter is gone by now: a new one.
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
# (strace holds its inotify_init1 for 3 s): noticed all the same, it detaches, exit 0.  B is
# the adapter's own this time (it makes it), and another namespace takes its name at once:
# the adapter must tell it from its own, and leave it alone (not remove "its" B again).
if ! have_tool strace; then
	:
elif ! strace -o /dev/null -e inject=getpid:delay_enter=1 true 2>/dev/null; then
	skip_check "namespace deleted during set-up: strace cannot delay a call here"
else
	before=$("$PVNET" -d "$RUN" status | sed -n 's/^domains: //p')
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
	ip netns del "$B" && ip netns add "$B"
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
	check "... and leaves the new namespace of that name alone" ip netns exec "$B" true
	check "... and pvnetd has its domain back" \
		test "$("$PVNET" -d "$RUN" status | sed -n 's/^domains: //p')" = "$before"
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
# One that attached in a namespace it made leaves it when it detaches: the namespace is its
# user's from then on, with whatever else they put in it.
E=pvke$$
TAP_NS+=("$E")
tap_attach PE "$E" eth0 || exit 1
check_fails "an adapter given the queue it asked for says nothing of it" \
	grep -q "pvnetd gives" "$TAP_TMP/attach-$E.log"
check "an adapter that made namespace E detaches" tap_stop "$PE"
check "... and leaves E" bash -c "ip netns list | grep -qw '$E'"
# An adapter whose output is read by one that stops reading (| head -1): SIGTERM still
# detaches it, exit 0, its counters lost on the closed pipe rather than ending it.
"$PVNET" -d "$RUN" attach --netns "$E" --ifname eth0 2>/dev/null \
	> >(head -1 >"$TAP_TMP/pipe.out") &
PE=$!
TAP_PIDS+=("$PE")
for ((i = 0; i < 200; i++)); do
	grep -q '^attached:' "$TAP_TMP/pipe.out" 2>/dev/null && break
	sleep 0.05
done
sleep 0.2 # head has exited
tap_stop "$PE"
rc=$?
check "an adapter whose reader went detaches on SIGTERM, exit 0 ($rc)" test "$rc" = 0
# More queues than pvnetd gives (8): the adapter makes its vif again with 8.  Then its TAP
# deleted under it (ip link del): the queue threads' reads fail, the adapter exits 1.
tap_attach PE "$E" eth0 --queues 16 || exit 1
check "an adapter asking for 16 queues says it has 8" \
	grep -q "pvnetd gives 8 of the 16 queues asked for" "$TAP_TMP/attach-$E.log"
check "... and runs with 8" grep -q "^attached: .*, 8 queues," "$TAP_TMP/attach-$E.log"
ip -n "$E" link del eth0
if gone "$PE" 5; then
	wait "$PE"
	rc=$?
else
	rc="still running after 5 s"
fi
check "an adapter whose TAP was deleted stops, exit 1 ($rc)" test "$rc" = 1
check "... saying which queue stopped" grep -q "queue [0-7] stopped" "$TAP_TMP/attach-$E.log"

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
