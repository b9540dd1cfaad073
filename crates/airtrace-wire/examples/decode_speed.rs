//! Times `airtrace_wire::decode` on a few representative frames, 10 million times each,
//! and etherparse's lax slicing on the first two for comparison.
//!
//! Run: `cargo run --release -p airtrace-wire --example decode_speed [iterations [filter]]`
//! (`filter`: only the lines whose name contains it).

use std::hint::black_box;
use std::time::Instant;

use airtrace_wire::{decode, Decoded, LinkType, Transport};
use etherparse::{
    Ethernet2Slice, LaxIpv4Slice, LaxNetSlice, LaxSlicedPacket, PacketBuilder, TcpOptionElement,
    TcpSlice, TransportSlice,
};

const TS: TcpOptionElement = TcpOptionElement::Timestamp(0x1122_3344, 0x5566_7788);

/// Ethernet + IPv4 + TCP (NOP, NOP, timestamps) + 1448 bytes of data.
fn eth_ipv4_tcp_ts() -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .tcp(40000, 80, 1_000_000, 65535)
        .ack(2_000_000)
        .options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TS])
        .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 1448]).unwrap();
    v
}

/// Ethernet + IPv4 + TCP pure ACK with timestamps and 3 SACK blocks.
fn eth_ipv4_tcp_sack() -> Vec<u8> {
    let sack = TcpOptionElement::SelectiveAcknowledgement(
        (1000, 2000),
        [Some((3000, 4000)), Some((5000, 6000)), None],
    );
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, 2], [198, 18, 0, 1], 64)
        .tcp(80, 40000, 2_000_000, 65535)
        .ack(1_000_000)
        .options(&[
            TcpOptionElement::Noop,
            TcpOptionElement::Noop,
            TS,
            TcpOptionElement::Noop,
            TcpOptionElement::Noop,
            sack,
        ])
        .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &[]).unwrap();
    v
}

/// Ethernet + 802.1Q + IPv6 + TCP with timestamps + 1428 bytes of data.
fn eth_vlan_ipv6_tcp() -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .single_vlan(10.try_into().unwrap())
        .ipv6([0x20; 16], [0x21; 16], 64)
        .tcp(40000, 443, 1_000_000, 65535)
        .ack(2_000_000)
        .options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TS])
        .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 1428]).unwrap();
    v
}

/// Radiotap (TSFT, flags, rate, channel, dBm signal) + 802.11 QoS data + LLC/SNAP +
/// IPv4 + TCP with timestamps + 1448 bytes of data.
fn radiotap_wlan_ipv4_tcp() -> Vec<u8> {
    let mut v = vec![0, 0, 24, 0, 0x2f, 0, 0, 0];
    v.extend_from_slice(&[0; 8]); // TSFT
    v.extend_from_slice(&[0x00, 0x16, 0x9e, 0x09, 0xa0, 0x00, 0xba, 0x00]); // flags, rate, channel, signal, pad
    v.extend_from_slice(&[0x88, 0x02, 0x2c, 0x00]); // QoS data, from DS, duration
    v.extend_from_slice(&[
        2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0, 2, 0x10, 0x00, 0x00, 0x00,
    ]);
    v.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
    let b = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .tcp(40000, 80, 1_000_000, 65535)
        .ack(2_000_000)
        .options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TS])
        .unwrap();
    b.write(&mut v, &[0u8; 1448]).unwrap();
    v
}

