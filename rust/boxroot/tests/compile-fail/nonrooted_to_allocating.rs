// §4.8: "It is not possible to pass non-rooted values to allocating
// functions": h3(gc, &val, &val2) is a compilation error.
use boxroot::{alloc_tuple, caml_alloc, shared, val_long, Runtime, Value, ValueRef};

fn h3<'a>(gc: &'a mut Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
    alloc_tuple(gc, &[x, y])
}

fn example(gc: &mut Runtime) {
    let val: Value<'static> = val_long(42);
    let val2 = shared!(gc, caml_alloc(gc, 1, 0));
    h3(gc, &val, &val2); // Compilation error: good
}

fn main() {
    example(&mut Runtime::init().unwrap());
}
