#!/bin/bash
# SPDX-License-Identifier: MIT
# memif-peer.sh - the peer pvnet bench is compared with: DPDK memif between two dpdk-testpmd processes
#
# For each frame size: a server testpmd (memif role=server, rxonly) and a
# client testpmd (memif role=client, txonly, --txpkts=LEN; frames over 2048
# bytes as a list of 2048-byte segments), both `-l 0,1 --no-huge -m 256
# --no-pci`, their own --file-prefix, `--auto-start --stats-period 1`.  The
# server's Rx-pps lines are read: each is testpmd's rate over the time since
# its line before (with --stats-period 1 they come every ~2 s: the main
# lcore that prints them shares a CPU with the other process's forwarder).
# The link comes up one to three seconds after the client starts, so the
# duration counts from the first line with traffic; that line (the link
# coming up mid-period) is discarded and the median of the rest is
# reported, with Gbit/s = Rx-pps * frame bytes * 8 (Ethernet header
# included, no FCS: as pvnet bench counts).
#
# Differences from the literal command line, and why (see docs/benchmarks.md):
#  * --total-num-mbufs=16384: testpmd's default pool (155456 mbufs of 2176 B,
#    ~338 MB) does not fit in -m 256 and testpmd exits with "Creation of mbuf
#    pool for socket 0 failed: Cannot allocate memory".
#  * the server also gets --main-lcore 1, so that its forwarding lcore is 0
#    while the client's is 1: with `-l 0,1` alone both processes busy-poll on
#    lcore 1 and share one CPU (about 0.1 Mpps here).  --same-core keeps the
#    literal flags.
# The server testpmd sometimes dies of a segmentation fault when it is
# stopped (SIGTERM, after its last figures; stopping the client
# first does not avoid it): bash reports it, and the figures are unaffected.
# testpmd comes from the Debian package dpdk-dev (the package dpdk has no
# dpdk-testpmd in Debian 12).
#
# MEMIF_RAW=1 in the environment prints every Rx-pps line's figure on stderr (the
# spread of the samples behind the median); MEMIF_KEEP=1 keeps the logs in the
# temporary directory.
#
# Each line of the server's output is stamped with the realtime clock as it
# arrives, so that each Rx-pps figure has its interval (from the figure
# before to its own): the JSON lists them as "intervals" ([start, end,
# mpps], realtime seconds), which bench/compare.sh sets beside its samples
# of where the host put the two CPUs (bench/cpurtt).
#
# Usage: bench/memif-peer.sh [--frame-size LIST] [--duration SECS] [--json FILE] [--same-core]
set -u

SIZES=64,9000
DURATION=5
JSON=
SAME_CORE=0
TESTPMD=${TESTPMD:-dpdk-testpmd}
COMMAND="$0 $*"

usage() {
	sed -n 's/^# Usage: //p' "$0"
}

while [ $# -gt 0 ]; do
	case $1 in
	--frame-size | -s) SIZES=$2; shift 2 ;;
	--duration | -t) DURATION=$2; shift 2 ;;
	--json | -j) JSON=$2; shift 2 ;;
	--same-core) SAME_CORE=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "memif-peer.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
case $DURATION in '' | *[!0-9]*) echo "memif-peer.sh: --duration takes whole seconds" >&2; exit 2 ;; esac
if ! command -v "$TESTPMD" >/dev/null; then
	echo "memif-peer.sh: $TESTPMD not found (Debian: apt-get install dpdk-dev)" >&2
	exit 77
fi

TMP=$(mktemp -d /tmp/memif-peer.XXXXXX)
SRV_PID=
CLI_PID=
stop_all() {
	local p
	for p in $CLI_PID $SRV_PID; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $CLI_PID $SRV_PID; do
		# testpmd stops within a second of SIGTERM; the bound ends a stuck one.
		# (Disowned: bash reaps it; kill -0 fails once it has.)
		for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	SRV_PID=
	CLI_PID=
}
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	stop_all
	rm -rf "/var/run/dpdk/memif-srv-$$" "/var/run/dpdk/memif-cli-$$"
	if [ -n "${MEMIF_KEEP:-}" ]; then
		echo "memif-peer.sh: logs kept in $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# segs LEN: LEN as 2048-byte segments, comma separated (testpmd --txpkts)
segs() {
	local len=$1 out=
	while [ "$len" -gt 2048 ]; do
		out="${out}2048,"
		len=$((len - 2048))
	done
	echo "$out$len"
}

