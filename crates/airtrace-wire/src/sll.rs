//! Linux "cooked" capture headers: LINKTYPE_LINUX_SLL (113) and LINKTYPE_LINUX_SLL2
//! (276), as written by `tcpdump -i any` (layouts from the tcpdump.org link-type pages).

use crate::decoder::{Cx, Next};
use crate::packet::{Layer, Stop};
use crate::read::{be16, need, unsupported};

/// ARPHRD_NETLINK: the payload is a netlink message, whatever the protocol says.
const ARPHRD_NETLINK: u16 = 824;
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
        0x0600.. => Ok(Next::Ether { ty: proto, off, layer: Layer::Link }),
        ETH_P_802_2 => Ok(Next::Llc(off)),
        _ => Err(unsupported(Layer::Link)),
    }
}
