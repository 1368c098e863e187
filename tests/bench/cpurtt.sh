#!/bin/bash
# SPDX-License-Identifier: MIT
# cpurtt.sh - bench/cpurtt samples as it says, and refuses what it cannot do
#
# Usage: cpurtt.sh CPURTT
set -u
CPURTT=$1
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
if [ "$(nproc)" -lt 2 ]; then
	echo "SKIP: one CPU online"
	exit 77
fi
out=$(timeout -s KILL 20 "$CPURTT" --count 5 --interval-ms 10) || fail "cpurtt --count 5 exited $?"
[ "$(wc -l <<<"$out")" -eq 5 ] || fail "5 samples asked for, got: $out"
now=$(date +%s)
while read -r t rtt extra; do
	[ -z "$extra" ] || fail "more than two fields: $t $rtt $extra"
	[[ $t =~ ^[0-9]+\.[0-9]{6}$ ]] || fail "time '$t' is not seconds.microseconds"
	# The samples were taken in the last 20 s of the realtime clock.
	[ $((now - ${t%.*})) -ge 0 ] && [ $((now - ${t%.*})) -le 20 ] || fail "time $t is not now ($now)"
	# A round trip between two CPUs takes longer than 1 ns and, even preempted, less than 1 s.
	[[ $rtt =~ ^[0-9]+$ ]] && [ "$rtt" -ge 1 ] && [ "$rtt" -lt 1000000000 ] ||
		fail "round trip '$rtt' out of range"
done <<<"$out"
# --duration ends it without --count (the first sample comes at once, then one per 0.5 s).
start=$(date +%s%N)
n=$(timeout -s KILL 20 "$CPURTT" --duration 1 --interval-ms 500 | wc -l)
ms=$((($(date +%s%N) - start) / 1000000))
[ "$n" -ge 2 ] && [ "$n" -le 4 ] || fail "--duration 1 at 500 ms gave $n samples"
[ "$ms" -lt 5000 ] || fail "--duration 1 took $ms ms"
# Bad arguments: a message naming the option, exit 2, no samples.
for args in "--cpus 0,0" "--cpus 0" "--cpus 0,x" "--interval-ms 0" "--count -1" "--duration 99999" "extra"; do
	# shellcheck disable=SC2086 # the words are the arguments
	err=$("$CPURTT" $args 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 2 ] || fail "cpurtt $args exited $rc, not 2"
	[[ $err == cpurtt:* ]] || fail "cpurtt $args: no message: $err"
done
# A CPU that is not online: an error naming it, exit 1.
err=$("$CPURTT" --cpus 0,1023 --count 1 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] && [[ $err == *"CPU 1023"* ]] || fail "an offline CPU: exit $rc, '$err'"
echo "cpurtt: ok"
