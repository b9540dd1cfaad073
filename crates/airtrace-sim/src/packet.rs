//! Simulated packets and their bytes on the wire.
//!
//! Inside the simulator a packet is a small value ([`Packet`]): a TCP segment or a UDP
//! datagram with its addressing, no payload bytes. Only when a capture point records
//! it does [`Encoder`] write it out as a real IPv4 packet (LINKTYPE_RAW): header
//! checksum (RFC 791 §3.1), TCP header with options and checksum over the pseudo-header
//! (RFC 793 §3.1), UDP likewise (RFC 768), and a payload whose bytes are a fixed
//! function of their position in the stream, so a retransmission carries the very
//! bytes of the original. A datagram larger than the MTU of the link it is sent on is
//! written as the IPv4 fragments a host would send (RFC 791 §3.2: each fragment's
//! payload a multiple of 8 bytes but the last).

use std::hash::{DefaultHasher, Hash, Hasher};

use airtrace_link::vj::{Encoded, TcpIpHeader};
use airtrace_tcp::Segment;

/// The IPv4 address of host `a` (the sender side): 198.18.0.1, inside the
/// 198.18.0.0/15 benchmarking block (RFC 2544) that the emulator also uses.
pub const ADDR_A: [u8; 4] = [198, 18, 0, 1];
/// The IPv4 address of host `b` (the receiver side): 198.18.1.1.
pub const ADDR_B: [u8; 4] = [198, 18, 1, 1];
/// The TTL a host puts in the packets it sends (Linux's default).
pub const DEFAULT_TTL: u8 = 64;
/// IPv4 header length (no options).
pub const IP_HEADER: u32 = 20;
/// UDP header length.
pub const UDP_HEADER: u32 = 8;
/// Bytes of the RPC header at the start of every RPC datagram's payload.
pub const RPC_HEADER: u32 = 24;

/// What an RPC datagram is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcKind {
    /// A READ call (small), answered by a reply carrying the data.
    ReadCall,
    /// The reply to a READ, carrying `data` bytes.
    ReadReply,
    /// A WRITE call carrying `data` bytes.
    WriteCall,
    /// The (small) reply to a WRITE.
    WriteReply,
    /// A datagram of a UDP stream (`udp_stream`): numbered by `xid`, never answered.
    Stream,
}

/// A UDP datagram of the NFS-like RPC: header fields the simulator needs; the payload
/// is an [`RPC_HEADER`]-byte header followed by `data` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram {
    /// Transaction id: a retransmitted call repeats it.
    pub xid: u32,
    /// Which message.
    pub kind: RpcKind,
    /// File offset of the data read or written.
    pub offset: u64,
    /// Data bytes carried (0 for the small messages).
    pub data: u32,
}

impl Datagram {
    /// UDP payload length.
    pub fn payload_len(&self) -> u32 {
        RPC_HEADER + self.data
    }

