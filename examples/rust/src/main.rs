use boxroot::{alloc_string, shared, Root, Runtime};

fn main() {
    // Starts OCaml: this thread then holds the domain lock.
    let mut runtime = Runtime::init().expect("OCaml runtime");
    let gc = &mut runtime;
    // Allocating takes `&mut Runtime`; `shared!` lends it out immutably
    // again, so that the new value can be rooted.
    let greeting = shared!(gc, alloc_string(gc, b"hello from the OCaml heap"));
    let root = Root::create(gc, greeting);
    gc.compact(); // moves the string: the root follows it
    let bytes = root.get(gc).bytes().expect("a string");
    println!("{}", String::from_utf8_lossy(&bytes));
    // A Root can be dropped on any thread, without the lock.
    std::thread::spawn(move || drop(root)).join().unwrap();
}