/// Linux SLL + IPv4 + UDP 2152 + GTP-U + IPv6 + TCP with timestamps + 1000 bytes.
fn sll_gtp_ipv6_tcp() -> Vec<u8> {
    let inner = {
        let b = PacketBuilder::ipv6([0x20; 16], [0x21; 16], 64)
            .tcp(40000, 5060, 1_000_000, 65535)
            .ack(2_000_000)
            .options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TS])
            .unwrap();
        let mut v = Vec::new();
        b.write(&mut v, &[0u8; 1000]).unwrap();
        v
    };
    let mut gtp = vec![0x30, 0xff];
    gtp.extend_from_slice(&(inner.len() as u16).to_be_bytes());
    gtp.extend_from_slice(&[0, 0, 0, 1]);
    gtp.extend_from_slice(&inner);
    let b = PacketBuilder::linux_sll(
        etherparse::LinuxSllPacketType::OUTGOING,
        6,
        [2, 0, 0, 0, 0, 1, 0, 0],
    )
    .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
    .udp(2152, 2152);
    let mut v = Vec::new();
    b.write(&mut v, &gtp).unwrap();
    v
}

/// Ethernet + IPv6 + TCP with timestamps + 1428 bytes of data.
fn eth_ipv6_tcp() -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv6([0x20; 16], [0x21; 16], 64)
        .tcp(40000, 443, 1_000_000, 65535)
        .ack(2_000_000)
        .options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TS])
        .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 1428]).unwrap();
    v
}

/// Linux SLL + IPv4 + TCP with timestamps + 1448 bytes of data (`tcpdump -i any`).
fn sll_ipv4_tcp() -> Vec<u8> {
    let b = PacketBuilder::linux_sll(
        etherparse::LinuxSllPacketType::OUTGOING,
        6,
        [2, 0, 0, 0, 0, 1, 0, 0],
    )
    .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
    .tcp(40000, 80, 1_000_000, 65535)
    .ack(2_000_000)
    .options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TS])
    .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 1448]).unwrap();
    v
}

/// Raw IPv4 + TCP with timestamps + 1448 bytes of data.
fn raw_ipv4_tcp() -> Vec<u8> {
    let b = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .tcp(40000, 80, 1_000_000, 65535)
        .ack(2_000_000)
        .options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TS])
        .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 1448]).unwrap();
    v
}

/// Ethernet + IPv4 + TCP SYN with Linux's options: MSS, SACK permitted, timestamps,
/// NOP, window scale.
fn eth_ipv4_tcp_syn() -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .tcp(40000, 80, 1_000_000, 64240)
        .syn()
        .options(&[
            TcpOptionElement::MaximumSegmentSize(1460),
            TcpOptionElement::SelectiveAcknowledgementPermitted,
            TS,
            TcpOptionElement::Noop,
            TcpOptionElement::WindowScale(7),
        ])
        .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &[]).unwrap();
    v
}

/// Ethernet + IPv4 + UDP + 512 bytes of data.
fn eth_ipv4_udp() -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
        .udp(5000, 5001);
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 512]).unwrap();
    v
}

/// Run `f` `n` times in 10 rounds and print the best and the median round: the machine
/// is shared, and the best round is the closest to the code's own cost.
fn time(name: &str, n: u32, mut f: impl FnMut()) {
    let rounds = 10;
    let mut per_frame: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n / rounds {
                f();
            }
            t.elapsed().as_secs_f64() * 1e9 / f64::from(n / rounds)
        })
        .collect();
    per_frame.sort_by(f64::total_cmp);
    let (best, median) = (per_frame[0], per_frame[per_frame.len() / 2]);
    println!(
        "{name:<58} best {best:6.1} ns  median {median:6.1} ns  ({:5.1} M frames/s)",
        1e3 / best
    );
}

/// The fields a decode would need, read through etherparse's lax slicing.
#[derive(Default)]
struct Fields {
    ports: (u16, u16),
    seq: u32,
    src: [u8; 4],
    len: usize,
    ts: Option<(u32, u32)>,
    sack: usize,
}

fn etherparse_lax(frame: &[u8], o: &mut Fields) {
    let Ok(p) = LaxSlicedPacket::from_ethernet(frame) else {
        return;
    };
    if let Some(LaxNetSlice::Ipv4(ip)) = &p.net {
        o.src = ip.header().source();
        o.len = ip.payload().payload.len();
    }
    if let Some(TransportSlice::Tcp(t)) = &p.transport {
        tcp_fields(t, o);
    }
}

