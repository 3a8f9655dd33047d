# boxroot: top-level entry points. Each target finds or builds the OCaml
# toolchain first (tools/toolchain.sh; ~4-8 minutes once per version, then
# cached under ~/.cache/boxroot). The default is the newest release, OCaml
# 5.5; OCAML_VERSION=5.3 or 4.14 selects another.
SHELL := /bin/bash
TOOLCHAIN := eval "$$(tools/toolchain.sh)"
# Sanitized runs: the runtime frees its memory at exit (c=1) so that only
# real leaks are reported.
SAN_ENV := OCAMLRUNPARAM=c=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TEST_EXES := boxroot/test/test_model.exe boxroot/test/test_failures.exe \
	boxroot/test/test_stats.exe boxroot/test/debug/test_model.exe \
	boxroot/test/weak/test_weak_model.exe

.PHONY: all build test test-c test-c-53 test-c-414 test-rust test-rust-414 test-cpp test-tsan test-asan \
	test-valgrind test-debug test-debug-runtime bench-micro-hugepages bench-micro-debug \
	toolchain clean bench bench-weak bench-full bench-build bench-tune test-package test-install \
	test-examples test-clients test-matrix test-soak test-clang test-macos test-windows \
	test-aarch64 test-aarch64-full test-under-load

all: build

toolchain:
	@$(TOOLCHAIN) && ocamlfind ocamlopt -version 2>/dev/null || ocamlopt -version

build:
	@$(TOOLCHAIN) && dune build

# The whole test suite (what CI runs): the C library on OCaml 5.5, 5.3 and
# 4.14, the Rust and C++ bindings, OCaml's debug runtime, the sanitizer and
# valgrind passes, and the packages as users get them (cargo package,
# dune install, real clients). Not test-matrix: three more compilers to
# build would take a fresh run past 40 minutes.
# Every suite, one after the other (the first failure stops it), then
# each one's time.
TEST_TARGETS := test-c test-c-53 test-c-414 test-debug-runtime test-rust test-rust-414 test-cpp test-asan \
	test-valgrind test-package test-install test-examples test-clients test-clang \
	test-macos test-windows test-aarch64
test:
	@times=(); start=$$SECONDS; \
	for t in $(TEST_TARGETS); do \
	  t0=$$SECONDS; $(MAKE) --no-print-directory $$t || { echo "make test: $$t failed"; exit 1; }; \
	  times+=("$$t $$((SECONDS - t0))"); \
	done; \
	echo "make test: passed in $$((SECONDS - start)) s; seconds per target:"; \
	printf '  %-20s %5s\n' $${times[@]}

# The C library's tests, driven from OCaml (on the default OCaml, 5.5).
test-c:
	@$(TOOLCHAIN) && dune build @runtest --force

# The same on OCaml 5.3, whose major cycle starts by marking (5.5 first
# sweeps only), in its own build directory.
BUILD_DIR_53 := _build-ocaml-5.3
test-c-53:
	@unset OCAMLPATH; export OCAML_VERSION=5.3 && $(TOOLCHAIN) && \
	dune build --build-dir $(BUILD_DIR_53) @boxroot/test/runtest --force

# Rust (rust/): the drop-in -sys crate against the C library; the safe
# crate (runtime tests, trybuild compile-fail/pass tests, doctests), and
# its leak report on the debug build (feature debug, tests/leaks.rs); and
# ocaml-interop 0.12 from crates.io patched onto our -sys crate. Cargo
# fetches the crates on first use; it builds into rust/target.
CARGO_TEST := CARGO_TARGET_DIR=$(CURDIR)/rust/target cargo test --locked
test-rust:
	@$(TOOLCHAIN) && \
	$(CARGO_TEST) --manifest-path rust/Cargo.toml -p ocaml-boxroot-sys \
	  --features link-ocaml-runtime-and-dummy-program && \
	$(CARGO_TEST) --manifest-path rust/Cargo.toml -p boxroot && \
	$(CARGO_TEST) --manifest-path rust/Cargo.toml -p boxroot --features debug --test leaks && \
	$(CARGO_TEST) --manifest-path rust/interop-test/Cargo.toml

# The same crates on OCaml 4.14 (its lock tracking and where a root's
# cell lies differ: boxroot/ocaml_compat.h), in a target directory of
# their own.
test-rust-414:
	@unset OCAMLPATH; export OCAML_VERSION=4.14 && $(TOOLCHAIN) && \
	export CARGO_TARGET_DIR=$(CURDIR)/rust/target/ocaml-4.14 && \
	cargo test --locked --manifest-path rust/Cargo.toml -p ocaml-boxroot-sys \
	  --features link-ocaml-runtime-and-dummy-program && \
	cargo test --locked --manifest-path rust/Cargo.toml -p boxroot

