//! The fast path: the stacks nearly every capture is made of, decoded straight through.
//!
//! A stack the fast path takes is: Ethernet (with at most two VLAN tags), Linux SLL or
//! SLL2, BSD loopback, or raw IP; then IPv4 without options and not a later fragment,
//! or IPv6 without extension headers; then TCP, or UDP, or UDP + GTP-U (a G-PDU
//! without optional fields) + one of these IP packets. Every header must be captured
//! whole and hold values the general decoder accepts without a stop (only the TCP
//! options may stop, through the same code, `tcp::options`), and the IP length must
//! not be 0 (the general decoder then takes the length from the original frame length).
//!
//! Each step checks its header against that description and gives up (returns
//! `false`) at the first mismatch; [`crate::decode`] then tries the next decoder, and
//! in the end the general one, as if the fast path did not exist. What a step wrote
//! before giving up (at most `out.ip`) is overwritten by whichever decoder comes next:
//! the general decoder resets `out`, the fast path writes every field of [`Decoded`].
//! So the fast path changes no result, only the cost: every field is written once,
//! with no reset first, no `Next` values through the decode loop and no bounds
//! checked twice. The decode loop also takes the fast path's IP and transport layers
//! when it meets an IP header ([`ipv4_in_loop`]), so that radiotap + 802.11, PPP, FDDI,
//! MPLS and IP-in-IP stacks share them.
//!
//! The tests at the end of this module compare [`crate::decode`] with the general
//! decoder alone, on frames of every stack the fast path takes, with every header byte
//! changed in turn and every truncation.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::decoder::{proto, Cx};
use crate::ethernet::ether_type;
use crate::linktype::LinkType;
use crate::packet::{Decoded, Ip, Tcp, Transport, Udp};
use crate::read::{arr, be16, be32};
use crate::{tcp, udp, udp_tunnel};

/// Decode `frame`, an Ethernet frame, if it is IPv4 + TCP, or IPv4 + UDP with the
/// UDP header captured whole, the most common stacks by far, in a copy of the code
/// where the header offsets are constants; `false` if not (then `out` may hold part of
/// a result, for the next decoder to overwrite: see the module doc).
#[inline(always)]
pub(crate) fn ethernet_ipv4(frame: &[u8], out: &mut Decoded) -> bool {
    // Checking for the shortest such frame, Ethernet + IPv4 + UDP, spares the IPv4
    // header its own length check.
    match frame.first_chunk::<{ 14 + 20 + 8 }>() {
        Some(h) if [h[12], h[13]] == ether_type::IPV4.to_be_bytes() => {
            ipv4::<false>(frame, 14, usize::MAX, 0, out) && no_radio(out)
        }
        _ => false,
    }
}

/// Decode `frame`, an Ethernet frame, if the fast path takes it (see the module doc);
/// `false` if not. GTP-U is left to [`decode`].
#[inline(always)]
pub(crate) fn ethernet(frame: &[u8], out: &mut Decoded) -> bool {
    let decoded = match ethernet_header(frame) {
        Some((IpVersion::V4, off)) => ipv4::<false>(frame, off, usize::MAX, 0, out),
        Some((IpVersion::V6, off)) => ipv6::<false>(frame, off, usize::MAX, 0, out),
        None => false,
    };
    decoded && no_radio(out)
}

/// Decode `frame` if its stack is one the fast path takes (see the module doc); `false`
/// if not.
#[inline(always)]
pub(crate) fn decode(link: LinkType, frame: &[u8], out: &mut Decoded) -> bool {
    let decoded = match link_layer(link, frame) {
        Some((IpVersion::V4, off)) => ipv4::<true>(frame, off, usize::MAX, 0, out),
        Some((IpVersion::V6, off)) => ipv6::<true>(frame, off, usize::MAX, 0, out),
        None => false,
    };
    decoded && no_radio(out)
}