    /// Appends the UDP payload: the RPC header (xid, kind 1–4 for READ call, READ
    /// reply, WRITE call, WRITE reply, offset, data length, 4 zero bytes; big-endian)
    /// and the data, the stream's payload pattern from `offset`. The emulator sends
    /// these very bytes over real UDP sockets.
    pub fn write_payload(&self, out: &mut Vec<u8>) {
        let kind: u32 = match self.kind {
            RpcKind::ReadCall => 1,
            RpcKind::ReadReply => 2,
            RpcKind::WriteCall => 3,
            RpcKind::WriteReply => 4,
            RpcKind::Stream => 5,
        };
        out.extend_from_slice(&self.xid.to_be_bytes());
        out.extend_from_slice(&kind.to_be_bytes());
        out.extend_from_slice(&self.offset.to_be_bytes());
        out.extend_from_slice(&self.data.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        push_payload(out, self.offset, self.data);
    }

    /// Reads a UDP payload written by [`Datagram::write_payload`]: `None` unless it
    /// has a known kind and exactly the data its header announces.
    pub fn parse_payload(b: &[u8]) -> Option<Datagram> {
        let header = b.get(..RPC_HEADER as usize)?;
        let word = |at: usize| {
            u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let kind = match word(4) {
            1 => RpcKind::ReadCall,
            2 => RpcKind::ReadReply,
            3 => RpcKind::WriteCall,
            4 => RpcKind::WriteReply,
            5 => RpcKind::Stream,
            _ => return None,
        };
        let d = Datagram {
            xid: word(0),
            kind,
            offset: (u64::from(word(8)) << 32) | u64::from(word(12)),
            data: word(16),
        };
        (b.len() as u64 == u64::from(d.payload_len())).then_some(d)
    }
}

/// The transport content of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// A TCP segment.
    Tcp(Segment),
    /// A UDP datagram of the RPC application.
    Udp(Datagram),
}

/// One packet in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// Unique in the run, in order of sending (link log and capture correlation).
    pub id: u64,
    /// Index of the flow in the scenario.
    pub flow: u32,
    /// Sent by host `a` (true) or `b`.
    pub from_a: bool,
    /// IPv4 identification, per sending host, incremented per packet.
    pub ip_id: u16,
    /// The flow's ports on host `a` and host `b`.
    pub ports: (u16, u16),
    /// The IPv4 addresses of host `a` and host `b`.
    pub hosts: ([u8; 4], [u8; 4]),
    /// Time to live, as the IPv4 header carries it where the packet is seen.
    pub ttl: u8,
    /// The IP header's ECN field (RFC 3168 §5): 0 not ECN-capable, 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// How VJ header compression sent it, on links that compress.
    pub vj: Option<(Encoded, TcpIpHeader)>,
    /// TCP segment or UDP datagram.
    pub body: Body,
}

impl Packet {
    /// The header summary VJ compression works on, for a TCP packet; `conn` names the
    /// connection and direction.
    pub fn tcp_ip_header(&self, conn: u64) -> Option<TcpIpHeader> {
        let Body::Tcp(seg) = &self.body else {
            return None;
        };
        let mut options = DefaultHasher::new();
        seg.options.hash(&mut options);
        Some(TcpIpHeader {
            conn,
            ip_hdr_len: IP_HEADER as u16,
            tcp_hdr_len: seg.header_len() as u16,
            tos: self.ecn,
            ip_id: self.ip_id,
            seq: seg.seq,
            ack: seg.ack,
            window: seg.window,
            flags: seg.flags.0,
            payload_len: seg.len,
            options: if seg.options == Default::default() {
                0
            } else {
                options.finish()
            },
            ..TcpIpHeader::default()
        })
    }

    /// IPv4 total length in bytes: what the link carries.
    pub fn ip_len(&self) -> u32 {
        IP_HEADER
            + match &self.body {
                Body::Tcp(seg) => seg.header_len() as u32 + seg.len,
                Body::Udp(d) => UDP_HEADER + d.payload_len(),
            }
    }
}

/// IPv4 protocol number of a DSR options header (RFC 4728 §6, IANA).
const PROTO_DSR: u8 = 48;
/// "No next header" (IANA protocol 59), after the DSR header of a routing packet.
const NO_NEXT_HEADER: u8 = 59;

/// Writes packets as IPv4 bytes, reusing its buffers.
#[derive(Debug, Default)]
pub struct Encoder {
    ecn: u8,
    ttl: u8,
    transport: Vec<u8>,
    frames: Vec<u8>,
    bounds: Vec<(usize, usize)>,
}

/// Payload byte at position `offset` of a stream: a fixed pattern (a byte counter
/// modulo 251, a prime, so it never lines up with segment sizes).
fn payload_byte(offset: u64) -> u8 {
    (offset % 251) as u8
}

/// Appends `len` payload bytes starting at stream position `offset`.
fn push_payload(out: &mut Vec<u8>, offset: u64, len: u32) {
    out.extend((0..u64::from(len)).map(|i| payload_byte(offset + i)));
}

