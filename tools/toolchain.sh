#!/usr/bin/env bash
# Finds or builds the OCaml toolchain that boxroot is built with, then prints
# the environment to use it, as shell `export` lines:
#
#   eval "$(tools/toolchain.sh)"
#
# Order of preference:
#   1. an `ocamlopt` already on PATH (e.g. from opam) whose version matches
#      OCAML_VERSION (any version >= 4.14 when OCAML_VERSION is unset);
#   2. a compiler this script built before, cached under $BOXROOT_CACHE;
#   3. otherwise: build it from the npm registry's source package (esy's
#      packaging of the OCaml compiler) into that cache. ~4 minutes, once.
# dune is taken from PATH, or else installed from Debian (apt-get).
#
# OCAML_VERSION: 5.3 (default, 5.3.0), 4.14 (4.14.1), or one of the other
#   versions the npm registry serves: 5.1.0 (npm's `ocaml@5.1.4`, whose
#   sources are OCaml 5.1.0: its VERSION file says so) and 4.14.0. Each is
#   cached under its real version, $BOXROOT_CACHE/ocaml-<version>.
# OCAML_TSAN=1: OCaml 5.3 configured with --enable-tsan (its runtime and
#   the code it compiles are instrumented for ThreadSanitizer), cached
#   separately under $BOXROOT_CACHE/ocaml-5.3.0-tsan; never taken from PATH.
set -euo pipefail

want="${OCAML_VERSION:-}"
case "${want:-5.3}" in
  5.3|5.3.0) npm_pkg="ocaml@5.3.0"; full="5.3.0" ;;
  4.14|4.14.1) npm_pkg="ocaml@4.14.1000"; full="4.14.1" ;;
  4.14.0) npm_pkg="ocaml@4.14.0"; full="4.14.0" ;;
  5.1|5.1.0) npm_pkg="ocaml@5.1.4"; full="5.1.0" ;;
  *) echo "toolchain.sh: unsupported OCAML_VERSION=$want (use 5.3, 4.14, 5.1.0 or 4.14.0)" >&2; exit 2 ;;
esac
configure_flags=""
variant=""
if [ -n "${OCAML_TSAN:-}" ]; then
  case "$full" in
    5.*) configure_flags="--enable-tsan"; variant="-tsan" ;;
    *) echo "toolchain.sh: OCAML_TSAN needs OCaml 5" >&2; exit 2 ;;
  esac
fi
cache="${BOXROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boxroot}"
log() { echo "toolchain: $*" >&2; }

version_ok() { # $1 = version printed by ocamlopt -version
  local v="$1"
  if [ -n "$want" ]; then
    case "$v" in "$full"*) return 0 ;; *) return 1 ;; esac
  fi
  local major minor
  major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  [ "$major" -gt 4 ] || { [ "$major" -eq 4 ] && [ "$minor" -ge 14 ]; }
}

apt_install() { # $@ = Debian packages
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2 || true
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

prefix=""
if [ -z "${BOXROOT_FORCE_BUILD:-}" ] && [ -z "$variant" ] && command -v ocamlopt >/dev/null 2>&1 \
   && version_ok "$(ocamlopt -version)"; then
  prefix="$(cd "$(dirname "$(command -v ocamlopt)")/.." && pwd)"
  log "using ocamlopt $(ocamlopt -version) from PATH ($prefix)"
else
  prefix="$cache/ocaml-$full$variant"
  if [ ! -x "$prefix/bin/ocamlopt" ]; then
    log "building OCaml $full$variant into $prefix (first use only, a few minutes)"
    if [ -n "$variant" ] && [ ! -e /usr/include/libunwind.h ]; then
      log "installing libunwind-dev from Debian (OCaml's TSan mode needs it)"
      apt_install libunwind-dev
    fi
    build="$cache/build-$full$variant"
    rm -rf "$build"; mkdir -p "$build"
    ( cd "$build" && npm pack --silent "$npm_pkg" >/dev/null && tar xzf ocaml-*.tgz )
    src="$build/package"
    # npm's version numbers are esy's, not always OCaml's.
    real="$(head -1 "$src/VERSION")"
    case "$real" in
      "$full"|"$full"+*|"$full"~*) ;;
      *) log "$npm_pkg holds OCaml $real, not $full"; exit 1 ;;
    esac
    ( cd "$src" && ./configure --prefix="$prefix" $configure_flags >"$build/configure.log" 2>&1 \
        || { tail -30 "$build/configure.log" >&2; exit 1; }
      make -j"$(nproc)" >"$build/make.log" 2>&1 \
        || { tail -40 "$build/make.log" >&2; exit 1; }
      make install >"$build/install.log" 2>&1 \
        || { tail -30 "$build/install.log" >&2; exit 1; } )
    rm -rf "$build"
    log "built OCaml $full$variant"
  fi
fi

if ! command -v dune >/dev/null 2>&1; then
  log "installing dune from Debian"
  apt_install ocaml-dune
fi

libdir="$("$prefix/bin/ocamlopt" -where)"
echo "export PATH=\"$prefix/bin:\$PATH\""
echo "export OCAMLPATH=\"$libdir\${OCAMLPATH:+:\$OCAMLPATH}\""
echo "export OCAML_WHERE_PATH=\"$libdir\""