# The Rust crates as packaged (`cargo package`), unpacked outside the
# repository and built there by a small program, release and debug
# (tools/test-package.sh).
test-package:
	@$(TOOLCHAIN) && tools/test-package.sh

# The OCaml library as installed (dune install --prefix into a fresh
# directory), used by a dune project outside the repository through
# `boxroot` and `boxroot.debug`; the two wrong combinations of library and
# -DBOXROOT_DEBUG must fail to link with self-explaining symbol names
# (tools/test-install.sh).
test-install:
	@$(TOOLCHAIN) && tools/test-install.sh

# The README's quick starts (examples/, which README.md must show
# verbatim: tools/check-readme-examples.py), built and run outside the
# repository against the installed library and the packaged crates, their
# output compared with the README's (tools/test-examples.sh).
test-examples:
	@$(TOOLCHAIN) && tools/test-examples.sh

# Real clients' own tests (ocaml-interop 0.12.0, ocaml-rs 1.3.0, fetched
# from crates.io) on our -sys crate through [patch.crates-io]
# (tools/test-clients.sh).
test-clients:
	@$(TOOLCHAIN) && tools/test-clients.sh

# The C library's tests on every OCaml version tools/toolchain.sh can
# build (4.14.0, 4.14.1, 5.1.0, 5.3.0, 5.4.x, 5.5.x; each built on first
# use, ~4-8 minutes, then cached), the build without deletion barrier
# (test/broken) losing values on each 5.x. MATRIX="5.1.0 5.4" for some of
# them (tools/test-matrix.sh).
test-matrix:
	@tools/test-matrix.sh $(MATRIX)

# clang, as macOS builds OCaml: an OCaml 5.5 configured with CC=clang
# (tools/toolchain.sh, OCAML_CC=clang: clang from Debian if missing, then
# built on first use, ~5-10 minutes, cached as ocaml-<version>-clang),
# which compiles every C and C++ file dune builds. Everything that
# `dune build` builds, C and C++ warnings as errors (profile werror), then
# the C test suites at smaller sizes (tools/test-quick.sh).
BUILD_DIR_CLANG := _build-clang
test-clang:
	@unset OCAMLPATH; export OCAML_CC=clang && $(TOOLCHAIN) && \
	dune build --build-dir $(BUILD_DIR_CLANG) --profile werror @default \
	  $$(tools/test-quick.sh --list | sed 's|^|./|') && \
	tools/test-quick.sh $(BUILD_DIR_CLANG)/default

# macOS (x86-64 and ARM64), compiled here with zig's clang (PyPI's
# ziglang, installed on first use): every file of the library, release and
# debug builds, and the C++ wrapper's test stubs, against OCaml's headers
# configured for each (first use: ~2-4 minutes each), no warning; each
# build linked as OCaml links C stubs on macOS (tools/test-cross-compile.sh).
test-macos:
	@$(TOOLCHAIN) && tools/test-cross-compile.sh macos

# Windows is not supported: compiling for it (zig's x86_64-windows-gnu)
# must stop first at boxroot.h's #error that says so.
test-windows:
	@$(TOOLCHAIN) && tools/test-cross-compile.sh windows

# Linux on ARM64, run here under QEMU's user-mode emulation: the C test
# suites built by an OCaml 5.5 cross compiler to aarch64-linux-gnu
# (tools/toolchain.sh, OCAML_TARGET=aarch64-linux-gnu: built on first use,
# ~7-20 minutes, with Debian's gcc-aarch64-linux-gnu), `dune build -x
# aarch64`, each program run by qemu-aarch64-static (Debian's
# qemu-user-static, installed on first use). test-aarch64: the core of
# them (tools/test-quick.sh --core: model, stress, hazard, window, weak
# roots, locks, marking rules, 64 KiB pages, two broken builds that must
# fail), ~1.5-2.5 minutes; test-aarch64-full: every program that starts no
# child process (the emulator runs the program, not what it execs), ~5
# minutes. QEMU runs the guest with this machine's stronger memory
# ordering: it checks the build and the arithmetic, not the memory orders.
BUILD_DIR_AARCH64 := _build-aarch64
QEMU_AARCH64 := qemu-aarch64-static -L /usr/aarch64-linux-gnu
AARCH64_BUILD = unset OCAMLPATH; export OCAML_TARGET=aarch64-linux-gnu && $(TOOLCHAIN) && \
	{ command -v qemu-aarch64-static >/dev/null || { echo "installing qemu-user-static from Debian"; \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq qemu-user-static; }; } && \
	dune build -x aarch64 --build-dir $(BUILD_DIR_AARCH64) \
	  $$(tools/test-quick.sh $(1) --no-children --list | sed 's|^|./$(BUILD_DIR_AARCH64)/default.aarch64/|') && \
	tools/test-quick.sh $(1) --no-children $(BUILD_DIR_AARCH64)/default.aarch64 $(QEMU_AARCH64)
