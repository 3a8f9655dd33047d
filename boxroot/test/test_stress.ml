(* Stress test: roots crossing domains and threads.

   Several domains (OCaml 5; one on OCaml 4.14), each running several
   systhreads ("workers"), create roots, check them, modify and delete
   them, and send them through mailboxes to other workers, which check,
   modify and delete them there (remote-domain deletions, modifications
   of roots owned by another domain). Workers also delete roots from
   blocking sections, and hand roots to plain C threads that the runtime
   never saw (stress_stubs.c), which delete them with no lock at all,
   while collections run. Workers force minor and major collections and
   compactions throughout.

   Values are checked as in test_model (checked_values.ml): each root
   travels with the description of its value, held by the root alone;
   released values must be collected. At the end: every root checked and
   deleted, the deletion counters match what was done, and nothing is
   left in use or orphaned.

   With BOXROOT_STRESS_CHURN=1 (make test-soak), the main thread also
   spawns short-lived domains (threads on OCaml 4.14) throughout: each
   creates, checks, modifies and deletes roots, forces collections and
   major slices, hands some roots to the workers and ends, so that its
   pools are orphaned and adopted, often during marking; and it reads
   the statistics while everything runs.

   BOXROOT_STRESS_SECONDS: duration (default 3). BOXROOT_STRESS_DOMAINS
   (default 3), BOXROOT_STRESS_THREADS (workers per domain, default 3),
   BOXROOT_TEST_SEED. *)
open Boxroot_test
module V = Checked_values

external deleters_start : int -> unit = "stress_deleters_start"
external delete_later : root -> unit = "stress_delete_later"
external deleters_stop : unit -> int = "stress_deleters_stop"
external delete_in_steps_unlocked : root array -> int -> unit
  = "stress_delete_in_steps_unlocked"
external collection_done : unit -> unit = "stress_collection_done"

let seconds =
  match Sys.getenv_opt "BOXROOT_STRESS_SECONDS" with
  | Some s -> (try float_of_string s with _ -> 3.) | None -> 3.
let seed = env_int "BOXROOT_TEST_SEED" 42
let ndomains = if Par.kind = "domains" then env_int "BOXROOT_STRESS_DOMAINS" 3 else 1
let threads_per_domain = env_int "BOXROOT_STRESS_THREADS" 3
let c_deleters = 2
let nworkers = ndomains * threads_per_domain
let held_max = 2_000 (* roots a worker holds at most *)
(* A collection every this many operations (on average) per worker. *)
let ops_per_collection = 3_000

type mailbox = { lock : Mutex.t; queue : V.item Queue.t }
let mailboxes = Array.init nworkers (fun _ -> { lock = Mutex.create (); queue = Queue.create () })

let post w it =
  let mb = mailboxes.(w) in
  Mutex.lock mb.lock;
  Queue.push it mb.queue;
  Mutex.unlock mb.lock

let take_all w =
  let mb = mailboxes.(w) in
  Mutex.lock mb.lock;
  let items = List.of_seq (Queue.to_seq mb.queue) in
  Queue.clear mb.queue;
  Mutex.unlock mb.lock;
  items

let stop = Atomic.make false

type counts = {
  mutable ops : int; mutable created : int; mutable modified : int;
  mutable deleted : int; mutable deleted_unlocked : int; mutable sent : int;
  mutable received : int; mutable to_c : int; mutable checked : int;
  mutable wrong : int; mutable minors : int; mutable majors : int;
  mutable compactions : int;
}

let new_counts () = {
  ops = 0; created = 0; modified = 0; deleted = 0; deleted_unlocked = 0;
  sent = 0; received = 0; to_c = 0; checked = 0; wrong = 0; minors = 0;
  majors = 0; compactions = 0 }

type result = { w : int; c : counts; released : V.Released.t; kept : V.item list }

