#!/usr/bin/env bash
# The OCaml library as an opam user gets it: `dune build -p boxroot @install`
# (what boxroot.opam runs), `dune install --prefix` into a fresh directory,
# then a separate dune project under /tmp, outside the repository, that
# finds the installed library through OCAMLPATH alone and whose C stubs
# `#include <boxroot/boxroot.h>` as README.md says. Its program creates
# 1000 roots of strings, compacts the heap (which moves them), reads them
# back, modifies and deletes them, checking the live-root count that the
# OCaml module Boxroot reports. Twice:
#   - against `boxroot`;
#   - against `boxroot.debug`, stubs compiled with -DBOXROOT_DEBUG, where
#     deleting a root twice must also abort with the debug build's message.
# The same two libraries from C++, through the installed wrapper
# <boxroot/boxroot.hpp>: ocaml::Root and ocaml::WeakRoot keep strings in
# C++ vectors across a compaction and a modify; the weak roots stay full
# while the strong ones hold their values, and empty once they do not;
# the strong ones are destroyed on a thread without the lock.
# Then the two wrong combinations of build and flag must fail to link,
# every undefined boxroot symbol saying what to do (boxroot_internal.h,
# "Build check"): `boxroot.debug` with stubs compiled without
# -DBOXROOT_DEBUG (which would otherwise run without any check), and
# `boxroot` with stubs compiled with it.
#
# Usage (OCaml toolchain and dune on PATH): tools/test-install.sh
# Leaves nothing behind unless BOXROOT_KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/test-lib.sh" install

say "dune build -p boxroot @install; dune install --prefix $work/prefix"
( cd "$repo" && dune build -p boxroot --build-dir "$work/build" @install \
  && dune install --root . --build-dir "$work/build" --prefix "$work/prefix" boxroot \
       2>"$work/install.log" ) || { cat "$work/install.log" >&2; fail "install"; }
[ -f "$work/prefix/lib/boxroot/META" ] || fail "no META installed"

# The user's project: one directory per library, same sources.
user_project() { # $1 = directory, $2 = library, $3 = extra C flags
  mkdir -p "$1"
  echo '(lang dune 2.9)' >"$1/dune-project"
  cat >"$1/dune" <<EOF
(executable
 (name main)
 (libraries $2)
 (foreign_stubs (language c) (names stubs) (flags (:standard $3))))
EOF
  cat >"$1/stubs.c" <<'EOF'
#define CAML_NAME_SPACE
#include <caml/mlvalues.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <boxroot/boxroot.h>

#define N 1000
static boxroot roots[N];

value user_create(value i, value v)
{
  boxroot r = boxroot_create(v);
  if (r == NULL) caml_failwith(boxroot_error_string());
  roots[Long_val(i)] = r;
  return Val_unit;
}

value user_get(value i) { return boxroot_get(roots[Long_val(i)]); }

value user_modify(value i, value v)
{
  if (!boxroot_modify(&roots[Long_val(i)], v))
    caml_failwith(boxroot_error_string());
  return Val_unit;
}

value user_delete(value i)
{
  boxroot_delete(roots[Long_val(i)]);
  return Val_unit;
}
EOF
  cat >"$1/main.ml" <<'EOF'
external create : int -> string -> unit = "user_create"
external get : int -> string = "user_get"
external modify : int -> string -> unit = "user_modify"
external delete : int -> unit = "user_delete"

let n = 1000

let alive () =
  match Boxroot.stats () with
  | Some s -> s.Boxroot.roots_alive
  | None -> failwith "Boxroot.stats: no statistics (boxroot not running)"

let () =
  if Array.length Sys.argv > 1 && Sys.argv.(1) = "delete-twice" then begin
    create 0 (String.make 3 'x');
    delete 0;
    delete 0;
    print_endline "second delete returned"
  end else begin
    for i = 0 to n - 1 do create i (string_of_int i) done;
    Gc.compact ();
    for i = 0 to n - 1 do
      if get i <> string_of_int i then failwith "get after compaction"
    done;
    if alive () <> n then failwith "live roots after creation";
    for i = 0 to n - 1 do modify i ("m" ^ string_of_int i) done;
    Gc.full_major ();
    for i = 0 to n - 1 do
      if get i <> "m" ^ string_of_int i then failwith "get after modify";
      delete i
    done;
    if alive () <> 0 then failwith "live roots after deletion";
    Printf.printf "ok: %d roots created, read after compaction, modified, deleted\n" n
  end
EOF
}

# Only the installed library: OCAMLPATH has the prefix, then the compiler.
export OCAMLPATH="$work/prefix/lib:$(ocamlopt -where)"
for lib in boxroot boxroot.debug; do
  dir="$work/user-$lib"
  flags=""
  [ "$lib" = boxroot.debug ] && flags="-DBOXROOT_DEBUG"
  user_project "$dir" "$lib" "$flags"
  say "dune build of a project using $lib"
  ( cd "$dir" && dune build --root . ./main.exe 2>&1 ) || fail "$lib: the project does not build"
  exe="$dir/_build/default/main.exe"
  out="$("$exe")" || fail "$lib: the program failed: $out"
  echo "  $lib: $out"
  if [ "$lib" = boxroot.debug ]; then
    status=0
    out="$("$exe" delete-twice 2>&1)" || status=$?
    echo "  $lib: deleting a root twice: exit status $status: $(echo "$out" | grep 'boxroot debug' | head -1)"
    [ "$status" -ne 0 ] && echo "$out" | grep -q '^boxroot debug: .*delete' \
      || fail "$lib: a double delete was not reported"
  fi
