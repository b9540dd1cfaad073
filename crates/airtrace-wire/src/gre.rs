//! GRE (RFC 2784, with RFC 2890's key and sequence number): the tunnel of VPNs, of
//! ERSPAN port mirrors and of enterprise access points to their controller (Aruba's
//! carries the clients' 802.11 frames). Without it such a capture's TCP is invisible:
//! an Aruba tunnel of 2,400 TCP frames read as "0 TCP" (issue 18, class 4).
//!
//! Entered: IPv4, IPv6, Transparent Ethernet Bridging (an Ethernet frame), ERSPAN
//! types II and III (an Ethernet frame after their header) and Aruba's 802.11 types.
//! Version 1 (PPTP's enhanced GRE, which carries PPP), RFC 1701's source routing and
//! other payload types stop as [`crate::StopReason::NotDecoded`], which the file's
//! report counts.

use crate::decoder::{enter_tunnel, Cx, Next};
use crate::packet::{Decoded, Layer, Stop};
use crate::read::{be16, need, not_decoded};

/// The IP protocol number of GRE (IANA).
pub(crate) const PROTO: u8 = 47;

/// RFC 2784 section 2.1 / RFC 2890 section 2: the flag bits of the first word.
const CHECKSUM: u16 = 0x8000;
/// RFC 1701's routing present bit (source routing entries follow): not entered.
const ROUTING: u16 = 0x4000;
const KEY: u16 = 0x2000;
const SEQUENCE: u16 = 0x1000;
const VERSION: u16 = 0x0007;

/// Protocol types (EtherTypes, and the values Wireshark and Zeek know for the rest).
mod ty {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86DD;
    /// Transparent Ethernet Bridging: an Ethernet frame (RFC 1701 section 3.2.3).
    pub const ETHERNET: u16 = 0x6558;
    /// Cisco ERSPAN type II: an 8-byte ERSPAN header, then the mirrored Ethernet frame.
    pub const ERSPAN_II: u16 = 0x88BE;
    /// ERSPAN type III: a 12-byte header (8 more with its O bit), then the frame.
    pub const ERSPAN_III: u16 = 0x22EB;
    /// Aruba's access-point tunnels: 0x8200 to 0x8320 in steps of 0x10, each an 802.11
    /// frame without FCS.
    pub const ARUBA_FIRST: u16 = 0x8200;
    pub const ARUBA_LAST: u16 = 0x8320;
}

/// Decode the GRE header at `off` (an IP payload of protocol 47) and enter the tunnel.
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let h = need::<4>(cx.f, off, Layer::Tunnel)?;
    let flags = be16([h[0], h[1]]);
    let protocol = be16([h[2], h[3]]);
    if flags & VERSION != 0 {
        return Err(not_decoded(Layer::Tunnel, "GRE version 1 (PPTP)"));
    }
    if flags & ROUTING != 0 {
        return Err(not_decoded(Layer::Tunnel, "GRE with source routing"));
    }
    // The optional words, in this order: checksum and reserved, key, sequence number.
    let words = [CHECKSUM, KEY, SEQUENCE]
        .iter()
        .filter(|&&bit| flags & bit != 0)
        .count();
    let inner = off + 4 + 4 * words;
    let next = match protocol {
        ty::IPV4 => Next::Ipv4(inner),
        ty::IPV6 => Next::Ipv6(inner),
        ty::ETHERNET => Next::Ethernet(inner),
        ty::ERSPAN_II => Next::Ethernet(inner + 8),
        ty::ERSPAN_III => {
            // Header word 3, bit 0 (the O flag): an 8-byte platform subheader follows.
            let e = need::<12>(cx.f, inner, Layer::Tunnel)?;
            Next::Ethernet(inner + 12 + if e[11] & 0x01 != 0 { 8 } else { 0 })
        }
        ty::ARUBA_FIRST..=ty::ARUBA_LAST if protocol & 0x000F == 0 => Next::Wlan(inner),
        _ => {
            return Err(not_decoded(
                Layer::Tunnel,
                "a GRE payload of another protocol type",
            ))
        }
    };
    enter_tunnel(cx, out);
    Ok(next)
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason};
    use crate::testutil::*;
    use crate::LinkType;

    /// A GRE header with `flags`, `protocol` and the optional words it announces.
    fn gre(flags: u16, protocol: u16) -> Vec<u8> {
        let words = [0x8000u16, 0x2000, 0x1000]
            .iter()
            .filter(|&&b| flags & b != 0)
            .count();
        let mut h = cat(&[&flags.to_be_bytes(), &protocol.to_be_bytes()]);
        h.extend(std::iter::repeat_n(0xAB, 4 * words));
        h
    }

    /// `inner` as the payload of GRE over IPv4 over Ethernet.
    fn outer(inner: &[u8]) -> Vec<u8> {
        eth(0x0800, &ipv4(47, inner))
    }

    #[test]
    fn ip_in_gre_with_key_and_sequence_is_the_inner_tcp() {
        let d = dec(
            LinkType::ETHERNET,
            &outer(&cat(&[&gre(0x3000, 0x0800), &ipv4_tcp(5)])),
        );
        assert_eq!(d.stop, None);
        assert_eq!(d.tcp().unwrap().dst_port, 80);
        assert_eq!(d.payload.len(), 5);
        assert_eq!(d.tunnel_depth, 1);
    }

    #[test]
    fn ethernet_and_erspan_in_gre_are_entered() {
        let frame = eth(0x0800, &ipv4_tcp(1));
        for (flags, protocol, header) in [
            (0x0000u16, 0x6558u16, vec![]),
            (0x1000, 0x88BE, vec![0x10, 0, 0, 1, 0, 0, 0, 0]),
            (0x0000, 0x22EB, vec![0x20, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
            (
                0x0000,
                0x22EB,
                [vec![0x20, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], vec![0; 8]].concat(),
            ),
        ] {
            let inner = cat(&[&gre(flags, protocol), &header, &frame]);
            let d = dec(LinkType::ETHERNET, &outer(&inner));
            assert_eq!(d.stop, None, "{protocol:#x}");
            assert_eq!(d.tcp().unwrap().src_port, 1234, "{protocol:#x}");
        }
    }

    #[test]
    fn an_aruba_tunnel_carries_802_11_frames() {
        // IEEE 802.11-2020 9.3.2.1: a data frame to the DS, addresses, sequence control;
        // then LLC/SNAP and the IP packet.
        let mac = cat(&[
            &[0x08, 0x01, 0, 0],
            &[
                2, 0, 0, 0, 0, 0xAA, 2, 0, 0, 0, 0, 0xBB, 2, 0, 0, 0, 0, 0xAA,
            ],
            &[0x10, 0],
        ]);
        let data = cat(&[&mac, &snap(0x0800), &ipv4_tcp(2)]);
        let d = dec(LinkType::ETHERNET, &outer(&cat(&[&gre(0, 0x8210), &data])));
        assert_eq!(d.stop, None);
        assert!(d.wlan.is_some());
        assert_eq!(d.tcp().unwrap().dst_port, 80);
    }

    #[test]
    fn pptp_gre_routing_and_unknown_payloads_are_named_not_decoded() {
        for (flags, protocol) in [
            (0x3001u16, 0x880Bu16),
            (0, 0x9999),
            (0x4000, 0x0800),
            (0, 0x8201),
        ] {
            let d = dec(LinkType::ETHERNET, &outer(&gre(flags, protocol)));
            let stop = d.stop.expect("stops");
            assert_eq!(stop.layer, Layer::Tunnel);
            assert!(matches!(stop.reason, StopReason::NotDecoded(_)));
        }
    }
}
