//! Linux "cooked" capture headers: LINKTYPE_LINUX_SLL (113) and LINKTYPE_LINUX_SLL2
//! (276), as written by `tcpdump -i any` (layouts from the tcpdump.org link-type pages).

use crate::decoder::{Cx, Next};
use crate::packet::{Layer, Stop};
use crate::read::{be16, need, unsupported};

/// ARPHRD_NETLINK: the payload is a netlink message, whatever the protocol says.
pub(crate) const ARPHRD_NETLINK: u16 = 824;
/// Linux protocol value for frames that start with an 802.2 LLC header (ETH_P_802_2).
const ETH_P_802_2: u16 = 0x0004;

/// SLL (16 bytes): packet type, ARPHRD type, address length, 8 address bytes, protocol.
pub(crate) fn sll(cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<16>(cx.f, 0, Layer::Link)?;
    protocol(be16([h[2], h[3]]), be16([h[14], h[15]]), 16)
}

/// SLL2 (20 bytes): protocol, reserved, interface index, ARPHRD type, packet type,
/// address length, 8 address bytes.
pub(crate) fn sll2(cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<20>(cx.f, 0, Layer::Link)?;
    protocol(be16([h[8], h[9]]), be16([h[0], h[1]]), 20)
}

/// The protocol field is an EtherType from 0x0600 up; below, a Linux ETH_P_* value.
fn protocol(hatype: u16, proto: u16, off: usize) -> Result<Next, Stop> {
    if hatype == ARPHRD_NETLINK {
        return Err(unsupported(Layer::Link));
    }
    match proto {
        0x0600.. => Ok(Next::Ether {
            ty: proto,
            off,
            layer: Layer::Link,
        }),
        ETH_P_802_2 => Ok(Next::Llc(off)),
        _ => Err(unsupported(Layer::Link)),
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason};
    use crate::testutil::*;
    use crate::LinkType;

    /// SLL header (tcpdump.org LINKTYPE_LINUX_SLL): packet type 0 (to us), ARPHRD 1
    /// (Ethernet), address length 6, address padded to 8, protocol.
    fn sll(hatype: u16, proto: u16) -> Vec<u8> {
        cat(&[
            &[0, 0],
            &hatype.to_be_bytes(),
            &[0, 6, 2, 0, 0, 0, 0, 1, 0, 0],
            &proto.to_be_bytes(),
        ])
    }

    /// SLL2 header (LINKTYPE_LINUX_SLL2): protocol, reserved, ifindex 3, ARPHRD, packet
    /// type, address length, address.
    fn sll2(hatype: u16, proto: u16) -> Vec<u8> {
        cat(&[
            &proto.to_be_bytes(),
            &[0, 0, 0, 0, 0, 3],
            &hatype.to_be_bytes(),
            &[0, 6, 2, 0, 0, 0, 0, 1, 0, 0],
        ])
    }

    #[test]
    fn sll_ipv4_and_sll2_ipv6() {
        let d = dec(LinkType::LINUX_SLL, &cat(&[&sll(1, 0x0800), &ipv4_tcp(3)]));
        assert_eq!(d.stop, None);
        assert_eq!(d.payload, 56..59);
        let d = dec(
            LinkType::LINUX_SLL2,
            &cat(&[&sll2(1, 0x86DD), &ipv6(6, &tcp(&[], &[1]))]),
        );
        assert_eq!(d.stop, None);
        assert_eq!(d.payload, 80..81);
    }

    #[test]
    fn sll_vlan_and_llc_protocols() {
        let tagged = cat(&[&sll(1, 0x8100), &[0, 5, 0x08, 0x00], &ipv4_tcp(0)]);
        assert!(dec(LinkType::LINUX_SLL, &tagged).tcp().is_some());
        let llc = cat(&[&sll(1, 0x0004), &snap(0x0800), &ipv4_tcp(0)]);
        assert!(dec(LinkType::LINUX_SLL, &llc).tcp().is_some());
    }

    #[test]
    fn sll_netlink_and_novell_are_unsupported() {
        let d = dec(LinkType::LINUX_SLL, &cat(&[&sll(824, 0x0800), &[0; 20]]));
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
        let d = dec(LinkType::LINUX_SLL2, &cat(&[&sll2(1, 0x0001), &[0; 20]]));
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
    }

    #[test]
    fn sll_truncated() {
        assert_eq!(
            dec(LinkType::LINUX_SLL, &sll(1, 0x0800)[..15])
                .stop
                .unwrap()
                .layer,
            Layer::Link
        );
        assert_eq!(
            dec(LinkType::LINUX_SLL2, &sll2(1, 0x0800)[..19])
                .stop
                .unwrap()
                .layer,
            Layer::Link
        );
    }
}
