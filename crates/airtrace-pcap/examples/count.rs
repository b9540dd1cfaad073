//! Counts the records and captured bytes of capture files, and how fast they were read.
//!
//! ```text
//! cargo run --release -p airtrace-pcap --example count -- FILE...
//! ```
//!
//! Make a big file to time with the `make_capture` example. Measured on the project's
//! 2-core machine (Xeon, shared with other builds), from page cache, median of 11 runs,
//! when every file was read with `read()`:
//!
//! ```text
//! make_capture small96.pcap   5000000 96     # 560 MB    53 M records/s, 6.0 GB/s
//! make_capture small96.pcapng 5000000 96     # 640 MB    45 M records/s, 5.8 GB/s
//! make_capture big1500.pcap   1000000 1500   # 1.5 GB    4.7 M records/s, 7.2 GB/s
//! gzip -6 of 1 M records of 54-1514 bytes (random payloads), 284 MB compressed:
//!                                            # 0.7 M records/s, 0.25 GB/s decompressed
//! ```
//!
//! Reading the file alone (`dd bs=1M of=/dev/null`) runs at 6.3-6.6 GB/s on the same
//! machine: the kernel's copy into the buffer is half of the time for small records.
//! valgrind counts 50 instructions per record for pcap and 71 for pcapng (1 M records).
//!
//! Uncompressed files are now memory-mapped (see the crate doc). For this example, which
//! looks only at record headers, that is no faster: on a pcap of 5 M records of 94 bytes
//! on average (552 MB), 39.7 M records/s mapped against 40.8 read (median of 15
//! interleaved runs), and 130 ms of CPU against 110 (user + sys, median of 21). The
//! kernel's time falls from 90 to 40 ms (page faults and unmapping instead of the copy),
//! but the parser's rises from 20 to 90: the cache misses the copy used to take now fall
//! on it, with nothing to hide them behind. Work on the packets hides them: `airtrace-analysis`'s `analyze` example on the same file went from 12.1
//! to 13.5 M frames/s, 380 to 320 ms of CPU. valgrind, which counts only user space,
//! says 73 instructions per record read, 71 mapped (200 k records of that file).

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
