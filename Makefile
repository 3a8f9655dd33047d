# boxroot: top-level entry points. Each target finds or builds the OCaml
# toolchain first (tools/toolchain.sh; ~4 minutes once, then cached under
# ~/.cache/boxroot). OCAML_VERSION=4.14 selects OCaml 4.14.1.
SHELL := /bin/bash
TOOLCHAIN := eval "$$(tools/toolchain.sh)"
# Sanitized runs: the runtime frees its memory at exit (c=1) so that only
# real leaks are reported.
SAN_ENV := OCAMLRUNPARAM=c=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TEST_EXES := boxroot/test/test_model.exe boxroot/test/test_failures.exe

.PHONY: all build test test-c test-asan test-valgrind toolchain clean bench bench-full bench-build

all: build

toolchain:
	@$(TOOLCHAIN) && ocamlfind ocamlopt -version 2>/dev/null || ocamlopt -version

build:
	@$(TOOLCHAIN) && dune build

# The whole test suite (what CI runs).
test: test-c

# The C library's tests, driven from OCaml.
test-c:
	@$(TOOLCHAIN) && dune build @runtest --force

# The same tests with ASan + UBSan (fails on any report or leak).
test-asan:
	@$(TOOLCHAIN) && dune build --profile asan $(TEST_EXES:%=./%) && \
	for t in $(TEST_EXES); do \
	  echo "== asan: $$t"; BOXROOT_TEST_OPS=$${BOXROOT_TEST_OPS:-300000} \
	  $(SAN_ENV) ./_build/default/$$t || exit 1; done

# The same tests under valgrind's memcheck (fails on errors or leaks).
test-valgrind:
	@$(TOOLCHAIN) && dune build $(TEST_EXES:%=./%) && \
	for t in $(TEST_EXES); do \
	  echo "== valgrind: $$t"; BOXROOT_TEST_OPS=$${BOXROOT_TEST_OPS:-100000} OCAMLRUNPARAM=c=1 \
	  valgrind --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite \
	    --show-leak-kinds=definite -q ./_build/default/$$t || exit 1; done

clean:
	dune clean 2>/dev/null || rm -rf _build

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
bench-build:
	@mkdir -p $(BENCH_BUILD_DIR) && $(TOOLCHAIN) && \
	{ dune build --profile release --build-dir $(BENCH_BUILD_DIR) @bench/all \
	  || echo "bench-build: some programs did not build; run.py reports them missing"; }

bench: bench-build
	@$(TOOLCHAIN) && python3 bench/run.py --mode quick \
	  --build $(BENCH_BUILD_DIR)/default/bench/build $(BENCH_ARGS)

bench-full: bench-build
	@$(TOOLCHAIN) && python3 bench/run.py --mode full \
	  --build $(BENCH_BUILD_DIR)/default/bench/build $(BENCH_ARGS)

