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
