//! pcapng: sections in both byte orders, interfaces with their own link types, time
//! stamp resolutions and offsets, every kind of packet block, skipped blocks.

mod common;

use airtrace_pcap::{ByteOrder, Format, Interface, PcapNgWriter, TsResolution};
use common::{block, epb, filler, packet_block, read_ok, spb, Rec};

fn rec(frame: u64, ts_ns: i64, interface: u32, linktype: u32, orig_len: u32, data: Vec<u8>) -> Rec {
    Rec {
        frame,
        ts_ns,
        interface,
        linktype,
        orig_len,
        data,
    }
}

/// `showcase_pcapng()` read by tshark 4.0.17 (`-T fields -e frame.number
/// -e frame.interface_id -e frame.time_epoch -e frame.len -e frame.cap_len
/// -e frame.encap_type`) gives, frame by frame:
///
/// ```text
/// 1   0  1700000000.123456000    60   60   1     section 1 (LE), µs, Ethernet
/// 2   1  1700000000.987654321  1500   41   7     ns, raw IP
/// 3          (custom block)       4    4
/// 4   0  (no time)               30   30   1     Simple Packet Block
/// 5   0  1700000001.000000000    80   70   1     obsolete Packet Block
/// 6   0  1600000005.500000000   300   64  23     section 2 (BE), 2^-10 s, offset 1.6e9 s, radiotap
/// 7   0  (no time)              200   64  23     SPB: caplen = snaplen 64
/// 8   1  1699999900.000000007     3    3  25     ns, offset -100 s, Linux SLL
/// 9   0  1600000000.002929687     4    4  23     3 units of 2^-10 s, rounded down
/// 10  0  1000000000.000001000  1514   96   1     section 3 (LE), µs, offset -100 s
/// ```
///
/// tshark's interface ids restart in each section; ours count across the file.
#[test]
fn showcase_reads_as_tshark_does() {
    let bytes = common::showcase_pcapng();
    let mut reader = common::open("showcase.pcapng", &bytes).unwrap();
    assert_eq!(reader.format(), Format::PcapNg);
    let (recs, error) = common::drain(&mut reader);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        recs,
        [
            rec(1, 1_700_000_000_123_456_000, 0, 1, 60, vec![0xa0; 60]),
            rec(2, 1_700_000_000_987_654_321, 1, 101, 1500, vec![0xa1; 41]),
            // Frame 3 is the custom block.
            rec(4, 0, 0, 1, 30, vec![0xa2; 30]),
            rec(5, 1_700_000_001_000_000_000, 0, 1, 80, vec![0xa3; 70]),
            rec(6, 1_600_000_005_500_000_000, 2, 127, 300, vec![0xb0; 64]),
            rec(7, 0, 2, 127, 200, vec![0xb1; 64]),
            rec(8, 1_699_999_900_000_000_007, 3, 113, 3, vec![0xb2; 3]),
            rec(9, 1_600_000_000_002_929_687, 2, 127, 4, vec![0xb3; 4]),
            rec(10, 1_000_000_000_000_001_000, 4, 1, 1514, vec![0xc0; 96]),
        ]
    );
    let iface = |linktype, snaplen, resolution, offset_s| Interface {
        linktype,
        snaplen,
        resolution,
        offset_s,
    };
    assert_eq!(
        reader.interfaces(),
        [
            iface(1, 65535, TsResolution::MICRO, 0),
            iface(101, 0, TsResolution::NANO, 0),
            iface(127, 64, TsResolution::Binary(10), 1_600_000_000),
            iface(113, 0, TsResolution::NANO, -100),
            iface(1, 96, TsResolution::MICRO, -100),
        ]
    );
    assert_eq!(reader.frames_read(), 9);
    assert_eq!(reader.position(), bytes.len() as u64);
}

