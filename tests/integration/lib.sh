# SPDX-License-Identifier: MIT
# lib.sh - helpers for the shell integration tests: start/stop pvnetd, assertions.

PASS=0
FAIL=0

ok() {
	PASS=$((PASS + 1))
	echo "ok $PASS - $*"
}

not_ok() {
	FAIL=$((FAIL + 1))
	echo "not ok - $*"
}

# check DESCRIPTION COMMAND...: run COMMAND, count the outcome.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# check_fails DESCRIPTION COMMAND...: COMMAND must fail.
check_fails() {
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then not_ok "$what"; else ok "$what"; fi
}

# skip_check WHAT: checks this host cannot run, said on a line of their own that
# scripts/test.sh lists after the run ("SKIP: WHAT"); the test goes on.
skip_check() {
	echo "SKIP: $*"
}

# have_tool TOOL: 0 when TOOL is installed.  Without it, 1, and either a skip_check or,
# under scripts/test.sh (PVNET_TEST_DEPS=1, set once scripts/install-deps.sh ran), a
# failure: there a missing tool is a package that script does not install.
have_tool() {
	command -v "$1" >/dev/null && return 0
	if [ "${PVNET_TEST_DEPS:-}" = 1 ]; then
		not_ok "$1 is not installed, though scripts/install-deps.sh ran"
	else
		skip_check "$1 is not installed"
	fi
	return 1
}

# need_tool TOOL...: go on only with every TOOL installed.  Without one, the whole test
# is skipped (exit 77), or fails under scripts/test.sh (exit 1), as have_tool says.
need_tool() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null && continue
		if [ "${PVNET_TEST_DEPS:-}" = 1 ]; then
			echo "FAIL: $t is not installed, though scripts/install-deps.sh ran"
			exit 1
		fi
		echo "SKIP: $t is not installed"
		exit 77
	done
}

# wait_for_file PATH SECONDS
wait_for_file() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# start_pvnetd DIR [ARGS...]: sets PVNETD_PID
start_pvnetd() {
	local dir=$1
	shift
	"$PVNETD" --run-dir "$dir" --log-level debug "$@" 2>>"$dir.log" &
	PVNETD_PID=$!
	if ! wait_for_file "$dir/pvnetd.sock" 10; then
		echo "pvnetd did not start; its log:" >&2
		cat "$dir.log" >&2
		return 1
	fi
}

# stop_pvnetd: SIGTERM, wait up to 10 s, return its exit status
stop_pvnetd() {
	local i rc
	[ -n "${PVNETD_PID:-}" ] || return 0
	kill -TERM "$PVNETD_PID" 2>/dev/null
	for ((i = 0; i < 200; i++)); do
		kill -0 "$PVNETD_PID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$PVNETD_PID" 2>/dev/null; then
		kill -KILL "$PVNETD_PID"
		wait "$PVNETD_PID" 2>/dev/null
		PVNETD_PID=
		return 124
	fi
	wait "$PVNETD_PID"
	rc=$?
	PVNETD_PID=
	return $rc
}

finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
