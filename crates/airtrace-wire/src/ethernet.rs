//! Ethernet II and IEEE 802.3 framing, and what an EtherType can name: VLAN tags
//! (802.1Q, 802.1ad, stacked), MPLS label stacks, PPPoE sessions, and IEEE 802.2
//! LLC/SNAP (also used by 802.11 and FDDI).

use crate::decoder::{Cx, Next};
use crate::packet::{Layer, Stop};
use crate::ppp;
use crate::read::{be16, malformed, need, unsupported};

/// EtherType values (IEEE "EtherType" registry) that the decoder follows.
pub(crate) mod ether_type {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86DD;
    pub const VLAN: u16 = 0x8100;
    pub const QINQ: u16 = 0x88A8;
    /// Pre-standard 802.1ad (still written by some switches).
    pub const QINQ_OLD: u16 = 0x9100;
    pub const MPLS: u16 = 0x8847;
    pub const MPLS_MULTICAST: u16 = 0x8848;
    pub const PPPOE_SESSION: u16 = 0x8864;
}

/// Largest IEEE 802.3 length; values from 0x0600 up are EtherTypes (IEEE 802.3-2018
/// clause 3.2.6). The values in between are undefined.
const MAX_8023_LEN: u16 = 1500;
const MIN_ETHER_TYPE: u16 = 0x0600;

/// An Ethernet header: destination, source, EtherType or length (IEEE 802.3 clause 3.2).
#[inline(always)]
pub(crate) fn start(cx: &Cx<'_>) -> Result<Next, Stop> {
    header(0, cx)
}

/// An Ethernet header at `off`: the frame's own, or one a tunnel carries.
#[inline(always)]
pub(crate) fn header(off: usize, cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<14>(cx.f, off, Layer::Link)?;
    Ok(Next::Ether {
        ty: be16([h[12], h[13]]),
        off: off + 14,
        layer: Layer::Link,
    })
}

/// Follow an EtherType (or 802.3 length) found by `layer` at `off`.
#[inline(always)]
pub(crate) fn ether_type(ty: u16, off: usize, layer: Layer, cx: &mut Cx<'_>) -> Result<Next, Stop> {
    use ether_type::*;
    match ty {
        IPV4 => Ok(Next::Ipv4(off)),
        IPV6 => Ok(Next::Ipv6(off)),
        // IEEE 802.1Q clause 9.6: TCI (PCP, DEI, VID), then the next EtherType.
        VLAN | QINQ | QINQ_OLD => {
            let t = need::<4>(cx.f, off, Layer::Vlan)?;
            Ok(Next::Ether {
                ty: be16([t[2], t[3]]),
                off: off + 4,
                layer: Layer::Vlan,
            })
        }
        MPLS | MPLS_MULTICAST => mpls(off, cx),
        PPPOE_SESSION => pppoe_session(off, cx),
        // An 802.3 length field (only directly after the MAC header or a VLAN tag):
        // an LLC header follows, and the frame may carry padding after `len` bytes.
        0..=MAX_8023_LEN if matches!(layer, Layer::Link | Layer::Vlan) => {
            cx.stated(off + usize::from(ty));
            Ok(Next::Llc(off))
        }
        ty if ty < MIN_ETHER_TYPE && layer == Layer::Link => Err(malformed(
            Layer::Link,
            "EtherType/length between 1501 and 1535",
        )),
        _ => Err(unsupported(layer)),
    }
}

/// An MPLS label stack (RFC 3032 section 2.1): 4-byte entries up to the one with the
/// bottom-of-stack bit; the payload's first nibble then tells IPv4 from IPv6
/// (RFC 4385 section 2 for why that works, and why 0 means a pseudowire control word).
fn mpls(mut off: usize, cx: &Cx<'_>) -> Result<Next, Stop> {
    loop {
        let entry = need::<4>(cx.f, off, Layer::Mpls)?;
        off += 4;
        if entry[2] & 0x01 != 0 {
            return Ok(Next::Ip {
                off,
                layer: Layer::Mpls,
            });
        }
    }
}

