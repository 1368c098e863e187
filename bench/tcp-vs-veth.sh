#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tcp-vs-veth.sh - iperf3 TCP between two namespaces attached to pvnetd (pvnet attach) beside
# the same iperf3 between two namespaces joined by a veth pair, in one run, on one machine.
#
# usage: bench/tcp-vs-veth.sh [BUILD_DIR] [SECONDS] [TX_MODE]   (root; iperf3, jq, ip)
#        PVNETD=PATH PVNET=PATH TAPFWD=PATH override BUILD_DIR's binaries (`pvnet bench`'s
#        tcp section runs this script so, with BUILD_DIR "-").
#        ROUNDS=N (1..10, default 1) runs the five cases N times, with the ratios of each
#        round (the machine's speed drifts: compare only figures of one round).
#        PLACEMENT=split (the default with 2+ CPUs) or spread: see below.
#
# Reports per case: receiver throughput (Gbit/s), CPU service demand (netperf's definition:
# CPU microseconds per KB received; CPU = every CPU's busy time from /proc/stat around the
# run, so pvnetd, the adapters, iperf3 and the kernel are all counted, "method S" in
# netperf's terms), iperf3's own CPU figures, TCP retransmits, TCPOFOQueue from the
# receiving namespace's /proc/net/netstat, and for pvnet the CPU time of both `pvnet attach`
# processes per GB received (their own utime + stime: other load on the machine is not in
# it).  Then pvnet/veth ratios.
#
# A third path, tapfwd-1 (1 stream): bench/tapfwd, the cheapest user-space path between two
# TAPs (read a frame, write it to the other TAP; two copies, no hop).  Any design that moves
# frames between TAPs in user space pays at least this, so pvnet/tapfwd is what pvnet's own
# design costs and tapfwd/veth what the TAP interface costs on this machine.  Skipped with a
# comment when the binary is not built.  Everything it creates
# (namespaces, processes, the run directory) is removed on exit.
#
# Placement (PLACEMENT): split puts the user-space datapath of the pvnet and tapfwd cases
# (pvnetd and both `pvnet attach`, or tapfwd) on the first half of the CPUs this script may
# use and both iperf3 processes on the rest, as a datapath is given cores of its own apart
# from the applications (a Xen host's dom0 CPUs, a DPDK application's lcores); spread pins
# nothing.  The veth cases have no datapath process to place and run unpinned either way.
set -u
BUILD=${1:-build}
T=${2:-10}
MODE=${3:-map}
PVNETD=${PVNETD:-$BUILD/tools/pvnetd/pvnetd}
PVNET=${PVNET:-$BUILD/tools/pvnet/pvnet}
TAPFWD=${TAPFWD:-$BUILD/bench/tapfwd}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
for t in iperf3 jq ip; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }; done
command -v "$PVNETD" >/dev/null && command -v "$PVNET" >/dev/null ||
	{ echo "build first: $PVNETD, $PVNET" >&2; exit 1; }
