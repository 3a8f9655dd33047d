// Roots are Send and Sync (§4.5): moved to another thread and dropped
// there, shared through an Arc, without any lock on the other side.
use boxroot::{alloc_string, shared, Root, Runtime};
use std::sync::Arc;

fn assert_send_sync<T: Send + Sync>() {}

fn main() {
    assert_send_sync::<Root>();
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let s = shared!(gc, alloc_string(gc, b"travels"));
    let moved = Root::create(gc, s);
    let shared_root = Arc::new(Root::create(gc, s));
    let other = Arc::clone(&shared_root);
    std::thread::spawn(move || {
        let _ = other.get_ref();
        drop(moved);
    })
    .join()
    .unwrap();
    gc.full_major();
    assert_eq!(shared_root.get(gc).bytes().unwrap(), b"travels");
}