test-aarch64:
	@$(call AARCH64_BUILD,--core)
test-aarch64-full:
	@$(call AARCH64_BUILD,)

# The C++ wrapper (cpp/boxroot.hpp), driven from OCaml (cpp/test).
test-cpp:
	@$(TOOLCHAIN) && dune build @cpp/test/runtest-cpp --force

# The C library's tests on OCaml 4.14 (builds that toolchain on first use,
# ~4 minutes), in their own build directory so that switching versions
# rebuilds nothing. OCAMLPATH is reset: OCaml 5's META files in a
# 5.3 toolchain left on it would shadow 4.14's threads library.
BUILD_DIR_414 := _build-ocaml-4.14
test-c-414:
	@unset OCAMLPATH; export OCAML_VERSION=4.14 && $(TOOLCHAIN) && \
	dune build --build-dir $(BUILD_DIR_414) @runtest --force

# Only the debug build's tests (also part of test-c): each misuse aborts
# a child process with its message; the model test must report nothing.
test-debug:
	@$(TOOLCHAIN) && dune build @boxroot/test/debug/runtest --force

# The model, stress, churn and hazard tests linked against OCaml's debug
# runtime, which checks its own invariants (boxroot/test/debug_runtime).
test-debug-runtime:
	@$(TOOLCHAIN) && dune build @boxroot/test/debug_runtime/runtest-debug-runtime \
	  @boxroot/test/weak/debug_runtime/runtest-debug-runtime --force

# Micro-benchmarks (bench/micro/README.md): huge pages off vs on, and the
# release vs the debug build. REPS interleaved runs; ARGS for roots_bench.
bench-micro-hugepages:
	@$(TOOLCHAIN) && dune build ./bench/micro/roots_bench.exe && \
	python3 bench/micro/run.py hugepages $${REPS:-7} $(ARGS)

bench-micro-debug:
	@$(TOOLCHAIN) && dune build ./bench/micro/roots_bench.exe ./bench/micro/debug/roots_bench.exe && \
	python3 bench/micro/run.py debug $${REPS:-7} $(ARGS)

# The same tests with ASan + UBSan (fails on any report or leak).
# Also the multi-threaded tests (stress test, domain churn, lock detection),
# and the debug build's misuse cases (the quarantine) and leak report.
ASAN_EXES := $(TEST_EXES) boxroot/test/test_stress.exe boxroot/test/test_churn.exe \
	boxroot/test/test_locks.exe boxroot/test/test_hazard.exe \
	boxroot/test/weak/test_weak_marking.exe boxroot/test/weak/test_weak_window.exe \
	boxroot/test/weak/test_weak_domains.exe boxroot/test/weak/test_weak_notify.exe \
	boxroot/test/weak/test_weak_notify_domains.exe \
	boxroot/test/debug/test_debug.exe boxroot/test/debug/test_leaks.exe
test-asan:
	@$(TOOLCHAIN) && dune build --profile asan --build-dir _build-asan $(ASAN_EXES:%=./%) && \
	for t in $(ASAN_EXES); do \
	  echo "== asan: $$t"; BOXROOT_TEST_OPS=$${BOXROOT_TEST_OPS:-300000} \
	  $(SAN_ENV) ./_build-asan/default/$$t || exit 1; done

