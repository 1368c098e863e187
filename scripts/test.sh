#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test.sh - build pvnet and run every test suite: a plain -Werror build (every suite,
# the clang-format check "format" too), the unit and integration suites under
# AddressSanitizer+UndefinedBehaviorSanitizer and under ThreadSanitizer (pvnetd runs
# threads in every integration test), and a clang -Werror build with the fuzz
# harnesses.  Lists every check skipped, whole tests and single checks ("SKIP: why" in
# a test's output), then ends with "N passed, N failed, N skipped" and exits non-zero
# on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
# Every tool the tests use is installed now: a test that misses one fails, not skips.
export PVNET_TEST_DEPS=1

total_pass=0
total_fail=0
total_skip=0
skips=()

# run_build NAME MESON-ARGS... -- MESON-TEST-ARGS...
run_build() {
	local name=$1
	shift
	local setup=() testargs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do setup+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	testargs=("$@")
	local dir="$top/build-test/$name"

	echo "=== $name: configure and build ==="
	if ! { [ -f "$dir/build.ninja" ] && meson configure "$dir" "${setup[@]}" >/dev/null ||
	       meson setup --wipe "$dir" "${setup[@]}" >/dev/null 2>&1 || meson setup "$dir" "${setup[@]}"; } ||
	   ! ninja -C "$dir"; then
		echo "$name: BUILD FAILED"
		total_fail=$((total_fail + 1))
		return
	fi
	echo "=== $name: test ==="
	rm -f "$dir"/meson-logs/testlog*.json
	meson test -C "$dir" --print-errorlogs --num-processes 2 "${testargs[@]}"
	local counts
	# meson names the log after the wrapper when there is one (testlog-setarch.json).
	# The counts on the first line; then each skip said in a test's output, whose
	# test meson may count as passed (one skipped check of many, or a cmocka skip()).
	counts=$(python3 - "$dir"/meson-logs/testlog*.json <<'PY'
import json, re, sys
p = f = s = 0
said = []
try:
    for name in sys.argv[1:]:
        for line in open(name):
            t = json.loads(line)
            r = t.get("result")
            if r in ("OK", "EXPECTEDFAIL"): p += 1
            elif r == "SKIP": s += 1
            else: f += 1
            test = t.get("name", "?").split(" / ")[-1]
            why, bare = [], set()
            for out in (t.get("stdout") or "").splitlines():
                if out.startswith("SKIP: "):
                    why.append(out[6:])
                elif re.fullmatch(r"\[  SKIPPED \] \w+", out):
                    bare.add(out[13:])  # cmocka's own line, with or without a reason said
            said += ["%s: %s" % (test, w) for w in why]
            if len(bare) > len(why):
                said.append("%s: %s skipped, %d of them without saying why" %
                            (test, ", ".join(sorted(bare)), len(bare) - len(why)))
except (OSError, ValueError):
    f += 1
if p + f + s == 0:
    f = 1  # a suite that ran nothing is a failure of the runner, not a pass
print(p, f, s)
for line in said:
    print(line)
PY
)
	read -r p f s <<<"$(head -n 1 <<<"$counts")"
	while IFS= read -r line; do
		[ -n "$line" ] && skips+=("$name: $line")
	done < <(tail -n +2 <<<"$counts")
	echo "$name: $p passed, $f failed, $s skipped"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
}

common=(--werror -Dtests=enabled)
run_build plain "${common[@]}" --
run_build asan "${common[@]}" -Db_sanitize=address,undefined -Db_lundef=false -- \
	--suite unit --suite fuzz-replay --suite integration
# TSan needs the non-PIE-compatible mmap layout some kernels break; setarch -R keeps it happy.
run_build tsan "${common[@]}" -Db_sanitize=thread -Db_lundef=false -- \
	--suite unit --suite integration --wrapper 'setarch -R'

# clang: the compiler of the fuzz harnesses (fuzz/), so the whole tree and the
# harnesses build warning-free with it too; its unit tests and corpus replays run.
if command -v clang >/dev/null; then
	CC=clang run_build clang "${common[@]}" -Dfuzz=true -- --suite unit --suite fuzz-replay
else
	echo "clang: not installed"
	total_fail=$((total_fail + 1))
fi

if [ ${#skips[@]} -gt 0 ]; then
	echo "skipped (each says why):"
	printf '  %s\n' "${skips[@]}"
fi
echo "${total_pass} passed, ${total_fail} failed, ${total_skip} skipped"
[ "$total_fail" -eq 0 ]