let worker w () =
  let rng = Random.State.make [| seed; w |] and counter = ref 0 in
  let c = new_counts () and released = V.Released.create () in
  let held = Array.make held_max None and nheld = ref 0 in
  let verify (it : V.item) =
    c.checked <- c.checked + 1;
    if not (V.holds (get it.root) it.expect) then begin
      c.wrong <- c.wrong + 1;
      if c.wrong <= 5 then
        Printf.printf "worker %d: root does not hold %s\n%!" w (V.describe it.expect)
    end in
  let pop_random () =
    let i = Random.State.int rng !nheld in
    let it = Option.get held.(i) in
    decr nheld;
    held.(i) <- held.(!nheld);
    held.(!nheld) <- None;
    it in
  let delete_one (it : V.item) =
    verify it;
    V.Released.add released it;
    if Random.State.int rng 8 = 0 then begin
      delete_unlocked it.root;
      c.deleted_unlocked <- c.deleted_unlocked + 1
    end else begin
      delete it.root;
      c.deleted <- c.deleted + 1
    end in
  let keep it =
    if !nheld = held_max then delete_one (pop_random ());
    held.(!nheld) <- Some it;
    incr nheld in
  while not (Atomic.get stop) do
    c.ops <- c.ops + 1;
    let op = Random.State.int rng 1000 in
    if op < 250 || !nheld = 0 then begin
      keep (V.create rng ~worker:w ~counter);
      c.created <- c.created + 1
    end else if op < 400 then begin
      verify (Option.get held.(Random.State.int rng !nheld))
    end else if op < 500 then begin
      let it = pop_random () in
      verify it;
      V.Released.add released it;
      let expect = V.random_expected rng ~worker:w ~counter in
      keep { V.root = modify it.root (V.make expect); expect };
      c.modified <- c.modified + 1
    end else if op < 620 then delete_one (pop_random ())
    else if op < 740 then begin
      let it = pop_random () in
      verify it;
      post ((w + 1 + Random.State.int rng (nworkers - 1)) mod nworkers) it;
      c.sent <- c.sent + 1
    end else if op < 800 then begin
      let it = pop_random () in
      verify it;
      V.Released.add released it;
      delete_later it.root;
      c.to_c <- c.to_c + 1
    end else if op < 998 then
      List.iter (fun it -> verify it; c.received <- c.received + 1; keep it) (take_all w)
    else Thread.yield ();
    if Random.State.int rng ops_per_collection = 0 then begin
      let k = Random.State.int rng 1000 in
      if k < 850 then (Gc.minor (); c.minors <- c.minors + 1)
      else if k < 985 then (Gc.full_major (); c.majors <- c.majors + 1)
      else (Gc.compact (); c.compactions <- c.compactions + 1)
    end
  done;
  let kept = List.init !nheld (fun i -> Option.get held.(i)) in
  { w; c; released; kept }

(* The workers of domain [d], as systhreads of the calling domain. *)
let run_domain d () =
  let results = Array.make threads_per_domain None in
  let ts = List.init threads_per_domain (fun t ->
      Thread.create (fun () ->
          results.(t) <- Some (worker (d * threads_per_domain + t) ())) ()) in
  List.iter Thread.join ts;
  Array.to_list (Array.map Option.get results)

let stat f = match Boxroot.stats () with Some s -> f s | None -> -1

(* A domain (a thread on OCaml 4.14) holds roots to young values, and
   deletes half of them from a blocking section, in steps between which
   the main domain forces a collection: its pools are scanned on its
   behalf (by its backup thread on OCaml 5) while these deletions land. *)
