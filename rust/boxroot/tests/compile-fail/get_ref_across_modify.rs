// modify may move the root's cell: no reference to the cell survives it.
use boxroot::{val_long, Root, Runtime};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let mut root = Root::create(gc, val_long(1));
    let cell = root.get_ref();
    root.modify(gc, val_long(2));
    println!("{:?}", cell.get(gc));
}
