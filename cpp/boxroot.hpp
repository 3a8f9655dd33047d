// C++ RAII wrappers for boxroot: `ocaml::Root` owns one boxroot,
// `ocaml::WeakRoot` one weak boxroot (boxroot_weak, boxroot.h).
//
// Invariants:
// - a Root owns at most one boxroot (none once moved from, released or
//   reset), and deletes it exactly once, in its destructor or `reset`;
// - it is move-only: copying would delete the same boxroot twice;
// - construction and `modify` need the OCaml domain lock, like
//   boxroot_create and boxroot_modify; they throw `ocaml::BoxrootError`
//   (carrying boxroot_error_string) on failure, and a failed `modify`
//   leaves the root unchanged (strong guarantee);
// - destruction needs no lock: a Root can be destroyed on any thread,
//   including during stack unwinding.
//
// Uses the inline fast paths of boxroot.h, as <boxroot/boxroot.h>: the
// layout in which both headers are installed with the OCaml libraries
// `boxroot` and `boxroot.debug` (dune adds -I on the library's directory;
// the debug build also needs -DBOXROOT_DEBUG, as for C). In this
// repository, -I on its root. C++17.
//
// As in C, `get()` returns a non-rooted value, valid until the next
// allocation; `get_ref()` stays valid until the root is modified or
// destroyed.
//
// WeakRoot follows the same invariants, with the weak root's read
// barrier: its value is read only through `get()`, which returns
// std::nullopt once the GC has found the value dead; `lock()` makes a
// Root of a value still there (as std::weak_ptr::lock makes a
// shared_ptr). `WeakRoot::notifying` makes one that reports its
// emptying, collected by `WeakRoot::next_emptied` (an Emptied names the
// root without owning it).
//
// Calling OCaml functions that raise (caml_failwith...) while Roots are
// alive in C++ frames skips their destructors (OCaml exceptions are not
// C++ exceptions): leave the scope of every Root first.
#ifndef BOXROOT_HPP
#define BOXROOT_HPP

#include <cerrno>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <boxroot/boxroot.h>

// The debug build (BOXROOT_DEBUG) records the caller's file:line as each
// Root's and WeakRoot's creation site, for boxroot_debug_report_leaks
// (boxroot.h): the constructors take it as default arguments.
#ifdef BOXROOT_DEBUG
#if defined(__cpp_lib_source_location) || (__cplusplus >= 202002L && __has_include(<source_location>))
#include <source_location>
#define BOXROOT_HPP_SITE_PARAM , std::source_location site_ = std::source_location::current()
#define BOXROOT_HPP_SITE_FILE site_.file_name()
#define BOXROOT_HPP_SITE_LINE site_.line()
#define BOXROOT_HPP_SITE_ARGS , site_
#else
#define BOXROOT_HPP_SITE_PARAM , char const *site_file_ = __builtin_FILE(), \
    unsigned site_line_ = __builtin_LINE()
#define BOXROOT_HPP_SITE_FILE site_file_
#define BOXROOT_HPP_SITE_LINE site_line_
#define BOXROOT_HPP_SITE_ARGS , site_file_, site_line_
#endif
#define BOXROOT_HPP_CREATE(v) boxroot__debug_create_at((v), BOXROOT_HPP_SITE_FILE, \
    std::char_traits<char>::length(BOXROOT_HPP_SITE_FILE), BOXROOT_HPP_SITE_LINE)
#define BOXROOT_HPP_WEAK_CREATE(v) boxroot__debug_weak_create_at((v), BOXROOT_HPP_SITE_FILE, \
    std::char_traits<char>::length(BOXROOT_HPP_SITE_FILE), BOXROOT_HPP_SITE_LINE)
#else
#define BOXROOT_HPP_SITE_PARAM
#define BOXROOT_HPP_SITE_ARGS
#define BOXROOT_HPP_CREATE(v) boxroot_create(v)
#define BOXROOT_HPP_WEAK_CREATE(v) boxroot_weak_create(v)
#endif

