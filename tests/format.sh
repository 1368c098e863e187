#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# format.sh - every C file of the tree is as clang-format makes it (.clang-format, the house
# style), so a change that is not formatted fails here and not in a reviewer's eyes.
# usage: format.sh SOURCE_ROOT
set -u
cd "$1" || exit 1
command -v clang-format >/dev/null || { echo "SKIP: clang-format not installed"; exit 77; }
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
