//! Valid frames built with etherparse's `PacketBuilder`, and proptest strategies for
//! them, shared by the round-trip and robustness tests.

// Each test crate uses part of this module.
#![allow(dead_code)]

use airtrace_wire::{Layer, LinkType};
use etherparse::{
    IpHeaders, IpNumber, Ipv4Header, Ipv6Header, LinuxSllPacketType, PacketBuilder, TcpHeader,
    TcpOptionElement, VlanId,
};
use proptest::prelude::*;

/// The link layer a test frame is wrapped in.
#[derive(Clone, Copy, Debug)]
pub enum Link {
    Ethernet,
    /// Ethernet with one 802.1Q tag.
    Vlan(u16),
    /// Ethernet with 802.1ad outer and 802.1Q inner tags.
    QinQ(u16, u16),
    LinuxSll,
    Raw,
    /// Radiotap + 802.11 QoS data + LLC/SNAP (etherparse has no 802.11: the headers
    /// come from `RADIOTAP_WLAN`).
    Radiotap,
    /// Linux SLL + IPv4 + UDP 2152 + GTP-U, around the built IP packet.
    SllGtp,
}

/// Radiotap header (radiotap.org): it_len 24, present TSFT, flags (0: no FCS), rate,
/// channel, dBm signal; then an 802.11 QoS data frame header From DS (IEEE 802.11-2020
/// 9.3.2.1, sequence 0x100), QoS control 0, and LLC/SNAP for IPv4 (RFC 1042). The last
/// byte, the EtherType's low byte, is set per IP version.
const RADIOTAP_WLAN: [u8; 58] = [
    0x00, 0x00, 0x18, 0x00, 0x2f, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x00, 0x16, 0x9e, 0x09,
    0xa0, 0x00, 0xba, 0x00, 0x88, 0x02, 0x2c, 0x00, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 3, 2, 0, 0, 0,
    0, 2, 0x00, 0x10, 0x00, 0x00, 0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00,
];

impl Link {
    pub fn link_type(self) -> LinkType {
        match self {
            Link::Ethernet | Link::Vlan(_) | Link::QinQ(..) => LinkType::ETHERNET,
            Link::LinuxSll | Link::SllGtp => LinkType::LINUX_SLL,
            Link::Raw => LinkType::RAW,
            Link::Radiotap => LinkType::IEEE802_11_RADIOTAP,
        }
    }

    /// Bytes of headers before the (innermost) IP header.
    pub fn header_len(self) -> usize {
        match self {
            Link::Ethernet => 14,
            Link::Vlan(_) => 18,
            Link::QinQ(..) => 22,
            Link::LinuxSll => 16,
            Link::Raw => 0,
            Link::Radiotap => RADIOTAP_WLAN.len(),
            Link::SllGtp => 16 + 20 + 8 + 8,
        }
    }

    pub fn tunnel_depth(self) -> u8 {
        u8::from(matches!(self, Link::SllGtp))
    }

    /// The headers before the IP header, as (end offset, layer): a frame cut before
    /// `end` stops at `layer`.
    pub fn edges(self) -> Vec<(usize, Layer)> {
        match self {
            Link::Ethernet => vec![(14, Layer::Link)],
            Link::Vlan(_) => vec![(14, Layer::Link), (18, Layer::Vlan)],
            Link::QinQ(..) => vec![(14, Layer::Link), (18, Layer::Vlan), (22, Layer::Vlan)],
            Link::LinuxSll => vec![(16, Layer::Link)],
            // The version nibble decides between IPv4 and IPv6.
            Link::Raw => vec![(1, Layer::Link)],
            Link::Radiotap => vec![(24, Layer::Radiotap), (50, Layer::Wlan), (58, Layer::Llc)],
            // GTP-U: 8 bytes of header, then the inner version nibble.
            Link::SllGtp => vec![
                (16, Layer::Link),
                (36, Layer::Ipv4),
                (44, Layer::Udp),
                (53, Layer::Tunnel),
            ],
        }
    }
}

/// What the transport layer of a test frame is.
#[derive(Clone, Debug)]
pub enum Transport {
    Tcp(TcpHeader),
    Udp(u16, u16),
}