[ "$T" -ge 1 ] && [ "$T" -le 10 ] || { echo "SECONDS must be 1..10" >&2; exit 1; }
ROUNDS=${ROUNDS:-1}
[ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 10 ] || { echo "ROUNDS must be 1..10" >&2; exit 1; }
PLACEMENT=${PLACEMENT:-split}
case $PLACEMENT in split | spread) ;; *) echo "PLACEMENT must be split or spread" >&2; exit 1 ;; esac
# The CPUs we may use, one per word (taskset prints a list such as 0-3,6).
cpus=()
for r in $(taskset -pc $$ | sed 's/.*: //; s/,/ /g'); do
	for ((c = ${r%-*}; c <= ${r#*-}; c++)); do cpus+=("$c"); done
done
DP_PIN=() APP_PIN=() PLACED="spread: nothing pinned"
if [ "$PLACEMENT" = split ] && [ ${#cpus[@]} -ge 2 ]; then
	half=$((${#cpus[@]} / 2))
	dp=$(IFS=,; echo "${cpus[*]:0:half}") app=$(IFS=,; echo "${cpus[*]:half}")
	DP_PIN=(taskset -c "$dp") APP_PIN=(taskset -c "$app")
	PLACED="split: pvnetd, pvnet attach and tapfwd on CPU $dp, their iperf3 on CPU $app"
elif [ "$PLACEMENT" = split ]; then
	PLACED="spread: one CPU, nothing to split"
fi

TMP=$(mktemp -d)
RUN=$TMP/run
S=$$
NS=(vth-a$S vth-b$S pvn-a$S pvn-b$S tfw-a$S tfw-b$S)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.3
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for n in "${NS[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p"; done
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
# A signal ends the script through its EXIT trap: namespaces and processes are removed.
trap 'exit 130' INT TERM HUP

for n in "${NS[@]}"; do ip netns add "$n" && ip -n "$n" link set lo up || exit 1; done
# veth pair: the reference.
ip link add veth0 netns "vth-a$S" type veth peer name veth1 netns "vth-b$S"
ip -n "vth-a$S" addr add 10.90.0.1/24 dev veth0
ip -n "vth-b$S" addr add 10.90.0.2/24 dev veth1
ip -n "vth-a$S" link set veth0 up
ip -n "vth-b$S" link set veth1 up

start_pvnet() { # QUEUES
	local i pid log
	"${DP_PIN[@]}" "$PVNETD" --run-dir "$RUN" --tx-mode "$MODE" --log-level warn 2>"$TMP/pvnetd.log" &
	PVNETD_PID=$!
	PIDS+=("$PVNETD_PID")
	for ((i = 0; i < 100; i++)); do
		[ -S "$RUN/pvnetd.sock" ] && break
		kill -0 "$PVNETD_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -S "$RUN/pvnetd.sock" ] && kill -0 "$PVNETD_PID" 2>/dev/null ||
		{ echo "pvnetd did not start; its log:" >&2; cat "$TMP/pvnetd.log" >&2; exit 1; }
	for side in a b; do
		log=$TMP/attach-$side.log
		# Emptied here, not by the background job's redirection, which may come after the
		# first grep below: the previous case's "attached" line must not count.
		: >"$log"
		"${DP_PIN[@]}" "$PVNET" -d "$RUN" attach --netns "pvn-$side$S" --ifname eth0 --queues "$1" \
			>"$log" 2>&1 &
		pid=$!
		PIDS+=("$pid")
		eval "AP_$side=$pid"
		for ((i = 0; i < 300; i++)); do
			grep -q '^attached' "$log" 2>/dev/null && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		grep -q '^attached' "$log" || {
			echo "pvnet attach --queues $1 in pvn-$side$S did not attach; its output:" >&2
			cat "$log" >&2
			exit 1
		}
	done
	ip -n "pvn-a$S" addr add 10.91.0.1/24 dev eth0
	ip -n "pvn-b$S" addr add 10.91.0.2/24 dev eth0
	ip netns exec "pvn-a$S" ping -c 1 -W 2 10.91.0.2 >/dev/null
}
start_tapfwd() {
	local i
	: >"$TMP/tapfwd.log" # as the attach logs above: the previous round's "ready" must not count
	"${DP_PIN[@]}" "$TAPFWD" "tfa$S" "tfb$S" >"$TMP/tapfwd.log" 2>&1 &
	TAPFWD_PID=$!
	PIDS+=("$TAPFWD_PID")
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready' "$TMP/tapfwd.log" && break
		kill -0 "$TAPFWD_PID" 2>/dev/null || break
		sleep 0.05
	done
	grep -q '^ready' "$TMP/tapfwd.log" || { cat "$TMP/tapfwd.log" >&2; return 1; }
	ip link set "tfa$S" netns "tfw-a$S" && ip link set "tfb$S" netns "tfw-b$S" || return 1
	ip -n "tfw-a$S" addr add 10.92.0.1/24 dev "tfa$S"
	ip -n "tfw-b$S" addr add 10.92.0.2/24 dev "tfb$S"
	ip -n "tfw-a$S" link set "tfa$S" up
	ip -n "tfw-b$S" link set "tfb$S" up
	ip netns exec "tfw-a$S" ping -c 1 -W 2 10.92.0.2 >/dev/null
}
stop_tapfwd() {
	kill -TERM "$TAPFWD_PID" 2>/dev/null
	wait "$TAPFWD_PID" 2>/dev/null
}
stop_pvnet() {
	kill -TERM "$AP_a" "$AP_b" "$PVNETD_PID" 2>/dev/null
	wait "$AP_a" "$AP_b" "$PVNETD_PID" 2>/dev/null
	ip -n "pvn-a$S" addr flush dev eth0 2>/dev/null
}

# CPU time (utime + stime, clock ticks) of the processes given, all their threads.
proc_ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $t; }
busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
ofo() { ip netns exec "$1" awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "TCPOFOQueue") c = i; h = 1 } else print $c }' /proc/net/netstat; }

# run NAME CLIENT_NS SERVER_NS ADDR PARALLEL [ADAPTER_PIDS...]
# (iperf3 on the applications' CPUs when there is a datapath process: ADAPTER_PIDS given)
run() {
	local name=$1 cns=$2 sns=$3 addr=$4 par=$5 j0 j1 o0 o1 a0=0 a1=0 port=$((5301 + RANDOM % 500))
	local pin=()
	shift 5
	[ $# -gt 0 ] && pin=("${APP_PIN[@]}")
	timeout $((T + 20)) ip netns exec "$sns" "${pin[@]}" iperf3 -s -1 -p $port >/dev/null 2>&1 &
	local spid=$!
	sleep 0.3
	o0=$(ofo "$sns")
	j0=$(busy_jiffies)
	[ $# -gt 0 ] && a0=$(proc_ticks "$@")
	# In the background and waited for, so that a signal's trap runs at once.
	timeout $((T + 15)) ip netns exec "$cns" "${pin[@]}" iperf3 -c "$addr" -p $port -t "$T" -P "$par" -J \
		>"$TMP/$name.json" 2>&1 &
	wait $!
	j1=$(busy_jiffies)
	[ $# -gt 0 ] && a1=$(proc_ticks "$@")
	o1=$(ofo "$sns")
	wait $spid 2>/dev/null
	if ! jq -e '.end.sum_received.bytes > 0' "$TMP/$name.json" >/dev/null 2>&1; then
		echo "# $name failed: $(jq -r '.error // "no result"' "$TMP/$name.json" 2>/dev/null ||
			head -c 200 "$TMP/$name.json" | tr '\n' ' ')"
		return 1
	fi
	jq -r --arg name "$name" --argjson cpu_us "$(((j1 - j0) * 1000000 / $(getconf CLK_TCK)))" \
		--argjson ofo $((o1 - o0)) --argjson ad $(($# ? (a1 - a0) * 1000 / $(getconf CLK_TCK) : -1)) '
		.end.sum_received.bytes as $b |
		[$name, (.end.sum_received.bits_per_second / 1e9 * 100 | round / 100),
		 ($cpu_us / ($b / 1024) * 1000 | round / 1000),
		 (.end.cpu_utilization_percent.host_total | round),
		 (.end.cpu_utilization_percent.remote_total | round),
		 .end.sum_sent.retransmits, $ofo,
		 (if $ad < 0 then "-" else ($ad / ($b / 1e9) | round) end)] | @tsv' "$TMP/$name.json" |
		tee -a "$TMP/results.$ROUND"
}

echo "# $(nproc) CPUs, $(uname -r), $T s per case, pvnetd --tx-mode $MODE," \
	"TCP congestion control $(sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null || echo '?')"
echo "# namespaces: ${NS[*]}"
echo "# placement: $PLACED"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' case Gbit/s SD_us/KB snd_cpu% rcv_cpu% retrans TCPOFOQueue \
	adapters_ms/GB
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
	[ "$ROUNDS" -gt 1 ] && echo "# round $ROUND of $ROUNDS"
	run veth-1 "vth-a$S" "vth-b$S" 10.90.0.2 1
	start_pvnet 1
	run pvnet-1q-1 "pvn-a$S" "pvn-b$S" 10.91.0.2 1 "$AP_a" "$AP_b"
	stop_pvnet
	if [ ! -x "$TAPFWD" ]; then
		echo "# tapfwd-1 skipped: $TAPFWD not built"
	elif start_tapfwd; then
		run tapfwd-1 "tfw-a$S" "tfw-b$S" 10.92.0.2 1 "$TAPFWD_PID"
		stop_tapfwd
	else
		echo "# tapfwd-1 failed: the forwarder did not come up"
		stop_tapfwd
	fi
	run veth-4 "vth-a$S" "vth-b$S" 10.90.0.2 4
	start_pvnet 4
	run pvnet-4q-4 "pvn-a$S" "pvn-b$S" 10.91.0.2 4 "$AP_a" "$AP_b"
	echo "# queues negotiated: $(sed -n 's/.*, \([0-9]*\) queues\{0,1\},.*/\1/p' "$TMP/attach-a.log")"
	stop_pvnet
	awk -F'\t' 'function pct(a, b) { return b > 0 ? sprintf("%.0f %%", 100 * a / b) : "n/a" }
		{ g[$1] = $2; sd[$1] = $3 } END {
		printf "# pvnet/veth throughput, 1 stream: %s; 4 streams: %s\n", pct(g["pvnet-1q-1"], g["veth-1"]), pct(g["pvnet-4q-4"], g["veth-4"])
		if (sd["veth-1"] > 0) printf "# service demand pvnet/veth, 1 stream: %.1fx\n", sd["pvnet-1q-1"] / sd["veth-1"]
		if (g["tapfwd-1"] > 0) printf "# 1 stream: pvnet/tapfwd %s, tapfwd/veth %s\n", pct(g["pvnet-1q-1"], g["tapfwd-1"]), pct(g["tapfwd-1"], g["veth-1"]) }' "$TMP/results.$ROUND"
done
