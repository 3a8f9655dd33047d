// While the lock is released, the runtime cannot be used.
use boxroot::{alloc_string, Runtime};

fn main() {
    let mut runtime = Runtime::init().unwrap();
    let gc = &mut runtime;
    gc.release_lock(|| {
        alloc_string(gc, b"no lock");
    });
}
