//! UDP (RFC 768), and the tunnels its ports name (`gtp`, `udp_tunnel`).

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Layer, Stop, Transport, Udp};
use crate::read::{be16, malformed, need};
use crate::udp_tunnel;

/// GTP-U's registered port (3GPP TS 29.281 section 4.4.2.3).
pub(crate) const GTP_U_PORT: u16 = 2152;

/// Decode the UDP header at `off`; datagrams to or from port 2152 continue as GTP-U,
/// those of the ports in `udp_tunnel::port` as those tunnels.
#[inline(always)]
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let declared = cx.declared_from(off);
    if declared < 8 {
        return Err(malformed(
            Layer::Udp,
            "IP payload shorter than a UDP header",
        ));
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
    cx.stated(off + len);
    out.payload = (off + 8).min(cx.f.len())..cx.f.len();
    if udp.src_port == GTP_U_PORT || udp.dst_port == GTP_U_PORT {
        return Ok(Next::Gtp(off + 8));
    }
    if let Some(port) = udp_tunnel::tunnel_port(udp.src_port, udp.dst_port) {
        return Ok(Next::OverUdp { port, off: off + 8 });
    }
    Ok(Next::Done)
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason};
    use crate::testutil::*;
    use crate::LinkType;

    const RAW: LinkType = LinkType::IPV4;

    #[test]
    fn header_fields_and_payload() {
        let d = dec(RAW, &ipv4(17, &udp(5353, 53, &[1, 2, 3])));
        let u = *d.udp().unwrap();
        assert_eq!(
            (u.src_port, u.dst_port, u.payload_len, u.checksum),
            (5353, 53, 3, 0)
        );
        assert_eq!(d.payload, 28..31);
        assert_eq!(d.stop, None);
    }

    #[test]
    fn payload_ends_at_the_udp_length() {
        let mut p = ipv4(17, &udp(1, 2, &[0; 10]));
        p[25] = 12; // UDP length 12: 4 payload bytes, 6 bytes of trailer
        let d = dec(RAW, &p);
        assert_eq!(
            (d.udp().unwrap().payload_len, d.payload.clone()),
            (4, 28..32)
        );
    }

    #[test]
    fn bad_lengths() {
        let mut p = ipv4(17, &udp(1, 2, &[0; 4]));
        p[25] = 7;
        assert_eq!(
            dec(RAW, &p).stop.unwrap().reason,
            StopReason::Malformed("UDP length below 8")
        );
        p[25] = 0; // length 0: the IP length decides
        assert_eq!(dec(RAW, &p).udp().unwrap().payload_len, 4);
        let d = dec(RAW, &ipv4(17, &[0; 6]));
        assert_eq!(d.stop.unwrap().layer, Layer::Udp);
    }
}
