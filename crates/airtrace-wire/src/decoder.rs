//! The decode loop: each layer reads its header, fills its part of [`Decoded`] and
//! names the next header ([`Next`]); the loop dispatches until a layer says [`Next::Done`]
//! or returns a [`Stop`].
//!
//! The loop (rather than layers calling each other) keeps the stack flat whatever the
//! nesting of VLAN tags, MPLS labels or tunnels in a hostile frame; every header read
//! moves the offset forward, so the loop ends.

use crate::packet::{Decoded, Layer, Stop, Transport};
use crate::read::unsupported;
use crate::{dsr, ethernet, fast, gre, gtp, ieee80211, ipv4, ipv6, tcp, udp, udp_tunnel};

/// What the decoder knows about the bytes still in scope.
pub(crate) struct Cx<'a> {
    /// The captured bytes, cut at `end` when `end` is shorter. Offsets into `f` are
    /// offsets into the frame.
    pub f: &'a [u8],
    /// Where the current PDU ends according to the innermost length field seen so far
    /// (IP total length, 802.3 length, UDP length...), or the original frame length.
    /// May lie beyond the captured bytes.
    pub end: usize,
    /// The end of the current PDU according to the length fields of the headers read
    /// so far (the smallest they state), `usize::MAX` while none has stated one. No
    /// inner length field reaches past it: see [`Cx::stated`].
    pub bound: usize,
}

impl<'a> Cx<'a> {
    /// End the current PDU at `end` (where a length field says it ends, which may lie
    /// past the captured bytes) and cut the captured slice there.
    #[inline(always)]
    pub fn cut(&mut self, end: usize) {
        self.end = end;
        if end < self.f.len() {
            self.f = &self.f[..end];
        }
    }

    /// A length field says the current PDU ends at `end`: end it there, unless a header
    /// around it, in the same packet, stated an earlier end, which wins. A PDU lies
    /// inside the one that carries it, so the smallest of the lengths the layers of one
    /// packet state bounds the payload (RFC 2516 section 4: the PPPoE LENGTH is that of
    /// its payload; RFC 791 section 3.1: the total length is that of the datagram):
    /// bytes past the IP total length are padding, and an IP total length that reaches
    /// past the PPPoE payload (issue 18 class 1: a 40-byte ACK padded to Ethernet's
    /// 46-byte minimum, the padding counted in the IP length but not in the PPPoE
    /// length, in `zeek_pppoe-over-qinq`) claims bytes that were not in the PPPoE
    /// payload. tshark reads such a segment as empty, as does Linux, which trims the
    /// packet to the PPPoE length (`pppoe_rcv`) and then drops it as truncated
    /// (`ip_rcv_core`). A tunnel starts a new packet ([`enter_tunnel`]).
    #[inline(always)]
    pub fn stated(&mut self, end: usize) {
        let end = end.min(self.bound);
        self.bound = end;
        self.cut(end);
    }

    /// Bytes of the current PDU from `off` to `end` (from length fields, not captured).
    #[inline(always)]
    pub fn declared_from(&self, off: usize) -> usize {
        self.end.saturating_sub(off)
    }
}

/// The next header to decode, and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// A payload named by an EtherType (or, below 0x0600, an IEEE 802.3 length),
    /// as carried by Ethernet, VLAN tags, SLL and SNAP. `layer` names the header that
    /// carried the value, for the `Unsupported` stop.
    Ether { ty: u16, off: usize, layer: Layer },
    /// An Ethernet header (IEEE 802.3 clause 3.2), inside a tunnel.
    Ethernet(usize),
    /// An IEEE 802.2 LLC header.
    Llc(usize),
    /// An IEEE 802.11 MAC header.
    Wlan(usize),
    /// An IP header of either version, told by the first nibble (raw IP, MPLS).
    Ip { off: usize, layer: Layer },
    /// An IPv4 header.
    Ipv4(usize),
    /// An IPv6 header.
    Ipv6(usize),
    /// The payload of an IP header: protocol number `proto` at `off`.
    Payload { proto: u8, off: usize },
    /// A GTP-U header (UDP port 2152).
    Gtp(usize),
    /// The header of the tunnel registered at UDP port `port` (`udp_tunnel`).
    OverUdp { port: u16, off: usize },
    /// Nothing more to decode.
    Done,
}

/// IANA protocol numbers used for dispatch.
pub(crate) mod proto {
    pub const IPV4: u8 = 4;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const IPV6: u8 = 41;
}

