//! Property tests: what the writers write, the reader reads back (random times,
//! lengths, data, byte orders, sections, interfaces); any prefix of a file reads as the
//! records wholly inside it; and damaged files never panic.

mod common;

use airtrace_pcap::{
    ByteOrder, ErrorKind, Interface, PcapNgWriter, PcapWriter, Resolution, TsResolution,
};
use common::{open, Rec};
use proptest::prelude::*;

/// One packet to write: time, captured bytes, extra original length.
#[derive(Debug, Clone)]
struct Packet {
    ts_ns: i64,
    data: Vec<u8>,
    extra: u32,
}

fn order() -> impl Strategy<Value = ByteOrder> {
    prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)]
}

fn data() -> impl Strategy<Value = Vec<u8>> {
    // Mostly small, sometimes past a few refills of nothing but one packet.
    prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 0..200),
        1 => prop::collection::vec(any::<u8>(), 1000..5000),
    ]
}

fn pcap_packet() -> impl Strategy<Value = Packet> {
    (
        0..=i64::from(u32::MAX) * 1_000_000_000 + 999_999_999,
        data(),
        0..2000u32,
    )
        .prop_map(|(ts_ns, data, extra)| Packet { ts_ns, data, extra })
}

/// (file, the records it must read as)
fn pcap_file() -> impl Strategy<Value = (Vec<u8>, Vec<Rec>)> {
    (
        order(),
        prop_oneof![Just(Resolution::Micro), Just(Resolution::Nano)],
        prop_oneof![Just(0u32), 1..300u32],
        any::<u16>(),
        prop::collection::vec(pcap_packet(), 0..40),
    )
        .prop_map(|(order, resolution, snaplen, linktype, packets)| {
            let linktype = u32::from(linktype);
            let mut w =
                PcapWriter::with_byte_order(Vec::new(), linktype, snaplen, resolution, order)
                    .unwrap();
            let mut recs = Vec::new();
            for (i, p) in packets.iter().enumerate() {
                let orig_len = p.data.len() as u32 + p.extra;
                w.write_packet(p.ts_ns, &p.data, orig_len).unwrap();
                let keep = if snaplen == 0 {
                    p.data.len()
                } else {
                    p.data.len().min(snaplen as usize)
                };
                let ts_ns = match resolution {
                    Resolution::Micro => p.ts_ns - p.ts_ns % 1000,
                    Resolution::Nano => p.ts_ns,
                };
                recs.push(Rec {
                    frame: i as u64 + 1,
                    ts_ns,
                    interface: 0,
                    linktype,
                    orig_len,
                    data: p.data[..keep].to_vec(),
                });
            }
            (w.into_inner(), recs)
        })
}

fn resolution() -> impl Strategy<Value = TsResolution> {
    prop_oneof![
        Just(TsResolution::MICRO),
        Just(TsResolution::NANO),
        Just(TsResolution::Decimal(3)),
        Just(TsResolution::Binary(10)),
    ]
}

fn interface() -> impl Strategy<Value = Interface> {
    (
        any::<u16>(),
        prop_oneof![Just(0u32), 1..300u32],
        resolution(),
        -1_000_000_000i64..1_000_000_000,
    )
        .prop_map(|(linktype, snaplen, resolution, offset_s)| Interface {
            linktype: u32::from(linktype),
            snaplen,
            resolution,
            offset_s,
        })
}

/// A step in nanoseconds that `resolution` stores exactly.
fn step(resolution: TsResolution) -> i64 {
    match resolution {
        TsResolution::Decimal(3) => 1_000_000,
        TsResolution::Decimal(6) => 1_000,
        // 2^-10 s is 976562.5 ns: every second unit is a whole number of nanoseconds.
        TsResolution::Binary(10) => 1_953_125,
        _ => 1,
    }
}

/// A section: byte order, interfaces, and packets as (interface pick, steps, data, extra).
type Section = (ByteOrder, Vec<Interface>, Vec<(usize, u64, Vec<u8>, u32)>);

fn section() -> impl Strategy<Value = Section> {
    (
        order(),
        prop::collection::vec(interface(), 1..4),
        prop::collection::vec((any::<usize>(), 0..1u64 << 40, data(), 0..2000u32), 0..20),
    )
}

