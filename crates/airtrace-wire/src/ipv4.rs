//! IPv4 (RFC 791 section 3.1).

use std::net::{IpAddr, Ipv4Addr};

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Ip, Layer, Stop};
use crate::read::{be16, malformed, need, truncated};

/// Decode the IPv4 header at `off`. A non-first fragment ends decoding (its payload
/// starts mid-datagram, so it has no transport header); see [`crate::Reassembler`].
#[inline(always)]
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let h = need::<20>(cx.f, off, Layer::Ipv4)?;
    if h[0] >> 4 != 4 {
        return Err(malformed(Layer::Ipv4, "IPv4 version is not 4"));
    }
    let header_len = usize::from(h[0] & 0x0F) * 4;
    if header_len < 20 {
        return Err(malformed(Layer::Ipv4, "IPv4 header length (IHL) below 5"));
    }
    // A total length of 0 is what captures of TCP segmentation offload show (the NIC
    // fills it in later): take the length of the frame as it was on the wire instead.
    let total_len = match usize::from(be16([h[2], h[3]])) {
        0 => cx.declared_from(off),
        n => n,
    };
    if total_len < header_len {
        return Err(malformed(
            Layer::Ipv4,
            "IPv4 total length shorter than its header",
        ));
    }
    // Flags (reserved, DF, MF) and the fragment offset in 8-octet units.
    let frag = be16([h[6], h[7]]);
    let fragment_offset = u32::from(frag & 0x1FFF) * 8;
    // Filled in place, see `tcp::decode`.
    let ip = out.ip.insert(Ip::default());
    ip.src = IpAddr::V4(Ipv4Addr::new(h[12], h[13], h[14], h[15]));
    ip.dst = IpAddr::V4(Ipv4Addr::new(h[16], h[17], h[18], h[19]));
    ip.id = u32::from(be16([h[4], h[5]]));
    ip.ttl = h[8];
    ip.tos = h[1];
    ip.protocol = h[9];
    ip.total_len = total_len as u32;
    ip.more_fragments = frag & 0x2000 != 0;
    ip.fragment_offset = fragment_offset;
    ip.header_len = header_len as u16;
    ip.payload_len = (total_len - header_len) as u32;
    let payload = off + header_len;
    if cx.f.len() < payload {
        return Err(truncated(Layer::Ipv4));
    }
    cx.stated(off + total_len);
    out.ip_payload = payload..cx.f.len();
    if fragment_offset != 0 {
        return Ok(Next::Done);
    }
    Ok(Next::Payload {
        proto: h[9],
        off: payload,
    })
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use crate::packet::{Decoded, Layer, StopReason, Transport};
    use crate::testutil::*;
    use crate::{decode, LinkType};

    const RAW: LinkType = LinkType::IPV4;

    #[test]
    fn header_fields() {
        let mut p = ipv4_tcp(5);
        p[1] = 0xB8; // DSCP EF
        let d = dec(RAW, &p);
        let ip = d.ip.unwrap();
        assert_eq!(ip.src, IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
        assert_eq!(ip.dst, IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)));
        assert_eq!((ip.id, ip.ttl, ip.tos, ip.protocol), (0x1234, 64, 0xB8, 6));
        assert_eq!((ip.total_len, ip.header_len, ip.payload_len), (45, 20, 25));
        assert!(!ip.is_fragment());
        assert_eq!(d.tunnel_depth, 0);
    }

    #[test]
    fn options_are_skipped_by_ihl() {
        // IHL 6: one 4-byte option word (NOP, NOP, NOP, EOL).
        let t = tcp(&[], &[]);
        let total = (24 + t.len()) as u16;
        let p = cat(&[
            &[0x46, 0],
            &total.to_be_bytes(),
            &[0, 1, 0, 0, 64, 6, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 0],
            &t,
        ]);
        let d = dec(RAW, &p);
        assert_eq!(d.stop, None);
        assert_eq!(d.ip.unwrap().header_len, 24);
        assert_eq!(d.tcp().unwrap().dst_port, 80);
    }

    #[test]
    fn truncated_options_keep_the_fixed_header() {
        let p = cat(&[&[0x4F, 0, 0, 80], &[0; 16], &[1; 10]]);
        let d = dec(RAW, &p);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Ipv4, StopReason::Truncated)
        );
        assert_eq!(d.ip.unwrap().header_len, 60);
    }

    #[test]
    fn impossible_fields_are_malformed() {
        let mut p = ipv4_tcp(0);
        p[0] = 0x44; // IHL 4
        assert!(matches!(
            dec(RAW, &p).stop.unwrap().reason,
            StopReason::Malformed(_)
        ));
        let mut p = ipv4_tcp(0);
        p[0] = 0x55; // version 5
        assert!(matches!(
            dec(RAW, &p).stop.unwrap().reason,
            StopReason::Malformed(_)
        ));
        let mut p = ipv4_tcp(0);
        p[3] = 19; // total length below the header
        assert!(matches!(
            dec(RAW, &p).stop.unwrap().reason,
            StopReason::Malformed(_)
        ));
    }

    #[test]
    fn total_length_zero_takes_the_original_frame_length() {
        // What a capture of TCP segmentation offload looks like: total length 0, and the
        // frame cut at 64 bytes by the snap length while 9014 bytes went out.
        let mut p = eth(0x0800, &ipv4_tcp(8960));
        p[16] = 0;
        p[17] = 0;
        let mut d = Decoded::default();
        decode(LinkType::ETHERNET, &p[..64], p.len() as u32, &mut d);
        assert_eq!(d.stop, None);
        assert_eq!(d.ip.unwrap().total_len, 9000);
        assert_eq!(d.tcp().unwrap().payload_len, 8960);
        assert_eq!(d.payload, 54..64);
    }

    #[test]
    fn first_fragment_decodes_its_transport_header() {
        let mut p = ipv4_tcp(16);
        p[6] = 0x20; // MF
        let d = dec(RAW, &p);
        let ip = d.ip.unwrap();
        assert!(ip.more_fragments && ip.is_fragment());
        assert_eq!(ip.fragment_offset, 0);
        assert_eq!(d.tcp().unwrap().payload_len, 16);
    }

    #[test]
    fn later_fragments_have_no_transport_header() {
        let mut p = ipv4(17, &[0xAB; 32]);
        p[6] = 0x00;
        p[7] = 0x03; // offset 3 * 8 = 24, last fragment
        let d = dec(RAW, &p);
        assert_eq!(d.stop, None);
        assert_eq!(d.transport, Transport::None);
        let ip = d.ip.unwrap();
        assert_eq!(
            (ip.fragment_offset, ip.more_fragments, ip.payload_len),
            (24, false, 32)
        );
        assert_eq!(d.ip_payload, 20..52);
    }

    #[test]
    fn other_protocols_are_named_not_stopped() {
        let d = dec(RAW, &ipv4(1, &[8, 0, 0, 0, 0, 1, 0, 1]));
        assert_eq!(d.transport, Transport::Other(1));
        assert_eq!(d.stop, None);
    }

    #[test]
    fn ip_in_ip_reports_the_inner_header() {
        // RFC 2003: protocol 4, the inner datagram follows the outer header.
        let mut inner = ipv4_tcp(3);
        inner[12..16].copy_from_slice(&[192, 168, 0, 1]);
        let d = dec(RAW, &ipv4(4, &inner));
        assert_eq!(d.tunnel_depth, 1);
        assert_eq!(d.ip.unwrap().src, IpAddr::V4(Ipv4Addr::new(192, 168, 0, 1)));
        assert_eq!(d.tcp().unwrap().payload_len, 3);
        // IPv6 in IPv4 (RFC 4213 section 3.5), twice nested.
        let d = dec(RAW, &ipv4(4, &ipv4(41, &ipv6(6, &tcp(&[], &[])))));
        assert_eq!(d.tunnel_depth, 2);
        assert!(d.ip.unwrap().src.is_ipv6());
    }

    #[test]
    fn truncated_inner_header_leaves_no_ip() {
        let d = dec(RAW, &ipv4(4, &ipv4_tcp(0)[..10]));
        assert_eq!(d.tunnel_depth, 1);
        assert_eq!(d.ip, None);
        assert_eq!(d.stop.unwrap().layer, Layer::Ipv4);
    }

    #[test]
    fn raw_link_types_pick_the_version() {
        for link in [LinkType::RAW, LinkType::RAW_BSD, LinkType::RAW_OPENBSD] {
            assert!(dec(link, &ipv4_tcp(0)).tcp().is_some());
            assert!(dec(link, &ipv6(6, &tcp(&[], &[]))).tcp().is_some());
            assert_eq!(
                dec(link, &[0x50; 40]).stop.unwrap().reason,
                StopReason::Unsupported
            );
            assert_eq!(dec(link, &[]).stop.unwrap().reason, StopReason::Truncated);
        }
        assert!(matches!(
            dec(LinkType::IPV4, &ipv6(6, &[])).stop.unwrap().reason,
            StopReason::Malformed(_)
        ));
    }
}
