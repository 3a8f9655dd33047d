use boxroot::{Root, Runtime, Value};
use std::sync::Mutex;

// OCaml values kept by Rust. A Root is Send: it can live in a static
// behind a lock, and be dropped on any thread.
static KEPT: Mutex<Vec<Root>> = Mutex::new(Vec::new());

/// `external keep : 'a -> int = "registry_keep"`: roots `v`, returns its
/// index. An OCaml value is an `isize` at the C ABI.
#[no_mangle]
pub extern "C" fn registry_keep(v: isize) -> isize {
    // SAFETY: OCaml calls this with its domain lock held and a valid value.
    unsafe {
        Runtime::assume_locked(|gc| {
            let root = Root::create(gc, Value::from_raw(v));
            let mut kept = KEPT.lock().unwrap();
            kept.push(root);
            Value::long(kept.len() as isize - 1).raw()
        })
    }
}

/// `external get : int -> 'a = "registry_get"`.
#[no_mangle]
pub extern "C" fn registry_get(i: isize) -> isize {
    // SAFETY: as above.
    unsafe {
        Runtime::assume_locked(|gc| {
            let i = Value::from_raw(i).as_long().expect("an int") as usize;
            KEPT.lock().unwrap()[i].get(gc).raw()
        })
    }
}

/// `external clear : unit -> unit = "registry_clear"`: drops every root,
/// on another thread (deleting a root needs no lock).
#[no_mangle]
pub extern "C" fn registry_clear(_unit: isize) -> isize {
    let kept = std::mem::take(&mut *KEPT.lock().unwrap());
    std::thread::spawn(move || drop(kept)).join().unwrap();
    Value::unit().raw()
}
