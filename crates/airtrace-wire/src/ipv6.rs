//! IPv6 (RFC 8200 section 3) and its extension headers (RFC 8200 section 4; AH,
//! RFC 4302 section 2).

use std::net::{IpAddr, Ipv6Addr};

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Ip, Layer, Stop};
use crate::read::{arr, be16, be32, malformed, need, truncated};

/// Extension header numbers (IANA "IPv6 Extension Header Types").
mod ext {
    pub const HOP_BY_HOP: u8 = 0;
    pub const ROUTING: u8 = 43;
    pub const FRAGMENT: u8 = 44;
    pub const AUTH: u8 = 51;
    pub const DEST_OPTS: u8 = 60;
}

/// Decode the IPv6 header at `off` and walk its extension headers. A non-first
/// fragment ends decoding after the fragment header.
#[inline(always)]
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let h = need::<40>(cx.f, off, Layer::Ipv6)?;
    if h[0] >> 4 != 6 {
        return Err(malformed(Layer::Ipv6, "IPv6 version is not 6"));
    }
    // Payload length 0 is a jumbogram (RFC 2675) or a segmentation-offload capture:
    // either way the frame's own length is the best measure.
    let payload_len = match usize::from(be16([h[4], h[5]])) {
        0 => cx.declared_from(off + 40),
        n => n,
    };
    cx.stated(off + 40 + payload_len);
    // Filled in place, see `tcp::decode`.
    let ip = out.ip.insert(Ip::default());
    ip.src = IpAddr::V6(Ipv6Addr::from(arr::<16, 40>(h, 8)));
    ip.dst = IpAddr::V6(Ipv6Addr::from(arr::<16, 40>(h, 24)));
    ip.ttl = h[7];
    ip.tos = (h[0] << 4) | (h[1] >> 4);
    ip.total_len = (40 + payload_len) as u32;
    let mut next = h[6];
    let mut pos = off + 40;
    let step = loop {
        let (following, size) = match next {
            ext::HOP_BY_HOP | ext::ROUTING | ext::DEST_OPTS | ext::AUTH => {
                let e = match need::<2>(cx.f, pos, Layer::Ipv6Ext) {
                    Ok(e) => e,
                    Err(stop) => break Err(stop),
                };
                let len = if next == ext::AUTH {
                    // AH: Payload Len is in 4-octet units, minus 2 (RFC 4302 section 2.2).
                    (usize::from(e[1]) + 2) * 4
                } else {
                    // Hdr Ext Len is in 8-octet units, not counting the first 8.
                    (usize::from(e[1]) + 1) * 8
                };
                (e[0], len)
            }
            ext::FRAGMENT => {
                // RFC 8200 section 4.5: Next Header, Reserved, Fragment Offset (13 bits,
                // 8-octet units) / Res / M, Identification.
                let e = match need::<8>(cx.f, pos, Layer::Ipv6Ext) {
                    Ok(e) => e,
                    Err(stop) => break Err(stop),
                };
                let fo = be16([e[2], e[3]]);
                ip.fragment_offset = u32::from(fo & 0xFFF8);
                ip.more_fragments = fo & 1 != 0;
                ip.id = be32([e[4], e[5], e[6], e[7]]);
                if ip.fragment_offset != 0 {
                    next = e[0];
                    pos += 8;
                    break Ok(Next::Done);
                }
                (e[0], 8)
            }
            proto => break Ok(Next::Payload { proto, off: pos }),
        };
        if pos + size > cx.end {
            break Err(malformed(
                Layer::Ipv6Ext,
                "IPv6 extension header runs past the payload length",
            ));
        }
        if pos + size > cx.f.len() {
            break Err(truncated(Layer::Ipv6Ext));
        }
        next = following;
        pos += size;
    };
    ip.protocol = next;
    // A jumbogram's headers could in principle pass 64 KiB; saturate rather than wrap.
    ip.header_len = u16::try_from(pos - off).unwrap_or(u16::MAX);
    ip.payload_len = ip
        .total_len
        .saturating_sub(u32::try_from(pos - off).unwrap_or(u32::MAX));
    let captured = cx.f.len();
    out.ip_payload = pos.min(captured)..captured;
    step
}

#[cfg(test)]
mod tests {
    use crate::packet::{Decoded, Layer, StopReason, Transport};
    use crate::testutil::*;
    use crate::{decode, LinkType};

    const RAW: LinkType = LinkType::IPV6;

    /// A generic extension header (RFC 8200 section 4.3/4.4/4.6): next header, length in
    /// 8-octet units beyond the first 8, options (PadN).
    fn ext(next: u8, units: u8) -> Vec<u8> {
        let mut e = vec![next, units, 1, 4 + 8 * units, 0, 0, 0, 0];
        e.resize(8 * (usize::from(units) + 1), 0);
        e
    }

