//! Feeds arbitrary bytes through the whole pipeline: capture reader, frame decoder
//! and TCP analyzer, keeping every packet's annotation. Nothing may panic, hang or
//! allocate more than the input justifies.

#![no_main]

use std::io::Cursor;

use airtrace_analysis::{analyze_capture, Annotation, PacketSink};
use airtrace_pcap::{CaptureReader, Record};
use airtrace_wire::Decoded;
use libfuzzer_sys::fuzz_target;

/// Checks what the analyzer says of each packet.
struct Check;

impl PacketSink for Check {
    fn packet(&mut self, record: &Record<'_>, decoded: &Decoded, annotation: &Annotation) {
        assert!(decoded.payload.end <= record.data.len());
        if decoded.tcp().is_none() {
            assert_eq!(annotation.conn, u32::MAX);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(reader) = CaptureReader::from_reader("fuzz", Cursor::new(data.to_vec())) else {
        return;
    };
    if let Ok(report) = analyze_capture(reader, "fuzz", &mut Check, &mut |_, _| {}) {
        let ids: Vec<u32> = report.connections.iter().map(|c| c.id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "connections in order of first packet");
    }
});
