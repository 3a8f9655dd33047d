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
#   3. otherwise: build it from source into that cache (~4-6 minutes,
#      once): the npm registry's source package (esy's packaging of the
#      OCaml compiler) for 4.14 to 5.3, Debian's `ocaml-source` package
#      (the upstream release tarball, under /usr/src) for 5.4 and 5.5.
# dune is taken from PATH, or else installed from Debian (apt-get).
#
# OCAML_VERSION: 5.5 (the default: the newest release), 5.3 (5.3.0), 4.14
#   (4.14.1), or one of the other versions the npm registry serves: 5.1.0
#   (npm's `ocaml@5.1.4`, whose sources are OCaml 5.1.0: its VERSION file
#   says so) and 4.14.0.
#   5.4 / 5.5 (or an exact 5.4.x / 5.5.x) mean the newest 5.4.x or 5.5.x
#   that Debian's sid or experimental serves (5.4.1 from sid and 5.5.2
#   from experimental when this was written), fetched through a private
#   apt configuration in the build directory: the machine's own apt setup
#   is left alone. With 5.4 or 5.5, a 5.4.x or 5.5.x already cached is
#   used without asking Debian for a newer one. Debian's own patches to
#   OCaml are not applied.
#   Each version is cached under its real version,
#   $BOXROOT_CACHE/ocaml-<version> (e.g. ocaml-5.5.2).
# OCAML_TSAN=1: that OCaml 5 configured with --enable-tsan (its runtime and
#   the code it compiles are instrumented for ThreadSanitizer), cached
#   separately under $BOXROOT_CACHE/ocaml-<version>-tsan; never taken from
#   PATH.
# OCAML_CC=clang: that OCaml configured with CC=clang, as macOS builds it
#   (its runtime is compiled by clang, and so is every C stub dune builds
#   with it), cached as $BOXROOT_CACHE/ocaml-<version>-clang; clang is
#   installed from Debian if missing. Never taken from PATH.
# OCAML_TARGET=aarch64-linux-gnu: a cross compiler from this machine to
#   Linux on ARM64 (OCaml's INSTALL.adoc, "Building a cross compiler"),
#   cached as $BOXROOT_CACHE/ocaml-<version>-aarch64; Debian's
#   gcc-aarch64-linux-gnu and libc6-dev-arm64-cross are installed if
#   missing. It is built by the native compiler of the same version
#   (found or built first, as above),
#   whose environment is printed, plus OCAMLFIND_CONF naming a findlib
#   configuration with the toolchain `aarch64` (`dune build -x aarch64`)
#   and BOXROOT_CROSS_PREFIX, the cross compiler's prefix. OCaml 5 only.
# OCAML_TARGET=aarch64-macos or x86_64-macos: OCaml's runtime headers
#   (caml/*.h, with m.h and s.h as OCaml's configure writes them for that
#   system) and Makefile.config, configured with zig's C compiler for that
#   target (tools/zig.sh) as OCaml's configure does for a cross compiler
#   to macOS, without building it; cached as
#   $BOXROOT_CACHE/ocaml-<version>-<target>/lib/ocaml, whose prefix is
#   printed as BOXROOT_CROSS_PREFIX. OCaml 5 only.
set -euo pipefail

want="${OCAML_VERSION:-}"
# npm_pkg: the npm package to build from; or else series: the x.y of
# Debian's ocaml-source to build from. full: the OCaml version (with
# series, empty until known: "5.5" is the newest 5.5.x). pattern: what the
# version of an ocamlopt on PATH must start with.
npm_pkg=""; series=""; full=""
case "${want:-5.5}" in
  5.3|5.3.0) npm_pkg="ocaml@5.3.0"; full="5.3.0" ;;
  4.14|4.14.1) npm_pkg="ocaml@4.14.1000"; full="4.14.1" ;;
  4.14.0) npm_pkg="ocaml@4.14.0"; full="4.14.0" ;;
  5.1|5.1.0) npm_pkg="ocaml@5.1.4"; full="5.1.0" ;;
  5.4|5.5) series="${want:-5.5}" ;;
  5.4.[0-9]*|5.5.[0-9]*) series="${want%.*}"; full="$want" ;;
  *) echo "toolchain.sh: unsupported OCAML_VERSION=$want (use 5.3, 4.14, 5.1.0, 4.14.0, 5.4 or 5.5, or an exact 5.4.x or 5.5.x)" >&2; exit 2 ;;