/// The two endpoints of a frame that [`crate::decode`] decodes as TCP straight over IP,
/// read without decoding it: `[(source address, source port), (destination address,
/// destination port)]`, the addresses as numbers with IPv4 mapped into IPv6 form (as
/// `airtrace-analysis` keys connections). `None` unless the link layer is one the fast
/// path takes, the IP header is IPv4 without options and not a later fragment, or IPv6
/// whose next header is TCP, and the TCP ports are captured.
///
/// Whenever this is `Some` and `decode` finds a TCP header, that header's endpoints are
/// these: both read the same bytes. (`decode` may still stop earlier, on a header this
/// does not check.) It lets a reader pick out a connection's packets for a fraction of
/// the cost of decoding them.
#[inline]
pub fn peek_tcp(link: LinkType, frame: &[u8]) -> Option<[(u128, u16); 2]> {
    let (version, off) = link_layer(link, frame)?;
    let ip = frame.get(off..)?;
    match version {
        IpVersion::V4 => {
            let h = ip.first_chunk::<{ 20 + 4 }>()?;
            // Version 4, IHL 5, TCP, no fragment offset.
            if h[0] != 0x45
                || h[9] != proto::TCP
                || u16::from_ne_bytes([h[6], h[7]]) & u16::from_ne_bytes([0x1F, 0xFF]) != 0
            {
                return None;
            }
            let v4 = |at: usize| {
                0xffff_0000_0000u128 | u128::from(u32::from_be_bytes(arr::<4, 24>(h, at)))
            };
            Some([
                (v4(12), be16([h[20], h[21]])),
                (v4(16), be16([h[22], h[23]])),
            ])
        }
        IpVersion::V6 => {
            let h = ip.first_chunk::<{ 40 + 4 }>()?;
            if h[0] >> 4 != 6 || h[6] != proto::TCP {
                return None;
            }
            let v6 = |at: usize| u128::from_be_bytes(arr::<16, 44>(h, at));
            Some([
                (v6(8), be16([h[40], h[41]])),
                (v6(24), be16([h[42], h[43]])),
            ])
        }
    }
}

/// The decode loop's shortcut (see `decoder::run`): decode the IPv4 header at `off`
/// in `cx` (the captured bytes in scope, and the end the enclosing headers state), in
/// `depth` tunnels, and its transport header, if the fast path takes them.
/// `out.radiotap` and `out.wlan` are left as the loop set them. When this returns
/// `false`, the loop decodes the IPv4 header itself, which overwrites what was written
/// meanwhile (`out.ip`: the general decoder gets past every check before which the fast
/// path could have written it).
#[inline(always)]
pub(crate) fn ipv4_in_loop(cx: &Cx<'_>, off: usize, depth: u8, out: &mut Decoded) -> bool {
    loop_shortcut() && ipv4::<false>(cx.f, off, cx.bound, depth, out)
}

/// [`ipv4_in_loop`] for an IPv6 header.
#[inline(always)]
pub(crate) fn ipv6_in_loop(cx: &Cx<'_>, off: usize, depth: u8, out: &mut Decoded) -> bool {
    loop_shortcut() && ipv6::<false>(cx.f, off, cx.bound, depth, out)
}

/// Whether the decode loop takes its shortcut: always, but in tests, which turn it off
/// to compare with the general decoder alone.
#[cfg(not(test))]
#[inline(always)]
fn loop_shortcut() -> bool {
    true
}

#[cfg(test)]
fn loop_shortcut() -> bool {
    tests::LOOP_SHORTCUT.with(std::cell::Cell::get)
}

/// Record that the frame has no radio or 802.11 header (the fast path's link types),
/// and say it was decoded.
#[inline(always)]
fn no_radio(out: &mut Decoded) -> bool {
    out.radiotap = None;
    out.wlan = None;
    true
}

/// The IP version the link layer names.
#[derive(Clone, Copy)]
enum IpVersion {
    V4,
    V6,
}

