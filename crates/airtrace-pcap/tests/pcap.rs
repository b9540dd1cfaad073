//! Classic pcap: both byte orders, micro- and nanosecond magic numbers, link types.

mod common;

use airtrace_pcap::{ByteOrder, Format, Interface, PcapWriter, Resolution, TsResolution};
use common::{read_ok, Rec};

/// Three records: a full frame, a snaplen-truncated one, an empty one.
fn sample(order: ByteOrder, resolution: Resolution) -> Vec<u8> {
    let mut w = PcapWriter::with_byte_order(Vec::new(), 1, 100, resolution, order).unwrap();
    w.write_packet(1_234_567_890_123_456_789, &[0x11; 60], 60)
        .unwrap();
    w.write_packet(1_234_567_891_000_000_999, &[0x22; 1514], 1514)
        .unwrap();
    w.write_packet(1_234_567_892_000_001_000, &[], 0).unwrap();
    w.into_inner()
}

fn rec(frame: u64, ts_ns: i64, orig_len: u32, data: Vec<u8>) -> Rec {
    Rec {
        frame,
        ts_ns,
        interface: 0,
        linktype: 1,
        orig_len,
        data,
    }
}

#[test]
fn reads_all_four_magic_numbers() {
    for order in [ByteOrder::Little, ByteOrder::Big] {
        for (resolution, expected_ts) in [
            // Microseconds: the nanoseconds below the microsecond are lost.
            (
                Resolution::Micro,
                [
                    1_234_567_890_123_456_000,
                    1_234_567_891_000_000_000,
                    1_234_567_892_000_001_000,
                ],
            ),
            (
                Resolution::Nano,
                [
                    1_234_567_890_123_456_789,
                    1_234_567_891_000_000_999,
                    1_234_567_892_000_001_000,
                ],
            ),
        ] {
            let bytes = sample(order, resolution);
            let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
            let mut reader = common::open("x.pcap", &bytes).unwrap();
            assert_eq!(reader.format(), Format::Pcap, "{magic:x?}");
            assert!(!reader.compressed());
            let ns = resolution == Resolution::Nano;
            assert_eq!(
                reader.interfaces(),
                [Interface {
                    linktype: 1,
                    snaplen: 100,
                    resolution: if ns {
                        TsResolution::NANO
                    } else {
                        TsResolution::MICRO
                    },
                    offset_s: 0,
                }]
            );
            let (recs, error) = common::drain(&mut reader);
            assert!(error.is_none());
            assert_eq!(
                recs,
                [
                    rec(1, expected_ts[0], 60, vec![0x11; 60]),
                    rec(2, expected_ts[1], 1514, vec![0x22; 100]),
                    rec(3, expected_ts[2], 0, vec![]),
                ],
                "magic {magic:x?}"
            );
            assert_eq!(reader.position(), bytes.len() as u64);
            assert_eq!(reader.frames_read(), 3);
        }
    }
}

#[test]
fn magic_numbers_are_the_documented_bytes() {
    let first4 = |order, res| sample(order, res)[..4].to_vec();
    assert_eq!(
        first4(ByteOrder::Little, Resolution::Micro),
        [0xd4, 0xc3, 0xb2, 0xa1]
    );
    assert_eq!(
        first4(ByteOrder::Big, Resolution::Micro),
        [0xa1, 0xb2, 0xc3, 0xd4]
    );
    assert_eq!(
        first4(ByteOrder::Little, Resolution::Nano),
        [0x4d, 0x3c, 0xb2, 0xa1]
    );
    assert_eq!(
        first4(ByteOrder::Big, Resolution::Nano),
        [0xa1, 0xb2, 0x3c, 0x4d]
    );
}

