// C++ stubs for test_cpp_leaks.ml: ocaml::Roots and WeakRoots made at
// known lines, which the debug build's leak report must name
// (boxroot_debug_report_leaks). Built with -DBOXROOT_DEBUG.
#include <cstdio>
#include <vector>

#include "boxroot.hpp"

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

static std::vector<ocaml::Root> *leaked;
static std::vector<ocaml::WeakRoot> *weak_leaked;
static int leaked_line, weak_line, dropped_line;

extern "C" {

// Leaks 1000 Roots from one line and 3 WeakRoots from another; creates
// and destroys 10 Roots at a third. Returns (file, leaked line, weak
// line, dropped line).
value cpp_leaks_create(value unit) {
  CAMLparam1(unit);
  CAMLlocal1(result);
  leaked = new std::vector<ocaml::Root>;
  weak_leaked = new std::vector<ocaml::WeakRoot>;
  for (long i = 0; i < 1000; i++) {
    leaked_line = __LINE__ + 1;
    leaked->push_back(ocaml::Root(Val_long(i)));
  }
  for (long i = 0; i < 10; i++) {
    dropped_line = __LINE__ + 1;
    ocaml::Root dropped(Val_long(i));
  }
  for (long i = 0; i < 3; i++) {
    weak_line = __LINE__ + 1;
    weak_leaked->push_back(ocaml::WeakRoot(Val_long(i)));
  }
  result = caml_alloc_tuple(4);
  Store_field(result, 0, caml_copy_string(__FILE__));
  Store_field(result, 1, Val_int(leaked_line));
  Store_field(result, 2, Val_int(weak_line));
  Store_field(result, 3, Val_int(dropped_line));
  CAMLreturn(result);
}

value cpp_leaks_destroy(value unit) {
  delete leaked;
  delete weak_leaked;
  return unit;
}

// The report, into the file `path`.
value cpp_leaks_report(value path) {
  FILE *out = std::fopen(String_val(path), "w");
  if (out == nullptr) return Val_false;
  boxroot_debug_report_leaks(out);
  std::fclose(out);
  return Val_true;
}

}
