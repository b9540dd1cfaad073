//! Feeds arbitrary bytes to `CaptureReader::from_reader` and reads every record: the
//! reader must never panic, never hang, and never allocate more than the input
//! justifies (libFuzzer's -rss_limit_mb catches that).

#![no_main]

use std::io::Cursor;

use airtrace_pcap::{CaptureReader, MAX_CAPLEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = CaptureReader::from_reader("fuzz", Cursor::new(data.to_vec())) else {
        return;
    };
    let mut last_frame = 0;
    while let Some(record) = reader.next_record() {
        match record {
            Ok(record) => {
                assert!(record.frame > last_frame);
                last_frame = record.frame;
                assert!(record.data.len() <= MAX_CAPLEN as usize);
            }
            Err(error) => assert!(!error.to_string().contains('\n')),
        }
    }
    assert!(reader.next_record().is_none());
});
