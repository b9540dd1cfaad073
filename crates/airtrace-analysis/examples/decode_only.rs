//! Reads and decodes every frame of a capture without analysing it: the floor
//! under `analyze`. `cargo run --release -p airtrace-analysis --example decode_only -- FILE`
use std::time::Instant;

use airtrace_pcap::CaptureReader;
use airtrace_wire::{decode, Decoded, LinkType};

fn main() {
    for path in std::env::args().skip(1) {
        let started = Instant::now();
        let mut reader = CaptureReader::open(path.as_ref()).expect("readable capture");
        let mut decoded = Decoded::default();
        let (mut frames, mut tcp) = (0u64, 0u64);
        while let Some(Ok(r)) = reader.next_record() {
            decode(LinkType(r.linktype), r.data, r.orig_len, &mut decoded);
            frames += 1;
            tcp += u64::from(decoded.tcp().is_some());
        }
        let s = started.elapsed().as_secs_f64();
        println!(
            "{path}: {frames} frames ({tcp} TCP) read and decoded in {s:.3} s, {:.2} M frames/s",
            frames as f64 / s / 1e6
        );
    }
}
