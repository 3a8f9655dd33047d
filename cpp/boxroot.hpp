// C++ RAII wrapper for boxroot: `ocaml::Root` owns one boxroot.
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
// Uses the inline fast paths of boxroot.h (the directory boxroot/ must be
// on the include path). As in C, `get()` returns a non-rooted value, valid
// until the next allocation; `get_ref()` stays valid until the root is
// modified or destroyed.
//
// Calling OCaml functions that raise (caml_failwith...) while Roots are
// alive in C++ frames skips their destructors (OCaml exceptions are not
// C++ exceptions): leave the scope of every Root first.
#ifndef BOXROOT_HPP
#define BOXROOT_HPP

#include <cerrno>
#include <stdexcept>
#include <string>
#include <utility>

#include "boxroot.h"

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
  explicit Root(value v) : root_(boxroot_create(v)) {
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

}  // namespace ocaml

#endif  // BOXROOT_HPP
