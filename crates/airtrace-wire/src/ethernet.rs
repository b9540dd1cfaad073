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
    let h = need::<14>(cx.f, 0, Layer::Link)?;
    Ok(Next::Ether { ty: be16([h[12], h[13]]), off: 14, layer: Layer::Link })
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
            Ok(Next::Ether { ty: be16([t[2], t[3]]), off: off + 4, layer: Layer::Vlan })
        }
        MPLS | MPLS_MULTICAST => mpls(off, cx),
        PPPOE_SESSION => pppoe_session(off, cx),
        // An 802.3 length field (only directly after the MAC header or a VLAN tag):
        // an LLC header follows, and the frame may carry padding after `len` bytes.
        0..=MAX_8023_LEN if matches!(layer, Layer::Link | Layer::Vlan) => {
            cx.cut(cx.end.min(off + usize::from(ty)));
            Ok(Next::Llc(off))
        }
        ty if ty < MIN_ETHER_TYPE && layer == Layer::Link => {
            Err(malformed(Layer::Link, "EtherType/length between 1501 and 1535"))
        }
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
            return Ok(Next::Ip { off, layer: Layer::Mpls });
        }
    }
}

/// A PPPoE session header (RFC 2516 section 4): VER/TYPE 0x11, CODE 0, SESSION_ID,
/// LENGTH (of the PPP payload, protocol field included), then the PPP protocol.
fn pppoe_session(off: usize, cx: &mut Cx<'_>) -> Result<Next, Stop> {
    let h = need::<8>(cx.f, off, Layer::Link)?;
    if h[0] != 0x11 {
        return Err(malformed(Layer::Link, "PPPoE version/type is not 1/1"));
    }
    if h[1] != 0 {
        return Err(malformed(Layer::Link, "PPPoE session code is not 0"));
    }
    let len = usize::from(be16([h[4], h[5]]));
    cx.cut(cx.end.min(off + 6 + len));
    ppp::protocol(be16([h[6], h[7]]), off + 8)
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
        [0, 0, 0] | [0, 0, 0xF8] => {
            Ok(Next::Ether { ty: be16([s[6], s[7]]), off: off + 8, layer: Layer::Llc })
        }
        _ => Err(unsupported(Layer::Llc)),
    }
}