/// A big-endian file from its first byte, with the interface described before a
/// section's packets and a second section that reuses interface id 0 for another link.
#[test]
fn big_endian_file_and_per_section_interfaces() {
    let mut w = PcapNgWriter::new(Vec::new(), ByteOrder::Big).unwrap();
    let eth = Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::NANO,
        offset_s: 0,
    };
    w.add_interface(&eth).unwrap();
    w.write_packet(0, 42, &[1; 10], 10).unwrap();
    w.new_section(ByteOrder::Big).unwrap();
    w.add_interface(&Interface {
        linktype: 228,
        ..eth
    })
    .unwrap();
    w.write_packet(0, 43, &[2; 10], 10).unwrap();
    let bytes = w.into_inner();
    assert_eq!(bytes[8..12], [0x1a, 0x2b, 0x3c, 0x4d]);
    let recs = read_ok("be.pcapng", &bytes);
    assert_eq!(
        recs.iter()
            .map(|r| (r.ts_ns, r.interface, r.linktype))
            .collect::<Vec<_>>(),
        [(42, 0, 1), (43, 1, 228)]
    );
}

/// The resolutions of the brief and the extremes: 10^0 s, 10^-19 s, 2^-63 s, 2^0 s.
#[test]
fn time_stamp_resolutions_and_offsets() {
    let cases: [(TsResolution, i64, u64, i64); 8] = [
        (
            TsResolution::MICRO,
            0,
            1_700_000_000_000_001,
            1_700_000_000_000_001_000,
        ),
        (
            TsResolution::NANO,
            0,
            1_700_000_000_000_000_001,
            1_700_000_000_000_000_001,
        ),
        (
            TsResolution::Binary(10),
            0,
            1024 * 1_700_000_000 + 1,
            1_700_000_000_000_976_562,
        ),
        (
            TsResolution::Decimal(0),
            0,
            1_700_000_000,
            1_700_000_000_000_000_000,
        ),
        // 10^-19 s: 1.7e19 units do not fit in 64 bits; 1.7e18 units are 0.17 s.
        (
            TsResolution::Decimal(19),
            0,
            1_700_000_000_000_000_000,
            170_000_000,
        ),
        (TsResolution::Binary(63), 0, 1 << 62, 500_000_000),
        (TsResolution::Binary(0), 0, 3, 3_000_000_000),
        // An offset brings small counts to real dates, and may be negative.
        (TsResolution::MICRO, -3_600, 3_600_000_001, 1_000),
    ];
    for (order, name) in [(ByteOrder::Little, "le"), (ByteOrder::Big, "be")] {
        let mut bytes = PcapNgWriter::new(Vec::new(), order).unwrap().into_inner();
        for (i, (resolution, offset_s, units, _)) in cases.iter().enumerate() {
            let iface = Interface {
                linktype: 1,
                snaplen: 0,
                resolution: *resolution,
                offset_s: *offset_s,
            };
            let mut w = PcapNgWriter::new(Vec::new(), order).unwrap();
            w.add_interface(&iface).unwrap();
            // Keep the IDB, skip the writer's SHB: all interfaces in one section.
            bytes.extend_from_slice(&w.into_inner()[28..]);
            bytes.extend(epb(order, i as u32, *units, 1, 1, &[0]));
        }
        let recs = read_ok(name, &bytes);
        let got: Vec<i64> = recs.iter().map(|r| r.ts_ns).collect();
        let want: Vec<i64> = cases.iter().map(|c| c.3).collect();
        assert_eq!(got, want, "{name}");
    }
}

/// Time stamps that do not fit an `i64` of nanoseconds saturate instead of wrapping.
#[test]
fn huge_time_stamps_saturate() {
    let le = ByteOrder::Little;
    let mut w = PcapNgWriter::new(Vec::new(), le).unwrap();
    let iface = Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::Decimal(0),
        offset_s: i64::MAX,
    };
    w.add_interface(&iface).unwrap();
    w.add_interface(&Interface {
        offset_s: i64::MIN,
        ..iface
    })
    .unwrap();
    w.get_mut().extend(epb(le, 0, u64::MAX, 0, 0, &[]));
    w.get_mut().extend(epb(le, 1, 0, 0, 0, &[]));
    let recs = read_ok("huge.pcapng", &w.into_inner());
    assert_eq!(recs[0].ts_ns, i64::MAX);
    assert_eq!(recs[1].ts_ns, i64::MIN);
}

