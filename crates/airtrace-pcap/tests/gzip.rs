//! gzip-compressed captures: detection, multi-member streams, progress, damage.

mod common;

use std::io::Write;

use airtrace_pcap::{CaptureReader, ErrorKind, Format, PcapWriter, Resolution};
use common::{gzip, read_all, read_ok};

fn pcap_of(n: u32) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 1, 0, Resolution::Micro).unwrap();
    for i in 0..n {
        let data: Vec<u8> = (0..(i % 200) as u8).collect();
        w.write_packet(i64::from(i) * 1_000, &data, data.len() as u32)
            .unwrap();
    }
    w.into_inner()
}

#[test]
fn gzip_pcap_and_pcapng_read_like_the_plain_files() {
    for (plain, format) in [
        (pcap_of(5000), Format::Pcap),
        (common::showcase_pcapng(), Format::PcapNg),
    ] {
        let packed = gzip(&plain);
        let mut reader = common::open("x.gz", &packed).unwrap();
        assert!(reader.compressed());
        assert_eq!(reader.format(), format);
        let (recs, error) = common::drain(&mut reader);
        assert!(error.is_none());
        assert_eq!(recs, read_ok("x", &plain));
        // The whole compressed file was consumed.
        assert_eq!(reader.position(), packed.len() as u64);
    }
}

/// Concatenated gzip members (`cat a.gz b.gz`) are one stream, as gunzip reads them.
#[test]
fn multi_member_gzip() {
    let plain = pcap_of(300);
    let (head, tail) = plain.split_at(1000);
    let mut packed = gzip(head);
    packed.extend(gzip(tail));
    assert_eq!(read_ok("multi.gz", &packed), read_ok("plain", &plain));
}

/// The gzip stream of a capture still being written stops in the middle: every whole
/// record comes back, then a truncation error placed in the decompressed data.
#[test]
fn cut_gzip_stream_gives_the_records_then_truncated() {
    let plain = pcap_of(2000);
    let packed = gzip(&plain);
    let cut = &packed[..packed.len() / 2];
    let (recs, error) = read_all("cut.pcap.gz", cut);
    let error = error.expect("a cut stream is an error");
    assert!(error.is_truncated(), "{error}");
    assert!(!recs.is_empty() && recs.len() < 2000);
    assert_eq!(recs, read_ok("plain", &plain)[..recs.len()]);
    assert_eq!(error.frames_read, recs.len() as u64);
    let msg = error.to_string();
    assert!(
        msg.starts_with(&format!("cut.pcap.gz: record {} at byte ", recs.len() + 1)),
        "{msg}"
    );
    assert!(
        msg.contains(" of the decompressed data: file ends inside the record"),
        "{msg}"
    );
}

/// Cut just before the gzip trailer: all records are there, but the stream is incomplete.
#[test]
fn missing_gzip_trailer_is_reported_after_the_last_record() {
    let plain = pcap_of(10);
    let packed = gzip(&plain);
    let (recs, error) = read_all("t.gz", &packed[..packed.len() - 8]);
    assert_eq!(recs.len(), 10);
    let error = error.unwrap();
    assert!(error.is_truncated());
    assert_eq!(
        error.to_string(),
        format!(
            "t.gz: byte {} of the decompressed data: file ends inside the gzip stream",
            plain.len()
        )
    );
}

#[test]
fn corrupt_deflate_data_is_corrupt() {
    let plain = pcap_of(2000);
    let mut packed = gzip(&plain);
    let mid = packed.len() / 2;
    for b in &mut packed[mid..mid + 64] {
        *b ^= 0x5a;
    }
    let (recs, error) = read_all("bad.gz", &packed);
    let error = error.unwrap();
    // Depending on where the damage lands, zlib finds it or the pcap framing does.
    assert!(matches!(error.kind, ErrorKind::Corrupt(_)), "{error}");
    assert_eq!(recs, read_ok("plain", &plain)[..recs.len()]);
}

#[test]
fn gzip_of_nothing_and_of_garbage() {
    let e = common::open_error("e.gz", &gzip(&[]));
    assert!(matches!(e.kind, ErrorKind::Empty));
    assert_eq!(e.to_string(), "e.gz: empty file");
    let e = common::open_error("g.gz", &gzip(b"<html><body>"));
    assert_eq!(
        e.to_string(),
        "g.gz: byte 0 of the decompressed data: not a capture file (magic number 0x3c68746d)"
    );
    let e = common::open_error("h.gz", &[0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff, 1, 2]);
    assert!(e.is_truncated(), "{e}");
    let e = common::open_error(
        "i.gz",
        &[0x1f, 0x8b, 0x99, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3, 4],
    );
    assert!(matches!(e.kind, ErrorKind::Corrupt(_)), "{e}");
    assert!(
        e.to_string()
            .starts_with("i.gz: byte 0 of the decompressed data: gzip data: "),
        "{e}"
    );
}

/// `open` detects gzip from the bytes, whatever the file is called, and reports the
/// compressed file's length and progress through it.
#[test]
fn open_a_gzip_file_from_disk() {
    let dir = std::env::temp_dir().join(format!("airtrace-pcap-gzip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("capture.pcap");
    let packed = gzip(&pcap_of(3000));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(&packed)
        .unwrap();
    let mut reader = CaptureReader::open(&path).unwrap();
    assert!(reader.compressed());
    assert_eq!(reader.file_len(), Some(packed.len() as u64));
    let mut last = 0;
    while let Some(r) = reader.next_record() {
        r.unwrap();
        assert!(reader.position() >= last);
        last = reader.position();
    }
    assert_eq!(reader.position(), packed.len() as u64);
    std::fs::remove_dir_all(&dir).unwrap();
}