fn pcapng_file() -> impl Strategy<Value = (Vec<u8>, Vec<Rec>)> {
    prop::collection::vec(section(), 1..4).prop_map(|sections| {
        let mut w = PcapNgWriter::new(Vec::new(), sections[0].0).unwrap();
        let mut recs = Vec::new();
        let mut global = 0u32;
        for (i, (order, interfaces, packets)) in sections.iter().enumerate() {
            if i > 0 {
                w.new_section(*order).unwrap();
            }
            for iface in interfaces {
                w.add_interface(iface).unwrap();
            }
            for (pick, steps, data, extra) in packets {
                let id = pick % interfaces.len();
                let iface = interfaces[id];
                let ts_ns = iface.offset_s * 1_000_000_000 + *steps as i64 * step(iface.resolution);
                let orig_len = data.len() as u32 + extra;
                w.write_packet(id as u32, ts_ns, data, orig_len).unwrap();
                let keep = match iface.snaplen {
                    0 => data.len(),
                    n => data.len().min(n as usize),
                };
                recs.push(Rec {
                    frame: recs.len() as u64 + 1,
                    ts_ns,
                    interface: global + id as u32,
                    linktype: iface.linktype,
                    orig_len,
                    data: data[..keep].to_vec(),
                });
            }
            global += interfaces.len() as u32;
        }
        (w.into_inner(), recs)
    })
}

fn any_file() -> impl Strategy<Value = (Vec<u8>, Vec<Rec>)> {
    prop_oneof![pcap_file(), pcapng_file()]
}

/// Reads a valid file; also returns the position after each record (the end of its
/// bytes, for a plain file).
fn read_with_ends(bytes: &[u8]) -> (Vec<Rec>, Vec<u64>) {
    let mut reader = open("prop", bytes).unwrap();
    let mut recs = Vec::new();
    let mut ends = Vec::new();
    while let Some(r) = reader.next_record() {
        let r = r.unwrap();
        recs.push(Rec {
            frame: r.frame,
            ts_ns: r.ts_ns,
            interface: r.interface,
            linktype: r.linktype,
            orig_len: r.orig_len,
            data: r.data.to_vec(),
        });
        ends.push(reader.position());
    }
    (recs, ends)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn written_files_read_back((bytes, expected) in any_file()) {
        let (recs, ends) = read_with_ends(&bytes);
        prop_assert_eq!(&recs, &expected);
        if let Some(&last) = ends.last() {
            prop_assert!(last <= bytes.len() as u64);
        }
        // And the same through gzip.
        let (recs, error) = common::read_all("prop.gz", &common::gzip(&bytes));
        prop_assert!(error.is_none());
        prop_assert_eq!(recs, expected);
    }

    /// A file cut anywhere reads as the records wholly before the cut, then at most a
    /// truncation error (or, cut before the first record, fails to open as truncated or
    /// empty).
    #[test]
    fn any_prefix_reads_as_the_whole_records_in_it(
        (bytes, _) in any_file(),
        cut in any::<prop::sample::Index>(),
    ) {
        let (full, ends) = read_with_ends(&bytes);
        let cut = cut.index(bytes.len() + 1);
        let whole = ends.iter().filter(|&&end| end <= cut as u64).count();
        match open("cut", &bytes[..cut]) {
            Err(e) => {
                let clean = matches!(e.kind, ErrorKind::Truncated { .. } | ErrorKind::Empty);
                prop_assert!(clean, "{}", e);
                prop_assert_eq!(whole, 0);
            }
            Ok(mut reader) => {
                let (recs, error) = common::drain(&mut reader);
                prop_assert_eq!(&recs[..], &full[..whole]);
                if let Some(e) = error {
                    prop_assert!(e.is_truncated(), "{}", e);
                    prop_assert!(cut < bytes.len());
                }
                if cut == bytes.len() {
                    prop_assert_eq!(recs.len(), full.len());
                }
            }
        }
    }

    /// Flipped bytes anywhere: no panic, and every error is a clean one.
    #[test]
    fn damaged_files_never_panic(
        (mut bytes, _) in any_file(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1..=255u8), 1..8),
    ) {
        for (at, mask) in flips {
            let at = at.index(bytes.len());
            bytes[at] ^= mask;
        }
        if let Ok(mut reader) = open("damaged", &bytes) {
            let mut last = 0;
            while let Some(r) = reader.next_record() {
                match r {
                    Ok(r) => {
                        prop_assert!(r.frame > last);
                        last = r.frame;
                        prop_assert!(r.data.len() <= airtrace_pcap::MAX_CAPLEN as usize);
                    }
                    Err(e) => prop_assert!(!e.to_string().contains('\n')),
                }
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        magic in 0..4usize,
    ) {
        // Nothing, or the magic number of a LE µs pcap, a pcapng, a BE ns pcap.
        let magics: [&[u8]; 4] = [
            &[],
            &[0xd4, 0xc3, 0xb2, 0xa1],
            &[0x0a, 0x0d, 0x0d, 0x0a],
            &[0xa1, 0xb2, 0x3c, 0x4d],
        ];
        let mut file = magics[magic].to_vec();
        file.extend(bytes);
        if let Ok(mut reader) = open("random", &file) {
            while let Some(r) = reader.next_record() {
                if let Ok(r) = r {
                    prop_assert!(r.data.len() <= file.len());
                }
            }
        }
    }
}
