// A non-rooted value cannot be used after an allocation (§4.2.1, §4.4).
use boxroot::{alloc_string, shared, Runtime};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let s = shared!(gc, alloc_string(gc, b"young"));
    let _t = alloc_string(gc, b"may move or free s");
    println!("{:?}", s.bytes());
}
