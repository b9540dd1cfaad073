//! Bounds-checked reads of fixed-size fields, and the `Stop` constructors every layer uses.
//!
//! Each layer asks for its fixed header as an array (`bytes::<N>`); once it has the
//! array, indexing into it is checked at compile time, so no accessor can panic.

use crate::packet::{Layer, Stop, StopReason};

/// The `N` bytes at `off`, or `None` if the slice ends before them.
#[inline(always)]
pub(crate) fn bytes<const N: usize>(f: &[u8], off: usize) -> Option<&[u8; N]> {
    f.get(off..)?.first_chunk::<N>()
}

/// The `N` bytes at `off`, or a `Truncated` stop at `layer`.
#[inline(always)]
pub(crate) fn need<const N: usize>(f: &[u8], off: usize, layer: Layer) -> Result<&[u8; N], Stop> {
    bytes(f, off).ok_or(truncated(layer))
}

/// The byte at `off`, or a `Truncated` stop at `layer`.
#[inline(always)]
pub(crate) fn byte(f: &[u8], off: usize, layer: Layer) -> Result<u8, Stop> {
    f.get(off).copied().ok_or(truncated(layer))
}

#[inline(always)]
pub(crate) fn be16(b: [u8; 2]) -> u16 {
    u16::from_be_bytes(b)
}

#[inline(always)]
pub(crate) fn be32(b: [u8; 4]) -> u32 {
    u32::from_be_bytes(b)
}

#[inline(always)]
pub(crate) fn le16(b: [u8; 2]) -> u16 {
    u16::from_le_bytes(b)
}

#[inline(always)]
pub(crate) fn le32(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}

/// A `[u8; N]` copied out of `b` at `at` (`at + N` must be within `M`, checked when
/// the constant indices are folded).
#[inline(always)]
pub(crate) fn arr<const N: usize, const M: usize>(b: &[u8; M], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&b[at..at + N]);
    out
}

#[inline(always)]
pub(crate) const fn truncated(layer: Layer) -> Stop {
    Stop {
        layer,
        reason: StopReason::Truncated,
    }
}

#[inline(always)]
pub(crate) const fn malformed(layer: Layer, what: &'static str) -> Stop {
    Stop {
        layer,
        reason: StopReason::Malformed(what),
    }
}

#[inline(always)]
pub(crate) const fn unsupported(layer: Layer) -> Stop {
    Stop {
        layer,
        reason: StopReason::Unsupported,
    }
}

#[inline(always)]
pub(crate) const fn not_decoded(layer: Layer, what: &'static str) -> Stop {
    Stop {
        layer,
        reason: StopReason::NotDecoded(what),
    }
}
