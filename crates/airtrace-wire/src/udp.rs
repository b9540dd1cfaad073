//! UDP (RFC 768).

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Layer, Stop, Transport, Udp};
use crate::read::{be16, malformed, need};

/// GTP-U's registered port (3GPP TS 29.281 section 4.4.2.3).
const GTP_U_PORT: u16 = 2152;

/// Decode the UDP header at `off`; datagrams to or from port 2152 continue as GTP-U.
#[inline(always)]
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let declared = cx.declared_from(off);
    if declared < 8 {
        return Err(malformed(Layer::Udp, "IP payload shorter than a UDP header"));
    }
    let h = need::<8>(cx.f, off, Layer::Udp)?;
    // Length 0 is only legal in IPv6 jumbograms (RFC 2675 section 4); take the IP's.
    let len = match usize::from(be16([h[4], h[5]])) {
        0 => declared,
        n if n < 8 => return Err(malformed(Layer::Udp, "UDP length below 8")),
        n => n,
    };
    let udp = Udp {
        src_port: be16([h[0], h[1]]),
        dst_port: be16([h[2], h[3]]),
        payload_len: (len - 8) as u32,
        checksum: be16([h[6], h[7]]),
    };
    out.transport = Transport::Udp(udp);
    cx.cut(cx.end.min(off + len));
    out.payload = (off + 8).min(cx.f.len())..cx.f.len();
    if udp.src_port == GTP_U_PORT || udp.dst_port == GTP_U_PORT {
        return Ok(Next::Gtp(off + 8));
    }
    Ok(Next::Done)
}
