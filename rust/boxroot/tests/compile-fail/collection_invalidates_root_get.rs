// The value read from a root is not rooted: a collection invalidates it,
// even though the root itself survives.
use boxroot::{alloc_string, shared, Root, Runtime};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let s = shared!(gc, alloc_string(gc, b"rooted"));
    let root = Root::create(gc, s);
    let v = root.get(gc);
    gc.minor_collection();
    println!("{:?}", v.bytes());
}
