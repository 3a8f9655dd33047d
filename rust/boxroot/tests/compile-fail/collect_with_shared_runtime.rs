// Read-only access (&Runtime, kind R of §4.7) cannot run the GC.
use boxroot::Runtime;

fn g(gc: &Runtime) {
    gc.minor_collection();
}

fn main() {
    g(&Runtime::init().unwrap());
}