/// The link-layer header, as in `linktype`, `ethernet`, `sll` and `loopback`: the IP
/// version and offset of the IP header it carries, or `None` if it carries anything
/// else (or is cut short).
#[inline(always)]
fn link_layer(link: LinkType, frame: &[u8]) -> Option<(IpVersion, usize)> {
    match link {
        LinkType::ETHERNET => ethernet_header(frame),
        LinkType::LINUX_SLL => {
            // SLL: ARPHRD type at 2, protocol at 14.
            let h = frame.first_chunk::<16>()?;
            sll_protocol([h[2], h[3]], [h[14], h[15]], 16)
        }
        LinkType::LINUX_SLL2 => {
            // SLL2: protocol at 0, ARPHRD type at 8.
            let h = frame.first_chunk::<20>()?;
            sll_protocol([h[8], h[9]], [h[0], h[1]], 20)
        }
        LinkType::RAW | LinkType::RAW_BSD | LinkType::RAW_OPENBSD => match frame.first()? >> 4 {
            4 => Some((IpVersion::V4, 0)),
            6 => Some((IpVersion::V6, 0)),
            _ => None,
        },
        LinkType::IPV4 => Some((IpVersion::V4, 0)),
        LinkType::IPV6 => Some((IpVersion::V6, 0)),
        LinkType::NULL => {
            let af = u32::from_le_bytes(*frame.first_chunk::<4>()?);
            address_family(if af & 0xFFFF_0000 != 0 {
                af.swap_bytes()
            } else {
                af
            })
        }
        LinkType::LOOP => address_family(u32::from_be_bytes(*frame.first_chunk::<4>()?)),
        _ => None,
    }
}

/// Ethernet II, with up to two VLAN tags (802.1Q, 802.1ad or the pre-standard 0x9100).
#[inline(always)]
fn ethernet_header(frame: &[u8]) -> Option<(IpVersion, usize)> {
    let h = frame.first_chunk::<14>()?;
    let (mut ty, mut off) = ([h[12], h[13]], 14);
    for _ in 0..2 {
        if let Some(ip) = ip_ether_type(ty, off) {
            return Some(ip);
        }
        if !matches!(
            be16(ty),
            ether_type::VLAN | ether_type::QINQ | ether_type::QINQ_OLD
        ) {
            return None;
        }
        let tag = frame.get(off..)?.first_chunk::<4>()?;
        (ty, off) = ([tag[2], tag[3]], off + 4);
    }
    ip_ether_type(ty, off)
}

/// The IP version an EtherType (as its two bytes) names, for the IP header at `off`.
#[inline(always)]
fn ip_ether_type(ty: [u8; 2], off: usize) -> Option<(IpVersion, usize)> {
    // Comparing the bytes spares the byte swap of `be16`.
    if ty == ether_type::IPV4.to_be_bytes() {
        Some((IpVersion::V4, off))
    } else if ty == ether_type::IPV6.to_be_bytes() {
        Some((IpVersion::V6, off))
    } else {
        None
    }
}

/// SLL's protocol field, when it is an IP EtherType and the device is not netlink.
#[inline(always)]
fn sll_protocol(hatype: [u8; 2], proto: [u8; 2], off: usize) -> Option<(IpVersion, usize)> {
    if be16(hatype) == crate::sll::ARPHRD_NETLINK {
        return None;
    }
    ip_ether_type(proto, off)
}

/// A BSD loopback address family (see `loopback::family`).
#[inline(always)]
fn address_family(af: u32) -> Option<(IpVersion, usize)> {
    match af {
        2 => Some((IpVersion::V4, 4)),
        24 | 28 | 30 => Some((IpVersion::V6, 4)),
        _ => None,
    }
}

