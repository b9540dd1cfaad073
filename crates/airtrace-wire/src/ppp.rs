//! PPP framing: LINKTYPE_PPP (9) and LINKTYPE_PPP_HDLC (50), and the PPP protocol
//! field shared with PPPoE.

use crate::decoder::{Cx, Next};
use crate::ethernet::ether_type;
use crate::packet::{Layer, Stop};
use crate::read::{be16, byte, need, unsupported};

/// PPP protocol numbers (IANA "PPP DLL Protocol Numbers").
mod number {
    pub const IPV4: u16 = 0x0021;
    pub const IPV6: u16 = 0x0057;
    pub const MPLS: u16 = 0x0281;
}

/// A PPP frame: optional HDLC address/control `FF 03` (RFC 1662 section 3.1), then
/// the protocol field ([`protocol_field`]). Frames starting `0F`/`8F` are Cisco HDLC,
/// which libpcap also writes as LINKTYPE_PPP_HDLC: address, control, EtherType.
pub(crate) fn decode(cx: &Cx<'_>) -> Result<Next, Stop> {
    frame(cx.f, 0)
}

/// [`decode`] for a PPP frame at `off`: the frame of a PPP link, or one a tunnel
/// carries (L2TP).
pub(crate) fn frame(f: &[u8], off: usize) -> Result<Next, Stop> {
    match byte(f, off, Layer::Link)? {
        0xFF if f.get(off + 1) == Some(&0x03) => protocol_field(f, off + 2),
        0x0F | 0x8F => {
            let h = need::<4>(f, off, Layer::Link)?;
            Ok(Next::Ether {
                ty: be16([h[2], h[3]]),
                off: off + 4,
                layer: Layer::Link,
            })
        }
        _ => protocol_field(f, off),
    }
}

/// The PPP protocol field at `off`, two bytes, or one when compressed (RFC 1661
/// section 6.5: protocol numbers have an odd last byte and an even first byte, so an
/// odd first byte is a compressed field), and what it names.
pub(crate) fn protocol_field(f: &[u8], off: usize) -> Result<Next, Stop> {
    let first = byte(f, off, Layer::Link)?;
    if first & 1 == 1 {
        return protocol(u16::from(first), off + 1);
    }
    let p = need::<2>(f, off, Layer::Link)?;
    protocol(be16(*p), off + 2)
}

/// Follow a PPP protocol number to the header at `off`.
pub(crate) fn protocol(p: u16, off: usize) -> Result<Next, Stop> {
    match p {
        number::IPV4 => Ok(Next::Ipv4(off)),
        number::IPV6 => Ok(Next::Ipv6(off)),
        number::MPLS => Ok(Next::Ether {
            ty: ether_type::MPLS,
            off,
            layer: Layer::Link,
        }),
        _ => Err(unsupported(Layer::Link)),
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason};
    use crate::testutil::*;
    use crate::LinkType;

    #[test]
    fn ppp_with_and_without_address_and_control() {
        let ip = ipv4_tcp(0);
        for link in [LinkType::PPP, LinkType::PPP_HDLC] {
            assert!(dec(link, &cat(&[&[0xFF, 0x03, 0x00, 0x21], &ip]))
                .tcp()
                .is_some());
            assert!(dec(link, &cat(&[&[0x00, 0x21], &ip])).tcp().is_some());
            // RFC 1661 section 6.5: protocol field compression.
            assert!(dec(link, &cat(&[&[0xFF, 0x03, 0x21], &ip])).tcp().is_some());
            assert!(dec(link, &cat(&[&[0x00, 0x57], &ipv6(6, &tcp(&[], &[]))]))
                .tcp()
                .is_some());
        }
    }

    #[test]
    fn cisco_hdlc_carries_an_ethertype() {
        let d = dec(
            LinkType::PPP_HDLC,
            &cat(&[&[0x0F, 0x00, 0x08, 0x00], &ipv4_tcp(0)]),
        );
        assert!(d.tcp().is_some());
    }

    #[test]
    fn lcp_is_unsupported_and_short_frames_truncated() {
        let d = dec(LinkType::PPP, &[0xFF, 0x03, 0xC0, 0x21, 1, 1, 0, 4]);
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
        let d = dec(LinkType::PPP, &[0xFF, 0x03, 0x00]);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Link, StopReason::Truncated)
        );
    }
}
