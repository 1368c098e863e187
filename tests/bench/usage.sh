#!/bin/bash
# SPDX-License-Identifier: MIT
# usage.sh - `pvnet bench`'s options: what is refused (exit 2, one message naming the option)
# and what is taken, all decided before anything starts
#
# Every invocation names, first, a pvnetd that does not exist, and mostly a --json file
# that cannot be written: the options taken end at the --json check (exit 2, "cannot
# write"), the last one before the runs.  Nothing runs and no pvnetd starts, whatever
# the options say; timeout ends a bench that would run all the same (a bug).
#
# Usage: usage.sh PVNET
set -u
PVNET=$1
TMP=$(mktemp -d /tmp/pvnet-bench-usage.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/tmp" "$TMP/plot"
: >"$TMP/file"
NOJSON=$TMP/missing/out.json
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# bench ARGS...: run pvnet bench with ARGS; $rc, $out (stdout) and $err (stderr) set.
bench() {
	out=$(TMPDIR=$TMP/tmp timeout -s KILL 20 "$PVNET" bench --pvnetd "$TMP/no-pvnetd" "$@" \
		2>"$TMP/err")
	rc=$?
	err=$(<"$TMP/err")
}
# refused MESSAGE ARGS...: exit 2 with exactly the one line "pvnet bench: MESSAGE".
refused() {
	local msg=$1
	shift
	bench --json "$NOJSON" "$@"
	[ $rc -eq 2 ] || fail "$*: exit $rc, not 2 ($err)"
	[ "$err" = "pvnet bench: $msg" ] || fail "$*: '$err', not 'pvnet bench: $msg'"
	[ -z "$out" ] || fail "$*: wrote '$out' on stdout"
}
# taken ARGS...: every option taken; refused only at the unwritable --json.
taken() {
	bench --json "$NOJSON" "$@"
	[ $rc -eq 2 ] || fail "$*: exit $rc, not 2 ($err)"
	[ "$err" = "pvnet bench: --json: cannot write $NOJSON: No such file or directory" ] ||
		fail "$*: not taken: '$err'"
}

# -h: the text on stdout, exit 0.
bench -h
if [ $rc -ne 0 ] || [[ $out != "Usage: pvnet bench [OPTIONS]"* ]] || [ -n "$err" ]; then
	fail "-h: exit $rc, stdout '${out:0:40}', stderr '$err'"
fi

# Each bound, just inside (taken) and just outside (refused, the option named).
for a in "--tcp-duration 1" "--tcp-duration 10" "--peer-duration 3" "--peer-duration 30" \
	"--repeat 1" "--repeat 15" "--duration 0.01" "--warmup 3600" "--api zerocopy" "--api copy" \
	"--verify sampled" "--verify full" "--placement split" "--placement spread"; do
	# shellcheck disable=SC2086 # the option and its value as two words
	taken $a
done
refused "--tcp-duration: '0' is not 1..10 whole seconds" --tcp-duration 0
refused "--tcp-duration: '11' is not 1..10 whole seconds" --tcp-duration 11
refused "--peer-duration: '2' is not 3..30 whole seconds" --peer-duration 2
refused "--peer-duration: '31' is not 3..30 whole seconds" --peer-duration 31
refused "--repeat: '0' is not 1..15" --repeat 0
refused "--repeat: '16' is not 1..15" --repeat 16
refused "--duration: '0' is not 0.01..3600 seconds" --duration 0
refused "--warmup: '3601' is not 0.01..3600 seconds" --warmup 3601
refused "--api: 'zero' is not zerocopy or copy" --api zero
refused "--verify: 'all' is not sampled or full" --verify all
refused "--placement: 'one' is not split or spread" --placement one
bench --json "$NOJSON" --steering fast
if [ $rc -ne 2 ] || [[ $err != "pvnet bench: --steering: "*fast* ]] || [[ $err == *$'\n'* ]]; then
	fail "--steering fast: exit $rc, '$err'"
fi
# An argument that is not an option is refused, wherever it stands (as `pvnet capture` does).
refused "unexpected argument 'extra'" extra
refused "unexpected argument 'extra'" --repeat 2 extra
refused "unexpected argument 'extra'" extra --repeat 2

# --repeat, --peers and --plot belong to the sections: refused with --section stream, and
# with a sweep option that selects the stream without --section (--migrate is one).
sections="--peers, --repeat and --plot belong to the sections; not with --section stream"
refused "$sections" --section stream --repeat 2
refused "$sections" --section stream --peers
refused "$sections" --section stream --plot "$TMP/plot"
refused "$sections" --migrate --repeat 2
refused "$sections" --frame-size 64 --repeat 2
taken --section stream --repeat 1
taken --section sizes --repeat 2 --peers
# With -d the running pvnetd's tx mode is fixed: one --tx-mode is taken, a list is not.
taken -d "$TMP/tmp" --section stream --tx-mode copy
refused "with -d the running pvnetd's tx mode is fixed; --tx-mode cannot sweep" \
	-d "$TMP/tmp" --section stream --tx-mode copy,map

# --plot wants a directory: a file is refused; a directory is taken (the bench then
# stops at the pvnetd that does not exist: exit 1, nothing run).
bench --json "$TMP/out.json" --section sizes --plot "$TMP/file"
if [ $rc -ne 2 ] || [ "$err" != "pvnet bench: --plot: cannot write in $TMP/file: Not a directory" ]; then
	fail "--plot FILE: exit $rc, '$err'"
fi
bench --json "$TMP/out.json" --section sizes --plot "$TMP/plot"
if [ $rc -ne 1 ] || [[ $err != *"cannot run"* ]] || [[ $err == *"--plot"* ]]; then
	fail "--plot DIR: exit $rc, '$err'"
fi
left=$(find "$TMP/tmp" "$TMP/plot" -mindepth 1)
[ -z "$left" ] || fail "left behind: $left"
echo "pvnet bench options: ok"