# The multi-threaded tests under ThreadSanitizer. OCaml 5.3's runtime is
# not instrumented by default, so TSan would miss its synchronisation
# (stop-the-world barriers are hand-written atomics) and report races that
# are not there, e.g. between a domain modifying a root and its owner
# scanning it in the next stop-the-world section. Suppressing runtime
# frames would not help, as these false reports are in boxroot's frames.
# Instead this target uses OCaml 5.3 configured with --enable-tsan
# (tools/toolchain.sh, OCAML_TSAN=1: built on first use, ~10 minutes with
# libunwind-dev from Debian, cached as ocaml-5.3.0-tsan), which
# instruments its runtime and all OCaml code; boxroot and the test stubs
# get -fsanitize=thread from the tsan profile (dune). No suppressions.
# TSan makes the programs ~5-10x slower: fewer domains for the churn test.
BUILD_DIR_TSAN := _build-tsan
# The TSan toolchain's OCaml (another version is built on first use).
TSAN_OCAML ?= 5.3
TSAN_EXES := boxroot/test/test_stress.exe boxroot/test/test_churn.exe \
	boxroot/test/test_locks.exe boxroot/test/early/test_locks_early.exe boxroot/test/test_hazard.exe boxroot/test/test_stats_race.exe \
	boxroot/test/weak/test_weak_domains.exe boxroot/test/weak/test_weak_window.exe
test-tsan:
	@unset OCAMLPATH; export OCAML_TSAN=1 OCAML_VERSION=$(TSAN_OCAML) && $(TOOLCHAIN) && \
	dune build --build-dir $(BUILD_DIR_TSAN) --profile tsan $(TSAN_EXES:%=./%) && \
	for t in $(TSAN_EXES); do \
	  echo "== tsan: $$t"; BOXROOT_STRESS_SECONDS=$${BOXROOT_STRESS_SECONDS:-5} \
	  BOXROOT_CHURN_DOMAINS=$${BOXROOT_CHURN_DOMAINS:-300} TSAN_OPTIONS=exitcode=66 \
	  ./$(BUILD_DIR_TSAN)/default/$$t || exit 1; done

# A long randomized multi-domain stress of every operation: test_stress
# with short-lived domains churning and statistics read throughout
# (BOXROOT_STRESS_CHURN=1), SOAK_SECONDS each (default 120) on the test
# build, on OCaml's debug runtime, and under ThreadSanitizer (the TSan
# toolchain of test-tsan); then the window explorer over SOAK_SEEDS seeds
# on the test build and against each broken build (tools/soak-explore.sh);
# then the allocation failure sweep (boxroot/test/alloc_failures: make
# test runs it once) SOAK_ALLOC_REPEATS times (default 10) on OCaml 5.5,
# 5.3 and 4.14, test and debug builds.
# Minutes: not part of `make test`.
SOAK_SECONDS ?= 120
SOAK_ENV := BOXROOT_STRESS_CHURN=1 BOXROOT_STRESS_SECONDS=$(SOAK_SECONDS)
test-soak:
	@$(TOOLCHAIN) && dune build ./boxroot/test/test_stress.exe \
	  ./boxroot/test/debug_runtime/test_stress.exe && \
	echo "== soak: test build" && $(SOAK_ENV) ./_build/default/boxroot/test/test_stress.exe && \
	echo "== soak: debug runtime" && OCAMLRUNPARAM=v=0 $(SOAK_ENV) \
	  ./_build/default/boxroot/test/debug_runtime/test_stress.exe
	@unset OCAMLPATH; export OCAML_TSAN=1 OCAML_VERSION=$(TSAN_OCAML) && $(TOOLCHAIN) && \
	dune build --build-dir $(BUILD_DIR_TSAN) --profile tsan ./boxroot/test/test_stress.exe && \
	echo "== soak: tsan" && $(SOAK_ENV) BOXROOT_STRESS_DOMAINS=2 TSAN_OPTIONS=exitcode=66 \
	  ./$(BUILD_DIR_TSAN)/default/boxroot/test/test_stress.exe
	@$(TOOLCHAIN) && tools/soak-explore.sh
	@for v in 5.5 5.3 4.14; do \
	  (unset OCAMLPATH; export OCAML_VERSION=$$v && $(TOOLCHAIN) && \
	   d=$$(case $$v in 5.5) echo _build;; *) echo _build-ocaml-$$v;; esac) && \
	   dune build --build-dir $$d ./boxroot/test/alloc_failures/test_alloc_failures.exe \
	     ./boxroot/test/alloc_failures/debug/test_alloc_failures.exe && \
	   for b in "" debug/; do echo "== soak: allocation failures, OCaml $$v, $${b:-test build}"; \
	     BOXROOT_ALLOC_REPEATS=$${SOAK_ALLOC_REPEATS:-10} \
	       ./$$d/default/boxroot/test/alloc_failures/$${b}test_alloc_failures.exe || exit 1; \
	   done) || exit 1; \
	done

