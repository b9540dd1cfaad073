//! Real captures from the shared corpus (`shared/corpus/real`, see its MANIFEST.md),
//! read record by record with pcap-parser and decoded.

use std::io::Read;
use std::path::PathBuf;

use airtrace_wire::{decode, Decoded, Layer, LinkType, StopReason};
use pcap_parser::pcap::{parse_pcap_frame, parse_pcap_frame_be, parse_pcap_header};
use pcap_parser::pcapng::Block;
use pcap_parser::PcapNGCapture;

/// One captured record.
struct Record {
    link: LinkType,
    orig_len: u32,
    data: Vec<u8>,
}

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/real")
}

/// All records of a corpus file (pcap or pcapng, gzip-compressed or not), or `None`
/// when the corpus is not beside the repository.
fn records(name: &str) -> Option<Vec<Record>> {
    let path = corpus().join(name);
    let raw = std::fs::read(&path).ok()?;
    let bytes = if name.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    };
    if name.contains(".pcapng") {
        return Some(pcapng_records(&bytes));
    }
    let (mut rest, header) = parse_pcap_header(&bytes).unwrap();
    let link = LinkType(header.network.0 as u32);
    let mut out = Vec::new();
    while !rest.is_empty() {
        let parsed = if header.is_bigendian() {
            parse_pcap_frame_be(rest)
        } else {
            parse_pcap_frame(rest)
        };
        let (next, block) =
            parsed.unwrap_or_else(|e| panic!("{name}: record {}: {e:?}", out.len() + 1));
        out.push(Record {
            link,
            orig_len: block.origlen,
            data: block.data.to_vec(),
        });
        rest = next;
    }
    Some(out)
}

fn pcapng_records(bytes: &[u8]) -> Vec<Record> {
    let cap = PcapNGCapture::from_file(bytes).unwrap();
    let mut out = Vec::new();
    for section in &cap.sections {
        let mut links = Vec::new();
        for block in &section.blocks {
            match block {
                Block::InterfaceDescription(idb) => links.push(LinkType(idb.linktype.0 as u32)),
                Block::EnhancedPacket(epb) => out.push(Record {
                    link: links[epb.if_id as usize],
                    orig_len: epb.origlen,
                    data: epb.data[..epb.caplen as usize].to_vec(),
                }),
                _ => {}
            }
        }
    }
    out
}

fn decode_all(records: &[Record]) -> Vec<Decoded> {
    records
        .iter()
        .map(|r| {
            let mut d = Decoded::default();
            decode(r.link, &r.data, r.orig_len, &mut d);
            d
        })
        .collect()
}

/// Skip (with a note) when the corpus is absent, e.g. in a bare clone.
macro_rules! corpus_or_skip {
    ($name:expr) => {
        match records($name) {
            Some(r) => r,
            None => {
                eprintln!("corpus file {} not found; skipped", $name);
                return;
            }
        }
    };
}

