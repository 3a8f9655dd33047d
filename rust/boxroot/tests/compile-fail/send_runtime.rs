// The runtime capability stands for this thread's domain lock: it cannot
// be sent to another thread (§4.3).
use boxroot::Runtime;

fn main() {
    let gc = Runtime::init().unwrap();
    std::thread::spawn(move || {
        let _gc = gc;
    });
}