esac
pattern="${full:-$series.}"
configure_flags=()
variant=""
cross=""
headers_only=""
if [ -n "${OCAML_TSAN:-}" ]; then
  case "${full:-$series}" in
    5.*) configure_flags+=(--enable-tsan); variant="-tsan" ;;
    *) echo "toolchain.sh: OCAML_TSAN needs OCaml 5" >&2; exit 2 ;;
  esac
fi
case "${OCAML_CC:-}" in
  "") ;;
  clang) configure_flags+=(CC=clang); variant="$variant-clang" ;;
  *) echo "toolchain.sh: unsupported OCAML_CC=$OCAML_CC (clang)" >&2; exit 2 ;;
esac
case "${OCAML_TARGET:-}" in
  "") ;;
  aarch64-linux-gnu)
    case "${full:-$series}" in
      5.*) cross="$OCAML_TARGET"; configure_flags+=(--target="$cross"); variant="$variant-aarch64" ;;
      *) echo "toolchain.sh: OCAML_TARGET needs OCaml 5" >&2; exit 2 ;;
    esac ;;
  aarch64-macos|x86_64-macos)
    case "${full:-$series}" in
      5.*) cross="$OCAML_TARGET"; headers_only=1; variant="$variant-$OCAML_TARGET"
           zig="$("$(dirname "$0")/zig.sh")"
           configure_flags+=(--target="${OCAML_TARGET%%-*}-apple-darwin" CC="$zig/cc-$OCAML_TARGET"
                             AR="$zig/ar" RANLIB="$zig/ranlib") ;;
      *) echo "toolchain.sh: OCAML_TARGET needs OCaml 5" >&2; exit 2 ;;
    esac ;;
  *) echo "toolchain.sh: unsupported OCAML_TARGET=$OCAML_TARGET (aarch64-linux-gnu, aarch64-macos, x86_64-macos)" >&2; exit 2 ;;
esac
# What a finished build leaves.
installed() { [ -x "$1/bin/ocamlopt" ] || { [ -n "$headers_only" ] && [ -f "$1/lib/ocaml/caml/s.h" ]; }; }
cache="${BOXROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boxroot}"
log() { echo "toolchain: $*" >&2; }

version_ok() { # $1 = version printed by ocamlopt -version
  local v="$1"
  if [ -n "$want" ]; then
    case "$v" in "$pattern"*) return 0 ;; *) return 1 ;; esac
  fi
  local major minor
  major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  [ "$major" -gt 4 ] || { [ "$major" -eq 4 ] && [ "$minor" -ge 14 ]; }
}

# Waits up to 10 minutes for apt's and dpkg's locks, which another install
# may hold (a second toolchain built at once, a machine's own updates):
# apt-get otherwise fails at once.
APT_LOCK_WAIT=(-o DPkg::Lock::Timeout=600)
apt_install() { # $@ = Debian packages
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get "${APT_LOCK_WAIT[@]}" update -qq >&2 || true
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get "${APT_LOCK_WAIT[@]}" install -y -qq "$@" >&2
}

