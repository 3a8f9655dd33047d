#include <vector>
#include <caml/mlvalues.h>
#include <caml/fail.h>
#include <boxroot/boxroot.hpp>

// OCaml values kept in a C++ container: each ocaml::Root roots one value
// and deletes its boxroot when destroyed.
static std::vector<ocaml::Root> history;

extern "C" value history_push(value v)
{
  bool rooted = true;
  try {
    history.emplace_back(v);
  } catch (ocaml::BoxrootError const &) {
    rooted = false;
  }
  // Raise once the C++ exception is over: an OCaml exception does not
  // unwind C++ frames.
  if (!rooted) caml_failwith(boxroot_error_string());
  return Val_unit;
}

extern "C" value history_get(value i)
{
  if (Long_val(i) < 0 || (size_t)Long_val(i) >= history.size())
    caml_invalid_argument("history_get");
  return history[Long_val(i)].get();
}

extern "C" value history_clear(value)
{
  history.clear();
  return Val_unit;
}
