; The C compiler flags of the boxroot library: the one set used by both
; builds of it, dune's (boxroot/dune, boxroot/debug/dune, on top of
; OCaml's own C flags, dune's :standard) and cargo's
; (rust/ocaml-boxroot-sys/build.rs, which adds the same OCaml flags from
; `ocamlopt -config-var ocamlc_cflags` and `ocamlc_cppflags`).
; One atom per flag, no quoting: build.rs reads this file as a plain list.
(-O2 -std=gnu11 -Wall -Wextra -fno-strict-aliasing)
