#!/usr/bin/env bash
# Every symbol a boxroot library exports is API or carries the internal
# prefix `boxroot__`, so that programs can link boxroot beside any other C
# library; test-only entry points are absent from the libraries users link;
# and every test of the OCaml version lives in the files that say so
# (ocaml_compat.h). Usage: check_symbols.sh SOURCE_DIR ARCHIVE...
set -u
src=$1; shift
passed=0; failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# The API: boxroot.h and boxroot_stats.h (weak roots and the leak report included).
api="boxroot_create boxroot_get boxroot_get_ref boxroot_delete boxroot_modify
boxroot_setup boxroot_teardown boxroot_status boxroot_error_string
boxroot_print_stats boxroot_get_stats boxroot_stats_size
boxroot_weak_create boxroot_weak_get boxroot_weak_modify boxroot_weak_delete
boxroot_weak_upgrade boxroot_weak_of_boxroot boxroot_debug_report_leaks
boxroot_weak_create_notifying boxroot_weak_next_emptied boxroot_weak_notifying_word"

for lib in "$@"; do
  syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
  [ -n "$syms" ] || { fail "$lib: no symbol found (nm failed?)"; continue; }
  for s in $syms; do
    case " $(echo $api) " in *" $s "*) pass; continue ;; esac
    case "$s" in
      boxroot__testing_*|boxroot__invariant_failed|boxroot__check_domain)
        fail "$lib exports the test-only symbol $s" ;;
      boxroot__*) pass ;;
      *) fail "$lib exports $s, neither API nor prefixed boxroot__" ;;
    esac
  done
  for f in $api; do
    echo "$syms" | grep -qx "$f" && pass || fail "$lib does not export the API symbol $f"
  done
done

# The OCaml version is tested only where ocaml_compat.h says.
for f in "$src"/*.c "$src"/*.h; do
  case "$(basename "$f")" in ocaml_compat.h|compat_ocaml4.c|compat_ocaml5.c) continue ;; esac
  if grep -qE 'OCAML_VERSION|BOXROOT_MULTICORE' "$f"; then
    fail "$(basename "$f") tests the OCaml version (only ocaml_compat.h and compat_ocaml{4,5}.c may)"
  else
    pass
  fi
done

echo "check_symbols: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