/// A generated frame and what went into it.
#[derive(Clone, Debug)]
pub struct Spec {
    pub link: Link,
    pub ipv6: bool,
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub ttl: u8,
    pub transport: Transport,
    pub payload: Vec<u8>,
}

impl Spec {
    pub fn ip_header_len(&self) -> usize {
        if self.ipv6 {
            40
        } else {
            20
        }
    }

    /// Where a frame cut at `cut` bytes must stop: the layer of the first header that
    /// ends after the cut, or `None` when all headers were captured.
    pub fn stop_layer(&self, cut: usize) -> Option<Layer> {
        let ip_end = self.link.header_len() + self.ip_header_len();
        let ip = if self.ipv6 { Layer::Ipv6 } else { Layer::Ipv4 };
        let mut edges = self.link.edges();
        edges.push((ip_end, ip));
        match &self.transport {
            Transport::Tcp(t) => {
                edges.push((ip_end + 20, Layer::Tcp));
                edges.push((ip_end + t.header_len(), Layer::TcpOptions));
            }
            Transport::Udp(..) => edges.push((ip_end + 8, Layer::Udp)),
        }
        edges
            .into_iter()
            .find(|&(end, _)| cut < end)
            .map(|(_, layer)| layer)
    }

    /// Serialize with etherparse's `PacketBuilder`.
    pub fn build(&self) -> Vec<u8> {
        let ip = if self.ipv6 {
            IpHeaders::Ipv6(
                Ipv6Header {
                    hop_limit: self.ttl,
                    source: self.src,
                    destination: self.dst,
                    ..Default::default()
                },
                Default::default(),
            )
        } else {
            let s: [u8; 4] = self.src[..4].try_into().unwrap();
            let d: [u8; 4] = self.dst[..4].try_into().unwrap();
            IpHeaders::Ipv4(
                Ipv4Header::new(0, self.ttl, IpNumber::TCP, s, d).unwrap(),
                Default::default(),
            )
        };
        let (a, b) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let vid = |v: u16| VlanId::try_new(v).unwrap();
        let mut out = Vec::new();
        macro_rules! finish {
            ($step:expr) => {
                match &self.transport {
                    Transport::Tcp(t) => $step
                        .tcp_header(t.clone())
                        .write(&mut out, &self.payload)
                        .unwrap(),
                    Transport::Udp(s, d) => {
                        $step.udp(*s, *d).write(&mut out, &self.payload).unwrap()
                    }
                }
            };
        }
        match self.link {
            Link::Ethernet => finish!(PacketBuilder::ethernet2(a, b).ip(ip)),
            Link::Vlan(v) => finish!(PacketBuilder::ethernet2(a, b).single_vlan(vid(v)).ip(ip)),
            Link::QinQ(o, i) => finish!(PacketBuilder::ethernet2(a, b)
                .double_vlan(vid(o), vid(i))
                .ip(ip)),
            Link::LinuxSll => finish!(PacketBuilder::linux_sll(
                LinuxSllPacketType::HOST,
                6,
                [2, 0, 0, 0, 0, 1, 0, 0]
            )
            .ip(ip)),
            Link::Raw | Link::Radiotap | Link::SllGtp => finish!(PacketBuilder::ip(ip)),
        }
        match self.link {
            Link::Radiotap => {
                let mut prefix = RADIOTAP_WLAN.to_vec();
                if self.ipv6 {
                    prefix[56..].copy_from_slice(&[0x86, 0xDD]);
                }
                prefix.extend_from_slice(&out);
                prefix
            }
            Link::SllGtp => gtp_over_sll(&out),
            _ => out,
        }
    }
}