let blocked_owner_is_scanned () =
  let n = 20_000 and steps = 20 and counter = ref 0 in
  let in_blocking = Atomic.make false and done_ = Atomic.make false in
  let task = Par.spawn (fun () ->
      let rng = Random.State.make [| seed |] in
      let items = Array.init n (fun _ -> V.create rng ~worker:1000 ~counter) in
      let doomed = Array.init (n / 2) (fun i -> items.(2 * i)) in
      let rel = V.Released.create ~size:(n / 2) () in
      Array.iter (V.Released.add rel) doomed;
      Atomic.set in_blocking true;
      delete_in_steps_unlocked (Array.map (fun (it : V.item) -> it.root) doomed) steps;
      Atomic.set done_ true;
      let kept = Array.init (n / 2) (fun i -> items.(2 * i + 1)) in
      (kept, rel)) in
  while not (Atomic.get in_blocking) do Thread.yield () done;
  let gcs = ref 0 in
  while not (Atomic.get done_) do
    if !gcs mod 4 = 3 then Gc.full_major () else Gc.minor ();
    incr gcs;
    collection_done ()
  done;
  let kept, rel = Par.join task in
  Gc.full_major ();
  Gc.full_major ();
  let wrong = Array.fold_left (fun acc (it : V.item) ->
      if V.holds (get it.root) it.expect then acc else acc + 1) 0 kept in
  check (wrong = 0) "owner in a blocking section: %d roots lost their value" wrong;
  let alive = V.Released.still_alive rel in
  check (alive = 0) "owner in a blocking section: %d deleted values still alive" alive;
  Array.iter (fun (it : V.item) -> delete it.root) kept;
  Printf.printf "test_stress: %d collections while a root owner was in a blocking section\n%!" !gcs;
  Array.length kept (* as many deletions made with no lock *)

(* A short-lived domain (BOXROOT_STRESS_CHURN): returns the values it
   released and how many roots it handed to the workers. *)
let churner j () =
  let rng = Random.State.make [| seed; 7919; j |] and counter = ref 0 in
  let released = V.Released.create () in
  let items = Array.init (1 + Random.State.int rng 3_000)
      (fun _ -> V.create rng ~worker:(10_000 + j) ~counter) in
  let sent = ref 0 in
  Array.iteri (fun i (it : V.item) ->
      if not (V.holds (get it.root) it.expect) then
        check false "churner %d: root does not hold %s" j (V.describe it.expect);
      match Random.State.int rng 8 with
      | 0 | 1 | 2 -> post (Random.State.int rng nworkers) it; incr sent
      | 3 ->
        V.Released.add released it;
        let expect = V.random_expected rng ~worker:(10_000 + j) ~counter in
        let it' = { V.root = modify it.root (V.make expect); expect } in
        post (Random.State.int rng nworkers) it'; incr sent
      | _ -> V.Released.add released it; delete it.root;
        if i mod 500 = 0 then ignore (Gc.major_slice 0))
    items;
  (match Random.State.int rng 4 with
   | 0 -> Gc.minor () | 1 -> ignore (Gc.major_slice 0) | 2 -> Gc.full_major () | _ -> ());
  (released, !sent)

(* Spawns churners one after the other until [stop]; reads the
   statistics in between. *)
let churn_until_stop () =
  let results = ref [] and j = ref 0 in
  while not (Atomic.get stop) do
    incr j;
    results := Par.join (Par.spawn (churner !j)) :: !results;
    (match Boxroot.stats () with
     | Some st -> check (st.Boxroot.slots_in_use >= 0 && st.pools_young >= 0)
                    "statistics during churn: %d slots in use" st.slots_in_use
     | None -> check false "no statistics during churn")
  done;
  !results

let sum results f = List.fold_left (fun acc r -> acc + f r.c) 0 results