/// An IPv4 header without options at `off` (see `ipv4::decode`), then its transport
/// header; `depth` is the number of tunnels it is in, `bound` the end its enclosing
/// headers state (`Cx::bound`; a datagram reaching past it is left to the general
/// decoder). GTP-U tunnels are entered if `TUNNELS` (see [`Payload::decode`]).
#[inline(always)]
fn ipv4<const TUNNELS: bool>(
    frame: &[u8],
    off: usize,
    bound: usize,
    depth: u8,
    out: &mut Decoded,
) -> bool {
    let Some((h, rest)) = frame.get(off..).and_then(<[u8]>::split_first_chunk::<20>) else {
        return false;
    };
    // Version 4, IHL 5.
    if h[0] != 0x45 {
        return false;
    }
    // A total length of 0 (segmentation offload) is left to the general decoder.
    let total_len = usize::from(be16([h[2], h[3]]));
    // A later fragment: the bits of the fragment offset, tested without a byte swap.
    if u16::from_ne_bytes([h[6], h[7]]) & u16::from_ne_bytes([0x1F, 0xFF]) != 0 {
        return false;
    }
    let Some(declared) = total_len.checked_sub(20) else {
        return false;
    };
    if off + total_len > bound {
        return false;
    }
    fill_ipv4(h, total_len, out);
    Payload::new(frame, rest, declared, off + 20, depth).decode::<TUNNELS>(h[9], out)
}

/// Fill in `out.ip` from a checked IPv4 header.
#[inline(always)]
fn fill_ipv4(h: &[u8; 20], total_len: usize, out: &mut Decoded) {
    let ip = ip_in_place(out);
    ip.src = IpAddr::V4(Ipv4Addr::from(arr::<4, 20>(h, 12)));
    ip.dst = IpAddr::V4(Ipv4Addr::from(arr::<4, 20>(h, 16)));
    ip.id = u32::from(be16([h[4], h[5]]));
    ip.ttl = h[8];
    ip.tos = h[1];
    ip.protocol = h[9];
    ip.total_len = total_len as u32;
    ip.more_fragments = h[6] & 0x20 != 0;
    ip.fragment_offset = 0;
    ip.reassembled = false;
    ip.header_len = 20;
    ip.payload_len = (total_len - 20) as u32;
}

/// An IPv6 header at `off` whose next header is the transport (see `ipv6::decode`);
/// `depth` and `bound` as for [`ipv4`]; GTP-U tunnels are entered if `TUNNELS`.
#[inline(always)]
fn ipv6<const TUNNELS: bool>(
    frame: &[u8],
    off: usize,
    bound: usize,
    depth: u8,
    out: &mut Decoded,
) -> bool {
    let Some((h, rest)) = frame.get(off..).and_then(<[u8]>::split_first_chunk::<40>) else {
        return false;
    };
    if h[0] >> 4 != 6 {
        return false;
    }
    // A payload length of 0 (jumbogram, segmentation offload) is left to the general
    // decoder.
    let declared = usize::from(be16([h[4], h[5]]));
    if declared == 0 || off + 40 + declared > bound {
        return false;
    }
    fill_ipv6(h, declared, out);
    Payload::new(frame, rest, declared, off + 40, depth).decode::<TUNNELS>(h[6], out)
}

/// Fill in `out.ip` from a checked IPv6 header with a payload of `declared` bytes.
#[inline(always)]
fn fill_ipv6(h: &[u8; 40], declared: usize, out: &mut Decoded) {
    let total_len = (40 + declared) as u32;
    let ip = ip_in_place(out);
    ip.src = IpAddr::V6(Ipv6Addr::from(arr::<16, 40>(h, 8)));
    ip.dst = IpAddr::V6(Ipv6Addr::from(arr::<16, 40>(h, 24)));
    ip.id = 0;
    ip.ttl = h[7];
    ip.tos = (h[0] << 4) | (h[1] >> 4);
    ip.protocol = h[6];
    ip.total_len = total_len;
    ip.more_fragments = false;
    ip.fragment_offset = 0;
    ip.reassembled = false;
    ip.header_len = 40;
    ip.payload_len = total_len.saturating_sub(40);
}

/// `out.ip`, to be overwritten field by field (every field: the value may be the
/// previous frame's). Filling it in place spares building a whole `Ip` in registers
/// (spilled to the stack) before storing it, and mostly finds it already there.
#[inline(always)]
fn ip_in_place(out: &mut Decoded) -> &mut Ip {
    out.ip.get_or_insert_with(Ip::default)
}

