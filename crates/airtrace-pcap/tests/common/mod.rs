//! Helpers shared by the integration tests: reading a whole capture from bytes or from a
//! file both ways, building pcapng blocks the writer does not write, and gzip.

#![allow(dead_code)] // Each test binary uses its own subset.

use std::fs::File;
use std::io::{Cursor, Write};
use std::path::Path;

use airtrace_pcap::{ByteOrder, CaptureReader, ReadError};

/// A record, owned, for comparing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub frame: u64,
    pub ts_ns: i64,
    pub interface: u32,
    pub linktype: u32,
    pub orig_len: u32,
    pub data: Vec<u8>,
}

/// Opens `bytes` as a capture named `name`.
pub fn open(name: &str, bytes: &[u8]) -> Result<CaptureReader, ReadError> {
    CaptureReader::from_reader(name, Cursor::new(bytes.to_vec()))
}

/// Reads every record of an open reader, and the error that ended it, if any. Checks
/// that the reader stays finished after the end or the error.
pub fn drain(reader: &mut CaptureReader) -> (Vec<Rec>, Option<ReadError>) {
    let mut recs = Vec::new();
    let mut error = None;
    while let Some(next) = reader.next_record() {
        match next {
            Ok(r) => recs.push(Rec {
                frame: r.frame,
                ts_ns: r.ts_ns,
                interface: r.interface,
                linktype: r.linktype,
                orig_len: r.orig_len,
                data: r.data.to_vec(),
            }),
            Err(e) => {
                assert!(error.is_none(), "a second error after {:?}: {e}", error);
                error = Some(e);
            }
        }
    }
    assert!(
        reader.next_record().is_none(),
        "the reader must stay finished"
    );
    (recs, error)
}

/// Opens and reads `bytes`; panics if it does not open.
pub fn read_all(name: &str, bytes: &[u8]) -> (Vec<Rec>, Option<ReadError>) {
    let mut reader = open(name, bytes).unwrap_or_else(|e| panic!("open failed: {e}"));
    drain(&mut reader)
}

/// Reads `bytes`, which must hold a valid capture, and returns its records.
pub fn read_ok(name: &str, bytes: &[u8]) -> Vec<Rec> {
    let (recs, error) = read_all(name, bytes);
    if let Some(e) = error {
        panic!("unexpected error: {e}");
    }
    recs
}

/// What reading a capture gives: the records, the error that ended them (as its
/// message), and `position()` after each record, after the error, and at the end.
#[derive(Debug, PartialEq)]
pub struct Reading {
    pub recs: Vec<Rec>,
    pub error: Option<String>,
    pub positions: Vec<u64>,
}

/// Reads every record of an open reader, noting the position after each.
pub fn reading(mut reader: CaptureReader) -> Reading {
    let mut read = Reading {
        recs: Vec::new(),
        error: None,
        positions: Vec::new(),
    };
    while let Some(next) = reader.next_record() {
        match next {
            Ok(r) => read.recs.push(Rec {
                frame: r.frame,
                ts_ns: r.ts_ns,
                interface: r.interface,
                linktype: r.linktype,
                orig_len: r.orig_len,
                data: r.data.to_vec(),
            }),
            Err(e) => {
                assert!(
                    read.error.is_none(),
                    "a second error after {:?}: {e}",
                    read.error
                );
                read.error = Some(e.to_string());
            }
        }
        read.positions.push(reader.position());
    }
    assert!(
        reader.next_record().is_none(),
        "the reader must stay finished"
    );
    read.positions.push(reader.position());
    read
}

/// Reads the file at `path` both ways, opened by path (mapped, unless compressed or
/// special) and streamed through `from_reader`, checks that they agree, and returns the
/// reading.
pub fn read_both_ways(path: &Path) -> Reading {
    let name = path.display().to_string();
    let opened = CaptureReader::open(path).unwrap_or_else(|e| panic!("{e}"));
    let streamed = CaptureReader::from_reader(&name, File::open(path).unwrap()).unwrap();
    assert_eq!(opened.format(), streamed.format(), "{name}");
    assert_eq!(opened.compressed(), streamed.compressed(), "{name}");
    assert_eq!(opened.interfaces(), streamed.interfaces(), "{name}");
    let len = std::fs::metadata(path).unwrap().len();
    assert_eq!(opened.file_len(), Some(len), "{name}");
    assert_eq!(streamed.file_len(), None, "{name}");
    let (a, b) = (reading(opened), reading(streamed));
    assert_eq!(a, b, "{name}: opened by path and read from a reader differ");
    a
}

/// The error message of a capture that fails to open.
pub fn open_error(name: &str, bytes: &[u8]) -> ReadError {
    match open(name, bytes) {
        Ok(_) => panic!("{name} opened, but should not"),
        Err(e) => e,
    }
}

/// gzip-compresses `bytes`.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn u16b(order: ByteOrder, v: u16) -> [u8; 2] {
    match order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    }
}

pub fn u32b(order: ByteOrder, v: u32) -> [u8; 4] {
    match order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    }
}

/// A pcapng block: type, total length, `body` padded to 4 bytes, total length.
pub fn block(order: ByteOrder, block_type: u32, body: &[u8]) -> Vec<u8> {
    let padded = body.len().next_multiple_of(4);
    let len = (12 + padded) as u32;
    let mut b = Vec::new();
    b.extend_from_slice(&u32b(order, block_type));
    b.extend_from_slice(&u32b(order, len));
    b.extend_from_slice(body);
    b.resize(8 + padded, 0);
    b.extend_from_slice(&u32b(order, len));
    b
}

