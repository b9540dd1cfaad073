//! LINKTYPE_FDDI (10): frame control, destination, source (ANSI X3.139), then an
//! IEEE 802.2 LLC header.

use crate::decoder::{Cx, Next};
use crate::packet::{Layer, Stop};
use crate::read::{need, unsupported};

/// Frame control bits are C L F F Z Z Z Z: LLC frames have format FF = 01, and the
/// 13-byte header assumes 48-bit addresses (L = 1); class C (synchronous or not) and
/// the priority bits Z don't matter here. MAC, SMT and other frames are not decoded.
pub(crate) fn decode(cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<13>(cx.f, 0, Layer::Link)?;
    if h[0] & 0x70 != 0x50 {
        return Err(unsupported(Layer::Link));
    }
    Ok(Next::Llc(13))
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason};
    use crate::testutil::*;
    use crate::LinkType;

    /// Frame control 0x50 (async LLC, priority 0), destination, source; as in the first
    /// frame of the corpus file tcptrace_single_byte_rexmit.dmp.gz.
    const HEADER: [u8; 13] = [
        0x50, 0x00, 0x00, 0x0c, 0x7e, 0x59, 0xa0, 0x00, 0xe0, 0x34, 0x15, 0x60, 0x60,
    ];

    #[test]
    fn fddi_llc_snap_ipv4() {
        let d = dec(
            LinkType::FDDI,
            &cat(&[&HEADER, &snap(0x0800), &ipv4_tcp(1)]),
        );
        assert_eq!(d.stop, None);
        assert_eq!(d.payload, 61..62);
    }

    #[test]
    fn fddi_smt_frames_are_unsupported() {
        let mut h = HEADER;
        h[0] = 0x41; // SMT frame
        let d = dec(LinkType::FDDI, &cat(&[&h, &[0; 30]]));
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Link, StopReason::Unsupported)
        );
        assert_eq!(
            dec(LinkType::FDDI, &HEADER[..12]).stop.unwrap().reason,
            StopReason::Truncated
        );
        assert_eq!(
            dec(LinkType::FDDI, &cat(&[&HEADER, &[0xAA, 0xAA]]))
                .stop
                .unwrap()
                .layer,
            Layer::Llc
        );
    }
}
