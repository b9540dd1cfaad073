//! GTP-U version 1 (3GPP TS 29.281 section 5): the user-plane tunnel of mobile packet
//! cores. Only G-PDUs (message type 255), which carry a user IP packet, are entered.

use crate::decoder::{enter_tunnel, Cx, Next};
use crate::packet::{Decoded, Layer, Stop};
use crate::read::{be16, byte, malformed, need, unsupported};

const G_PDU: u8 = 0xFF;

/// Decode the GTP-U header at `off` (the UDP payload) and enter the tunnel.
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    // Section 5.1: flags (version 3 bits, PT, spare, E, S, PN), message type, length
    // (of everything after the first 8 bytes), TEID.
    let h = need::<8>(cx.f, off, Layer::Tunnel)?;
    let flags = h[0];
    if flags >> 5 != 1 || flags & 0x10 == 0 || h[1] != G_PDU {
        return Err(unsupported(Layer::Tunnel));
    }
    cx.cut(cx.end.min(off + 8 + usize::from(be16([h[2], h[3]]))));
    let mut pos = off + 8;
    // Any of E, S, PN: sequence number, N-PDU number and next extension header type
    // follow (4 bytes); the last is meaningful only with E.
    if flags & 0x07 != 0 {
        let opt = need::<4>(cx.f, pos, Layer::Tunnel)?;
        pos += 4;
        let mut next_ext = if flags & 0x04 != 0 { opt[3] } else { 0 };
        // Section 5.2: each extension header is a length in 4-octet units (counting
        // the whole header), contents, and the next extension header type.
        while next_ext != 0 {
            let len = usize::from(byte(cx.f, pos, Layer::Tunnel)?) * 4;
            if len == 0 {
                return Err(malformed(Layer::Tunnel, "GTP-U extension header length 0"));
            }
            next_ext = byte(cx.f, pos + len - 1, Layer::Tunnel)?;
            pos += len;
        }
    }
    let next = match byte(cx.f, pos, Layer::Tunnel)? >> 4 {
        4 => Next::Ipv4(pos),
        6 => Next::Ipv6(pos),
        _ => return Err(unsupported(Layer::Tunnel)),
    };
    enter_tunnel(out);
    Ok(next)
}
