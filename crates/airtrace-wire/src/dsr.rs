//! The DSR options header (RFC 4728 §6.1): what a packet routed by Dynamic Source
//! Routing carries between its IP header (protocol 48) and its transport header. It
//! is walked like an IPv6 extension header: Next Header, a flags byte, the length of
//! the options that follow; the options themselves (route request, reply, error,
//! source route) are skipped. Its bytes count in the IP header length, and the IP
//! protocol becomes the Next Header's, so that TCP over DSR is analysed as TCP.

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Layer, Stop, Transport};
use crate::read::{be16, malformed, need, truncated};

/// "No next header" (IANA 59): a packet of routing only.
const NO_NEXT_HEADER: u8 = 59;

/// IANA protocol number of the DSR options header.
pub(crate) const PROTO: u8 = 48;

/// Decodes the DSR options header at `off`.
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let h = need::<4>(cx.f, off, Layer::Dsr)?;
    let size = 4 + usize::from(be16([h[2], h[3]]));
    if off + size > cx.end {
        return Err(malformed(Layer::Dsr, "DSR options run past the IP payload"));
    }
    if off + size > cx.f.len() {
        return Err(truncated(Layer::Dsr));
    }
    let next = h[0];
    if let Some(ip) = out.ip.as_mut() {
        ip.protocol = next;
        ip.header_len = ip.header_len.saturating_add(size as u16);
        ip.payload_len = ip.payload_len.saturating_sub(size as u32);
    }
    if next == NO_NEXT_HEADER {
        out.transport = Transport::Other(PROTO);
        return Ok(Next::Done);
    }
    Ok(Next::Payload {
        proto: next,
        off: off + size,
    })
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason, Transport};
    use crate::testutil::*;
    use crate::LinkType;

    /// A DSR options header (Next Header `next`) with `options_len` bytes of options,
    /// then `rest`.
    fn dsr(next: u8, options_len: u16, rest: &[u8]) -> Vec<u8> {
        let mut p = vec![next, 0];
        p.extend_from_slice(&options_len.to_be_bytes());
        p.extend(std::iter::repeat_n(0u8, usize::from(options_len)));
        p.extend_from_slice(rest);
        p
    }

    #[test]
    fn tcp_behind_a_dsr_header_is_tcp() {
        let d = dec(LinkType::IPV4, &ipv4(48, &dsr(6, 4, &tcp(&[], b"data"))));
        assert_eq!(d.stop, None);
        let ip = d.ip.unwrap();
        assert_eq!((ip.protocol, ip.header_len, ip.payload_len), (6, 28, 24));
        assert_eq!(d.tcp().unwrap().payload_len, 4);
    }

    #[test]
    fn a_routing_packet_is_named_and_a_long_header_is_malformed() {
        let d = dec(LinkType::IPV4, &ipv4(48, &dsr(59, 16, &[])));
        assert_eq!((d.stop, d.transport), (None, Transport::Other(48)));
        let mut bad = ipv4(48, &dsr(6, 4, &tcp(&[], b"data")));
        bad[23] = 200; // options longer than the packet
        let d = dec(LinkType::IPV4, &bad);
        let stop = d.stop.unwrap();
        assert_eq!(stop.layer, Layer::Dsr);
        assert!(matches!(stop.reason, StopReason::Malformed(_)));
    }
}
