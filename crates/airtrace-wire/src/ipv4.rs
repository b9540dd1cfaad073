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
        return Err(malformed(Layer::Ipv4, "IPv4 total length shorter than its header"));
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
    cx.cut(off + total_len);
    out.ip_payload = payload..cx.f.len();
    if fragment_offset != 0 {
        return Ok(Next::Done);
    }
    Ok(Next::Payload { proto: h[9], off: payload })
}