/// An IP payload: the transport header at its start is still to be checked.
#[derive(Clone, Copy)]
struct Payload<'a> {
    /// The frame, up to the end of the tunnel if the IP header is in one (only GTP-U
    /// reads it, to find the tunnelled packet).
    frame: &'a [u8],
    /// The captured payload, cut at the IP length (`Cx::cut`).
    bytes: &'a [u8],
    /// The payload's length according to the IP header.
    declared: usize,
    /// Where it starts in the frame.
    off: usize,
    /// Number of tunnels the IP header is in (`Decoded::tunnel_depth`).
    depth: u8,
}

/// A checked TCP header (see [`Payload::tcp`]).
struct TcpHeader<'a> {
    payload: Payload<'a>,
    h: &'a [u8; 20],
    /// The captured bytes after the fixed header.
    after: &'a [u8],
    /// From the data offset, options included.
    header_len: usize,
}

/// A checked UDP header (see [`Payload::udp`]).
struct UdpHeader<'a> {
    payload: Payload<'a>,
    h: &'a [u8; 8],
    /// From the length field (or the IP length when that is 0); at least 8.
    len: usize,
}

impl<'a> Payload<'a> {
    /// The IP payload at `off` in `frame`, of `declared` bytes; `rest` holds the
    /// captured bytes from there to the end of the frame.
    #[inline(always)]
    fn new(frame: &'a [u8], rest: &'a [u8], declared: usize, off: usize, depth: u8) -> Self {
        Payload {
            frame,
            bytes: &rest[..rest.len().min(declared)],
            declared,
            off,
            depth,
        }
    }

    /// Decode the transport header of protocol `proto`, if the fast path takes it.
    /// GTP-U tunnels are entered only if `TUNNELS`: [`ethernet_ipv4`] and [`ethernet`]
    /// leave them to [`decode`], which keeps their code, and the registers it needs,
    /// to the common case (each extra saved register costs two instructions a frame);
    /// the decode loop enters tunnels itself, and no tunnel is entered in a tunnel.
    #[inline(always)]
    fn decode<const TUNNELS: bool>(self, proto: u8, out: &mut Decoded) -> bool {
        match proto {
            proto::TCP => self.tcp().map(|tcp| tcp.fill(out)).is_some(),
            proto::UDP => match self.udp() {
                Some(udp) if udp.is_gtp_u() => TUNNELS && udp.gtp_u(out),
                Some(udp) if udp.is_other_tunnel() => false,
                Some(udp) => {
                    udp.fill(out);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// The TCP header, if `tcp::decode` would read it without a stop.
    #[inline(always)]
    fn tcp(self) -> Option<TcpHeader<'a>> {
        let (h, after) = self.bytes.split_first_chunk::<20>()?;
        let header_len = usize::from(h[12] >> 4) * 4;
        // Also rules out an IP payload shorter than 20 bytes.
        if header_len < 20 || header_len > self.declared {
            return None;
        }
        Some(TcpHeader {
            payload: self,
            h,
            after,
            header_len,
        })
    }

    /// The UDP header, if `udp::decode` would read it without a stop.
    #[inline(always)]
    fn udp(self) -> Option<UdpHeader<'a>> {
        let h = self.bytes.first_chunk::<8>()?;
        let len = match usize::from(be16([h[4], h[5]])) {
            0 => self.declared,
            n => n,
        };
        if len < 8 {
            return None;
        }
        Some(UdpHeader {
            payload: self,
            h,
            len,
        })
    }

    /// Fill in what all transports share: the IP payload, and the tunnel depth.
    #[inline(always)]
    fn fill(self, out: &mut Decoded) {
        out.tunnel_depth = self.depth;
        out.ip_payload = self.off..self.off + self.bytes.len();
    }
}

impl TcpHeader<'_> {
    /// Fill in the TCP header and what depends on it (see `tcp::decode`).
    #[inline(always)]
    fn fill(self, out: &mut Decoded) {
        let TcpHeader {
            payload,
            h,
            after,
            header_len,
        } = self;
        payload.fill(out);
        let opts = &after[..after.len().min(header_len - 20)];
        out.payload = payload.off + 20 + opts.len()..payload.off + payload.bytes.len();
        out.transport = Transport::Tcp(Tcp::default());
        let Decoded {
            transport: Transport::Tcp(t),
            stop,
            ..
        } = out
        else {
            return;
        };
        t.src_port = be16([h[0], h[1]]);
        t.dst_port = be16([h[2], h[3]]);
        t.seq = be32(arr(h, 4));
        t.ack = be32(arr(h, 8));
        // The NS bit (RFC 3540) sits below the data offset.
        t.flags = be16([h[12], h[13]]) & 0x01FF;
        t.window = be16([h[14], h[15]]);
        t.checksum = be16([h[16], h[17]]);
        t.urgent = be16([h[18], h[19]]);
        t.header_len = header_len as u16;
        t.payload_len = (payload.declared - header_len) as u32;
        *stop = None;
        if let Some(ts) = tcp::only_timestamps(opts, header_len - 20) {
            t.timestamps = Some(ts);
        } else {
            tcp::options_or_stop(opts, header_len - 20, t, stop);
        }
    }
}

impl UdpHeader<'_> {
    /// True for GTP-U's port, at either end (see `udp::decode`).
    #[inline(always)]
    fn is_gtp_u(&self) -> bool {
        let (h, gtp) = (self.h, udp::GTP_U_PORT.to_be_bytes());
        [h[0], h[1]] == gtp || [h[2], h[3]] == gtp
    }