# Downloads Debian's ocaml-source for $series (exactly $full if set) and
# unpacks the upstream tarball it holds into $1; sets full.
debian_source() { # $1 = directory to work in
  local dir="$1" cands="" v up newest="" tarball
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" || return 1
  # A private apt configuration: only this sources file, its own lists and
  # cache; no hooks of the machine's run after `apt-get update` (they would
  # clean or refresh the machine's caches), no translations or AppStream
  # metadata; the sandbox user is whoever runs this (apt's _apt user cannot
  # enter $dir).
  cat >"$dir/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: sid experimental
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$dir/apt.conf" <<'EOF'
#clear APT::Update::Pre-Invoke;
#clear APT::Update::Post-Invoke;
#clear APT::Update::Post-Invoke-Success;
Acquire::IndexTargets::deb::DEP-11::DefaultEnabled "false";
Acquire::Languages "none";
EOF
  local opts=(-c "$dir/apt.conf" -o Dir::Etc::SourceList=/dev/null
              -o "Dir::Etc::SourceParts=$dir" -o "Dir::State::Lists=$dir/lists"
              -o "Dir::Cache=$dir/cache" -o "APT::Sandbox::User=$(id -un)")
  log "asking Debian (sid, experimental) for ocaml-source $pattern*"
  apt-get "${opts[@]}" -qq update >"$dir/apt.log" 2>&1 \
    || { tail -20 "$dir/apt.log" >&2; return 1; }
  # The newest Debian version whose upstream part ([epoch:]upstream-rev) is
  # the requested version, or starts with the requested x.y.
  cands="$(apt-cache "${opts[@]}" madison ocaml-source | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')"
  for v in $cands; do
    up="${v#*:}"; up="${up%-*}"
    case "$up" in
      "$pattern"|"$pattern"+*|"$pattern"~*) ;;
      "$series".*) [ -z "$full" ] || continue ;;
      *) continue ;;
    esac
    if [ -z "$newest" ] || dpkg --compare-versions "$v" gt "$newest"; then newest="$v"; fi
  done
  [ -n "$newest" ] || { log "Debian serves no ocaml-source $pattern* (it has: ${cands//$'\n'/ })"; return 1; }
  log "downloading ocaml-source $newest"
  ( cd "$dir" && apt-get "${opts[@]}" -qq download "ocaml-source=$newest" >>"$dir/apt.log" 2>&1 ) \
    || { tail -20 "$dir/apt.log" >&2; return 1; }
  # (set -e does not hold in here: this runs on the left of `||`.)
  dpkg -x "$dir"/ocaml-source_*.deb "$dir/deb" || return 1
  # /usr/src/ocaml-source-<version>.tar* holds the upstream tarball
  # (ocaml_<version>.orig.tar.xz or .gz) beside Debian's patches, or else
  # is the source tree itself.
  tarball="$(find "$dir/deb/usr/src" -maxdepth 1 -name 'ocaml-source-*.tar*' | head -1)"
  [ -n "$tarball" ] || { log "no /usr/src/ocaml-source-*.tar* in ocaml-source $newest"; return 1; }
  mkdir "$dir/outer" && tar xf "$tarball" -C "$dir/outer" || return 1
  tarball="$(find "$dir/outer" -name '*.orig.tar.*' | head -1)"
  if [ -n "$tarball" ]; then
    mkdir "$dir/src" && tar xf "$tarball" -C "$dir/src" || return 1
  else
    mv "$dir/outer" "$dir/src" || return 1
  fi
  src="$(find "$dir/src" -maxdepth 2 -name configure -path '*/ocaml*/configure' | head -1)"
  src="${src%/configure}"
  [ -n "$src" ] && [ -f "$src/VERSION" ] || { log "no OCaml sources in ocaml-source $newest"; return 1; }
  up="${newest#*:}"; up="${up%-*}"; full="${up%%+*}"  # 5.5.2+dfsg: 5.5.2
}

# A cross compiler is built by, and used beside, the native compiler of
# the same version: that one first (its environment is printed below).
host_env=""
if [ -n "$cross" ]; then
  host_env="$(env -u OCAML_TARGET -u OCAML_TSAN -u OCAML_CC "$0")"
  eval "$host_env"
  full="$(ocamlopt -version)"; full="${full%%[+~]*}"; pattern="$full"
