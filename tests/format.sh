#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# format.sh - every C file of the tree is as clang-format makes it (.clang-format, the house
# style), so a change that is not formatted fails here and not in a reviewer's eyes.
# usage: format.sh SOURCE_ROOT
set -u
cd "$1" || exit 1
if ! command -v clang-format >/dev/null; then
	# scripts/test.sh installed it (PVNET_TEST_DEPS=1): missing there is a failure.
	[ "${PVNET_TEST_DEPS:-}" = 1 ] &&
		{ echo "FAIL: clang-format is not installed, though scripts/install-deps.sh ran"; exit 1; }
	echo "SKIP: clang-format is not installed"
	exit 77
fi
[ -f .clang-format ] || { echo "FAIL: no .clang-format in $1"; exit 1; }
mapfile -t files < <(find include src tools tests bench fuzz examples -name '*.[ch]' | sort)
[ "${#files[@]}" -gt 0 ] || { echo "FAIL: no C files found under $1"; exit 1; }
bad=()
for f in "${files[@]}"; do
	clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
echo "$(clang-format --version): ${#files[@]} files, ${#bad[@]} not formatted"
[ "${#bad[@]}" -eq 0 ] && exit 0
printf '  %s\n' "${bad[@]}"
echo "fix with: clang-format -i ${bad[*]}"
exit 1
