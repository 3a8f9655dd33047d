#!/usr/bin/env bash
# A program compiled against another layout than the library's (here,
# another pool size) must fail to link rather than mask addresses wrongly
# (boxroot_internal.h, BOXROOT__LAYOUT): its objects reference boxroot__
# symbols that the library does not define. A program compiled with the
# library's layout references only symbols the library defines.
# Usage: check_layout.sh "CC FLAGS" OCAML_WHERE SOURCE_DIR LIBRARY.a
set -u
cc=$1 where=$2 src=$3 lib=$4
passed=0; failed=0
defined=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
missing() { # object -> boxroot symbols it needs that the library lacks
  nm -u "$1" | awk '{ print $2 }' | grep '^boxroot' | sort -u | comm -23 - <(echo "$defined")
}
$cc -c -I "$where" -I "$src" layout_user.c -o "$tmp/same.o" || exit 1
$cc -c -I "$where" -I "$src" -DBOXROOT_POOL_LOG_SIZE=13 layout_user.c -o "$tmp/other.o" || exit 1
m=$(missing "$tmp/same.o")
if [ -z "$m" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: same layout, undefined: $m"; fi
m=$(missing "$tmp/other.o")
if [ -n "$m" ]; then passed=$((passed + 1)); echo "other layout cannot link: needs $(echo $m)"
else failed=$((failed + 1)); echo "FAIL: a program compiled with another pool size would link"; fi
echo "check_layout: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