# The timing-sensitive suites (every broken build's control, the window
# tests, the explorer's seeds, the tests that drive the runtime into a GC
# phase, on the release and the debug runtime) N times each beside K busy
# loops: each test's passes and failures, and the values each control
# lost in each run (tools/suite-under-load.sh). OCAML_VERSION=5.3 for
# OCaml 5.3.0. Minutes: not part of `make test`.
N ?= 5
K ?= 2
test-under-load:
	@unset OCAMLPATH; $(TOOLCHAIN) && tools/suite-under-load.sh $(N) $(K)

# The same tests under valgrind's memcheck (fails on errors or leaks).
test-valgrind:
	@$(TOOLCHAIN) && dune build $(TEST_EXES:%=./%) && \
	for t in $(TEST_EXES); do \
	  echo "== valgrind: $$t"; BOXROOT_TEST_OPS=$${BOXROOT_TEST_OPS:-100000} OCAMLRUNPARAM=c=1 \
	  BOXROOT_WEAK_MODEL_STEPS=$${BOXROOT_WEAK_MODEL_STEPS:-5000} \
	  valgrind --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite \
	    --show-leak-kinds=definite -q ./_build/default/$$t || exit 1; done

clean:
	rm -rf _build _build-* bench/_build

# The benchmark suite (bench/run.py; results in bench/results/<mode>/).
# Upstream boxroot 0.4 is fetched with cargo on first use, matplotlib is
# installed in a venv under ~/.cache/boxroot on first use.
# BENCH_ARGS passes options to run.py, e.g. BENCH_ARGS="--only perm_count".
# A build directory of its own: the release profile (cross-module inlining,
# which the dev profile's -opaque prevents) without rebuilding _build.
# One build directory per OCaml version, so that switching is no rebuild.
BENCH_BUILD_DIR := $(CURDIR)/bench/_build/ocaml-$(or $(OCAML_VERSION),default)
# An implementation that does not build (e.g. boxroot before its support
# for some OCaml version) is reported missing by run.py, not fatal.
# bench/plain's program is built apart, as a user without dune builds it
# (ocamlopt over the stubs and the library's C files: bench/plain/build.sh).
# The compiler's version goes to ocaml-version (bench/tools/per_op.py).
bench-build:
	@mkdir -p $(BENCH_BUILD_DIR) && $(TOOLCHAIN) && \
	ocamlopt -version > $(BENCH_BUILD_DIR)/ocaml-version && \
	{ dune build --profile release --build-dir $(BENCH_BUILD_DIR) @bench/all \
	  || echo "bench-build: some programs did not build; run.py reports them missing"; } && \
	{ bench/plain/build.sh $(BENCH_BUILD_DIR)/plain \
	  || echo "bench-build: bench/plain did not build; run.py reports it missing"; }

bench: bench-build
	@$(TOOLCHAIN) && python3 bench/run.py --mode quick \
	  --build $(BENCH_BUILD_DIR)/default/bench/build $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-weak

# Weak roots against strong ones and against a root holding a Weak.t
# (bench/weak/): writes bench/results/weak/results.md (weak-ocaml5.3/ on
# OCaml 5.3). OCaml 5 only: skipped, saying so, on 4.14.
bench-weak:
	@mkdir -p $(BENCH_BUILD_DIR) && $(TOOLCHAIN) && \
	if ocamlopt -version | grep -q '^4\.'; then \
	  echo "bench-weak: skipped on OCaml $$(ocamlopt -version): it needs OCaml 5 (runtime_events)"; \
	else \
	  dune build --profile release --build-dir $(BENCH_BUILD_DIR) ./bench/weak/weak_bench.exe && \
	  python3 bench/weak/run.py $(BENCH_BUILD_DIR)/default/bench/weak/weak_bench.exe $(BENCH_WEAK_ARGS); \
	fi

bench-full: bench-build
	@$(TOOLCHAIN) && python3 bench/run.py --mode full \
	  --build $(BENCH_BUILD_DIR)/default/bench/build $(BENCH_ARGS)


# Sweeps one compile-time tunable over a few values (bench/tune.py: one
# build per value under /tmp/boxroot-tune, runs interleaved, Markdown
# tables), e.g. make bench-tune TUNE_ARGS="pool-size --reps 5 --callgrind".
# Without TUNE_ARGS: lists the sweeps. Not part of `make test`.
bench-tune:
	@$(TOOLCHAIN) && python3 bench/tune.py $(or $(TUNE_ARGS),--list)
