// §4.8, the accepted lines, in order (shared! is §4.9.1's re-borrowing of
// the runtime for results of allocations).
use boxroot::{alloc_tuple, caml_alloc, shared, val_long, Root, Runtime, Value, ValueRef};

// ∅
fn f<'a>(x: Value<'a>, _y: Value<'a>) -> Value<'a> {
    x
}

// R
fn g2<'a>(gc: &'a Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
    let y = y.get(gc);
    if y.is_block() {
        y.field(0)
    } else {
        x.get(gc)
    }
}

// RW
fn h3<'a>(gc: &'a mut Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
    alloc_tuple(gc, &[x, y])
}

fn example(gc: &mut Runtime) {
    let val: Value<'static> = val_long(42);
    h3(gc, &val, &val);

    let val2 = shared!(gc, caml_alloc(gc, 1, 0));
    f(val, val2); // by value
    g2(gc, &val, &val2); // by reference

    let val2_root = Root::create(gc, val2);
    let val3 = shared!(gc, h3(gc, &val, &val2_root));
    g2(gc, &val3, &val2_root);

    assert_eq!(val3.field(0), val);
    assert_eq!(val3.field(1), val2_root.get(gc));
}

fn main() {
    example(&mut Runtime::init().unwrap());
}