/// "the Captured Len of a Simple Packet Block is the minimum value among the Original
/// Packet Length and the snapshot length for the interface" (draft-ietf-opsawg-pcapng
/// §4.4); snaplen 0 means no limit; and never more than the block holds.
#[test]
fn simple_packet_block_captured_length() {
    let le = ByteOrder::Little;
    for (snaplen, orig_len, stored, caplen) in [
        (0, 50, 50, 50),    // no snapshot limit
        (64, 1500, 64, 64), // cut at the snapshot length
        (64, 30, 30, 30),   // shorter than the snapshot: padding is not data
        (0, 1500, 8, 8),    // lying original length: only what the block holds
    ] {
        let mut w = PcapNgWriter::new(Vec::new(), le).unwrap();
        w.add_interface(&Interface {
            linktype: 1,
            snaplen,
            resolution: TsResolution::MICRO,
            offset_s: 0,
        })
        .unwrap();
        w.get_mut().extend(spb(le, orig_len, &vec![9; stored]));
        let recs = read_ok("spb.pcapng", &w.into_inner());
        assert_eq!(
            (recs[0].data.len(), recs[0].orig_len, recs[0].ts_ns),
            (caplen, orig_len, 0)
        );
    }
}

/// The obsolete Packet Block (type 2): 16-bit interface id, 16-bit drop count, in both
/// byte orders.
#[test]
fn obsolete_packet_block() {
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let mut w = PcapNgWriter::new(Vec::new(), order).unwrap();
        let iface = Interface {
            linktype: 1,
            snaplen: 0,
            resolution: TsResolution::NANO,
            offset_s: 0,
        };
        w.add_interface(&iface).unwrap();
        w.add_interface(&Interface {
            linktype: 105,
            ..iface
        })
        .unwrap();
        w.get_mut().extend(packet_block(order, 1, 77, 100, &[5; 9]));
        let recs = read_ok("pb.pcapng", &w.into_inner());
        assert_eq!(recs, [rec(1, 77, 1, 105, 100, vec![5; 9])]);
    }
}

/// Name resolution, statistics, decryption secrets, process information and unknown
/// blocks carry no packets and take no frame number; custom and systemd journal blocks
/// take one (tshark 4.0.17 lists them as frames), but are not returned.
#[test]
fn non_packet_blocks_are_skipped() {
    let le = ByteOrder::Little;
    let mut w = PcapNgWriter::new(Vec::new(), le).unwrap();
    w.add_interface(&Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::MICRO,
        offset_s: 0,
    })
    .unwrap();
    w.write_packet(0, 1_000, &[1], 1).unwrap();
    for block_type in [4, 5, 0x0A, 0x8000_0001, 0x1234] {
        w.get_mut().extend(filler(le, block_type, 16));
    }
    w.write_packet(0, 2_000, &[2], 1).unwrap();
    w.get_mut()
        .extend(block(le, 0x0000_0BAD, &[0, 0, 0, 0, 1, 2, 3, 4]));
    w.get_mut()
        .extend(block(le, 0x4000_0BAD, &[0, 0, 0, 0, 1, 2, 3, 4]));
    w.get_mut().extend(block(le, 9, b"MESSAGE=hi\n"));
    w.write_packet(0, 3_000, &[3], 1).unwrap();
    let recs = read_ok("skip.pcapng", &w.into_inner());
    assert_eq!(
        recs.iter().map(|r| (r.frame, r.ts_ns)).collect::<Vec<_>>(),
        [(1, 1_000), (2, 2_000), (6, 3_000)]
    );
}

