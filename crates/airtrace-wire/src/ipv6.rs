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
    cx.cut(off + 40 + payload_len);
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
            break Err(malformed(Layer::Ipv6Ext, "IPv6 extension header runs past the payload length"));
        }
        if pos + size > cx.f.len() {
            break Err(truncated(Layer::Ipv6Ext));
        }
        next = following;
        pos += size;
    };
    ip.protocol = next;
    ip.header_len = (pos - off) as u16;
    ip.payload_len = ip.total_len.saturating_sub((pos - off) as u32);
    let captured = cx.f.len();
    out.ip_payload = pos.min(captured)..captured;
    step
}
