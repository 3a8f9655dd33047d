(* Linking systhreads installs their scanning hook before ours. *)
let () = ignore (Thread.self ()); Many_pools.run "systhreads"
