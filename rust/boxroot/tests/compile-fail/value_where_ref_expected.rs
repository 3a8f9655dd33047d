// §4.8: forgetting to pass references: "expected `&ValueCell`, found
// `Value`", with the hint to borrow.
use boxroot::{alloc_tuple, val_long, Runtime, Value, ValueRef};

fn h3<'a>(gc: &'a mut Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
    alloc_tuple(gc, &[x, y])
}

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let val: Value<'static> = val_long(42);
    h3(gc, val, val);
}
