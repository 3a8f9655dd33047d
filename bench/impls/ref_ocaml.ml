(* "OCaml (no boxing)": no C call, no root; create is the identity and
   delete does nothing. The baseline every chart is normalised to. *)
type 'a t = 'a

let name = "ocaml"
let create x = x
let get x = x
let modify _ x = x
let delete _ = ()
let pools () = -1
let stats () = ""
