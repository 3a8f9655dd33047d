// Nor can it be shared with another thread (§4.3).
use boxroot::Runtime;

fn main() {
    let gc = Runtime::init().unwrap();
    let gc = &gc;
    std::thread::scope(|s| {
        s.spawn(|| {
            let _shared: &Runtime = gc;
        });
    });
}