namespace ocaml {

// A failed boxroot operation. what(): the operation and boxroot_error_string.
class BoxrootError : public std::runtime_error {
 public:
  BoxrootError(char const *operation, int error_code)
      : std::runtime_error(std::string(operation) + " failed: " + boxroot_error_string()),
        error_code_(error_code) {}

  // The errno value the C library set: EPERM (domain lock not held),
  // ENOMEM (no memory for a pool), ENOTSUP (boxroot torn down).
  int error_code() const noexcept { return error_code_; }

 private:
  int error_code_;
};

class Root {
 public:
  // Roots `v`. Needs the domain lock. Throws BoxrootError.
  explicit Root(value v BOXROOT_HPP_SITE_PARAM) : root_(BOXROOT_HPP_CREATE(v)) {
    if (root_ == nullptr) throw BoxrootError("boxroot_create", errno);
  }

  ~Root() { reset(); }

  Root(Root &&other) noexcept : root_(std::exchange(other.root_, nullptr)) {}

  Root &operator=(Root &&other) noexcept {
    if (this != &other) {
      reset();
      root_ = std::exchange(other.root_, nullptr);
    }
    return *this;
  }

  Root(Root const &) = delete;
  Root &operator=(Root const &) = delete;

  // The rooted value (not rooted itself). Needs the domain lock.
  // Throws std::logic_error on an empty (moved-from) Root.
  value get() const { return boxroot_get(checked("get")); }

  // The cell holding the value, updated by the GC; valid until the root is
  // modified or destroyed. Reading it needs the domain lock.
  value const *get_ref() const { return boxroot_get_ref(checked("get_ref")); }

  // Makes the root hold `v`. Needs the domain lock. Throws BoxrootError,
  // and then the root still holds its previous value.
  void modify(value v) {
    checked("modify");
    if (!boxroot_modify(&root_, v)) throw BoxrootError("boxroot_modify", errno);
  }

  // Whether this Root owns a boxroot (false once moved from).
  explicit operator bool() const noexcept { return root_ != nullptr; }

  // Deletes the boxroot now (no lock needed); the Root becomes empty.
  void reset() noexcept {
    if (root_ != nullptr) boxroot_delete(std::exchange(root_, nullptr));
  }

  // Gives up ownership, for the C API (the caller deletes it).
  boxroot release() noexcept { return std::exchange(root_, nullptr); }

  // Takes ownership of a boxroot of the C API (NULL gives an empty Root).
  static Root adopt(boxroot r) noexcept { return Root(r, adopt_tag{}); }

 private:
  struct adopt_tag {};
  Root(boxroot r, adopt_tag) noexcept : root_(r) {}

  boxroot checked(char const *operation) const {
    if (root_ == nullptr)
      throw std::logic_error(std::string("ocaml::Root::") + operation + ": empty (moved-from) root");
    return root_;
  }

  boxroot root_;
};

// A notice of a notifying weak root that the GC emptied (WeakRoot::
// next_emptied): which root, and its word. Not an owner: the root stays
// owned by its WeakRoot (compare with WeakRoot::handle()).
struct Emptied {
  boxroot_weak root;
  uintptr_t word;
};

class WeakRoot {
 public:
  // A weak root holding `v`. Needs the domain lock. Throws BoxrootError.
  explicit WeakRoot(value v BOXROOT_HPP_SITE_PARAM) : weak_(BOXROOT_HPP_WEAK_CREATE(v)) {
    if (weak_ == nullptr) throw BoxrootError("boxroot_weak_create", errno);
  }

  // A weak root holding the value of `r`. Needs the domain lock.
  explicit WeakRoot(Root const &r BOXROOT_HPP_SITE_PARAM)
      : WeakRoot(r.get() BOXROOT_HPP_SITE_ARGS) {}

  ~WeakRoot() { reset(); }

