//! Counts the records and captured bytes of capture files, and how fast they were read.
//!
//! ```text
//! cargo run --release -p airtrace-pcap --example count -- FILE...
//! ```
//!
//! Make a big file to time with the `make_capture` example.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use airtrace_pcap::CaptureReader;

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for path in std::env::args().skip(1) {
        let start = Instant::now();
        let mut reader = match CaptureReader::open(Path::new(&path)) {
            Ok(reader) => reader,
            Err(e) => {
                eprintln!("{e}");
                status = ExitCode::FAILURE;
                continue;
            }
        };
        let (mut records, mut bytes) = (0u64, 0u64);
        while let Some(record) = reader.next_record() {
            match record {
                Ok(record) => {
                    records += 1;
                    bytes += record.data.len() as u64;
                }
                Err(e) => {
                    eprintln!("{e}");
                    status = ExitCode::FAILURE;
                }
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let file_len = reader.file_len().unwrap_or(0);
        println!(
            "{path}: {records} records, {bytes} captured bytes in {secs:.3} s: \
             {:.1} M records/s, {:.2} GB/s of file",
            records as f64 / secs / 1e6,
            file_len as f64 / secs / 1e9,
        );
    }
    status
}