    /// True for the ports of the other UDP tunnels, left to the general decoder (see
    /// `udp_tunnel`).
    #[inline(always)]
    fn is_other_tunnel(&self) -> bool {
        let h = self.h;
        udp_tunnel::is_tunnel_port(be16([h[0], h[1]]))
            || udp_tunnel::is_tunnel_port(be16([h[2], h[3]]))
    }

    /// Enter the GTP-U tunnel (see `gtp::decode`) if it is a G-PDU without optional
    /// fields, and decode the IP packet it carries, at tunnel depth 1 (only [`decode`]
    /// enters tunnels, for packets in none).
    #[inline(always)]
    fn gtp_u(self, out: &mut Decoded) -> bool {
        let UdpHeader {
            payload: p, len, ..
        } = self;
        // The frame cut at the UDP length, then at the GTP-U length (`Cx::cut`).
        let frame = &p.frame[..p.frame.len().min(p.off + p.bytes.len().min(len))];
        let g = p.off + 8;
        let Some(h) = frame.get(g..).and_then(<[u8]>::first_chunk::<8>) else {
            return false;
        };
        // Version 1, protocol type GTP, no E/S/PN fields; message type G-PDU.
        if h[0] != 0x30 || h[1] != 0xFF {
            return false;
        }
        let frame = &frame[..frame.len().min(g + 8 + usize::from(be16([h[2], h[3]])))];
        // The outer lengths do not bound the tunnelled packet (`enter_tunnel`).
        match frame.get(g + 8).map(|b| b >> 4) {
            Some(4) => ipv4::<false>(frame, g + 8, usize::MAX, 1, out),
            Some(6) => ipv6::<false>(frame, g + 8, usize::MAX, 1, out),
            _ => false,
        }
    }

