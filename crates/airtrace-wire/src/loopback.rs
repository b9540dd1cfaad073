//! BSD loopback encapsulation: LINKTYPE_NULL (0, address family in the byte order of
//! the capturing host) and LINKTYPE_LOOP (108, network byte order).

use crate::decoder::{Cx, Next};
use crate::packet::{Layer, Stop};
use crate::read::{need, unsupported};

/// LINKTYPE_NULL: a 4-byte AF_ value in the capturing host's byte order. Address
/// families fit in 16 bits, so a value with any of the upper 16 bits set was written
/// in the other byte order (the same test Wireshark and tcpdump make).
pub(crate) fn null(cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<4>(cx.f, 0, Layer::Link)?;
    let af = u32::from_le_bytes(*h);
    let af = if af & 0xFFFF_0000 != 0 {
        af.swap_bytes()
    } else {
        af
    };
    family(af)
}

/// LINKTYPE_LOOP: the same header, always big-endian (OpenBSD).
pub(crate) fn loop_(cx: &Cx<'_>) -> Result<Next, Stop> {
    family(u32::from_be_bytes(*need::<4>(cx.f, 0, Layer::Link)?))
}

/// AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD, OpenBSD, BSD/OS), 28 (FreeBSD,
/// DragonFly) or 30 (Darwin), as listed on the tcpdump.org LINKTYPE_NULL page.
fn family(af: u32) -> Result<Next, Stop> {
    match af {
        2 => Ok(Next::Ipv4(4)),
        24 | 28 | 30 => Ok(Next::Ipv6(4)),
        _ => Err(unsupported(Layer::Link)),
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::StopReason;
    use crate::testutil::*;
    use crate::LinkType;

    #[test]
    fn null_in_either_byte_order() {
        let v4 = ipv4_tcp(0);
        assert!(dec(LinkType::NULL, &cat(&[&2u32.to_le_bytes(), &v4]))
            .tcp()
            .is_some());
        assert!(dec(LinkType::NULL, &cat(&[&2u32.to_be_bytes(), &v4]))
            .tcp()
            .is_some());
        let v6 = ipv6(6, &tcp(&[], &[]));
        for af in [24u32, 28, 30] {
            assert!(
                dec(LinkType::NULL, &cat(&[&af.to_le_bytes(), &v6]))
                    .tcp()
                    .is_some(),
                "{af}"
            );
            assert!(
                dec(LinkType::NULL, &cat(&[&af.to_be_bytes(), &v6]))
                    .tcp()
                    .is_some(),
                "{af}"
            );
        }
    }

    #[test]
    fn loop_is_big_endian() {
        assert!(
            dec(LinkType::LOOP, &cat(&[&2u32.to_be_bytes(), &ipv4_tcp(0)]))
                .tcp()
                .is_some()
        );
        let d = dec(LinkType::LOOP, &cat(&[&2u32.to_le_bytes(), &ipv4_tcp(0)]));
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
    }

    #[test]
    fn unknown_family_is_unsupported() {
        let d = dec(LinkType::NULL, &cat(&[&7u32.to_le_bytes(), &[0; 20]]));
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
        assert_eq!(
            dec(LinkType::NULL, &[2, 0, 0]).stop.unwrap().reason,
            StopReason::Truncated
        );
    }
}
