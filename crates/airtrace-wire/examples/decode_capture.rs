//! Decodes every record of a capture file, to count the instructions `decode` costs on
//! real traffic rather than on the hand-made frames of `decode_speed`.
//!
//! Run: `cargo run --release -p airtrace-wire --example decode_capture FILE [read|decode]`.
//! `read` only reads the records (the baseline to subtract); `decode` (the default) also
//! decodes them. Under `valgrind --tool=cachegrind --cache-sim=no`, the difference of
//! the two runs' instruction counts divided by the number of frames is the cost of
//! `decode` per frame.

use std::hint::black_box;
use std::path::Path;

use airtrace_pcap::CaptureReader;
use airtrace_wire::{decode, Decoded, LinkType};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: decode_capture FILE [read|decode]");
    let decoding = match args.next().as_deref() {
        None | Some("decode") => true,
        Some("read") => false,
        Some(other) => panic!("unknown mode {other:?}: expected read or decode"),
    };
    let mut reader = CaptureReader::open(Path::new(&path)).expect("cannot open the capture");
    let mut d = Decoded::default();
    let (mut frames, mut bytes, mut tcp, mut stopped) = (0u64, 0u64, 0u64, 0u64);
    while let Some(record) = reader.next_record() {
        let r = record.expect("capture read error");
        frames += 1;
        bytes += r.data.len() as u64;
        if decoding {
            decode(
                LinkType(r.linktype),
                black_box(r.data),
                r.orig_len,
                black_box(&mut d),
            );
            tcp += u64::from(d.tcp().is_some());
            stopped += u64::from(d.stop.is_some());
        }
    }
    println!("{frames} frames, {bytes} bytes, {tcp} TCP, {stopped} stopped early");
}
