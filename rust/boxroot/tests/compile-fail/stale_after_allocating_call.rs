// §4.8: after rooting val2 and calling the allocating h3, "val2 is no
// longer live": g2(gc, &val, &val2) is a compilation error.
use boxroot::{alloc_tuple, caml_alloc, shared, val_long, Root, Runtime, Value, ValueRef};

fn g2<'a>(gc: &'a Runtime, x: ValueRef<'_>, _y: ValueRef<'_>) -> Value<'a> {
    x.get(gc)
}

fn h3<'a>(gc: &'a mut Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
    alloc_tuple(gc, &[x, y])
}

fn example(gc: &mut Runtime) {
    let val: Value<'static> = val_long(42);
    let val2 = shared!(gc, caml_alloc(gc, 1, 0));
    let val2_root = Root::create(gc, val2);
    let val3 = shared!(gc, h3(gc, &val, &val2_root));
    g2(gc, &val3, &val2_root);
    g2(gc, &val, &val2); // Compilation error: good
}

fn main() {
    example(&mut Runtime::init().unwrap());
}
