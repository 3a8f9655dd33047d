// C++ stubs of test_cpp.ml: each exercises ocaml::Root and returns what the
// OCaml side checks. OCaml exceptions are raised only after every Root of
// the stub is destroyed (see boxroot.hpp).
#define CAML_NAME_SPACE
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caml/alloc.h>
#include <caml/memory.h>
#include <caml/minor_gc.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>

#include "boxroot.hpp"
#include "boxroot_stats.h"
#include "testing.h"

extern "C" {
value caml_gc_full_major(value unit);
value caml_gc_compaction(value unit);
}

namespace {

std::string text(long i) { return "c++ value " + std::to_string(i); }

bool holds(ocaml::Root const &r, std::string const &s) {
  value v = r.get();
  return Is_block(v) && Tag_val(v) == String_tag && caml_string_length(v) == s.size() &&
         std::memcmp(String_val(v), s.data(), s.size()) == 0;
}

long roots_alive() {
  boxroot_stats s;
  return boxroot_get_stats(&s) ? s.roots_alive : -1;
}

long purely_remote_deletions() {
  boxroot_stats s;
  return boxroot_get_stats(&s) ? s.deleted_purely_remote : -1;
}

void collect_all() {
  caml_minor_collection();
  caml_gc_full_major(Val_unit);
  caml_gc_compaction(Val_unit);
}

// The global root of cpp_store / cpp_fetch: kept across OCaml code.
std::unique_ptr<ocaml::Root> stored;

}  // namespace