/// Linux SLL (tcpdump.org LINKTYPE_LINUX_SLL), IPv4 (RFC 791) to UDP port 2152
/// (RFC 768), GTP-U G-PDU (3GPP TS 29.281 5.1), then `inner`.
fn gtp_over_sll(inner: &[u8]) -> Vec<u8> {
    let sll = [0u8, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
    let gtp_len = inner.len() as u16;
    let udp_len = 16 + gtp_len;
    let ip_len = 20 + udp_len;
    [
        &sll[..],
        &[0x45, 0],
        &ip_len.to_be_bytes(),
        &[0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2],
        &2152u16.to_be_bytes(),
        &2152u16.to_be_bytes(),
        &udp_len.to_be_bytes(),
        &[0, 0],
        &[0x30, 0xFF],
        &gtp_len.to_be_bytes(),
        &[0, 0, 0, 1],
        inner,
    ]
    .concat()
}

pub fn link() -> impl Strategy<Value = Link> {
    prop_oneof![
        Just(Link::Ethernet),
        (0..4095u16).prop_map(Link::Vlan),
        (0..4095u16, 0..4095u16).prop_map(|(o, i)| Link::QinQ(o, i)),
        Just(Link::LinuxSll),
        Just(Link::Raw),
        Just(Link::Radiotap),
        Just(Link::SllGtp),
    ]
}

/// TCP options that fit the 40-byte options area, in a random order.
fn tcp_options() -> impl Strategy<Value = Vec<TcpOptionElement>> {
    (
        proptest::option::of(any::<u16>()),
        proptest::option::of(0..15u8),
        any::<bool>(),
        proptest::option::of(any::<(u32, u32)>()),
        proptest::collection::vec(any::<(u32, u32)>(), 0..=4),
        0..3usize,
    )
        .prop_map(|(mss, ws, sack_ok, ts, sack, nops)| {
            let mut o = vec![TcpOptionElement::Noop; nops];
            o.extend(mss.map(TcpOptionElement::MaximumSegmentSize));
            o.extend(ws.map(TcpOptionElement::WindowScale));
            if sack_ok {
                o.push(TcpOptionElement::SelectiveAcknowledgementPermitted);
            }
            o.extend(ts.map(|(a, b)| TcpOptionElement::Timestamp(a, b)));
            if let Some((&first, rest)) = sack.split_first() {
                let mut more = [None; 3];
                for (slot, &b) in more.iter_mut().zip(rest) {
                    *slot = Some(b);
                }
                o.push(TcpOptionElement::SelectiveAcknowledgement(first, more));
            }
            o
        })
        .prop_filter("options fit in 40 bytes", |o| {
            TcpHeader::default().set_options(o).is_ok()
        })
}

fn tcp_header() -> impl Strategy<Value = TcpHeader> {
    (
        any::<(u16, u16, u32, u32, u16, u16)>(),
        any::<u16>(),
        tcp_options(),
    )
        .prop_map(|((sp, dp, seq, ack, win, urg), flags, opts)| {
            let mut t = TcpHeader::new(sp, dp, seq, win);
            t.acknowledgment_number = ack;
            t.urgent_pointer = urg;
            let bit = |n: u16| flags & (1 << n) != 0;
            (t.fin, t.syn, t.rst, t.psh, t.ack, t.urg, t.ece, t.cwr, t.ns) = (
                bit(0),
                bit(1),
                bit(2),
                bit(3),
                bit(4),
                bit(5),
                bit(6),
                bit(7),
                bit(8),
            );
            t.set_options(&opts).unwrap();
            t
        })
}

/// A UDP port no tunnel is read from: below GTP-U's 2152 and not L2TP's 1701 (the
/// decoder reads a datagram to or from those as a tunnel header).
fn plain_udp_port() -> impl Strategy<Value = u16> {
    (0..2000u16).prop_filter("a tunnel port", |&p| p != 1701)
}

fn transport() -> impl Strategy<Value = Transport> {
    prop_oneof![
        4 => tcp_header().prop_map(Transport::Tcp),
        1 => (plain_udp_port(), plain_udp_port()).prop_map(|(s, d)| Transport::Udp(s, d)),
    ]
}

pub fn spec() -> impl Strategy<Value = Spec> {
    (
        link(),
        any::<bool>(),
        any::<([u8; 16], [u8; 16])>(),
        1..=255u8,
        transport(),
        proptest::collection::vec(any::<u8>(), 0..1500),
    )
        .prop_map(|(link, ipv6, (src, dst), ttl, transport, payload)| Spec {
            link,
            ipv6,
            src,
            dst,
            ttl,
            transport,
            payload,
        })
}