let () =
  Printf.printf "test_stress: %.1f s, %d domain(s) x %d systhreads, %d C deleter threads, seed %d\n%!"
    seconds ndomains threads_per_domain c_deleters seed;
  delete (create (ref 0)); (* sets boxroot up *)
  let purely_remote_before = stat (fun s -> s.deleted_purely_remote) in
  deleters_start c_deleters;
  let others = List.init (ndomains - 1) (fun d -> Par.spawn (run_domain (d + 1))) in
  let mine = ref [] in
  let my_workers = Thread.create (fun () -> mine := run_domain 0 ()) () in
  let churned =
    if env_int "BOXROOT_STRESS_CHURN" 0 = 1 then begin
      let timer = Thread.create (fun () -> Thread.delay seconds; Atomic.set stop true) () in
      let r = churn_until_stop () in
      Thread.join timer;
      r
    end else begin
      Thread.delay seconds;
      Atomic.set stop true;
      []
    end in
  Thread.join my_workers;
  let results = !mine @ List.concat_map Par.join others in
  (* Every root still held or in a mailbox: checked and deleted here. *)
  let leftovers = List.concat_map (fun r -> r.kept) results
                  @ List.concat (List.init nworkers take_all) in
  let final_released = V.Released.create ~size:(1 + List.length leftovers) () in
  let wrong_at_end = ref 0 in
  List.iter (fun (it : V.item) ->
      if not (V.holds (get it.root) it.expect) then incr wrong_at_end;
      V.Released.add final_released it;
      delete it.root) leftovers;
  let c_deleted = deleters_stop () in
  let deleted_while_blocked = blocked_owner_is_scanned () in
  Gc.full_major ();
  Gc.full_major ();
  let total f = sum results f in
  check (total (fun c -> c.wrong) = 0) "%d roots held a wrong value" (total (fun c -> c.wrong));
  check (!wrong_at_end = 0) "%d roots held a wrong value at the end" !wrong_at_end;
  check (total (fun c -> c.checked) > 0) "nothing checked";
  check (c_deleted = total (fun c -> c.to_c))
    "C threads deleted %d roots, %d were handed to them" c_deleted (total (fun c -> c.to_c));
  let purely_remote = stat (fun s -> s.deleted_purely_remote) - purely_remote_before in
  let made_unlocked = total (fun c -> c.to_c + c.deleted_unlocked) + deleted_while_blocked in
  check (purely_remote = made_unlocked)
    "%d deletions counted as holding no lock, %d were made so" purely_remote made_unlocked;
  List.iter (fun r ->
      let n = V.Released.still_alive r.released in
      check (n = 0) "worker %d: %d released values still alive" r.w n) results;
  let n = V.Released.still_alive final_released in
  check (n = 0) "%d values released at the end still alive" n;
  List.iteri (fun j (rel, _) ->
      let n = V.Released.still_alive rel in
      check (n = 0) "churner %d: %d released values still alive" j n) churned;
  if churned <> [] then
    Printf.printf "test_stress: %d short-lived %s handed %d roots to the workers\n"
      (List.length churned) Par.kind (List.fold_left (fun a (_, k) -> a + k) 0 churned);
  check (stat (fun s -> s.roots_alive) = 0) "roots alive at the end: %d" (stat (fun s -> s.roots_alive));
  check (stat (fun s -> s.slots_in_use) = 0) "slots in use at the end: %d" (stat (fun s -> s.slots_in_use));
  check (stat (fun s -> s.pools_orphaned) = 0) "pools orphaned at the end: %d"
    (stat (fun s -> s.pools_orphaned));
  Printf.printf "test_stress: %d ops: %d created, %d modified, %d deleted (%d from blocking \
                 sections, %d by C threads), %d sent, %d received, %d checks; \
                 %d minor, %d major collections, %d compactions forced\n"
    (total (fun c -> c.ops)) (total (fun c -> c.created)) (total (fun c -> c.modified))
    (total (fun c -> c.deleted + c.deleted_unlocked) + c_deleted)
    (total (fun c -> c.deleted_unlocked)) c_deleted (total (fun c -> c.sent))
    (total (fun c -> c.received)) (total (fun c -> c.checked))
    (total (fun c -> c.minors)) (total (fun c -> c.majors)) (total (fun c -> c.compactions));
  print_stats ();
  finish "test_stress"