/// The file header and first record of `zeek_retransmit-fast009.pcap` (corpus), as hex:
/// tshark 4.0.17 shows frame 1 at 1285862902.700271 s, 62 bytes on the wire and captured,
/// Ethernet, an IPv4 TCP SYN.
#[test]
fn reads_a_real_record_as_tshark_does() {
    let bytes = hex("d4c3b2a1 0200 0400 00000000 00000000 10270000 01000000
         f6b5a44c 6faf0a00 3e000000 3e000000
         000000000000 000000000000 0800
         4580 0030 115b 4000 0006 0000 0a005855 c0a8001b
         c4c0 0050 18b195ba 00000000 7002 ffff 0000 0000 020405ac 01010402");
    let recs = read_ok("fast009.pcap", &bytes);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].ts_ns, 1_285_862_902_700_271_000);
    assert_eq!(
        (recs[0].orig_len, recs[0].data.len(), recs[0].linktype),
        (62, 62, 1)
    );
    assert_eq!(recs[0].data[12..14], [0x08, 0x00]);
}

/// "LinkType and additional information": only the lower 16 bits are the link type; the
/// upper ones may give the FCS length (draft-ietf-opsawg-pcap §4).
#[test]
fn fcs_bits_of_the_link_type_field_are_masked() {
    // FCS length 2 (16-bit units) with the F bit (0x04000000): 802.11 (105) with 4-byte FCS.
    let field = (2u32 << 28) | 0x0400_0000 | 105;
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let mut w =
            PcapWriter::with_byte_order(Vec::new(), field, 0xffff, Resolution::Micro, order)
                .unwrap();
        w.write_packet(0, &[1, 2, 3], 3).unwrap();
        let recs = read_ok("fcs.pcap", &w.into_inner());
        assert_eq!(recs[0].linktype, 105);
    }
}

/// tshark reads records longer than the file's snapshot length, and so do we.
#[test]
fn captured_length_above_snaplen_is_tolerated() {
    let mut w = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Micro).unwrap();
    w.write_packet(5_000_000_000, &[7; 300], 300).unwrap();
    let mut bytes = w.into_inner();
    bytes[16..20].copy_from_slice(&64u32.to_le_bytes()); // snaplen 64 < 300
    let recs = read_ok("big.pcap", &bytes);
    assert_eq!(recs[0].data, vec![7; 300]);
    assert_eq!(recs[0].ts_ns, 5_000_000_000);
}

/// A header-only file is a valid capture with no records.
#[test]
fn header_only_file_has_no_records() {
    let w = PcapWriter::new(Vec::new(), 101, 0, Resolution::Nano).unwrap();
    let mut reader = common::open("empty.pcap", &w.into_inner()).unwrap();
    assert_eq!(reader.interfaces()[0].linktype, 101);
    assert!(reader.next_record().is_none());
    assert_eq!(reader.position(), 24);
}

/// Records bigger than the reader's buffer (256 KiB), and many records crossing refills.
#[test]
fn records_larger_than_the_buffer_and_across_refills() {
    let mut w = PcapWriter::new(Vec::new(), 1, 0, Resolution::Nano).unwrap();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
    w.write_packet(1, &big, big.len() as u32).unwrap();
    for i in 0..20_000u32 {
        let n = (i % 1500) as usize;
        w.write_packet(i64::from(i), &big[..n], n as u32).unwrap();
    }
    w.write_packet(2, &big, big.len() as u32).unwrap();
    let recs = read_ok("refill.pcap", &w.into_inner());
    assert_eq!(recs.len(), 20_002);
    assert_eq!(recs[0].data, big);
    assert_eq!(recs[20_001].data, big);
    for (i, r) in recs[1..20_001].iter().enumerate() {
        assert_eq!(r.frame, i as u64 + 2);
        assert_eq!(r.data[..], big[..i % 1500]);
        assert_eq!(r.ts_ns, i as i64);
    }
}

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// A reader can be handed to another thread (one per capture file, say).
#[test]
fn reader_is_send() {
    fn send<T: Send>(_: &T) {}
    let w = PcapWriter::new(Vec::new(), 1, 0, Resolution::Nano).unwrap();
    let reader = common::open("send.pcap", &w.into_inner()).unwrap();
    send(&reader);
    let frames = std::thread::spawn(move || {
        let mut reader = reader;
        common::drain(&mut reader).0.len()
    });
    assert_eq!(frames.join().unwrap(), 0);
}