extern "C" {

// Roots n young strings in a vector (moved around as it grows), collects,
// and returns how many roots do not hold their string.
value cpp_roots_survive(value n_val) {
  long n = Long_val(n_val), wrong = 0;
  {
    std::vector<ocaml::Root> roots;
    for (long i = 0; i < n; i++) roots.emplace_back(caml_copy_string(text(i).c_str()));
    caml_minor_collection();
    for (long i = 0; i < n; i++) wrong += !holds(roots[i], text(i));
    collect_all();
    for (long i = 0; i < n; i++) wrong += !holds(roots[i], text(i));
  }
  return Val_long(wrong);
}

// Whether a young string moves at a minor collection, its root following.
value cpp_root_follows_minor_gc(value unit) {
  (void)unit;
  bool ok;
  {
    caml_minor_collection();
    ocaml::Root r(caml_copy_string("young"));
    value before = r.get();
    value const *cell = r.get_ref();
    caml_minor_collection();
    ok = r.get() != before && *cell == r.get() && holds(r, "young");
  }
  return Val_bool(ok);
}

// modify: an old root made to hold young values, then collections.
value cpp_modify(value n_val) {
  long n = Long_val(n_val), wrong = 0;
  {
    std::vector<ocaml::Root> roots;
    for (long i = 0; i < n; i++) roots.emplace_back(Val_long(i));
    caml_minor_collection();
    for (long i = 0; i < n; i++) roots[i].modify(caml_copy_string(text(-i).c_str()));
    collect_all();
    for (long i = 0; i < n; i++) wrong += !holds(roots[i], text(-i));
  }
  return Val_long(wrong);
}

// Moves: move construction and assignment transfer ownership; assignment
// deletes the target's previous root; moved-from roots are empty and
// throw std::logic_error when read. Returns the number of failed checks.
value cpp_moves(value unit) {
  (void)unit;
  long failed = 0;
  long base = roots_alive();
  {
    ocaml::Root a(Val_long(1)), b(Val_long(2));
    failed += roots_alive() - base != 2;
    ocaml::Root c(std::move(a));
    failed += a || !c || c.get() != Val_long(1);
    failed += roots_alive() - base != 2;
    c = std::move(b);  // c's root (1) is deleted
    failed += roots_alive() - base != 1;
    failed += b || c.get() != Val_long(2);
    bool threw = false;
    try {
      (void)a.get();
    } catch (std::logic_error const &) {
      threw = true;
    }
    failed += !threw;
    boxroot raw = c.release();
    failed += bool(c) || roots_alive() - base != 1;
    ocaml::Root d = ocaml::Root::adopt(raw);
    failed += d.get() != Val_long(2);
  }
  failed += roots_alive() != base;
  return Val_long(failed);
}

// A C++ exception unwinding through roots deletes them all. Returns the
// number of roots left behind (0 expected).
value cpp_unwind(value n_val) {
  long n = Long_val(n_val);
  long base = roots_alive();
  try {
    std::vector<ocaml::Root> roots;
    for (long i = 0; i < n; i++) roots.emplace_back(caml_copy_string(text(i).c_str()));
    ocaml::Root extra(Val_long(5));
    throw std::runtime_error("unwinding");
  } catch (std::runtime_error const &) {
  }
  return Val_long(roots_alive() - base);
}

// Roots destroyed on threads that never held an OCaml lock. Returns the
// number of purely remote deletions observed (n expected) minus roots
// still alive.
value cpp_delete_on_other_threads(value n_val) {
  long n = Long_val(n_val);
  long base_alive = roots_alive(), base_remote = purely_remote_deletions();
  {
    std::vector<ocaml::Root> roots;
    for (long i = 0; i < n; i++) roots.emplace_back(caml_copy_string(text(i).c_str()));
    std::vector<std::thread> threads;
    long per_thread = n / 4;
    for (int t = 0; t < 4; t++) {
      std::vector<ocaml::Root> mine;
      for (long i = t * per_thread; i < (t + 1) * per_thread; i++) mine.push_back(std::move(roots[i]));
      threads.emplace_back([mine = std::move(mine)]() mutable { mine.clear(); });
    }
    caml_enter_blocking_section();
    for (auto &t : threads) t.join();
    caml_leave_blocking_section();
  }
  long remote = purely_remote_deletions() - base_remote;
  long left = roots_alive() - base_alive;
  return Val_long(remote - left);
}

// Failures throw BoxrootError with boxroot_error_string and errno, and
// leave existing roots intact. Returns the exception's message ("" if none
// was thrown), after checking the roots (a failed check gives "broken").
value cpp_failure_message(value unit) {
  CAMLparam1(unit);
  CAMLlocal1(result);
  std::string message;
  int code = 0;
  bool intact = true;
  {
    std::vector<ocaml::Root> roots;
    boxroot__testing_fail_allocations(BOXROOT__ALLOC_POOL, 0, 1);
    try {
      for (long i = 0; i < 10000000; i++) roots.emplace_back(Val_long(i));
    } catch (ocaml::BoxrootError const &e) {
      message = e.what();
      code = e.error_code();
    }
    boxroot__testing_fail_allocations(BOXROOT__ALLOC_POOL, -1, 1);
    collect_all();
    for (size_t i = 0; i < roots.size(); i++) intact = intact && roots[i].get() == Val_long(i);
  }
  if (!intact || (!message.empty() && code != ENOMEM)) message = "broken";
  result = caml_copy_string(message.c_str());
  CAMLreturn(result);
}

// A root kept between calls, across OCaml code and collections.
value cpp_store(value v) {
  stored = std::make_unique<ocaml::Root>(v);
  return Val_unit;
}

value cpp_fetch(value unit) {
  (void)unit;
  return stored->get();
}

value cpp_release_stored(value unit) {
  (void)unit;
  stored.reset();
  return Val_unit;
}

value cpp_roots_alive(value unit) {
  (void)unit;
  return Val_long(roots_alive());
}

// Weak roots: n young strings, every other one also held by a Root, all
// held by WeakRoots (in a vector that moves them as it grows). After
// full major cycles, the held ones read their string and lock into
// Roots, the others have expired; then the WeakRoots are destroyed on
// another thread. Returns how many were wrong, or -1 if weak roots are
// left over.
value cpp_weak_roots(value n_val) {
  long n = Long_val(n_val), wrong = 0;
  boxroot_stats before;
  boxroot_get_stats(&before);
  {
    std::vector<ocaml::Root> held;
    std::vector<ocaml::WeakRoot> weak;
    for (long i = 0; i < n; i++) {
      value s = caml_copy_string(text(i).c_str());
      if (i % 2 == 0) {
        held.emplace_back(s);
        weak.emplace_back(held.back());
      } else {
        weak.emplace_back(s);
      }
    }
    collect_all();
    caml_gc_full_major(Val_unit);
    for (long i = 0; i < n; i++) {
      if (i % 2 == 0) {
        std::optional<ocaml::Root> r = weak[i].lock();
        wrong += !r || !holds(*r, text(i)) || weak[i].expired();
      } else {
        wrong += !weak[i].expired() || weak[i].lock().has_value();
      }
    }
    ocaml::WeakRoot imm(Val_long(7));
    imm.modify(Val_long(8));
    wrong += imm.get() != std::optional<value>(Val_long(8));
    std::thread([w = std::move(weak)]() mutable { w.clear(); }).join();
  }
  boxroot_stats after;
  boxroot_get_stats(&after);
  if (after.weak_roots_alive != before.weak_roots_alive) return Val_long(-1);
  return Val_long(wrong);
}

// Notifying weak roots: n strings, every other one held by a Root, in a
// table of WeakRoot::notifying(s, i). After full major cycles,
// next_emptied reports exactly the others, each once, with its word and
// its table entry's handle; a third of those were destroyed before the
// drain and are not reported. Returns how many were wrong.
value cpp_notifying_weak_roots(value n_val) {
  long n = Long_val(n_val), wrong = 0;
  {
    std::vector<ocaml::Root> held;
    std::vector<ocaml::WeakRoot> table;
    for (long i = 0; i < n; i++) {
      value s = caml_copy_string(text(i).c_str());
      if (i % 2 == 0) held.emplace_back(s);
      table.push_back(ocaml::WeakRoot::notifying(s, (uintptr_t)i));
      wrong += table.back().word() != (uintptr_t)i;
    }
    collect_all();
    caml_gc_full_major(Val_unit);
    for (long i = 1; i < n; i += 6) table[i].reset();
    std::vector<int> seen(n, 0);
    while (std::optional<ocaml::Emptied> e = ocaml::WeakRoot::next_emptied()) {
      long i = (long)e->word;
      if (i < 0 || i >= n || !table[i] || table[i].handle() != e->root) { wrong++; continue; }
      seen[i]++;
      wrong += !table[i].expired();
      table[i].reset();
    }
    for (long i = 0; i < n; i++) {
      int expect = i % 2 == 1 && i % 6 != 1;
      wrong += seen[i] != expect;
    }
  }
  return Val_long(wrong);
}

}  // extern "C"