/// Run the decode loop from `next` until it ends; record a stop in `out`.
#[inline(always)]
pub(crate) fn run(mut next: Next, cx: &mut Cx<'_>, out: &mut Decoded) {
    loop {
        let step = match next {
            Next::Done => return,
            Next::Ether { ty, off, layer } => ethernet::ether_type(ty, off, layer, cx),
            Next::Ethernet(off) => ethernet::header(off, cx),
            Next::Llc(off) => ethernet::llc(off, cx),
            Next::Wlan(off) => ieee80211::decode(off, cx, out),
            Next::Ip { off, layer } => ip_by_version(off, layer, cx),
            // The fast path's IP and transport layers first: when they take the packet
            // they decode it to the end.
            Next::Ipv4(off) if fast::ipv4_in_loop(cx, off, out.tunnel_depth, out) => return,
            Next::Ipv6(off) if fast::ipv6_in_loop(cx, off, out.tunnel_depth, out) => return,
            Next::Ipv4(off) => ipv4::decode(off, cx, out),
            Next::Ipv6(off) => ipv6::decode(off, cx, out),
            Next::Payload { proto, off } => payload(proto, off, cx, out),
            Next::Gtp(off) => gtp::decode(off, cx, out),
            Next::OverUdp { port, off } => udp_tunnel::decode(port, off, cx, out),
        };
        match step {
            Ok(n) => next = n,
            Err(stop) => {
                out.stop = Some(stop);
                return;
            }
        }
    }
}

/// Decode the transport header at the start of `buf`, the captured bytes of an IP
/// payload of protocol `proto` and of `declared` bytes (the reassembled datagram).
pub(crate) fn decode_payload(proto: u8, buf: &[u8], declared: usize, out: &mut Decoded) {
    let mut cx = Cx {
        f: buf,
        end: buf.len(),
        bound: usize::MAX,
    };
    cx.stated(declared);
    run(Next::Payload { proto, off: 0 }, &mut cx, out);
}

/// Pick IPv4 or IPv6 by the version nibble (RFC 791 section 3.1, RFC 8200 section 3).
#[inline]
fn ip_by_version(off: usize, layer: Layer, cx: &Cx<'_>) -> Result<Next, Stop> {
    match crate::read::byte(cx.f, off, layer)? >> 4 {
        4 => Ok(Next::Ipv4(off)),
        6 => Ok(Next::Ipv6(off)),
        _ => Err(unsupported(layer)),
    }
}

/// Dispatch the payload of an IP header by protocol number (IANA "Assigned Internet
/// Protocol Numbers"): TCP and UDP are decoded, IP-in-IP (4, RFC 2003) and IPv6-in-IP
/// (41, RFC 4213 section 3.5) are entered as tunnels, a DSR options header (48, RFC
/// 4728) is walked to what it carries, anything else is reported as
/// [`Transport::Other`].
#[inline(always)]
pub(crate) fn payload(
    proto: u8,
    off: usize,
    cx: &mut Cx<'_>,
    out: &mut Decoded,
) -> Result<Next, Stop> {
    match proto {
        proto::TCP => tcp::decode(off, cx, out),
        proto::UDP => udp::decode(off, cx, out),
        dsr::PROTO => dsr::decode(off, cx, out),
        gre::PROTO => gre::decode(off, cx, out),
        proto::IPV4 => {
            enter_tunnel(cx, out);
            Ok(Next::Ipv4(off))
        }
        proto::IPV6 => {
            enter_tunnel(cx, out);
            Ok(Next::Ipv6(off))
        }
        _ => {
            out.transport = Transport::Other(proto);
            Ok(Next::Done)
        }
    }
}

/// Forget the outer IP and transport headers: what follows is the inner packet. The
/// lengths the outer headers stated no longer bound it (see [`Cx::stated`]): a tunnel
/// may carry part of a packet, in an IP fragment or a truncated mirror copy (ERSPAN),
/// whose own lengths stay those of the whole packet, as with a snap length.
pub(crate) fn enter_tunnel(cx: &mut Cx<'_>, out: &mut Decoded) {
    cx.bound = usize::MAX;
    out.tunnel_depth = out.tunnel_depth.saturating_add(1);
    out.ip = None;
    out.transport = Transport::None;
    out.payload = 0..0;
    out.ip_payload = 0..0;
}