# stamp: each line of stdin, prefixed with the realtime clock (seconds, microseconds).
stamp() {
	local line
	while IFS= read -r line; do
		printf '%s %s\n' "$EPOCHREALTIME" "$line"
	done
}

# plain LOG: the server's stamped log without testpmd's ANSI screen clears.
plain() {
	sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$1" 2>/dev/null
}

# rx_seen LOG: has the server's stamped log a non-zero Rx-pps yet?
rx_seen() {
	plain "$1" | awk '$2 == "Rx-pps:" && $3 > 0 { seen = 1 } END { exit !seen }'
}

# log_tails LEN WHY: WHY, then the last lines of both testpmds' logs of that size, on stderr.
log_tails() {
	echo "$2; server log tail:" >&2
	tail -5 "$TMP/srv-$1.log" >&2
	echo "client log tail:" >&2
	tail -5 "$TMP/cli-$1.log" >&2
}

# One size: sets RESULT to "MPPS GBIT_S SAMPLES INTERVALS" (INTERVALS: START:END:MPPS,...),
# or fails with the reason on stderr.
# Runs in this shell (not in $(...)), so that the traps see SRV_PID and CLI_PID.
run_size() {
	local len=$1 sock="$TMP/memif-$1.sock" srv_lcore=(--main-lcore 1)
	# shellcheck disable=SC2054 # 0,1 is one argument: testpmd's lcore list
	local common=(-l 0,1 --no-huge -m 256 --no-pci)
	local app=(--auto-start --stats-period 1 --total-num-mbufs=16384)
	[ "$SAME_CORE" = 1 ] && srv_lcore=()

	local out stamp_pid
	# Emptied here, not by the background redirections, which may come after the first
	# grep below: a size given twice must not find the earlier run's lines.
	: >"$TMP/srv-$len.log"
	: >"$TMP/cli-$len.log"
	# The server's output goes through stamp(); only the server holds the pipe, so
	# stamp() ends when the server does.
	exec {out}> >(stamp >"$TMP/srv-$len.log")
	stamp_pid=$!
	# Hard bounds, beyond the 20 s wait for the link and the duration: the
	# server lives DURATION + 36 s, the client DURATION + 33 s.
	timeout -s KILL $((DURATION + 36)) "$TESTPMD" "${common[@]}" "${srv_lcore[@]}" \
		--file-prefix "memif-srv-$$" --vdev "net_memif0,role=server,socket=$sock" \
		-- --forward-mode=rxonly "${app[@]}" >&"$out" 2>&1 </dev/null &
	SRV_PID=$!
	# Out of the job table: testpmd's memif server can crash as it stops
	# (below), and bash would print a "Segmentation fault" line for it.
	# Whether it runs is asked with kill -0, and stop_all waits for that.
	disown "$SRV_PID"
	exec {out}>&-
	# memif's socket is in the abstract namespace by default: wait for forwarding instead.
	for _ in $(seq 1 100); do
		grep -q "forwards packets on" "$TMP/srv-$len.log" 2>/dev/null && break
		sleep 0.1
	done
	if ! grep -q "forwards packets on" "$TMP/srv-$len.log"; then
		echo "memif server did not start forwarding within 10 s; its log:" >&2
		tail -5 "$TMP/srv-$len.log" >&2
		stop_all
		wait "$stamp_pid" 2>/dev/null
		return 1
	fi
	timeout -s KILL $((DURATION + 33)) "$TESTPMD" "${common[@]}" \
		--file-prefix "memif-cli-$$" --vdev "net_memif0,role=client,socket=$sock" \
		-- --forward-mode=txonly --txpkts="$(segs "$len")" "${app[@]}" \
		>"$TMP/cli-$len.log" 2>&1 </dev/null &
	CLI_PID=$!
	disown "$CLI_PID"
	# The link comes up a second or more after the client starts (EAL set-up):
	# the duration counts from the first Rx-pps line with traffic, so that
	# DURATION seconds of whole figures follow that partial one.
	local up=0
	for _ in $(seq 1 200); do
		if rx_seen "$TMP/srv-$len.log"; then
			up=1
			break
		fi
		sleep 0.1
	done
	# In the background and waited for, so that a signal's trap runs at once.
	[ "$up" = 1 ] && sleep $((DURATION + 1)) &
	wait $!
	# Both must still run when the window ends: one that died in it (a crash,
	# the OOM killer) left its last seconds at 0 or missing, and the median
	# of the seconds before would pass for a whole run.  (The server may
	# crash as it stops, after its figures: that is after this.  It is
	# DPDK's memif driver, which can touch the rings while the peer that
	# went away unmaps them; stopping the client last crashes the client.)
	local died=
	kill -0 "$CLI_PID" 2>/dev/null || died=client
	kill -0 "$SRV_PID" 2>/dev/null || died="${died:+$died and }server"
	stop_all
	wait "$stamp_pid" 2>/dev/null
	if [ "$up" = 1 ] && [ -n "$died" ]; then
		log_tails "$len" "memif $died exited during the $len-byte window: no figure"
		return 1
	fi
	# Rx-pps lines as "START END PPS" (START: the stamp of the figure before, or of
	# the server's first line); skip zeros and the first, partial, figure.
	plain "$TMP/srv-$len.log" |
		awk 'NR == 1 { prev = $1 } $2 == "Rx-pps:" { print prev, $1, $3; prev = $1 }' \
			>"$TMP/srv-$len.pps"
	[ -n "${MEMIF_RAW:-}" ] && awk '{ printf "%s ", $3 } END { print "" }' "$TMP/srv-$len.pps" >&2
	awk '$3 > 0' "$TMP/srv-$len.pps" | tail -n +2 >"$TMP/srv-$len.used"
	# The median on its own, so that its failure (no figure) is the status tested.
	local med
	if ! med=$(sort -n -k 3 "$TMP/srv-$len.used" |
		awk -v len="$len" '{ v[n++] = $3 }
		END {
			if (n < 1) { exit 1 }
			med = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
			printf "%.6f %.6f %d\n", med / 1e6, med * len * 8 / 1e9, n
		}'); then
		log_tails "$len" "no traffic measured at $len bytes"
		return 1
	fi
	# The figures with traffic must cover the window of DURATION seconds (less
	# one at its edge): less means stalls, not a figure of memif.  Counted in
	# the seconds their intervals span, not in figures: testpmd prints one
	# every second or two, as the CPU its main lcore shares lets it (every
	# ~1.5 s on an AMD EPYC host, where counting figures failed every run).
	local covered
	covered=$(awk '{ s += $2 - $1 } END { printf "%d", s + 0.5 }' "$TMP/srv-$len.used")
	if [ "$covered" -lt $((DURATION - 1)) ]; then
		echo "only $covered of $DURATION seconds at $len bytes had traffic: no figure" >&2
		return 1
	fi
	RESULT="$med $(awk '{ printf "%s%s:%s:%s", (NR > 1 ? "," : ""), $1, $2, $3 / 1e6 }' \
		"$TMP/srv-$len.used")"
}

printf "%6s %8s %8s %7s\n" frame Mpps Gbit/s samples
results=()
rc=0
IFS=, read -r -a size_list <<<"$SIZES"
for len in "${size_list[@]}"; do
	case $len in '' | *[!0-9]*) echo "memif-peer.sh: bad frame size '$len'" >&2; exit 2 ;; esac
	if [ "$len" -lt 60 ] || [ "$len" -gt 65535 ]; then
		echo "memif-peer.sh: frame size $len outside 60..65535" >&2
		exit 2
	fi
	if run_size "$len"; then
		read -r mpps gbit n intervals <<<"$RESULT"
		printf "%6s %8.3f %8.3f %7s\n" "$len" "$mpps" "$gbit" "$n"
		results+=("$len $mpps $gbit $n $intervals")
	else
		printf "%6s failed\n" "$len"
		rc=1
	fi
done

if [ -n "$JSON" ]; then
	# Written by Python's json module from "size mpps gbit seconds intervals" words, not by hand.
	python3 -c 'import json, sys
res = []
for r in sys.argv[4:]:
    size, mpps, gbit, n, iv = r.split()
    res.append({"frame_size": int(size), "mpps": float(mpps), "gbit_s": float(gbit),
                "samples": int(n),
                "intervals": [[float(x) for x in i.split(":")] for i in iv.split(",")]})
doc = {"peer": "memif", "command": sys.argv[2], "same_core": sys.argv[3] == "1",
       "results": res}
json.dump(doc, open(sys.argv[1], "w"), indent=2)' "$JSON" "$COMMAND" "$SAME_CORE" "${results[@]}" || rc=1
fi
exit $rc
