// The value read from a weak root is not rooted (nor kept by the weak
// root): a collection invalidates it.
use boxroot::{alloc_string, shared, Runtime, Weak};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let s = shared!(gc, alloc_string(gc, b"weakly held"));
    let weak = Weak::create(gc, s);
    let v = weak.get(gc).unwrap();
    gc.minor_collection();
    println!("{:?}", v.bytes());
}
