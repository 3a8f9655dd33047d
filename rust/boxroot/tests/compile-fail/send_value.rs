// A non-rooted value borrows the runtime, so it cannot go to another thread
// either (a Root can).
use boxroot::{alloc_string, shared, Runtime};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    let s = shared!(gc, alloc_string(gc, b"stays here"));
    std::thread::scope(|scope| {
        scope.spawn(move || s.raw());
    });
}