  WeakRoot(WeakRoot &&other) noexcept : weak_(std::exchange(other.weak_, nullptr)) {}

  WeakRoot &operator=(WeakRoot &&other) noexcept {
    if (this != &other) {
      reset();
      weak_ = std::exchange(other.weak_, nullptr);
    }
    return *this;
  }

  WeakRoot(WeakRoot const &) = delete;
  WeakRoot &operator=(WeakRoot const &) = delete;

  // The value (not rooted), or std::nullopt once it is dead. Needs the
  // domain lock. Throws std::logic_error on an empty (moved-from) WeakRoot.
  std::optional<value> get() const {
    value v;
    if (boxroot_weak_get(checked("get"), &v)) return v;
    return std::nullopt;
  }

  // Whether the value is gone. Needs the domain lock.
  bool expired() const { return !get().has_value(); }

  // A Root of the value if it is still there, else std::nullopt. Needs
  // the domain lock. Throws BoxrootError if the root cannot be created.
  std::optional<Root> lock() const {
    std::optional<value> v = get();
    if (!v) return std::nullopt;
    return std::optional<Root>(std::in_place, *v);
  }

  // Makes the weak root hold `v`. Needs the domain lock. Throws
  // BoxrootError, and then the weak root is unchanged.
  void modify(value v) {
    checked("modify");
    if (!boxroot_weak_modify(&weak_, v)) throw BoxrootError("boxroot_weak_modify", errno);
  }

  // Whether this WeakRoot owns a weak boxroot (false once moved from).
  explicit operator bool() const noexcept { return weak_ != nullptr; }

  // Deletes the weak boxroot now (no lock needed); the WeakRoot becomes
  // empty.
  void reset() noexcept {
    if (weak_ != nullptr) boxroot_weak_delete(std::exchange(weak_, nullptr));
  }

  // Gives up ownership, for the C API (the caller deletes it).
  boxroot_weak release() noexcept { return std::exchange(weak_, nullptr); }

  // Takes ownership of a weak boxroot of the C API (NULL: empty).
  static WeakRoot adopt(boxroot_weak w) noexcept { return WeakRoot(w, adopt_tag{}); }

  // A notifying weak root holding `v` (boxroot_weak_create_notifying,
  // boxroot.h): when the GC empties it, next_emptied() reports it with
  // `word`. Needs the domain lock. Throws BoxrootError.
  static WeakRoot notifying(value v, uintptr_t word) {
    boxroot_weak w = boxroot_weak_create_notifying(v, word);
    if (w == nullptr) throw BoxrootError("boxroot_weak_create_notifying", errno);
    return WeakRoot(w, adopt_tag{});
  }

  // The next notifying weak root of this domain that the GC emptied, or
  // std::nullopt once there is none. Each emptying is reported once; a
  // root destroyed, or refilled by modify(), before its notice comes is
  // not reported. Needs the domain lock.
  static std::optional<Emptied> next_emptied() {
    Emptied e;
    if (boxroot_weak_next_emptied(&e.root, &e.word)) return e;
    return std::nullopt;
  }

  // The word of a notifying root (0 for another weak root; the debug
  // build aborts). Any thread.
  uintptr_t word() const { return boxroot_weak_notifying_word(checked("word")); }

  // The weak boxroot, still owned by this WeakRoot (nullptr if empty): to
  // compare with Emptied::root.
  boxroot_weak handle() const noexcept { return weak_; }

 private:
  struct adopt_tag {};
  WeakRoot(boxroot_weak w, adopt_tag) noexcept : weak_(w) {}

  boxroot_weak checked(char const *operation) const {
    if (weak_ == nullptr)
      throw std::logic_error(std::string("ocaml::WeakRoot::") + operation +
                             ": empty (moved-from) weak root");
    return weak_;
  }

  boxroot_weak weak_;
};

}  // namespace ocaml

#endif  // BOXROOT_HPP
