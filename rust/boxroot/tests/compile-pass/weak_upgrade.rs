// A weak root's value, upgraded to a root, survives allocations; the weak
// root and the root cross threads.
use boxroot::{alloc_string, shared, Root, Runtime, Weak};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let s = shared!(gc, alloc_string(gc, b"held"));
    let root = Root::create(gc, s);
    let weak: Weak = root.downgrade(gc);
    let up = weak.upgrade(gc).expect("held by a root");
    gc.full_major();
    assert_eq!(up.get(gc).bytes().as_deref(), Some(&b"held"[..]));
    std::thread::spawn(move || drop((weak, up))).join().unwrap();
    drop(root);
}
