// §4.5.1 and §4.6.1: allocating functions that take owned roots, borrowed
// roots, or references of any kind; roots stored in containers and
// returned from functions.
use boxroot::{alloc_string, alloc_tuple, shared, val_long, Root, Runtime, Value, ValueRef};

// Takes ownership of its rooted arguments.
fn h<'a>(gc: &'a mut Runtime, x: Root, y: Root) -> Value<'a> {
    alloc_tuple(gc, &[&x, &y])
}

// Takes references: roots, immediates and static values alike.
fn h3<'a>(gc: &'a mut Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
    alloc_tuple(gc, &[x, y])
}

// Returns a root: it outlives every allocation of the caller.
fn make(gc: &mut Runtime, text: &str) -> Root {
    let s = shared!(gc, alloc_string(gc, text.as_bytes()));
    Root::create(gc, s)
}

struct Pair {
    left: Root,
    right: Root,
}

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let roots: Vec<Root> = (0..10).map(|i| make(gc, &i.to_string())).collect();
    let pair = Pair { left: make(gc, "l"), right: make(gc, "r") };
    let t = shared!(gc, h3(gc, &roots[3], &pair.left));
    let t = Root::create(gc, t);
    let u = shared!(gc, h3(gc, &t, &val_long(5)));
    assert_eq!(u.field(0).field(0).bytes().unwrap(), b"3");
    let _v = h(gc, pair.left, pair.right);
    gc.minor_collection();
    assert_eq!(t.get(gc).field(1).bytes().unwrap(), b"l");
}
