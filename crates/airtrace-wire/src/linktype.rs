//! LINKTYPE_* numbers (tcpdump.org "Link-layer header types") and the dispatch from a
//! link type to the first header of a frame.

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Layer, Stop};
use crate::read::unsupported;
use crate::{ethernet, fddi, loopback, ppp, radiotap, sll};

/// A link-layer header type: the LINKTYPE_* value from a pcap or pcapng header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkType(pub u32);

impl LinkType {
    /// BSD loopback, address family in host byte order.
    pub const NULL: LinkType = LinkType(0);
    /// Ethernet II / IEEE 802.3.
    pub const ETHERNET: LinkType = LinkType(1);
    /// PPP, with or without HDLC-like framing (RFC 1661).
    pub const PPP: LinkType = LinkType(9);
    /// FDDI (ANSI X3.139).
    pub const FDDI: LinkType = LinkType(10);
    /// Raw IP as DLT_RAW on most BSDs wrote it (value 12 in old files).
    pub const RAW_BSD: LinkType = LinkType(12);
    /// Raw IP as DLT_RAW on OpenBSD wrote it (value 14 in old files).
    pub const RAW_OPENBSD: LinkType = LinkType(14);
    /// PPP in HDLC-like framing (RFC 1662), also Cisco HDLC.
    pub const PPP_HDLC: LinkType = LinkType(50);
    /// Raw IPv4 or IPv6, told by the version nibble.
    pub const RAW: LinkType = LinkType(101);
    /// IEEE 802.11 without a radio header.
    pub const IEEE802_11: LinkType = LinkType(105);
    /// OpenBSD loopback, address family in network byte order.
    pub const LOOP: LinkType = LinkType(108);
    /// Linux cooked capture v1 (`tcpdump -i any`).
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// IEEE 802.11 behind a radiotap header.
    pub const IEEE802_11_RADIOTAP: LinkType = LinkType(127);
    /// Raw IPv4.
    pub const IPV4: LinkType = LinkType(228);
    /// Raw IPv6.
    pub const IPV6: LinkType = LinkType(229);
    /// Linux cooked capture v2.
    pub const LINUX_SLL2: LinkType = LinkType(276);

    /// Every link type [`crate::decode`] understands.
    pub const SUPPORTED: [LinkType; 15] = [
        Self::NULL,
        Self::ETHERNET,
        Self::PPP,
        Self::FDDI,
        Self::RAW_BSD,
        Self::RAW_OPENBSD,
        Self::PPP_HDLC,
        Self::RAW,
        Self::IEEE802_11,
        Self::LOOP,
        Self::LINUX_SLL,
        Self::IEEE802_11_RADIOTAP,
        Self::IPV4,
        Self::IPV6,
        Self::LINUX_SLL2,
    ];
}

/// The short name of a link type: the LINKTYPE_ name in lower case without the prefix
/// (`"ethernet"`, `"linux_sll"`, `"ieee802_11_radiotap"`...), `"raw"` for the three raw
/// IP values, or `"unknown"`.
pub fn linktype_name(link: LinkType) -> &'static str {
    match link {
        LinkType::NULL => "null",
        LinkType::ETHERNET => "ethernet",
        LinkType::PPP => "ppp",
        LinkType::FDDI => "fddi",
        LinkType::RAW | LinkType::RAW_BSD | LinkType::RAW_OPENBSD => "raw",
        LinkType::PPP_HDLC => "ppp_hdlc",
        LinkType::IEEE802_11 => "ieee802_11",
        LinkType::LOOP => "loop",
        LinkType::LINUX_SLL => "linux_sll",
        LinkType::IEEE802_11_RADIOTAP => "ieee802_11_radiotap",
        LinkType::IPV4 => "ipv4",
        LinkType::IPV6 => "ipv6",
        LinkType::LINUX_SLL2 => "linux_sll2",
        _ => "unknown",
    }
}

/// The first header of a frame of type `link`.
#[inline(always)]
pub(crate) fn start(link: LinkType, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    match link {
        LinkType::ETHERNET => ethernet::start(cx),
        LinkType::LINUX_SLL => sll::sll(cx),
        LinkType::LINUX_SLL2 => sll::sll2(cx),
        LinkType::RAW | LinkType::RAW_BSD | LinkType::RAW_OPENBSD => Ok(Next::Ip {
            off: 0,
            layer: Layer::Link,
        }),
        LinkType::IPV4 => Ok(Next::Ipv4(0)),
        LinkType::IPV6 => Ok(Next::Ipv6(0)),
        LinkType::NULL => loopback::null(cx),
        LinkType::LOOP => loopback::loop_(cx),
        LinkType::PPP | LinkType::PPP_HDLC => ppp::decode(cx),
        LinkType::FDDI => fddi::decode(cx),
        LinkType::IEEE802_11 => Ok(Next::Wlan(0)),
        LinkType::IEEE802_11_RADIOTAP => radiotap::decode(cx, out),
        _ => Err(unsupported(Layer::Link)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::StopReason;
    use crate::testutil::dec;

    #[test]
    fn names() {
        assert_eq!(linktype_name(LinkType::ETHERNET), "ethernet");
        assert_eq!(
            linktype_name(LinkType::IEEE802_11_RADIOTAP),
            "ieee802_11_radiotap"
        );
        assert_eq!(linktype_name(LinkType(12)), "raw");
        assert_eq!(linktype_name(LinkType(147)), "unknown");
        for link in LinkType::SUPPORTED {
            assert_ne!(linktype_name(link), "unknown", "{link:?}");
        }
    }

    #[test]
    fn unknown_link_types_are_unsupported() {
        let d = dec(LinkType(147), &[0; 64]);
        assert_eq!(
            d.stop,
            Some(Stop {
                layer: Layer::Link,
                reason: StopReason::Unsupported
            })
        );
    }
}
