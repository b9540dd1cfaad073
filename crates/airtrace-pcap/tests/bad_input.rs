//! Bad input, with the exact messages: files that are not captures fail at open;
//! cut-off files give every whole record, then a truncation error; corrupt records give
//! a corruption error naming the record and the byte. Limits come in pairs: just
//! accepted, just refused.

mod common;

use airtrace_pcap::{
    ByteOrder, CaptureReader, ErrorKind, Interface, PcapNgWriter, PcapWriter, Place, ReadError,
    Resolution, TsResolution, MAX_CAPLEN,
};
use common::{block, epb, read_all, spb, u32b};

/// A pcap of three 60-byte records: 24 + 3 × 76 = 252 bytes.
fn three_records() -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Micro).unwrap();
    for i in 0..3 {
        w.write_packet(i * 1_000_000, &[i as u8; 60], 60).unwrap();
    }
    w.into_inner()
}

/// Reads `bytes` and expects `n` records, then the error `message`.
fn records_then_error(name: &str, bytes: &[u8], n: usize, message: &str) -> ReadError {
    let (recs, error) = read_all(name, bytes);
    let error = error.unwrap_or_else(|| panic!("{name}: no error after {} records", recs.len()));
    assert_eq!(error.to_string(), message);
    assert_eq!(recs.len(), n, "{message}");
    assert_eq!(error.frames_read, n as u64);
    error
}

fn corrupt(e: &ReadError) -> bool {
    matches!(e.kind, ErrorKind::Corrupt(_))
}

// ---- not a capture: errors at open ----

#[test]
fn empty_file() {
    let e = common::open_error("x.pcap", &[]);
    assert_eq!(e.to_string(), "x.pcap: empty file");
    assert!(matches!(e.kind, ErrorKind::Empty));
    assert_eq!(e.place, Place::File);
}

#[test]
fn html_page_is_not_a_capture() {
    let e = common::open_error("x.pcap", b"<html><head>");
    assert_eq!(
        e.to_string(),
        "x.pcap: byte 0: not a capture file (magic number 0x3c68746d)"
    );
    assert!(matches!(e.kind, ErrorKind::BadMagic(0x3c68_746d)));
}

#[test]
fn shorter_than_a_magic_number() {
    let e = common::open_error("x.pcap", &[0xd4, 0xc3, 0xb2]);
    assert_eq!(
        e.to_string(),
        "x.pcap: byte 0: file ends inside the magic number (needs 4 bytes, 3 left)"
    );
    assert!(e.is_truncated());
}

#[test]
fn missing_file() {
    let e = CaptureReader::open("/nonexistent/airtrace/x.pcap".as_ref())
        .err()
        .unwrap();
    assert!(matches!(e.kind, ErrorKind::Io(_)));
    assert_eq!(
        e.to_string(),
        "/nonexistent/airtrace/x.pcap: No such file or directory (os error 2)"
    );
}

#[test]
fn cut_pcap_file_header() {
    let e = common::open_error("x.pcap", &three_records()[..10]);
    assert_eq!(
        e.to_string(),
        "x.pcap: byte 0: file ends inside the file header (needs 24 bytes, 10 left)"
    );
    assert!(e.is_truncated());
}

// ---- pcap: truncated tails ----

#[test]
fn pcap_cut_inside_a_record() {
    let bytes = three_records();
    let e = records_then_error(
        "x.pcap",
        &bytes[..252 - 30],
        2,
        "x.pcap: record 3 at byte 176: file ends inside the record (needs 76 bytes, 46 left)",
    );
    assert!(e.is_truncated());
    assert_eq!(
        e.place,
        Place::Record {
            frame: 3,
            offset: 176
        }
    );
}

#[test]
fn pcap_cut_inside_a_record_header() {
    let mut bytes = three_records();
    bytes.extend_from_slice(&[1, 2, 3, 4, 5]);
    let e = records_then_error(
        "x.pcap",
        &bytes,
        3,
        "x.pcap: record 4 at byte 252: file ends inside the record header (needs 16 bytes, 5 left)",
    );
    assert!(e.is_truncated());
}

#[test]
fn pcap_cut_between_records_is_a_clean_end() {
    let (recs, error) = read_all("x.pcap", &three_records()[..176]);
    assert_eq!(recs.len(), 2);
    assert!(error.is_none());
}

// ---- pcap: corrupt records ----

/// A record header claiming `caplen`, followed by 100 bytes.
fn with_caplen(caplen: u32) -> Vec<u8> {
    let mut bytes = three_records();
    for v in [0, 0, caplen, caplen] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(&[0; 100]);
    bytes
}

