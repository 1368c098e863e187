# SPDX-License-Identifier: MIT
# tap_lib.sh - helpers of the TAP tests: namespaces, pvnet attach, iperf3; everything is
# registered for removal by tap_cleanup (run it from an EXIT trap).
# Sourced after lib.sh; expects PVNETD and PVNET set.

TAP_NS=()      # namespaces we created
TAP_PIDS=()    # processes we started (adapters, iperf3 servers)
TAP_TMP=$(mktemp -d)
RUN="$TAP_TMP/run"

# tap_require: exit 77 (skip) unless root with /dev/net/tun; ip, iperf3, ping and timeout
# as need_tool says (a skip, or under scripts/test.sh a failure).
tap_require() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
	need_tool ip iperf3 ping timeout
	[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun"; exit 77; }
	tap_host_icmp
}

# tap_host_icmp: say so when this host answers no IPv4 ping even in a fresh namespace of
# its own loopback (the kernel's ICMP sockets, which every namespace shares, held full):
# the ping checks that follow then fail for the host, not for pvnet (docs/testing.md).
tap_host_icmp() {
	command -v unshare >/dev/null || return 0
	unshare --net sh -c 'ip link set lo up && ping -c 1 -W 2 127.0.0.1' >/dev/null 2>&1 ||
		echo "# host: ping 127.0.0.1 in a fresh namespace got no reply: this host's IPv4" \
			"ICMP does not work, and the ping checks below fail for that reason"
}

# tap_ns NAME: create a namespace (removed by tap_cleanup), loopback up.
tap_ns() {
	ip netns add "$1" || return 1
	TAP_NS+=("$1")
	ip -n "$1" link set lo up
}

# tap_attach VAR NS IFNAME [ARGS...]: start `pvnet attach`; VAR gets its pid; waits until
# the TAP is up (10 s at most).  Its output goes to $TAP_TMP/attach-NS.log.
tap_attach() {
	local var=$1 ns=$2 ifn=$3 log="$TAP_TMP/attach-$2.log" i pid
	shift 3
	# Emptied here, not by the background job's redirection, which may come after
	# the first grep below: an earlier adapter's "attached:" must not count.
	: >"$log"
	"$PVNET" -d "$RUN" attach --netns "$ns" --ifname "$ifn" "$@" >"$log" 2>&1 &
	pid=$!
	TAP_PIDS+=("$pid")
	printf -v "$var" '%s' "$pid"
	for ((i = 0; i < 200; i++)); do
		grep -q '^attached:' "$log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "pvnet attach in $ns did not come up:" >&2
	cat "$log" >&2
	return 1
}

# tap_domain NS: the domain id the adapter in NS reported.
tap_domain() {
	sed -n 's/^attached: .*domain \([0-9]*\),.*/\1/p' "$TAP_TMP/attach-$1.log" | tail -1
}

# tap_addr NS IFNAME V4 V6: addresses (IPv6 without DAD so it is usable at once).
tap_addr() {
	ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" -6 addr add "$4/64" dev "$2" nodad
}

# tap_stop PID: SIGTERM, wait up to 10 s, then SIGKILL; returns the exit status, also of
# a process that had exited already (the shell keeps its status for wait).
tap_stop() {
	local i
	kill -TERM "$1" 2>/dev/null || { wait "$1"; return; }
	for ((i = 0; i < 200; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; wait "$1" 2>/dev/null; return 124; }
	wait "$1"
}

# tap_ping NS ADDR: three pings, 5 s bound.
tap_ping() {
	timeout 10 ip netns exec "$1" ping -c 3 -i 0.2 -W 2 -w 5 "$2" >/dev/null
}

# tap_iperf SRV_NS CLI_NS ADDR ARGS...: one bounded iperf3 run; prints the receiver's
# rate ("3.2 Gbits/sec"); fails when iperf3 fails or nothing arrived.
tap_iperf() {
	local sns=$1 cns=$2 addr=$3 port=$((5201 + RANDOM % 1000)) spid i out
	shift 3
	timeout 20 ip netns exec "$sns" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	spid=$!
	TAP_PIDS+=("$spid")
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$sns" ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	out=$(timeout 15 ip netns exec "$cns" iperf3 -c "$addr" -p "$port" "$@" 2>&1) || {
		echo "iperf3 $*: failed: $(tail -c 300 <<<"$out")" >&2
		wait "$spid" 2>/dev/null
		return 1
	}
	wait "$spid" 2>/dev/null
	# The last receiver line is the total ([SUM] with -P); its rate must not be 0.
	awk '/receiver/ { r = $(NF - 2) " " $(NF - 1) } END { print r; exit !(r != "" && r + 0 > 0) }' \
		<<<"$out"
}

tap_cleanup() {
	local p ns f
	if [ "${FAIL:-0}" -gt 0 ]; then # keep the evidence in the test log
		for f in "$TAP_TMP"/attach-*.log "$TAP_TMP"/run*.log; do
			[ -e "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }
		done
	fi
	for p in "${TAP_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	sleep 0.2
	for p in "${TAP_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	stop_pvnetd >/dev/null 2>&1
	for ns in "${TAP_NS[@]}"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$TAP_TMP"
}