fn etherparse_slices(frame: &[u8], o: &mut Fields) {
    let Ok(e) = Ethernet2Slice::from_slice_without_fcs(frame) else {
        return;
    };
    let Ok((ip, _)) = LaxIpv4Slice::from_slice(e.payload_slice()) else {
        return;
    };
    o.src = ip.header().source();
    o.len = ip.payload().payload.len();
    if let Ok(t) = TcpSlice::from_slice(ip.payload().payload) {
        tcp_fields(&t, o);
    }
}

fn tcp_fields(t: &TcpSlice<'_>, o: &mut Fields) {
    o.ports = (t.source_port(), t.destination_port());
    o.seq = t.sequence_number();
    for opt in t.options_iterator() {
        match opt {
            Ok(TcpOptionElement::Timestamp(a, b)) => o.ts = Some((a, b)),
            Ok(TcpOptionElement::SelectiveAcknowledgement(_, rest)) => {
                o.sack = 1 + rest.iter().flatten().count()
            }
            _ => {}
        }
    }
}

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let filter = std::env::args().nth(2).unwrap_or_default();
    let wanted = |name: &str| name.contains(&filter);
    let frames = [
        (
            "ethernet ipv4 tcp+ts 1448B",
            LinkType::ETHERNET,
            eth_ipv4_tcp_ts(),
        ),
        (
            "ethernet ipv4 tcp+ts+sack3 ack",
            LinkType::ETHERNET,
            eth_ipv4_tcp_sack(),
        ),
        (
            "ethernet vlan ipv6 tcp+ts 1428B",
            LinkType::ETHERNET,
            eth_vlan_ipv6_tcp(),
        ),
        (
            "radiotap 802.11 qos llc ipv4 tcp+ts",
            LinkType::IEEE802_11_RADIOTAP,
            radiotap_wlan_ipv4_tcp(),
        ),
        (
            "sll ipv4 udp gtp-u ipv6 tcp+ts",
            LinkType::LINUX_SLL,
            sll_gtp_ipv6_tcp(),
        ),
        (
            "ethernet ipv6 tcp+ts 1428B",
            LinkType::ETHERNET,
            eth_ipv6_tcp(),
        ),
        ("sll ipv4 tcp+ts 1448B", LinkType::LINUX_SLL, sll_ipv4_tcp()),
        ("raw ipv4 tcp+ts 1448B", LinkType::RAW, raw_ipv4_tcp()),
        (
            "ethernet ipv4 tcp syn",
            LinkType::ETHERNET,
            eth_ipv4_tcp_syn(),
        ),
        ("ethernet ipv4 udp 512B", LinkType::ETHERNET, eth_ipv4_udp()),
    ];
    let mut d = Decoded::default();
    for (name, link, frame) in &frames {
        decode(*link, frame, frame.len() as u32, &mut d);
        assert!(
            d.stop.is_none() && d.transport != Transport::None,
            "{name}: {d:?}"
        );
        let name = format!("airtrace decode: {name}");
        if wanted(&name) {
            time(&name, n, || {
                decode(
                    black_box(*link),
                    black_box(frame),
                    black_box(frame.len() as u32),
                    black_box(&mut d),
                )
            });
        }
    }
    let mut o = Fields::default();
    for (name, _, frame) in &frames[..2] {
        let lax = format!("etherparse LaxSlicedPacket: {name}");
        if wanted(&lax) {
            time(&lax, n, || {
                etherparse_lax(black_box(frame), black_box(&mut o))
            });
        }
        let slices = format!("etherparse per-layer slices: {name}");
        if wanted(&slices) {
            time(&slices, n, || {
                etherparse_slices(black_box(frame), black_box(&mut o))
            });
        }
    }
}
