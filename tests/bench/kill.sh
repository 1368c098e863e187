#!/bin/bash
# SPDX-License-Identifier: MIT
# kill.sh - `pvnet bench` killed mid-run leaves nothing behind
#
# SIGKILL: the conductor cleans nothing up, so its janitor (a process of its own, named
# pvnet-janitor) removes the private directory once the conductor, pvnetd and the
# frontends are gone.  SIGTERM: the conductor cleans up itself, exits 130, and the janitor
# leaves with it.  Each run is a 64 B stream of 10 s in a process group of its own, and the
# signal goes to the whole group 2 s in, as `timeout -s KILL` and Ctrl-C send theirs.
#
# Usage: kill.sh PVNET PVNETD
set -u
PVNET=$1
PVNETD=$2
. "$(dirname "$0")/../integration/lib.sh"
TMP=$(mktemp -d /tmp/pvnet-bench-kill.XXXXXX)
trap '[ -n "$pid" ] && kill -9 -- -$pid 2>/dev/null; rm -rf "$TMP"' EXIT
pid=

# wait_for SECONDS COMMAND...: true once COMMAND is, false after SECONDS.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}
# These read one()'s $sig: the run's own TMPDIR is $TMP/$sig.
running() { compgen -G "$TMP/$sig/pvnet-bench.*/run-map/pvnetd.sock" >/dev/null; }
dir_gone() { ! compgen -G "$TMP/$sig/pvnet-bench.*" >/dev/null; }
pvnetd_gone() { ! pgrep -f -- "--run-dir $TMP/$sig/" >/dev/null; }
# Gone, or a zombie its new parent has yet to reap.
pid_gone() { ! kill -0 "$1" 2>/dev/null || [[ "$(ps -o stat= -p "$1")" == Z* ]]; }

# one SIGNAL: start a run, kill it with SIGNAL 2 s in, check what is left.
one() {
	local sig=$1 janitor rc
	mkdir -p "$TMP/$sig"
	TMPDIR=$TMP/$sig setsid "$PVNET" bench --section stream --duration 10 --frame-size 64 --queues 1 \
		--tx-mode map --pvnetd "$PVNETD" >"$TMP/out-$sig.txt" 2>"$TMP/err-$sig.txt" &
	pid=$!
	if ! wait_for 20 running; then
		not_ok "$sig: pvnetd never came up"
		cat "$TMP/err-$sig.txt"
		return
	fi
	janitor=$(pgrep -P "$pid" -x pvnet-janitor)
	[ -n "$janitor" ] || not_ok "$sig: no janitor beside the conductor"
	sleep 2
	[ "$(ps -o pgid= -p "$pid" | tr -d ' ')" = "$pid" ] || not_ok "$sig: not a group of its own"
	kill -"$sig" -- -"$pid"
	wait "$pid"
	rc=$?
	pid=
	if [ "$sig" = TERM ]; then
		if [ $rc -eq 130 ]; then ok "TERM: pvnet bench exited 130"; else
			not_ok "TERM: pvnet bench exited $rc, not 130"; fi
	fi
	if wait_for 15 dir_gone; then ok "$sig: the private directory is gone"; else
		not_ok "$sig: left $(compgen -G "$TMP/$sig/pvnet-bench.*/*" | tr '\n' ' ')"; fi
	if wait_for 10 pvnetd_gone; then ok "$sig: no pvnetd left"; else
		not_ok "$sig: a pvnetd left: $(pgrep -af -- "--run-dir $TMP/$sig/")"; fi
	if [ -n "$janitor" ]; then
		if wait_for 10 pid_gone "$janitor"; then ok "$sig: the janitor has left"; else
			not_ok "$sig: the janitor ($janitor) is still there"; fi
	fi
}

one KILL
one TERM
finish