/// A PPPoE session header (RFC 2516 section 4): VER/TYPE 0x11, CODE 0, SESSION_ID,
/// LENGTH (of the PPP payload, protocol field included), then the PPP protocol, which
/// may be compressed to one byte (RFC 1661 section 6.5; RFC 2516 section 7 says it
/// should not be, `suri_pppoe-session-http` shows it is).
fn pppoe_session(off: usize, cx: &mut Cx<'_>) -> Result<Next, Stop> {
    let h = need::<6>(cx.f, off, Layer::Link)?;
    if h[0] != 0x11 {
        return Err(malformed(Layer::Link, "PPPoE version/type is not 1/1"));
    }
    if h[1] != 0 {
        return Err(malformed(Layer::Link, "PPPoE session code is not 0"));
    }
    let len = usize::from(be16([h[4], h[5]]));
    cx.stated(off + 6 + len);
    ppp::protocol_field(cx.f, off + 6)
}

/// An IEEE 802.2 LLC header. Only SNAP (DSAP 0xAA, SSAP 0xAA, UI) with an EtherType OUI
/// is followed: 00-00-00 (RFC 1042) or 00-00-F8 (IEEE 802.1H bridge tunnel).
pub(crate) fn llc(off: usize, cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<3>(cx.f, off, Layer::Llc)?;
    if *h != [0xAA, 0xAA, 0x03] {
        return Err(unsupported(Layer::Llc));
    }
    let s = need::<8>(cx.f, off, Layer::Llc)?;
    match [s[3], s[4], s[5]] {
        [0, 0, 0] | [0, 0, 0xF8] => Ok(Next::Ether {
            ty: be16([s[6], s[7]]),
            off: off + 8,
            layer: Layer::Llc,
        }),
        _ => Err(unsupported(Layer::Llc)),
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason, Transport};
    use crate::testutil::*;
    use crate::LinkType;

    const E: LinkType = LinkType::ETHERNET;

    #[test]
    fn ethernet_ipv4_tcp() {
        let f = eth(0x0800, &ipv4_tcp(10));
        let d = dec(E, &f);
        assert_eq!(d.stop, None);
        let t = d.tcp().unwrap();
        assert_eq!(
            (t.src_port, t.dst_port, t.seq, t.ack, t.payload_len),
            (1234, 80, 1000, 2000, 10)
        );
        assert_eq!(d.payload, 54..64);
        assert_eq!(d.ip_payload, 34..64);
    }

    #[test]
    fn ethernet_padding_after_the_ip_datagram_is_not_payload() {
        // A 40-byte IP packet in a minimum-size 60-byte frame: 6 bytes of padding.
        let f = cat(&[&eth(0x0800, &ipv4_tcp(0)), &[0; 6]]);
        let d = dec(E, &f);
        assert_eq!(d.payload, 54..54);
        assert_eq!(d.tcp().unwrap().payload_len, 0);
    }

    #[test]
    fn truncated_ethernet_header() {
        let d = dec(E, &[0; 13]);
        assert_eq!(d.stop.unwrap().layer, Layer::Link);
        assert_eq!(d.stop.unwrap().reason, StopReason::Truncated);
    }

    #[test]
    fn vlan_tags_stack() {
        // IEEE 802.1Q clause 9.6: TPID, TCI (PCP 3 bits, DEI, VID 12 bits), EtherType.
        for outer in [0x8100u16, 0x88A8, 0x9100] {
            let inner = cat(&[&[0x00, 0x0A], &0x0800u16.to_be_bytes(), &ipv4_tcp(0)]);
            let f = eth(
                outer,
                &cat(&[&[0x20, 0x64], &0x8100u16.to_be_bytes(), &inner]),
            );
            let d = dec(E, &f);
            assert_eq!(d.stop, None, "{outer:#x}");
            assert!(d.tcp().is_some());
            assert_eq!(d.payload.start, 14 + 8 + 40);
        }
    }

    #[test]
    fn truncated_vlan_tag() {
        let d = dec(E, &eth(0x8100, &[0x00, 0x0A, 0x08]));
        assert_eq!(d.stop.unwrap().layer, Layer::Vlan);
    }

    #[test]
    fn ieee_802_3_length_with_llc_snap() {
        // IEEE 802.3 clause 3.2.6: a length, then LLC/SNAP (RFC 1042), then the packet;
        // padding after `length` bytes is ignored.
        let body = cat(&[&snap(0x0800), &ipv4_tcp(4)]);
        let f = cat(&[&eth(body.len() as u16, &body), &[0xEE; 8]]);
        let d = dec(E, &f);
        assert_eq!(d.stop, None);
        assert_eq!(d.tcp().unwrap().payload_len, 4);
        assert_eq!(d.payload.len(), 4);
    }

    #[test]
    fn ieee_802_3_with_plain_llc_is_unsupported() {
        // Spanning tree BPDUs: DSAP 0x42, SSAP 0x42, UI.
        let f = eth(38, &[0x42, 0x42, 0x03, 0, 0, 0, 0, 0]);
        assert_eq!(dec(E, &f).stop.unwrap().layer, Layer::Llc);
        assert_eq!(dec(E, &f).stop.unwrap().reason, StopReason::Unsupported);
    }

    #[test]
    fn snap_with_a_foreign_oui_is_unsupported() {
        let f = eth(10, &[0xAA, 0xAA, 0x03, 0x00, 0x00, 0x0C, 0x20, 0x00]);
        assert_eq!(dec(E, &f).stop.unwrap().layer, Layer::Llc);
    }

    #[test]
    fn undefined_length_or_type_is_malformed() {
        let d = dec(E, &eth(1536 - 1, &[0; 40]));
        assert!(matches!(d.stop.unwrap().reason, StopReason::Malformed(_)));
        assert_eq!(d.stop.unwrap().layer, Layer::Link);
    }

    #[test]
    fn arp_is_unsupported_at_the_link() {
        let d = dec(E, &eth(0x0806, &[0; 28]));
        assert_eq!(d.stop.unwrap().layer, Layer::Link);
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
        assert_eq!(d.transport, Transport::None);
    }

    /// An MPLS label stack entry (RFC 3032 section 2.1): label 20 bits, TC 3, S 1, TTL 8.
    fn label(value: u32, bottom: bool) -> [u8; 4] {
        ((value << 12) | (u32::from(bottom) << 8) | 64).to_be_bytes()
    }

    #[test]
    fn mpls_stack_then_ipv4_or_ipv6() {
        let f = eth(
            0x8847,
            &cat(&[&label(100, false), &label(200, true), &ipv4_tcp(0)]),
        );
        let d = dec(E, &f);
        assert_eq!(d.stop, None);
        assert!(d.tcp().is_some());
        assert_eq!(d.tunnel_depth, 0);
        let f = eth(0x8848, &cat(&[&label(3, true), &ipv6(6, &tcp(&[], &[]))]));
        let d = dec(E, &f);
        assert_eq!(d.stop, None);
        assert!(d.ip.unwrap().src.is_ipv6());
    }

    #[test]
    fn mpls_pseudowire_control_word_is_unsupported() {
        let f = eth(0x8847, &cat(&[&label(100, true), &[0, 0, 0, 0], &[0; 14]]));
        assert_eq!(dec(E, &f).stop.unwrap().layer, Layer::Mpls);
        assert_eq!(dec(E, &f).stop.unwrap().reason, StopReason::Unsupported);
    }

    #[test]
    fn mpls_truncated_inside_the_stack() {
        let f = eth(0x8847, &cat(&[&label(100, false), &[0, 1]]));
        assert_eq!(dec(E, &f).stop.unwrap().layer, Layer::Mpls);
        assert_eq!(dec(E, &f).stop.unwrap().reason, StopReason::Truncated);
    }

    #[test]
    fn pppoe_session_ipv4() {
        // RFC 2516 section 4: 0x11, code 0, session 0x0001, length (PPP protocol
        // included), then PPP protocol 0x0021. Trailing padding is cut by the length.
        let ip = ipv4_tcp(2);
        let len = (ip.len() + 2) as u16;
        let f = cat(&[
            &eth(
                0x8864,
                &cat(&[&[0x11, 0, 0, 1], &len.to_be_bytes(), &[0, 0x21], &ip]),
            ),
            &[0; 4],
        ]);
        let d = dec(E, &f);
        assert_eq!(d.stop, None);
        assert_eq!(d.payload.len(), 2);
    }

    #[test]
    fn an_ip_length_past_the_pppoe_length_is_bounded_by_it() {
        // Frame 47 of zeek_pppoe-over-qinq.pcap: QinQ, PPPoE LENGTH 42 (the PPP protocol
        // and a 40-byte ACK), IP total length 46 (the ACK padded to Ethernet's 46-byte
        // minimum, the padding counted in the IP length only). The next segment of the
        // connection starts at the same sequence number: the 6 zero bytes are no data.
        let f = hex(concat!(
            "bcd17717750d000000000000",
            "81000e78810009aa8864",
            "11000f07002a0021",
            "4500002e1cde4000ef0668e60202020201010101",
            "01bb4faafc90b244d7a8603050100989682c0000",
            "000000000000",
        ));
        let d = dec(E, &f);
        assert_eq!(d.stop, None);
        assert_eq!(d.ip.unwrap().total_len, 46);
        assert_eq!(d.tcp().unwrap().payload_len, 0);
        assert_eq!(d.payload, 70..70);
        assert_eq!(d.ip_payload, 50..70);
    }

    #[test]
    fn a_length_field_never_reaches_past_the_one_around_it_in_a_packet() {
        // UDP in IPv4 whose UDP length (30) exceeds the IP payload (20): bounded by IP.
        let mut inner = udp(53, 53, &[7; 12]);
        inner[4..6].copy_from_slice(&30u16.to_be_bytes());
        let d = dec(E, &eth(0x0800, &ipv4(17, &inner)));
        assert_eq!(d.payload.len(), 12);
        // A 802.3 length shorter than the IP total length bounds it.
        let body = cat(&[&snap(0x0800), &ipv4_tcp(4)]);
        let f = eth((body.len() - 4) as u16, &body);
        assert_eq!(dec(E, &f).tcp().unwrap().payload_len, 0);
    }

    #[test]
    fn a_tunnel_may_carry_part_of_a_packet() {
        // IP in IP whose inner total length exceeds the outer payload: the outer
        // datagram is a fragment, or a truncated copy (zeek_erspan,
        // zeek_gtp1_gn_normal_incl_fragmentation): the segment keeps its length.
        let mut tcp_in = ipv4_tcp(14);
        tcp_in[3] += 10;
        let d = dec(E, &eth(0x0800, &ipv4(4, &tcp_in[..tcp_in.len() - 10])));
        assert_eq!(d.tcp().unwrap().payload_len, 24);
        assert_eq!(d.payload.len(), 4);
    }

    #[test]
    fn pppoe_with_a_compressed_protocol_field() {
        // suri_pppoe-session-http.pcap, frame 1: PPPoE LENGTH 61, PPP protocol 0x21 in
        // one byte (RFC 1661 section 6.5), then a 60-byte SYN with MSS 1452.
        let f = hex(concat!(
            "000c2939f3c3000c29208ea18864",
            "1100002d003d21",
            "4500003c000040004006edda0a6400008efab383",
            "deb50050d4bd765400000000a002fecc742f0000",
            "020405ac010303070402080acbae926300000000",
        ));
        let d = dec(E, &f);
        assert_eq!(d.stop, None);
        assert_eq!(d.tcp().unwrap().mss, Some(1452));
        assert_eq!(d.ip_payload, 41..81);
    }

    #[test]
    fn pppoe_with_a_bad_version_is_malformed() {
        let f = eth(
            0x8864,
            &cat(&[&[0x21, 0, 0, 1, 0, 42, 0, 0x21], &ipv4_tcp(0)]),
        );
        assert!(matches!(
            dec(E, &f).stop.unwrap().reason,
            StopReason::Malformed(_)
        ));
    }
}
