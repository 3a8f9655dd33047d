let () = Many_pools.run "no systhreads"
