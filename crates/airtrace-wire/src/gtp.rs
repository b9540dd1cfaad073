//! GTP-U version 1 (3GPP TS 29.281 section 5): the user-plane tunnel of mobile packet
//! cores. Only G-PDUs (message type 255), which carry a user IP packet, are entered.

use crate::decoder::{enter_tunnel, Cx, Next};
use crate::packet::{Decoded, Layer, Stop};
use crate::read::{be16, byte, malformed, need, not_decoded, unsupported};

const G_PDU: u8 = 0xFF;

/// Decode the GTP-U header at `off` (the UDP payload) and enter the tunnel.
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    // Section 5.1: flags (version 3 bits, PT, spare, E, S, PN), message type, length
    // (of everything after the first 8 bytes), TEID.
    let h = need::<8>(cx.f, off, Layer::Tunnel)?;
    let flags = h[0];
    if flags >> 5 != 1 || flags & 0x10 == 0 || h[1] != G_PDU {
        return Err(unsupported(Layer::Tunnel));
    }
    cx.stated(off + 8 + usize::from(be16([h[2], h[3]])));
    let mut pos = off + 8;
    // Any of E, S, PN: sequence number, N-PDU number and next extension header type
    // follow (4 bytes); the last is meaningful only with E.
    if flags & 0x07 != 0 {
        let opt = need::<4>(cx.f, pos, Layer::Tunnel)?;
        pos += 4;
        let mut next_ext = if flags & 0x04 != 0 { opt[3] } else { 0 };
        // Section 5.2: each extension header is a length in 4-octet units (counting
        // the whole header), contents, and the next extension header type.
        while next_ext != 0 {
            let len = usize::from(byte(cx.f, pos, Layer::Tunnel)?) * 4;
            if len == 0 {
                return Err(malformed(Layer::Tunnel, "GTP-U extension header length 0"));
            }
            next_ext = byte(cx.f, pos + len - 1, Layer::Tunnel)?;
            pos += len;
        }
    }
    let next = match byte(cx.f, pos, Layer::Tunnel)? >> 4 {
        4 => Next::Ipv4(pos),
        6 => Next::Ipv6(pos),
        // A non-IP PDN (Ethernet or unstructured, 3GPP TS 23.401 section 4.3.17.8).
        _ => return Err(not_decoded(Layer::Tunnel, "a GTP-U payload other than IP")),
    };
    enter_tunnel(cx, out);
    Ok(next)
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use crate::packet::{Layer, StopReason};
    use crate::testutil::*;
    use crate::LinkType;

    /// GTP-U header (3GPP TS 29.281 section 5.1): flags (version 1, PT 1, E/S/PN),
    /// message type, length of what follows the first 8 bytes, TEID.
    fn gtp(flags: u8, msg: u8, rest: &[u8]) -> Vec<u8> {
        cat(&[
            &[flags, msg],
            &(rest.len() as u16).to_be_bytes(),
            &[0, 0, 0, 42],
            rest,
        ])
    }

    fn over_udp(g: &[u8]) -> Vec<u8> {
        eth(0x0800, &ipv4(17, &udp(2152, 2152, g)))
    }

    #[test]
    fn g_pdu_carries_ipv4_or_ipv6() {
        let d = dec(
            LinkType::ETHERNET,
            &over_udp(&gtp(0x30, 0xFF, &ipv4_tcp(5))),
        );
        assert_eq!((d.stop, d.tunnel_depth), (None, 1));
        assert_eq!(d.tcp().unwrap().payload_len, 5);
        assert_eq!(d.payload.len(), 5);
        let d = dec(
            LinkType::ETHERNET,
            &over_udp(&gtp(0x30, 0xFF, &ipv6(6, &tcp(&[], &[])))),
        );
        assert!(matches!(d.ip.unwrap().src, IpAddr::V6(_)));
    }

    #[test]
    fn optional_fields_and_extension_headers() {
        // S flag: sequence number, N-PDU number, next extension type (ignored: no E).
        let g = gtp(0x32, 0xFF, &cat(&[&[0, 7, 0, 0x85], &ipv4_tcp(0)]));
        assert!(dec(LinkType::ETHERNET, &over_udp(&g)).tcp().is_some());
        // E flag: a PDU session container (type 0x85, section 5.2.2.7) of one 4-byte unit,
        // then a second extension header of two units, then no more.
        let g = gtp(
            0x34,
            0xFF,
            &cat(&[
                &[0, 0, 0, 0x85],
                &[1, 0x10, 9, 0x40],
                &[2, 1, 2, 3, 4, 5, 6, 0],
                &ipv4_tcp(0),
            ]),
        );
        let d = dec(LinkType::ETHERNET, &over_udp(&g));
        assert_eq!(d.stop, None);
        assert!(d.tcp().is_some());
    }

    #[test]
    fn signalling_messages_stay_udp() {
        // Echo request (type 1): not a tunnel payload.
        let d = dec(
            LinkType::ETHERNET,
            &over_udp(&gtp(0x32, 0x01, &[0, 1, 0, 0])),
        );
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Tunnel, StopReason::Unsupported)
        );
        assert_eq!(d.udp().unwrap().dst_port, 2152);
        assert_eq!(d.tunnel_depth, 0);
    }

    #[test]
    fn broken_tunnels() {
        let short = over_udp(&[0x30, 0xFF, 0, 0]);
        assert_eq!(
            dec(LinkType::ETHERNET, &short).stop.unwrap().reason,
            StopReason::Truncated
        );
        let zero_ext = gtp(
            0x34,
            0xFF,
            &cat(&[&[0, 0, 0, 0x85], &[0, 0, 0, 0], &ipv4_tcp(0)]),
        );
        let d = dec(LinkType::ETHERNET, &over_udp(&zero_ext));
        assert_eq!(
            d.stop.unwrap().reason,
            StopReason::Malformed("GTP-U extension header length 0")
        );
        let not_ip = gtp(0x30, 0xFF, &[0x00; 20]);
        assert!(matches!(
            dec(LinkType::ETHERNET, &over_udp(&not_ip))
                .stop
                .unwrap()
                .reason,
            StopReason::NotDecoded(_)
        ));
    }
}
