(* Growable arrays with O(1) removal by swapping in the last element. *)
type 'a t = { mutable data : 'a array; mutable len : int }

let filler () : 'a = Obj.magic 0 (* an immediate: fine in any array *)
let create () = { data = Array.make 16 (filler ()); len = 0 }
let length v = v.len
let get v i = v.data.(i)

let push v x =
  if v.len = Array.length v.data then begin
    let d = Array.make (2 * v.len) (filler ()) in
    Array.blit v.data 0 d 0 v.len;
    v.data <- d
  end;
  v.data.(v.len) <- x;
  v.len <- v.len + 1

(* Removes element [i] and returns it; the last element takes its place. *)
let swap_remove v i =
  let x = v.data.(i) in
  v.len <- v.len - 1;
  v.data.(i) <- v.data.(v.len);
  v.data.(v.len) <- filler ();
  x

let clear v =
  Array.fill v.data 0 v.len (filler ());
  v.len <- 0
