(* synthetic: roots created and deleted with the probabilities of the
   ocaml-boxroot README's synthetic benchmark, on top of a GC workload
   with its own promotion and survival.

   The program runs 2^n "generations"; each ends with one minor
   collection (forced, after allocating about 90% of the minor heap, so
   that every parameter below is "per minor collection" as specified):
   - small_roots roots per generation hold values just allocated in the
     minor heap; each survives its generation with probability
     small_root_promotion_rate, otherwise it is deleted soon after its
     creation (after SHORT_LIFE more root creations);
   - large_roots roots per generation hold blocks too large for the minor
     heap; each survives its generation w.p. large_root_promotion_rate;
   - a root that survived its first minor collection survives each
     following one w.p. root_survival_rate;
   - every GC-tracked value allocated is kept until the minor collection
     w.p. gc_promotion_rate, and then survives each following one w.p.
     gc_survival_rate.
   Every value read back through a root goes into a checksum, identical
   for every implementation. *)
open Harness

let short_life = 32
let large_size = 300 (* words: above Max_young_wosize (256) *)

let () =
  let n = arg_int "n" 8 in
  let small_roots = arg_int "small_roots" 10_000 in
  let large_roots = arg_int "large_roots" 20 in
  let small_promo = arg_float "small_root_promotion_rate" 0.2 in
  let large_promo = arg_float "large_root_promotion_rate" 1.0 in
  let root_survival = arg_float "root_survival_rate" 0.99 in
  let gc_promo = arg_float "gc_promotion_rate" 0.1 in
  let gc_survival = arg_float "gc_survival_rate" 0.5 in
  let rng = Rng.make 42 in
  (* Small values are 3 words (header + 2 fields). *)
  let steps = (Gc.get ()).Gc.minor_heap_size * 9 / 10 / 3 in
  let small_every = max 1 (steps / small_roots) in
  let large_every = max 1 (steps / large_roots) in
  let checksum = ref 0 in
  let take r =
    let a : int array = Ref.get r in
    checksum := (!checksum + a.(0) + a.(1)) land 0x3FFF_FFFF;
    Ref.delete r
  in
  let old_roots = Vec.create () and gen_roots = Vec.create () in
  let old_values = Vec.create () and gen_values = Vec.create () in
  let short = Array.make short_life (Vec.filler ()) and short_used = Array.make short_life false in
  let short_next = ref 0 in
  let add_short r =
    let i = !short_next in
    if short_used.(i) then take short.(i);
    short.(i) <- r;
    short_used.(i) <- true;
    short_next := (i + 1) mod short_life
  in
  (* Deletes about (1 - rate) of [v], chosen at random. *)
  let kill v rate release =
    let expected = float_of_int (Vec.length v) *. (1. -. rate) in
    let deaths = int_of_float expected + if Rng.chance rng (Float.rem expected 1.) then 1 else 0 in
    for _ = 1 to min deaths (Vec.length v) do
      release (Vec.swap_remove v (Rng.int rng (Vec.length v)))
    done
  in
  let transfer src dst =
    for i = 0 to Vec.length src - 1 do Vec.push dst (Vec.get src i) done;
    Vec.clear src
  in
  let generation g =
    for i = 0 to steps - 1 do
      let v = [| i; g |] in
      if Rng.chance rng gc_promo then Vec.push gen_values v;
      if i mod small_every = 0 then begin
        let r = Ref.create v in
        if Rng.chance rng small_promo then Vec.push gen_roots r else add_short r
      end;
      if i mod large_every = 0 then begin
        let big = Array.make large_size g in
        big.(0) <- i;
        let r = Ref.create big in
        if Rng.chance rng large_promo then Vec.push gen_roots r else add_short r
      end
    done;
    Array.iteri (fun i used -> if used then (take short.(i); short_used.(i) <- false)) short_used;
    kill old_roots root_survival take;
    transfer gen_roots old_roots;
    kill old_values gc_survival ignore;
    transfer gen_values old_values;
    Gc.minor ()
  in
  let (), m = measure (fun () -> for g = 1 to 1 lsl n do generation g done) in
  let alive = Vec.length old_roots in
  for i = 0 to alive - 1 do take (Vec.get old_roots i) done;
  report ~bench:"synthetic" ~impl:Ref.name ~case:(Printf.sprintf "n=%d" n)
    (measure_fields m
    @ [ ("pools", string_of_int (Ref.pools ())); ("roots_alive_at_end", string_of_int alive);
        ("check", string_of_int !checksum) ])