/// One's-complement sum of `data` as big-endian 16-bit words (RFC 1071), not folded.
pub(crate) fn sum16(data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    let mut sum: u64 = chunks
        .by_ref()
        .map(|c| u64::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

/// Folds a sum to 16 bits and complements it (RFC 1071).
pub(crate) fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Encoder {
    /// Encodes `packet` as sent on a link with the given MTU. Returns the IPv4 packets
    /// (one, or its fragments), each as a byte slice; `stream_offset` is the position
    /// of a TCP segment's first payload byte in its stream (ignored for UDP).
    pub fn encode(
        &mut self,
        packet: &Packet,
        stream_offset: u64,
        mtu: u32,
    ) -> impl Iterator<Item = &[u8]> {
        self.encode_routed(packet, stream_offset, mtu, &[])
    }

    /// As [`Encoder::encode`], with a DSR options header (RFC 4728 §6, its bytes as
    /// `airtrace_net::dsr::DsrHeader::write` gives them) between the IPv4 header and the
    /// transport header: the IPv4 protocol is then 48 (DSR) and the header's Next Header
    /// the transport's. An empty `dsr` is no header.
    pub fn encode_routed(
        &mut self,
        packet: &Packet,
        stream_offset: u64,
        mtu: u32,
        dsr: &[u8],
    ) -> impl Iterator<Item = &[u8]> {
        let (proto, src, dst) = self.transport_of(packet, stream_offset, dsr);
        self.frames.clear();
        self.bounds.clear();
        // TCP sets DF, as Linux does with path MTU discovery; UDP may be fragmented.
        let dont_fragment = matches!(packet.body, Body::Tcp(_));
        let max_payload = ((mtu.max(68) - IP_HEADER) & !7) as usize;
        let total = self.transport.len();
        if dont_fragment || total + IP_HEADER as usize <= mtu as usize {
            self.ip_fragment(
                packet.ip_id,
                proto,
                src,
                dst,
                0,
                total,
                false,
                dont_fragment,
            );
        } else {
            let mut offset = 0;
            while offset < total {
                let len = max_payload.min(total - offset);
                let more = offset + len < total;
                self.ip_fragment(packet.ip_id, proto, src, dst, offset, len, more, false);
                offset += len;
            }
        }
        let frames = &self.frames;
        self.bounds
            .iter()
            .map(move |&(start, end)| &frames[start..end])
    }

    /// One fragment of `packet` as a network of nodes cut it (`airtrace_net::frag`):
    /// the `len` bytes of its IP payload (transport header and data, after a DSR
    /// header when `dsr` is one) from `offset`, with the more-fragments flag `more`
    /// (RFC 791 §3.2). Offsets past the payload give an empty fragment.
    pub fn encode_fragment(
        &mut self,
        packet: &Packet,
        stream_offset: u64,
        dsr: &[u8],
        (offset, len, more): (usize, usize, bool),
    ) -> &[u8] {
        let (proto, src, dst) = self.transport_of(packet, stream_offset, dsr);
        let offset = offset.min(self.transport.len());
        let len = len.min(self.transport.len() - offset);
        self.frames.clear();
        self.bounds.clear();
        self.ip_fragment(packet.ip_id, proto, src, dst, offset, len, more, false);
        &self.frames
    }

    /// Writes `packet`'s IP payload into `transport` (with its checksum; behind `dsr`,
    /// when it is a DSR header) and gives its IPv4 protocol and addresses.
    fn transport_of(
        &mut self,
        packet: &Packet,
        stream_offset: u64,
        dsr: &[u8],
    ) -> (u8, [u8; 4], [u8; 4]) {
        self.ecn = packet.ecn & 3;
        let (src, dst) = if packet.from_a {
            packet.hosts
        } else {
            (packet.hosts.1, packet.hosts.0)
        };
        self.ttl = packet.ttl;
        let (sport, dport) = if packet.from_a {
            packet.ports
        } else {
            (packet.ports.1, packet.ports.0)
        };
        self.transport.clear();
        let proto = match &packet.body {
            Body::Tcp(seg) => {
                self.tcp(seg, sport, dport, stream_offset);
                6
            }
            Body::Udp(d) => {
                self.udp(d, sport, dport);
                17
            }
        };
        let sum = sum16(&src)
            + sum16(&dst)
            + u64::from(proto)
            + self.transport.len() as u64
            + sum16(&self.transport);
        let csum_at = if proto == 6 { 16 } else { 6 };
        let mut csum = fold(sum);
        if proto == 17 && csum == 0 {
            csum = 0xffff; // RFC 768: a computed zero is sent as all ones
        }
        self.transport[csum_at..csum_at + 2].copy_from_slice(&csum.to_be_bytes());
        let proto = if let [_, rest @ ..] = dsr {
            self.transport
                .splice(0..0, [proto].iter().chain(rest).copied());
            PROTO_DSR
        } else {
            proto
        };
        (proto, src, dst)
    }

    /// A packet of routing only: the IPv4 header (protocol 48, IP ID 0) and the DSR
    /// options header `dsr`, whose Next Header is set to 59 (none).
    pub fn encode_routing(&mut self, ttl: u8, (src, dst): ([u8; 4], [u8; 4]), dsr: &[u8]) -> &[u8] {
        self.ecn = 0;
        self.ttl = ttl;
        self.transport.clear();
        self.transport.extend_from_slice(dsr);
        if let Some(next) = self.transport.first_mut() {
            *next = NO_NEXT_HEADER;
        }
        self.frames.clear();
        self.bounds.clear();
        self.ip_fragment(0, PROTO_DSR, src, dst, 0, dsr.len(), false, false);
        &self.frames
    }

    /// One IPv4 packet of protocol `proto` carrying `body` whole (IP ID 0): a Mobile IP
    /// message (`crate::mipwire`), or an IP-in-IP tunnel's inner packet.
    pub fn encode_ip(
        &mut self,
        ttl: u8,
        (src, dst): ([u8; 4], [u8; 4]),
        proto: u8,
        body: &[u8],
    ) -> &[u8] {
        self.ecn = 0;
        self.ttl = ttl;
        self.transport.clear();
        self.transport.extend_from_slice(body);
        self.frames.clear();
        self.bounds.clear();
        self.ip_fragment(0, proto, src, dst, 0, body.len(), false, false);
        &self.frames
    }

    /// Appends one IPv4 packet carrying `transport[offset..offset + len]`.
    #[allow(clippy::too_many_arguments)]
    fn ip_fragment(
        &mut self,
        ip_id: u16,
        proto: u8,
        src: [u8; 4],
        dst: [u8; 4],
        offset: usize,
        len: usize,
        more: bool,
        dont_fragment: bool,
    ) {
        let start = self.frames.len();
        let total = (IP_HEADER as usize + len) as u16;
        let mut flags_frag = (offset / 8) as u16;
        if more {
            flags_frag |= 0x2000;
        }
        if dont_fragment {
            flags_frag |= 0x4000;
        }
        let mut header = [0u8; 20];
        header[0] = 0x45;
        header[1] = self.ecn;
        header[2..4].copy_from_slice(&total.to_be_bytes());
        header[4..6].copy_from_slice(&ip_id.to_be_bytes());
        header[6..8].copy_from_slice(&flags_frag.to_be_bytes());
        header[8] = self.ttl;
        header[9] = proto;
        header[12..16].copy_from_slice(&src);
        header[16..20].copy_from_slice(&dst);
        let csum = fold(sum16(&header));
        header[10..12].copy_from_slice(&csum.to_be_bytes());
        self.frames.extend_from_slice(&header);
        self.frames
            .extend_from_slice(&self.transport[offset..offset + len]);
        self.bounds.push((start, self.frames.len()));
    }

    /// Writes the TCP header (checksum zero) and payload into `transport`.
    fn tcp(&mut self, seg: &Segment, sport: u16, dport: u16, stream_offset: u64) {
        let out = &mut self.transport;
        let header_len = seg.header_len();
        out.extend_from_slice(&sport.to_be_bytes());
        out.extend_from_slice(&dport.to_be_bytes());
        out.extend_from_slice(&seg.seq.to_be_bytes());
        out.extend_from_slice(&seg.ack.to_be_bytes());
        out.push(((header_len / 4) as u8) << 4);
        out.push(seg.flags.0);
        out.extend_from_slice(&seg.window.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
        seg.options.encode(out);
        debug_assert_eq!(out.len(), header_len);
        push_payload(out, stream_offset, seg.len);
    }

    /// Writes the UDP header (checksum zero), the RPC header and the data.
    fn udp(&mut self, d: &Datagram, sport: u16, dport: u16) {
        let out = &mut self.transport;
        let len = (UDP_HEADER + d.payload_len()) as u16;
        out.extend_from_slice(&sport.to_be_bytes());
        out.extend_from_slice(&dport.to_be_bytes());
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        d.write_payload(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtrace_tcp::{Flags, Options};

    fn segment(len: u32) -> Segment {
        Segment {
            seq: 1000,
            ack: 5000,
            flags: Flags(Flags::ACK.0 | Flags::PSH.0),
            window: 512,
            len,
            options: Options {
                timestamps: Some((7, 9)),
                ..Options::default()
            },
            ect: false,
        }
    }

    /// The one's-complement sum over a packet with a correct checksum is 0xffff.
    fn verifies(data: &[u8]) -> bool {
        fold(sum16(data)) == 0
    }

    #[test]
    fn tcp_packet_has_valid_checksums() {
        let p = Packet {
            id: 1,
            flow: 0,
            from_a: true,
            ip_id: 42,
            ports: (40000, 5000),
            hosts: (ADDR_A, ADDR_B),
            ttl: DEFAULT_TTL,
            ecn: 2,
            vj: None,
            body: Body::Tcp(segment(100)),
        };
        let mut enc = Encoder::default();
        let frames: Vec<Vec<u8>> = enc.encode(&p, 0, 1500).map(<[u8]>::to_vec).collect();
        assert_eq!(frames.len(), 1);
        let f = &frames[0];
        assert_eq!(f.len() as u32, p.ip_len());
        assert!(verifies(&f[..20]), "IPv4 header checksum");
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&f[12..20]);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&((f.len() - 20) as u16).to_be_bytes());
        pseudo.extend_from_slice(&f[20..]);
        assert!(verifies(&pseudo), "TCP checksum");
        assert_eq!(f[20 + 12] >> 4, 8, "20 + 12 bytes of timestamp option");
        assert_eq!(f[1] & 3, 2, "ECT(0) in the IP header");
    }

    #[test]
    fn rpc_payload_reads_back() {
        let d = Datagram {
            xid: 0x0102_0304,
            kind: RpcKind::WriteCall,
            offset: 251 * 1_000_000_000 + 7, // beyond 32 bits
            data: 300,
        };
        let mut b = Vec::new();
        d.write_payload(&mut b);
        assert_eq!(b.len() as u32, d.payload_len());
        assert_eq!(
            b[RPC_HEADER as usize], 7,
            "data continues the pattern at its offset"
        );
        assert_eq!(Datagram::parse_payload(&b), Some(d));
        assert_eq!(Datagram::parse_payload(&b[..b.len() - 1]), None, "short");
        b[7] = 9;
        assert_eq!(Datagram::parse_payload(&b), None, "unknown kind");
    }

    #[test]
    fn large_udp_datagram_becomes_fragments() {
        let d = Datagram {
            xid: 3,
            kind: RpcKind::ReadReply,
            offset: 8192,
            data: 8192,
        };
        let p = Packet {
            id: 1,
            flow: 0,
            from_a: false,
            ip_id: 7,
            ports: (700, 20049),
            hosts: (ADDR_A, ADDR_B),
            ttl: DEFAULT_TTL,
            ecn: 0,
            vj: None,
            body: Body::Udp(d),
        };
        let mut enc = Encoder::default();
        let frames: Vec<Vec<u8>> = enc.encode(&p, 0, 1500).map(<[u8]>::to_vec).collect();
        let transport = (UDP_HEADER + RPC_HEADER + 8192) as usize;
        assert_eq!(frames.len(), transport.div_ceil(1480));
        let mut carried = 0;
        for (i, f) in frames.iter().enumerate() {
            assert!(verifies(&f[..20]));
            let word = u16::from_be_bytes([f[6], f[7]]);
            assert_eq!(usize::from(word & 0x1fff) * 8, carried, "fragment offset");
            assert_eq!(
                word & 0x2000 != 0,
                i + 1 < frames.len(),
                "more-fragments flag"
            );
            assert!(f.len() <= 1500);
            carried += f.len() - 20;
        }
        assert_eq!(carried, transport);
        // A network cuts it the same way: each fragment alone, the same bytes.
        let mut one = Encoder::default();
        let mut offset = 0;
        for f in &frames {
            let len = f.len() - 20;
            let more = offset + len < transport;
            assert_eq!(one.encode_fragment(&p, 0, &[], (offset, len, more)), &f[..]);
            offset += len;
        }
        // Past the end: an empty fragment, not a panic.
        assert_eq!(
            one.encode_fragment(&p, 0, &[], (transport + 8, 100, false))
                .len(),
            20
        );
    }
}
