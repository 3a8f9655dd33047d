(* Parallel tasks on OCaml 5: domains. *)
let kind = "domains"
type 'a t = 'a Domain.t
let spawn = Domain.spawn
let join = Domain.join
let relax = Domain.cpu_relax