    /// A fragment header (RFC 8200 section 4.5).
    fn frag(next: u8, offset: u16, more: bool, id: u32) -> Vec<u8> {
        cat(&[
            &[next, 0],
            &((offset / 8) << 3 | u16::from(more)).to_be_bytes(),
            &id.to_be_bytes(),
        ])
    }

    #[test]
    fn header_fields() {
        let mut p = ipv6(6, &tcp(&[], &[9; 7]));
        p[0] = 0x6B; // traffic class 0xB8
        p[1] = 0x80;
        let d = dec(RAW, &p);
        let ip = d.ip.unwrap();
        assert_eq!(ip.tos, 0xB8);
        assert_eq!(
            (
                ip.ttl,
                ip.protocol,
                ip.total_len,
                ip.header_len,
                ip.payload_len
            ),
            (64, 6, 67, 40, 27)
        );
        assert_eq!(d.tcp().unwrap().payload_len, 7);
        assert_eq!(d.ip_payload, 40..67);
    }

    #[test]
    fn extension_headers_are_walked() {
        // Hop-by-hop, routing (16 bytes), destination options, AH (RFC 4302: length
        // in 4-octet units minus 2; 24 bytes here), then TCP.
        let ah = cat(&[&[6, 4, 0, 0], &[0; 20]]);
        let p = ipv6(
            0,
            &cat(&[
                &ext(43, 0),
                &ext(60, 1),
                &ext(51, 0),
                &ah,
                &tcp(&[], &[1, 2]),
            ]),
        );
        let d = dec(RAW, &p);
        assert_eq!(d.stop, None);
        let ip = d.ip.unwrap();
        assert_eq!((ip.protocol, ip.header_len), (6, 40 + 8 + 16 + 8 + 24));
        assert_eq!(d.tcp().unwrap().payload_len, 2);
    }

    #[test]
    fn fragment_header_sets_the_fragment_fields() {
        let first = ipv6(
            44,
            &cat(&[&frag(17, 0, true, 0xDEADBEEF), &udp(53, 53, &[0; 16])]),
        );
        let d = dec(RAW, &first);
        let ip = d.ip.unwrap();
        assert_eq!(
            (ip.id, ip.more_fragments, ip.fragment_offset, ip.protocol),
            (0xDEADBEEF, true, 0, 17)
        );
        assert_eq!(d.udp().unwrap().dst_port, 53);
        let later = ipv6(44, &cat(&[&frag(17, 1232, false, 7), &[0; 40]]));
        let d = dec(RAW, &later);
        let ip = d.ip.unwrap();
        assert_eq!(
            (ip.id, ip.more_fragments, ip.fragment_offset, ip.protocol),
            (7, false, 1232, 17)
        );
        assert_eq!((d.transport, d.stop), (Transport::None, None));
        assert_eq!(d.ip_payload, 48..88);
    }

    #[test]
    fn truncated_or_overlong_extension_headers() {
        let p = ipv6(0, &cat(&[&ext(6, 1), &tcp(&[], &[])]));
        let d = dec(RAW, &p[..50]);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Ipv6Ext, StopReason::Truncated)
        );
        assert_eq!(d.ip.unwrap().protocol, 0);
        // An extension header claiming more than the payload length.
        let mut p = ipv6(60, &ext(6, 0));
        p[41] = 3;
        p.extend_from_slice(&[0; 40]);
        let d = dec(RAW, &p);
        assert_eq!(d.stop.unwrap().layer, Layer::Ipv6Ext);
        assert!(matches!(d.stop.unwrap().reason, StopReason::Malformed(_)));
    }

    #[test]
    fn ipv4_in_ipv6_tunnel() {
        let d = dec(RAW, &ipv6(4, &ipv4_tcp(1)));
        assert_eq!(d.tunnel_depth, 1);
        assert!(d.ip.unwrap().src.is_ipv4());
        assert_eq!(d.tcp().unwrap().payload_len, 1);
    }

    #[test]
    fn payload_length_zero_takes_the_frame_length() {
        let mut p = ipv6(6, &tcp(&[], &[0; 100]));
        p[4] = 0;
        p[5] = 0;
        let mut d = Decoded::default();
        decode(RAW, &p[..60], p.len() as u32, &mut d);
        assert_eq!(d.tcp().unwrap().payload_len, 100);
    }

    #[test]
    fn bad_version_and_truncation() {
        assert!(matches!(
            dec(RAW, &ipv4_tcp(20)).stop.unwrap().reason,
            StopReason::Malformed(_)
        ));
        let d = dec(RAW, &ipv6(6, &[])[..39]);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Ipv6, StopReason::Truncated)
        );
        assert_eq!(d.ip, None);
    }
}
