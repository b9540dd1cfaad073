//! Analyse capture files and print the connection count and speed: the Rust-only
//! path of `airtrace analyze`, for profiling.
//!
//! `cargo run --release -p airtrace-analysis --example analyze -- FILE...`

use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let started = Instant::now();
        match airtrace_analysis::analyze_file(path.as_ref(), &mut (), &mut |_, _| {}) {
            Ok(r) => {
                let s = started.elapsed().as_secs_f64();
                println!("{path}: {} frames, {} connections, {s:.3} s, {:.2} M frames/s", r.frames, r.connections.len(), r.frames as f64 / s / 1e6);
            }
            Err(e) => eprintln!("{e}"),
        }
    }
}