    /// Fill in the UDP header and what depends on it (see `udp::decode`).
    #[inline(always)]
    fn fill(self, out: &mut Decoded) {
        let UdpHeader { payload, h, len } = self;
        payload.fill(out);
        out.transport = Transport::Udp(Udp {
            src_port: be16([h[0], h[1]]),
            dst_port: be16([h[2], h[3]]),
            payload_len: (len - 8) as u32,
            checksum: be16([h[6], h[7]]),
        });
        // The payload ends at the UDP length, if that comes before the IP's.
        let captured = payload.bytes.len().min(len);
        out.payload = payload.off + 8.min(captured)..payload.off + captured;
        out.stop = None;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    use crate::packet::{Decoded, Radiotap, Transport, Wlan};
    use crate::testutil::*;
    use crate::{decode, decode_in_general, LinkType};

    thread_local! {
        /// See `loop_shortcut`.
        pub(crate) static LOOP_SHORTCUT: Cell<bool> = const { Cell::new(true) };
    }

    /// What the general decoder alone makes of the frame: no fast path, no shortcut.
    fn general(link: LinkType, frame: &[u8], orig_len: u32) -> Decoded {
        LOOP_SHORTCUT.with(|s| s.set(false));
        let mut d = Decoded::default();
        decode_in_general(link, frame, orig_len, &mut d);
        LOOP_SHORTCUT.with(|s| s.set(true));
        d
    }

    /// A `Decoded` with every field set, as a previous frame could leave it.
    fn dirty() -> Decoded {
        let mut d = dec(
            LinkType::ETHERNET,
            &eth(0x0800, &ipv4(6, &tcp(&SACK, &[1; 9]))),
        );
        d.radiotap = Some(Radiotap {
            present: 1,
            flags: Some(0x10),
            ..Radiotap::default()
        });
        d.wlan = Some(Wlan {
            frame_type: 2,
            seq: Some(9),
            ..Wlan::default()
        });
        d.tunnel_depth = 3;
        d.stop = dec(LinkType::ETHERNET, &[0; 5]).stop;
        d
    }

    /// `decode` must give what the general decoder gives, into a fresh or a used value.
    fn check(what: &str, link: LinkType, frame: &[u8], orig_len: u32) {
        let want = general(link, frame, orig_len);
        for mut d in [Decoded::default(), dirty()] {
            decode(link, frame, orig_len, &mut d);
            assert_eq!(
                d, want,
                "{what}: link {link:?}, orig_len {orig_len}, frame {frame:02x?}"
            );
        }
    }

    /// `frame` as it is, cut at every length, and with every byte of its first 100
    /// changed to values that matter to some check.
    fn check_around(what: &str, link: LinkType, frame: &[u8]) {
        let len = frame.len() as u32;
        for orig_len in [len, len + 1000, 0] {
            check(what, link, frame, orig_len);
        }
        for cut in 0..frame.len() {
            check(what, link, &frame[..cut], len);
        }
        for at in 0..frame.len().min(100) {
            let b = frame[at];
            // Kinds and lengths, protocol numbers, IP lengths and data offsets around
            // their limits, version nibbles, flag bits.
            let values = [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 17, 19, 20, 39, 40, 0x20, 0x30, 0x40, 0x45, 0x50,
                0x60, 0x80,
            ];
            for value in values
                .into_iter()
                .chain([0xFF, b ^ 0x01, b ^ 0x10, b ^ 0x80])
            {
                let mut f = frame.to_vec();
                f[at] = value;
                check(what, link, &f, len);
                check(what, link, &f, len + 100);
            }
        }
    }

    /// NOP, NOP, timestamps.
    const TS: [u8; 12] = [1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8];
    /// NOP, NOP, timestamps, NOP, NOP, SACK with two blocks.
    const SACK: [u8; 32] = [
        1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8, 1, 1, 5, 18, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
        4, 0,
    ];
    /// Linux's SYN options: MSS, SACK permitted, timestamps, NOP, window scale.
    const SYN: [u8; 20] = [
        2, 4, 5, 0xB4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
    ];

    /// The stacks of the fast path, and of the loop's shortcut.
    fn stacks() -> Vec<(&'static str, LinkType, Vec<u8>)> {
        let v4 = ipv4(6, &tcp(&TS, &[0xAB; 20]));
        let v6 = ipv6(6, &tcp(&TS, &[0xAB; 20]));
        // SLL: packet type, ARPHRD 1, address length 6, address, protocol. SLL2:
        // protocol, reserved, interface 3, ARPHRD 1, packet type, address length 6, address.
        let sll = |proto: u16, ip: &[u8]| {
            cat(&[
                &[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0],
                &proto.to_be_bytes(),
                ip,
            ])
        };
        let sll2_rest = [0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
        let sll2 = |proto: u16, ip: &[u8]| cat(&[&proto.to_be_bytes(), &sll2_rest, ip]);
        let gtp = |inner: &[u8]| {
            let g = cat(&[
                &[0x30, 0xFF],
                &(inner.len() as u16).to_be_bytes(),
                &[0, 0, 0, 1],
                inner,
            ]);
            ipv4(17, &udp(2152, 2152, &g))
        };
        vec![
            ("ethernet ipv4 tcp+ts", LinkType::ETHERNET, eth(0x0800, &v4)),
            (
                "ethernet ipv4 tcp",
                LinkType::ETHERNET,
                eth(0x0800, &ipv4_tcp(3)),
            ),
            (
                "ethernet ipv4 tcp+sack",
                LinkType::ETHERNET,
                eth(0x0800, &ipv4(6, &tcp(&SACK, &[]))),
            ),
            (
                "ethernet ipv4 tcp syn",
                LinkType::ETHERNET,
                eth(0x0800, &ipv4(6, &tcp(&SYN, &[]))),
            ),
            (
                "ethernet ipv4 udp",
                LinkType::ETHERNET,
                eth(0x0800, &ipv4(17, &udp(53, 5353, &[7; 12]))),
            ),
            ("ethernet ipv6 tcp", LinkType::ETHERNET, eth(0x86DD, &v6)),
            (
                "ethernet vlan ipv6 tcp",
                LinkType::ETHERNET,
                eth(0x8100, &cat(&[&[0, 10, 0x86, 0xDD], &v6])),
            ),
            (
                "ethernet qinq ipv4 tcp",
                LinkType::ETHERNET,
                eth(0x88A8, &cat(&[&[0, 10, 0x81, 0], &[0, 20, 8, 0], &v4])),
            ),
            (
                "ethernet gtp-u ipv6 tcp",
                LinkType::ETHERNET,
                eth(0x0800, &gtp(&v6)),
            ),
            ("sll ipv4 tcp", LinkType::LINUX_SLL, sll(0x0800, &v4)),
            (
                "sll gtp-u ipv4 udp",
                LinkType::LINUX_SLL,
                sll(0x0800, &gtp(&ipv4(17, &udp(1, 2, &[3; 5])))),
            ),
            (
                "sll2 ipv6 udp",
                LinkType::LINUX_SLL2,
                sll2(0x86DD, &ipv6(17, &udp(1, 2, &[3; 5]))),
            ),
            (
                "null ipv4 tcp",
                LinkType::NULL,
                cat(&[&2u32.to_le_bytes(), &v4]),
            ),
            (
                "loop ipv6 tcp",
                LinkType::LOOP,
                cat(&[&24u32.to_be_bytes(), &v6]),
            ),
            ("raw ipv4 tcp", LinkType::RAW, v4.clone()),
            ("ipv6 tcp", LinkType::IPV6, v6.clone()),
            // The decode loop's shortcut: PPP, MPLS, IP in IP.
            (
                "ppp ipv4 tcp",
                LinkType::PPP,
                cat(&[&[0xFF, 0x03, 0x00, 0x21], &v4]),
            ),
            (
                "ethernet mpls ipv6 tcp",
                LinkType::ETHERNET,
                eth(0x8847, &cat(&[&[0, 0x06, 0x41, 64], &v6])),
            ),
            ("raw ipv4 in ipv6 tcp", LinkType::RAW, ipv6(4, &v4)),
        ]
    }

    #[test]
    fn the_fast_path_changes_no_result() {
        for (what, link, frame) in stacks() {
            check_around(what, link, &frame);
        }
    }

    #[test]
    fn the_fast_path_takes_the_common_stacks() {
        // Guards the comparison above against comparing the general decoder with
        // itself: these frames are decoded by the fast path, without the loop.
        for (what, link, frame) in &stacks()[..16] {
            let mut d = Decoded::default();
            let decoded = match *link {
                LinkType::ETHERNET => {
                    super::ethernet(frame, &mut d) || super::decode(*link, frame, &mut d)
                }
                _ => super::decode(*link, frame, &mut d),
            };
            assert!(decoded, "{what}");
            assert_ne!(d.transport, Transport::None, "{what}");
        }
    }
}