fi

prefix=""
if [ -z "${BOXROOT_FORCE_BUILD:-}" ] && [ -z "$variant" ] && command -v ocamlopt >/dev/null 2>&1 \
   && version_ok "$(ocamlopt -version)"; then
  prefix="$(cd "$(dirname "$(command -v ocamlopt)")/.." && pwd)"
  log "using ocamlopt $(ocamlopt -version) from PATH ($prefix)"
else
  if [ -z "$full" ]; then
    # "5.5": the newest 5.5.x already built, if any (no network then).
    for p in "$cache/ocaml-$series".*"$variant"; do
      [ -x "$p/bin/ocamlopt" ] || continue
      v="${p##*/ocaml-}"; v="${v%"$variant"}"
      case "$v" in *-*) continue ;; esac  # another variant (-tsan)
      if [ -z "$full" ] || [ "$(printf '%s\n' "$full" "$v" | sort -V | tail -1)" = "$v" ]; then full="$v"; fi
    done
  fi
  prefix="$cache/ocaml-$full$variant"
  if [ -z "$full" ] || ! installed "$prefix"; then
    log "building OCaml ${full:-$series.x}$variant into $cache (first use only, a few minutes)"
    if [ -n "${OCAML_TSAN:-}" ] && [ ! -e /usr/include/libunwind.h ]; then
      log "installing libunwind-dev from Debian (OCaml's TSan mode needs it)"
      apt_install libunwind-dev
    fi
    if [ -n "${OCAML_CC:-}" ] && ! command -v "$OCAML_CC" >/dev/null 2>&1; then
      log "installing $OCAML_CC from Debian"
      apt_install "$OCAML_CC"
    fi
    # The C library's headers come with gcc only as a recommended
    # package, which an apt configured without recommends skips.
    if [ -n "$cross" ] && [ -z "$headers_only" ] && { ! command -v "$cross-gcc" >/dev/null 2>&1 \
         || [ ! -e "/usr/$cross/include/stdio.h" ]; }; then
      log "installing gcc-$cross and libc6-dev-arm64-cross from Debian"
      apt_install "gcc-$cross" libc6-dev-arm64-cross
    fi
    build="$cache/build-${full:-$series}$variant"
    rm -rf "$build"; mkdir -p "$build"
    if [ -n "$npm_pkg" ]; then
      ( cd "$build" && npm pack --silent "$npm_pkg" >/dev/null && tar xzf ocaml-*.tgz )
      src="$build/package"
      origin="$npm_pkg"
    else
      debian_source "$build/debian" || exit 1
      origin="Debian's ocaml-source for $full"
      prefix="$cache/ocaml-$full$variant"
    fi
    # npm's version numbers are esy's, not always OCaml's; check.
    real="$(head -1 "$src/VERSION")"
    case "$real" in
      "$full"|"$full"+*|"$full"~*) ;;
      *) log "$origin holds OCaml $real, not $full"; exit 1 ;;
    esac
    # A cross compiler: `make crossopt` and `make installcross`
    # (INSTALL.adoc), by the native compiler on PATH.
    build_target=""; install_target="install"
    [ -z "$cross" ] || { build_target="crossopt"; install_target="installcross"; }
    ( cd "$src" && ./configure --prefix="$prefix" ${configure_flags[@]+"${configure_flags[@]}"} \
        >"$build/configure.log" 2>&1 \
        || { tail -30 "$build/configure.log" >&2; exit 1; }
      if [ -n "$headers_only" ]; then
        mkdir -p "$prefix/lib/ocaml/caml"
        cp Makefile.config "$prefix/lib/ocaml/"
        cp runtime/caml/*.h runtime/caml/domain_state.tbl "$prefix/lib/ocaml/caml/"
        exit 0
      fi
      make -j"$(nproc)" $build_target >"$build/make.log" 2>&1 \
        || { tail -40 "$build/make.log" >&2; exit 1; }
      make $install_target >"$build/install.log" 2>&1 \
        || { tail -30 "$build/install.log" >&2; exit 1; } )
    rm -rf "$build"
    log "built OCaml $full$variant"
  fi
fi

if ! command -v dune >/dev/null 2>&1; then
  log "installing dune from Debian"
  apt_install ocaml-dune
fi

if [ -n "$headers_only" ]; then
  echo "export BOXROOT_CROSS_PREFIX=\"$prefix\""
  exit 0
fi

if [ -n "$cross" ]; then
  # dune finds a findlib toolchain's compilers and library directory in
  # findlib's configuration (OCAMLFIND_CONF and its findlib.conf.d/), and
  # asks `ocamlfind -toolchain aarch64 printconf path` for the latter:
  # without findlib, a script in the cache answers that one question.
  # Written at every call: it names the native compiler found this time.
  host_libdir="$(ocamlopt -where)"
  cross_libdir="$("$prefix/bin/ocamlopt" -where)"
  conf="$prefix/findlib"
  mkdir -p "$conf/findlib.conf.d" "$conf/bin"
  printf 'path="%s"\n' "$host_libdir" >"$conf/findlib.conf"
  {
    printf 'path(aarch64)="%s"\n' "$cross_libdir"
    for tool in ocamlc ocamlopt ocamldep ocamlmklib; do
      printf '%s(aarch64)="%s"\n' "$tool" "$prefix/bin/$tool"
    done
  } >"$conf/findlib.conf.d/aarch64.conf"
  {
    echo '#!/bin/sh'
    echo "# Written by boxroot's tools/toolchain.sh: what dune asks findlib."
    echo 'case "$*" in'
    echo "  \"-toolchain aarch64 printconf path\") echo \"$cross_libdir\" ;;"
    echo "  \"printconf path\") echo \"$host_libdir\" ;;"
    echo '  *) echo "ocamlfind: only printconf path is answered here" >&2; exit 2 ;;'
    echo 'esac'
  } >"$conf/bin/ocamlfind"
  chmod +x "$conf/bin/ocamlfind"
  echo "$host_env"
  command -v ocamlfind >/dev/null 2>&1 || echo "export PATH=\"$conf/bin:\$PATH\""
  echo "export OCAMLFIND_CONF=\"$conf/findlib.conf\""
  echo "export BOXROOT_CROSS_PREFIX=\"$prefix\""
  exit 0
fi

# The test builds compile the library once per deliberately broken build
# (boxroot/test/broken, boxroot/test/weak/broken_*: some 25 copies of each
# file, most of them the same once preprocessed). ccache, put in front of
# the C compilers that OCaml calls, compiles each distinct one once: it is
# installed from Debian on first use; BOXROOT_CCACHE=0 goes without. Its
# objects differ from the compiler's only in their debug information's
# compilation directory (CCACHE_NOHASHDIR), which no test reads.
if [ "${BOXROOT_CCACHE:-1}" != 0 ]; then
  if ! command -v ccache >/dev/null 2>&1; then
    log "installing ccache from Debian (BOXROOT_CCACHE=0: builds without it)"
    apt_install ccache || log "ccache could not be installed: builds go on without it"
  fi
  if command -v ccache >/dev/null 2>&1 && [ -d /usr/lib/ccache ]; then
    echo "export PATH=\"/usr/lib/ccache:\$PATH\""
    echo "export CCACHE_NOHASHDIR=1"
  fi
fi

libdir="$("$prefix/bin/ocamlopt" -where)"
echo "export PATH=\"$prefix/bin:\$PATH\""
echo "export OCAMLPATH=\"$libdir\${OCAMLPATH:+:\$OCAMLPATH}\""
echo "export OCAML_WHERE_PATH=\"$libdir\""
