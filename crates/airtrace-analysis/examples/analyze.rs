//! Analyse capture files and print the connection count and speed: the Rust-only
//! path of `airtrace analyze`, for profiling.
//!
//! `cargo run --release -p airtrace-analysis --example analyze -- FILE...`; with
//! `THREADS=N` in the environment, the summary path on N threads
//! (`analyze_file_sharded`), and the report's JSON is printed too if `JSON=1`.

use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let started = Instant::now();
        let threads = std::env::var("THREADS").ok().and_then(|t| t.parse().ok());
        let result = match threads {
            Some(n) => {
                airtrace_analysis::analyze_file_sharded(path.as_ref(), &path, n, &mut |_, _| {})
            }
            None => airtrace_analysis::analyze_file(path.as_ref(), &mut (), &mut |_, _| {}),
        };
        match result {
            Ok(r) => {
                if std::env::var_os("JSON").is_some() {
                    println!("{}", serde_json::to_string(&r).expect("JSON"));
                }
                let s = started.elapsed().as_secs_f64();
                println!(
                    "{path}: {} frames, {} connections, {s:.3} s, {:.2} M frames/s",
                    r.frames,
                    r.connections.len(),
                    r.frames as f64 / s / 1e6
                );
            }
            Err(e) => eprintln!("{e}"),
        }
    }
}