#[test]
fn pcap_caplen_limit_is_256_mib() {
    // Just accepted: the record is taken for real, and the file is too short for it.
    let e = records_then_error(
        "x.pcap",
        &with_caplen(MAX_CAPLEN),
        3,
        "x.pcap: record 4 at byte 252: file ends inside the record (needs 268435472 bytes, 116 left)",
    );
    assert!(e.is_truncated());
    // Just refused.
    let e = records_then_error(
        "x.pcap",
        &with_caplen(MAX_CAPLEN + 1),
        3,
        "x.pcap: record 4 at byte 252: captured length 268435457 exceeds the limit of 268435456 bytes",
    );
    assert!(corrupt(&e));
    let e = records_then_error(
        "x.pcap",
        &with_caplen(u32::MAX),
        3,
        &format!(
            "x.pcap: record 4 at byte 252: captured length {} exceeds the limit of 268435456 bytes",
            u32::MAX
        ),
    );
    assert!(corrupt(&e));
}

// ---- pcapng ----

const LE: ByteOrder = ByteOrder::Little;

/// SHB (28 bytes) and one Ethernet interface without options (20 bytes): packets start
/// at byte 48.
fn ng_head() -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new(), LE).unwrap();
    w.add_interface(&Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::MICRO,
        offset_s: 0,
    })
    .unwrap();
    let bytes = w.into_inner();
    assert_eq!(bytes.len(), 48);
    bytes
}

/// `ng_head` and two good 40-byte EPBs: the next block is at byte 128.
fn ng_two_packets() -> Vec<u8> {
    let mut bytes = ng_head();
    bytes.extend(epb(LE, 0, 1, 8, 8, &[1; 8]));
    bytes.extend(epb(LE, 0, 2, 8, 8, &[2; 8]));
    assert_eq!(bytes.len(), 128);
    bytes
}

#[test]
fn pcapng_cut_inside_the_first_block() {
    let e = common::open_error("x.pcapng", &ng_head()[..10]);
    assert_eq!(
        e.to_string(),
        "x.pcapng: byte 0: file ends inside the block header (needs 12 bytes, 10 left)"
    );
    let e = common::open_error("x.pcapng", &ng_head()[..20]);
    assert_eq!(
        e.to_string(),
        "x.pcapng: Section Header Block at byte 0: file ends inside the block (needs 28 bytes, 20 left)"
    );
}

#[test]
fn pcapng_cut_inside_a_packet_block() {
    let mut bytes = ng_two_packets();
    bytes.extend(epb(LE, 0, 3, 8, 8, &[3; 8]));
    let e = records_then_error(
        "x.pcapng",
        &bytes[..150],
        2,
        "x.pcapng: record 3 at byte 128: file ends inside the block (needs 40 bytes, 22 left)",
    );
    assert!(e.is_truncated());
    let e = records_then_error(
        "x.pcapng",
        &bytes[..133],
        2,
        "x.pcapng: byte 128: file ends inside the block header (needs 12 bytes, 5 left)",
    );
    assert!(e.is_truncated());
}

#[test]
fn pcapng_bad_byte_order_magic_and_version() {
    let mut bytes = ng_head();
    bytes[8..12].copy_from_slice(&[0x12, 0x34, 0x56, 0x78]);
    let e = common::open_error("x.pcapng", &bytes);
    assert_eq!(
        e.to_string(),
        "x.pcapng: Section Header Block at byte 0: byte-order magic 0x78563412 is not 0x1a2b3c4d in either byte order"
    );
    assert!(corrupt(&e));
    let mut bytes = ng_head();
    bytes[12..14].copy_from_slice(&2u16.to_le_bytes());
    let e = common::open_error("x.pcapng", &bytes);
    assert_eq!(
        e.to_string(),
        "x.pcapng: Section Header Block at byte 0: unsupported pcapng version 2.0"
    );
}

/// A block header with the given type and length, then `body` and a trailing length.
fn raw_block(block_type: u32, len: u32, body: &[u8], trailing: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&block_type.to_le_bytes());
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(body);
    b.extend_from_slice(&trailing.to_le_bytes());
    b
}

#[test]
fn pcapng_block_length_rules() {
    let cases: [(Vec<u8>, &str); 6] = [
        (
            raw_block(6, 38, &[0; 26], 38),
            "record 3 at byte 128: block length 38 is not a multiple of 4",
        ),
        (
            raw_block(0x99, 8, &[0; 4], 8),
            "block of type 0x00000099 at byte 128: block length 8 is less than 12",
        ),
        (
            raw_block(6, 28, &[0; 16], 28),
            "record 3 at byte 128: block length 28 is less than 32",
        ),
        (
            raw_block(1, 16, &[0; 4], 16),
            "Interface Description Block at byte 128: block length 16 is less than 20",
        ),
        (
            raw_block(6, 0xffff_fffc, &[0; 20], 0),
            "record 3 at byte 128: block length 4294967292 exceeds the limit of 269484032 bytes",
        ),
        (
            raw_block(6, 40, &[0; 28], 36),
            "record 3 at byte 128: trailing block length 36 differs from the leading one, 40",
        ),
    ];
    for (tail, message) in cases {
        let mut bytes = ng_two_packets();
        bytes.extend(tail);
        let e = records_then_error("x.pcapng", &bytes, 2, &format!("x.pcapng: {message}"));
        assert!(corrupt(&e), "{message}");
    }
    // The accepted twins: 12 bytes for an unknown block, 32 for a packet.
    let mut bytes = ng_two_packets();
    bytes.extend(raw_block(0x99, 12, &[], 12));
    bytes.extend(raw_block(6, 32, &[0; 20], 32));
    let (recs, error) = read_all("x.pcapng", &bytes);
    assert!(error.is_none());
    assert_eq!(recs.len(), 3);
    assert!(recs[2].data.is_empty());
}