/// A Simple Packet Block (type 3) of `orig_len` with `data`.
pub fn spb(order: ByteOrder, orig_len: u32, data: &[u8]) -> Vec<u8> {
    let mut body = u32b(order, orig_len).to_vec();
    body.extend_from_slice(data);
    block(order, 3, &body)
}

/// An obsolete Packet Block (type 2).
pub fn packet_block(
    order: ByteOrder,
    if_id: u16,
    units: u64,
    orig_len: u32,
    data: &[u8],
) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&u16b(order, if_id));
    body.extend_from_slice(&u16b(order, 0)); // drops count
    body.extend_from_slice(&u32b(order, (units >> 32) as u32));
    body.extend_from_slice(&u32b(order, units as u32));
    body.extend_from_slice(&u32b(order, data.len() as u32));
    body.extend_from_slice(&u32b(order, orig_len));
    body.extend_from_slice(data);
    block(order, 2, &body)
}

/// An Enhanced Packet Block (type 6) with an explicit captured length, which may lie.
pub fn epb(
    order: ByteOrder,
    if_id: u32,
    units: u64,
    caplen: u32,
    orig_len: u32,
    data: &[u8],
) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&u32b(order, if_id));
    body.extend_from_slice(&u32b(order, (units >> 32) as u32));
    body.extend_from_slice(&u32b(order, units as u32));
    body.extend_from_slice(&u32b(order, caplen));
    body.extend_from_slice(&u32b(order, orig_len));
    body.extend_from_slice(data);
    block(order, 6, &body)
}

/// A block of a type the reader skips, with a body of `n` zero bytes (which tshark reads
/// as empty records, statistics or options).
pub fn filler(order: ByteOrder, block_type: u32, n: usize) -> Vec<u8> {
    block(order, block_type, &vec![0; n])
}

/// A pcapng file with every kind of block, three sections in both byte orders, five
/// interfaces of four link types, time stamps in 10^-6, 10^-9 and 2^-10 s, and offsets.
/// `tests/pcapng.rs` states what tshark 4.0.17 reads from it.
pub fn showcase_pcapng() -> Vec<u8> {
    use airtrace_pcap::{Interface, PcapNgWriter, TsResolution};
    let (le, be) = (ByteOrder::Little, ByteOrder::Big);
    let iface = |linktype, snaplen, resolution, offset_s| Interface {
        linktype,
        snaplen,
        resolution,
        offset_s,
    };
    let mut w = PcapNgWriter::new(Vec::new(), le).unwrap();

    // Section 1, little-endian: Ethernet in µs, raw IP in ns.
    assert_eq!(
        w.add_interface(&iface(1, 65535, TsResolution::MICRO, 0))
            .unwrap(),
        0
    );
    assert_eq!(
        w.add_interface(&iface(101, 0, TsResolution::NANO, 0))
            .unwrap(),
        1
    );
    w.get_mut().extend(filler(le, 4, 20)); // Name Resolution Block
                                           // Frames 1 and 2.
    w.write_packet(0, 1_700_000_000_123_456_000, &[0xa0; 60], 60)
        .unwrap();
    w.write_packet(1, 1_700_000_000_987_654_321, &[0xa1; 41], 1500)
        .unwrap();
    w.get_mut().extend(filler(le, 5, 24)); // Interface Statistics Block
    w.get_mut().extend(filler(le, 0x0A, 16)); // Decryption Secrets Block
    w.get_mut().extend(filler(le, 0x4000_0BAD, 8)); // Custom Block: frame 3 for tshark
    w.get_mut().extend(filler(le, 0x99, 0)); // unknown

    // Frame 4: a Simple Packet Block (interface 0, no time).
    w.get_mut().extend(spb(le, 30, &[0xa2; 30]));
    // Frame 5: an obsolete Packet Block, 1700000001 s in µs.
    w.get_mut()
        .extend(packet_block(le, 0, 1_700_000_001_000_000, 80, &[0xa3; 70]));

    // Section 2, big-endian: radiotap in 2^-10 s from 1.6e9 s, Linux SLL in ns from -100 s.
    w.new_section(be).unwrap();
    let wifi = iface(127, 64, TsResolution::Binary(10), 1_600_000_000);
    assert_eq!(w.add_interface(&wifi).unwrap(), 0);
    assert_eq!(
        w.add_interface(&iface(113, 0, TsResolution::NANO, -100))
            .unwrap(),
        1
    );
    // Frame 6.
    w.write_packet(0, 1_600_000_005_500_000_000, &[0xb0; 64], 300)
        .unwrap();
    // Frame 7: an SPB cut to the snapshot length, 64 of 200 bytes.
    w.get_mut().extend(spb(be, 200, &[0xb1; 64]));
    // Frame 8.
    w.write_packet(1, 1_699_999_900_000_000_007, &[0xb2; 3], 3)
        .unwrap();
    // Frame 9: 3 units of 2^-10 s, not a whole number of nanoseconds (976562.5 ns each).
    w.get_mut().extend(epb(be, 0, 3, 4, 4, &[0xb3; 4]));

    // Section 3, little-endian again: Ethernet in µs with a negative offset.
    w.new_section(le).unwrap();
    assert_eq!(
        w.add_interface(&iface(1, 96, TsResolution::MICRO, -100))
            .unwrap(),
        0
    );
    // Frame 10.
    w.write_packet(0, 1_000_000_000_000_001_000, &[0xc0; 96], 1514)
        .unwrap();
    w.into_inner()
}
