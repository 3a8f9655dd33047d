// Without shared!, the result of an allocation borrows the runtime mutably:
// a second allocation is rejected while it lives (E0499).
use boxroot::{alloc_string, Runtime};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let s = alloc_string(gc, b"young");
    let _t = alloc_string(gc, b"may move or free s");
    println!("{:?}", s.bytes());
}
