// A reference into a heap block lives no longer than the block's value.
use boxroot::{alloc_tuple, shared, val_long, Runtime};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let pair = shared!(gc, alloc_tuple(gc, &[&val_long(1), &val_long(2)]));
    let first = pair.field_ref(0);
    gc.full_major();
    println!("{:?}", first.get(gc));
}