/// Options in EPBs and IDBs (comments, if_name, epb_flags) do not disturb the packet.
#[test]
fn options_are_ignored_where_not_needed() {
    let le = ByteOrder::Little;
    let mut idb = Vec::new();
    idb.extend_from_slice(&1u16.to_le_bytes());
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&0u32.to_le_bytes());
    idb.extend_from_slice(&[2, 0, 5, 0, b'w', b'l', b'a', b'n', b'0', 0, 0, 0]); // if_name
    idb.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0]); // if_tsresol 10^-9
    idb.extend_from_slice(&[0, 0, 0, 0]);
    let mut bytes = PcapNgWriter::new(Vec::new(), le).unwrap().into_inner();
    bytes.extend(block(le, 1, &idb));
    let mut body = Vec::new();
    for v in [0u32, 0, 1234, 3, 3] {
        body.extend_from_slice(&v.to_le_bytes());
    }
    body.extend_from_slice(&[7, 7, 7, 0]);
    body.extend_from_slice(&[1, 0, 3, 0, b'h', b'i', b'!', 0]); // opt_comment
    body.extend_from_slice(&[2, 0, 4, 0, 1, 0, 0, 0]); // epb_flags
    body.extend_from_slice(&[0, 0, 0, 0]);
    bytes.extend(block(le, 6, &body));
    assert_eq!(
        read_ok("opts.pcapng", &bytes),
        [rec(1, 1234, 0, 1, 3, vec![7, 7, 7])]
    );
}

/// An Interface Statistics Block's option list: (code, 8-byte value) pairs, then the end.
fn isb(order: ByteOrder, if_id: u32, options: &[(u16, u64)]) -> Vec<u8> {
    let u16b = |v: u16| match order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    };
    let u32b = |v: u32| match order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    };
    let mut body = Vec::new();
    body.extend_from_slice(&u32b(if_id));
    body.extend_from_slice(&u32b(0));
    body.extend_from_slice(&u32b(1000));
    body.extend_from_slice(&u16b(1)); // opt_comment, 3 bytes, padded
    body.extend_from_slice(&u16b(3));
    body.extend_from_slice(b"hi!\0");
    for &(code, value) in options {
        body.extend_from_slice(&u16b(code));
        body.extend_from_slice(&u16b(8));
        body.extend_from_slice(&match order {
            ByteOrder::Little => value.to_le_bytes(),
            ByteOrder::Big => value.to_be_bytes(),
        });
    }
    body.extend_from_slice(&[0, 0, 0, 0]);
    common::block(order, 5, &body)
}

/// What the capture dropped: the latest Interface Statistics Block of each interface
/// (`isb_ifdrop` 5 + `isb_osdrop` 7; `isb_ifrecv` 4 is not a drop), summed over the
/// interfaces, in both byte orders; none said, `None`.
#[test]
fn interface_statistics_give_the_capture_drops() {
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let mut w = PcapNgWriter::new(Vec::new(), order).unwrap();
        let iface = Interface {
            linktype: 1,
            snaplen: 0,
            resolution: TsResolution::MICRO,
            offset_s: 0,
        };
        w.add_interface(&iface).unwrap();
        w.add_interface(&iface).unwrap();
        w.write_packet(0, 1_000, &[1], 1).unwrap();
        w.get_mut().extend(isb(order, 0, &[(4, 1000), (5, 1)]));
        w.write_packet(1, 2_000, &[2], 1).unwrap();
        w.get_mut()
            .extend(isb(order, 0, &[(4, 2000), (5, 3), (7, 1 << 33)]));
        w.get_mut().extend(isb(order, 1, &[(5, 4)]));
        let bytes = w.into_inner();
        let mut reader = common::open("isb.pcapng", &bytes).unwrap();
        let (recs, error) = common::drain(&mut reader);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(recs.len(), 2);
        assert_eq!(reader.drops(), Some(3 + (1 << 33) + 4), "{order:?}");
    }
    let mut w = PcapNgWriter::new(Vec::new(), ByteOrder::Little).unwrap();
    w.add_interface(&Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::MICRO,
        offset_s: 0,
    })
    .unwrap();
    w.write_packet(0, 1_000, &[1], 1).unwrap();
    w.get_mut().extend(isb(ByteOrder::Little, 0, &[(4, 1000)]));
    let bytes = w.into_inner();
    let mut reader = common::open("no-drops.pcapng", &bytes).unwrap();
    common::drain(&mut reader);
    assert_eq!(reader.drops(), None, "no drop counter, nothing known");
}