done
# The C++ project: $1 = directory, $2 = library, $3 = extra C++ flags.
cxx_project() {
  mkdir -p "$1"
  echo '(lang dune 2.9)' >"$1/dune-project"
  cat >"$1/dune" <<EOF
(executable
 (name main)
 (libraries $2)
 (foreign_stubs (language cxx) (names stubs) (flags (:standard -std=c++17 $3)))
 (link_flags (-cclib -lstdc++)))
EOF
  cat >"$1/stubs.cpp" <<'EOF'
#include <thread>
#include <utility>
#include <vector>
#include <caml/mlvalues.h>
#include <boxroot/boxroot.hpp>

static std::vector<ocaml::Root> strong;
static std::vector<ocaml::WeakRoot> weak;

extern "C" value cxx_keep(value v)
{
  strong.emplace_back(v);
  weak.emplace_back(strong.back());
  return Val_unit;
}

extern "C" value cxx_get(value i) { return strong.at(Long_val(i)).get(); }

extern "C" value cxx_modify(value i, value v)
{
  strong.at(Long_val(i)).modify(v);
  return Val_unit;
}

extern "C" value cxx_weak_full(value)
{
  long full = 0;
  for (auto const &w : weak) full += w.lock().has_value();
  return Val_long(full);
}

extern "C" value cxx_drop_strong_on_a_thread(value)
{
  std::thread([roots = std::move(strong)]() mutable { roots.clear(); }).join();
  strong.clear();
  return Val_unit;
}
EOF
  cat >"$1/main.ml" <<'EOF'
external keep : string -> unit = "cxx_keep"
external get : int -> string = "cxx_get"
external modify : int -> string -> unit = "cxx_modify"
external weak_full : unit -> int = "cxx_weak_full"
external drop_strong_on_a_thread : unit -> unit = "cxx_drop_strong_on_a_thread"

let n = 1000

let () =
  for i = 0 to n - 1 do keep (string_of_int i) done;
  Gc.compact ();
  for i = 0 to n - 1 do
    if get i <> string_of_int i then failwith "get after compaction"
  done;
  Gc.full_major ();
  if weak_full () <> n then failwith "weak roots emptied while their values live";
  (* The weak roots keep the first values; the strong ones, new ones. *)
  for i = 0 to n - 1 do modify i ("m" ^ string_of_int i) done;
  Gc.full_major ();
  Gc.full_major ();
  for i = 0 to n - 1 do
    if get i <> "m" ^ string_of_int i then failwith "get after modify"
  done;
  if weak_full () <> 0 then failwith "weak roots of dead values still full";
  drop_strong_on_a_thread ();
  Printf.printf "ok: %d ocaml::Root and ocaml::WeakRoot\n" n
EOF
}

for lib in boxroot boxroot.debug; do
  dir="$work/cxx-$lib"
  flags=""
  [ "$lib" = boxroot.debug ] && flags="-DBOXROOT_DEBUG"
  cxx_project "$dir" "$lib" "$flags"
  say "dune build of a C++ project using $lib"
  ( cd "$dir" && dune build --root . ./main.exe 2>&1 ) || fail "$lib: the C++ project does not build"
  out="$("$dir/_build/default/main.exe")" || fail "$lib: the C++ program failed: $out"
  echo "  $lib (C++): $out"
done

# A wrong combination: $1 = library, $2 = C flags, $3 = what every
# undefined boxroot symbol must say.
wrong_build() {
  local lib="$1" flags="$2" advice="$3"
  local dir="$work/wrong-$lib" out status=0
  user_project "$dir" "$lib" "$flags"
  say "dune build of a project using $lib, stubs compiled with flags '$flags'"
  out="$(cd "$dir" && dune build --root . ./main.exe 2>&1)" || status=$?
  [ "$status" -ne 0 ] || fail "$lib with flags '$flags': linked (no build check)"
  local undefined
  undefined="$(echo "$out" | grep -o "undefined reference to .boxroot[A-Za-z0-9_]*" | sort -u)"
  [ -n "$undefined" ] || { echo "$out" >&2; fail "$lib with flags '$flags': failed, not at link time"; }
  echo "$undefined" | sed 's/^/  /'
  if echo "$undefined" | grep -v -q -- "$advice"; then
    fail "$lib with flags '$flags': an undefined symbol does not say '$advice'"
  fi
}
wrong_build boxroot.debug "" "__compiled_without_BOXROOT_DEBUG__link_boxroot_not_boxroot_debug"
wrong_build boxroot "-DBOXROOT_DEBUG" "__compiled_with_BOXROOT_DEBUG__link_boxroot_debug_not_boxroot"
say "ok"