/// Reads `bytes`, expecting no error, the records numbered `frames`, and `damaged`
/// packet blocks skipped, the first with the message `first`.
fn damaged_blocks_skipped(bytes: &[u8], frames: &[u64], damaged: u64, first: &str) {
    let mut reader = common::open("x.pcapng", bytes).unwrap();
    let (recs, error) = common::drain(&mut reader);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(recs.iter().map(|r| r.frame).collect::<Vec<_>>(), frames);
    assert_eq!(reader.frames_read(), frames.len() as u64);
    let (count, e) = reader.damaged().expect("damaged blocks noted");
    assert_eq!((count, e.to_string().as_str()), (damaged, first));
    assert!(corrupt(e));
}

#[test]
fn pcapng_captured_length_must_fit_the_block() {
    // Room for 8 bytes: 8 is fine, 9 is not; the block is skipped, the one after it read.
    let mut bytes = ng_two_packets();
    bytes.extend(epb(LE, 0, 3, 8, 8, &[3; 8]));
    bytes.extend(epb(LE, 0, 4, 9, 9, &[4; 8]));
    bytes.extend(epb(LE, 0, 5, 8, 8, &[5; 8]));
    damaged_blocks_skipped(
        &bytes,
        &[1, 2, 3, 5],
        1,
        "x.pcapng: record 4 at byte 168: captured length 9 does not fit in the block (8 bytes of room)",
    );
}

#[test]
fn pcapng_packet_for_an_unknown_interface() {
    // One bad block among sound ones (its lengths right) does not stop the reading.
    let mut bytes = ng_two_packets();
    bytes.extend(epb(LE, 1, 3, 0, 0, &[]));
    bytes.extend(epb(LE, 0, 4, 4, 4, &[4; 4]));
    bytes.extend(epb(LE, 7, 5, 0, 0, &[]));
    bytes.extend(epb(LE, 0, 6, 4, 4, &[6; 4]));
    damaged_blocks_skipped(
        &bytes,
        &[1, 2, 4, 6],
        2,
        "x.pcapng: record 3 at byte 128: Enhanced Packet Block refers to interface 1, but the section has 1 interface",
    );
    // Interfaces belong to their section: after a new SHB, interface 0 is gone.
    let mut bytes = ng_two_packets();
    bytes.extend(PcapNgWriter::new(Vec::new(), LE).unwrap().into_inner());
    bytes.extend(spb(LE, 4, &[1, 2, 3, 4]));
    damaged_blocks_skipped(
        &bytes,
        &[1, 2],
        1,
        "x.pcapng: record 3 at byte 156: Simple Packet Block refers to interface 0, but the section has 0 interfaces",
    );
}

#[test]
fn pcapng_time_resolution_out_of_range() {
    let shb = ng_head()[..28].to_vec();
    // if_tsresol 10^-20: 10^20 units per second do not fit 64 bits; 10^-19 do.
    for (tsresol, ok) in [
        (19u8, true),
        (20, false),
        (0x80 | 63, true),
        (0x80 | 64, false),
    ] {
        let mut body = vec![1, 0, 0, 0, 0, 0, 0, 0];
        body.extend_from_slice(&[9, 0, 1, 0, tsresol, 0, 0, 0, 0, 0, 0, 0]);
        let mut file = shb.clone();
        file.extend(block(LE, 1, &body));
        let (_, error) = read_all("x.pcapng", &file);
        match error {
            None => assert!(ok, "{tsresol:#x} accepted"),
            Some(e) => {
                assert!(!ok, "{tsresol:#x} refused: {e}");
                assert_eq!(
                    e.to_string(),
                    format!("x.pcapng: Interface Description Block at byte 28: if_tsresol {tsresol:#04x} is too fine to count in 64 bits")
                );
            }
        }
    }
}

/// A big-endian section's lengths are read big-endian: a length that is only valid
/// little-endian is corrupt there.
#[test]
fn pcapng_big_endian_lengths() {
    let mut w = PcapNgWriter::new(Vec::new(), ByteOrder::Big).unwrap();
    w.add_interface(&Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::MICRO,
        offset_s: 0,
    })
    .unwrap();
    let mut bytes = w.into_inner();
    bytes.extend_from_slice(&u32b(ByteOrder::Big, 6));
    bytes.extend_from_slice(&u32b(ByteOrder::Little, 32));
    bytes.extend_from_slice(&[0; 24]);
    let e = records_then_error(
        "be.pcapng",
        &bytes,
        0,
        "be.pcapng: record 1 at byte 48: block length 536870912 exceeds the limit of 269484032 bytes",
    );
    assert!(corrupt(&e));
}