#[test]
fn every_corpus_file_decodes_without_malformed_headers() {
    let Ok(dir) = std::fs::read_dir(corpus()) else {
        return;
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".pcap") || n.contains(".dmp"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{names:?}");
    for name in names {
        let records = records(&name).unwrap();
        let decoded = decode_all(&records);
        let tcp = decoded.iter().filter(|d| d.tcp().is_some()).count();
        let mut stops = std::collections::BTreeMap::new();
        for d in &decoded {
            if let Some(s) = d.stop {
                *stops
                    .entry(format!("{}:{:?}", s.layer.name(), s.reason))
                    .or_insert(0) += 1;
            }
        }
        eprintln!(
            "{name}: {} frames, {tcp} TCP, stops {stops:?}",
            records.len()
        );
        // The only malformed headers in the corpus are SYN/ACKs from one host whose
        // timestamps option runs past the options area; tshark 4.0 flags the same
        // frames ("option goes past end of options").
        let expected = match name.as_str() {
            "tcptrace_6syns.dmp.gz" => 2,
            "tcptrace_long_rtt.dmp.gz" => 1,
            _ => 0,
        };
        let malformed: Vec<_> = decoded
            .iter()
            .filter_map(|d| d.stop)
            .filter(|s| matches!(s.reason, StopReason::Malformed(_)))
            .collect();
        assert_eq!(malformed.len(), expected, "{name}: {malformed:?}");
        assert!(malformed.iter().all(|s| s.layer == Layer::TcpOptions));
        assert!(
            tcp > 0 || name.contains("radiotap"),
            "{name}: no TCP decoded"
        );
    }
}

/// MANIFEST.md: frames 14 and 17 carry the 802.11 Retry bit and repeat the 802.11
/// sequence number and IP ID of frames 13 and 16 (MAC-layer retries, not TCP loss).
#[test]
fn arkime_80211http_retries_repeat_the_sequence_number() {
    let records = corpus_or_skip!("arkime_80211http.pcap");
    let d = decode_all(&records);
    assert_eq!(d.len(), 26);
    for (retry, original) in [(14, 13), (17, 16)] {
        let (r, o) = (&d[retry - 1], &d[original - 1]);
        let (rw, ow) = (r.wlan.unwrap(), o.wlan.unwrap());
        assert!(rw.retry && !ow.retry, "frames {original}/{retry}");
        assert_eq!(rw.seq, ow.seq);
        assert!(rw.seq.is_some());
        assert_eq!(r.ip.unwrap().id, o.ip.unwrap().id);
        assert_eq!(r.tcp().unwrap().seq, o.tcp().unwrap().seq);
        assert_eq!(r.payload.len(), o.payload.len());
    }
    let retries: Vec<usize> = d
        .iter()
        .enumerate()
        .filter(|(_, d)| d.wlan.is_some_and(|w| w.retry))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(retries, [14, 17]);
    // Every frame has radiotap with the FCS flag; 11 Mb/s; RSSI in -25..-76 dBm.
    for x in &d {
        let rt = x.radiotap.unwrap();
        assert!(rt.flags.unwrap() & 0x10 != 0);
        assert!(!rt.bad_fcs());
        let s = rt.signal_dbm.unwrap();
        assert!((-76..=-25).contains(&s), "{s}");
        assert_eq!(rt.channel_mhz, Some(2462));
    }
    // The first frame is the client's SYN with MSS 1460, SACK-permitted, timestamps, wscale.
    let syn = d[0].tcp().unwrap();
    assert_eq!(syn.flags, airtrace_wire::tcp_flags::SYN);
    assert_eq!(syn.mss, Some(1460));
    assert!(syn.sack_permitted);
    assert_eq!(syn.window_scale, Some(6));
    assert_eq!(d[0].stop, None);
}

/// MANIFEST.md: 10 radiotap frames (probe responses, ACKs, beacons), 4 with Retry.
#[test]
fn libtrace_radiotap_frames() {
    let records = corpus_or_skip!("libtrace_10_packets_radiotap.pcap");
    let d = decode_all(&records);
    assert_eq!(d.len(), 10);
    assert_eq!(
        d.iter().filter(|d| d.wlan.is_some_and(|w| w.retry)).count(),
        4
    );
    for x in &d {
        assert!(x.radiotap.is_some());
        let w = x.wlan.unwrap();
        match w.frame_type {
            // Management bodies are not decoded.
            0 => assert_eq!(x.stop.unwrap().layer, Layer::Wlan),
            // Control frames (ACKs) carry no body and no sequence number.
            1 => {
                assert_eq!(x.stop, None);
                assert_eq!(w.seq, None);
            }
            t => panic!("unexpected frame type {t}"),
        }
    }
}

/// MANIFEST.md: Linux SLL, GTP-U over IPv4/UDP carrying IPv6; SIP over TCP, 58 TCP
/// frames in 4 connections.
#[test]
fn arkime_gtp_iphone_tcp_inside_gtp_u() {
    let records = corpus_or_skip!("arkime_gtp-iphone.pcap");
    let d = decode_all(&records);
    assert_eq!(d.len(), 106);
    let tcp: Vec<&Decoded> = d.iter().filter(|d| d.tcp().is_some()).collect();
    assert_eq!(tcp.len(), 58);
    for x in &tcp {
        assert_eq!(x.tunnel_depth, 1);
        assert!(x.ip.unwrap().src.is_ipv6());
        assert_eq!(x.stop, None);
    }
    // The 4 connections (tshark -z conv,tcp) reuse one address/port pair, 5060 to
    // 5060; each starts with a SYN.
    let mut pairs: Vec<_> = tcp
        .iter()
        .map(|x| {
            let (ip, t) = (x.ip.unwrap(), x.tcp().unwrap());
            let a = (ip.src, t.src_port);
            let b = (ip.dst, t.dst_port);
            if a < b {
                (a, b)
            } else {
                (b, a)
            }
        })
        .collect();
    pairs.dedup();
    assert_eq!(pairs.len(), 1);
    let syns = tcp
        .iter()
        .filter(|x| x.tcp().unwrap().flags == airtrace_wire::tcp_flags::SYN)
        .count();
    assert_eq!(syns, 4);
}

/// Frame 5 is a SYN/ACK with a 20-byte options area holding MSS, NOP, WS, SACK-permitted,
/// NOP, NOP and then a 10-byte timestamps option that runs 2 bytes past the header
/// (tshark: "option goes past end of options"). The header fields and the options
/// before it are kept.
#[test]
fn tcptrace_6syns_malformed_options_keep_the_header() {
    let records = corpus_or_skip!("tcptrace_6syns.dmp.gz");
    let d = decode_all(&records);
    let bad: Vec<usize> = d
        .iter()
        .enumerate()
        .filter(|(_, x)| x.stop.is_some_and(|s| s.layer == Layer::TcpOptions))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert_eq!(bad[0], 5);
    let f5 = &d[4];
    assert_eq!(
        f5.stop.unwrap().reason,
        StopReason::Malformed("TCP option runs past the header")
    );
    let t = f5.tcp().unwrap();
    assert_eq!((t.src_port, t.dst_port, t.header_len), (9080, 4333, 40));
    assert_eq!(
        (t.mss, t.window_scale, t.sack_permitted, t.timestamps),
        (Some(1460), Some(3), true, None)
    );
}

/// MANIFEST.md: an FDDI capture (link type 10) of one HTTP/1.0 fetch, 27 frames.
#[test]
fn tcptrace_fddi_capture() {
    let records = corpus_or_skip!("tcptrace_single_byte_rexmit.dmp.gz");
    assert_eq!(records[0].link, LinkType::FDDI);
    let d = decode_all(&records);
    assert_eq!(d.len(), 27);
    assert!(d.iter().all(|x| x.tcp().is_some() && x.stop.is_none()));
    assert!(d.iter().any(|x| x.tcp().unwrap().src_port == 80));
}

/// MANIFEST.md: an iperf flow (port 5001) inside MPLS labels.
#[test]
fn libtrace_ip_in_mpls() {
    let records = corpus_or_skip!("libtrace_ip-in-mpls.pcap.gz");
    let d = decode_all(&records);
    let iperf = d
        .iter()
        .filter(|x| {
            x.tcp()
                .is_some_and(|t| t.dst_port == 5001 || t.src_port == 5001)
        })
        .count();
    assert!(iperf > 10_000 - 1000, "{iperf}");
    assert!(d.iter().all(|x| x.tunnel_depth == 0));
}
