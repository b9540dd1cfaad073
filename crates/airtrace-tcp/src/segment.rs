//! What travels between two endpoints: a TCP header reduced to the fields the model
//! uses ([`Segment`]), its flags ([`Flags`]) and options ([`Options`], [`SackBlocks`]).
//!
//! A segment carries a payload *length*, never payload bytes. [`Options::encode`] lays
//! the options out byte for byte as Linux does, so the simulator's pcap writer can emit
//! headers that look like a real capture (and so header sizes count on the link).

use core::fmt;
use core::ops::{BitOr, BitOrAssign};

/// TCP header flags, with the bit values of the header's flags byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Flags(pub u8);

impl Flags {
    /// No flag set.
    pub const NONE: Flags = Flags(0);
    /// No more data from sender.
    pub const FIN: Flags = Flags(0x01);
    /// Synchronize sequence numbers.
    pub const SYN: Flags = Flags(0x02);
    /// Reset the connection.
    pub const RST: Flags = Flags(0x04);
    /// Push function.
    pub const PSH: Flags = Flags(0x08);
    /// Acknowledgment field significant.
    pub const ACK: Flags = Flags(0x10);
    /// Urgent pointer field significant.
    pub const URG: Flags = Flags(0x20);
    /// ECN-Echo (RFC 3168).
    pub const ECE: Flags = Flags(0x40);
    /// Congestion Window Reduced (RFC 3168).
    pub const CWR: Flags = Flags(0x80);

    /// True when every bit of `other` is set in `self`.
    #[inline]
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Flags {
    type Output = Flags;
    #[inline]
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl BitOrAssign for Flags {
    #[inline]
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

/// tcpdump's notation: `S` SYN, `F` FIN, `R` RST, `P` PSH, `U` URG, `E` ECE, `W` CWR,
/// `.` ACK (so a SYN-ACK prints `S.`), `none` when no flag is set.
impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("none");
        }
        for (flag, c) in [
            (Flags::SYN, 'S'),
            (Flags::FIN, 'F'),
            (Flags::RST, 'R'),
            (Flags::PSH, 'P'),
            (Flags::URG, 'U'),
            (Flags::ECE, 'E'),
            (Flags::CWR, 'W'),
            (Flags::ACK, '.'),
        ] {
            if self.contains(flag) {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

/// Up to four SACK blocks (RFC 2018 §3), each `(left edge, right edge)`: the right
/// edge is the sequence number just past the block. Most recent block first, as the
/// receiver reports them (RFC 2018 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct SackBlocks {
    blocks: [(u32, u32); 4],
    n: u8,
}

impl SackBlocks {
    /// The most blocks a header can hold (without timestamps; three with them).
    pub const MAX: usize = 4;

    /// No blocks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a block; returns false (and changes nothing) when four are held already.
    pub fn push(&mut self, left: u32, right: u32) -> bool {
        if usize::from(self.n) == Self::MAX {
            return false;
        }
        self.blocks[usize::from(self.n)] = (left, right);
        self.n += 1;
        true
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        usize::from(self.n)
    }

    /// True when there is no block.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The blocks, in order.
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..usize::from(self.n)]
    }

    /// The blocks, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.as_slice().iter().copied()
    }

    /// Keeps the first `n` blocks (unused slots stay zero, so equality is by content).
    pub fn truncate(&mut self, n: usize) {
        while usize::from(self.n) > n {
            self.n -= 1;
            self.blocks[usize::from(self.n)] = (0, 0);
        }
    }
}

/// The TCP options the model uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Options {
    /// Maximum segment size (RFC 793, RFC 6691): SYN segments only.
    pub mss: Option<u16>,
    /// Window scale shift (RFC 7323 §2): SYN segments only.
    pub window_scale: Option<u8>,
    /// SACK permitted (RFC 2018 §2): SYN segments only.
    pub sack_permitted: bool,
    /// Timestamps `(TSval, TSecr)` (RFC 7323 §3).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (RFC 2018 §3). Blocks that do not fit in the 40 option bytes are
    /// left out by [`encoded_len`](Options::encoded_len) and [`encode`](Options::encode).
    pub sack: SackBlocks,
}

const KIND_EOL: u8 = 0;
const KIND_NOP: u8 = 1;
const KIND_MSS: u8 = 2;
const KIND_WS: u8 = 3;
const KIND_SACK_PERM: u8 = 4;
const KIND_SACK: u8 = 5;
const KIND_TS: u8 = 8;

impl Options {
    /// Length of every option except the SACK blocks.
    fn fixed_len(&self) -> usize {
        let mut len = 0;
        if self.mss.is_some() {
            len += 4;
        }
        // TS is 10 bytes, padded to 12 either by SACK_PERM (2 bytes) or by NOP NOP.
        if self.timestamps.is_some() {
            len += 12;
        } else if self.sack_permitted {
            len += 4;
        }
        if self.window_scale.is_some() {
            len += 4;
        }
        len
    }

    /// How many of the SACK blocks fit beside the other options (NOP NOP kind len, then
    /// 8 bytes a block, within 40 option bytes).
    pub fn sack_blocks_that_fit(&self) -> usize {
        let room = 40usize.saturating_sub(self.fixed_len());
        let fit = room.saturating_sub(4) / 8;
        self.sack.len().min(fit)
    }

    /// Bytes the options take in the header: a multiple of 4, at most 40.
    pub fn encoded_len(&self) -> usize {
        let n = self.sack_blocks_that_fit();
        let sack = if n > 0 { 4 + 8 * n } else { 0 };
        self.fixed_len() + sack
    }

    /// Appends exactly [`encoded_len`](Options::encoded_len) bytes, in the order Linux
    /// writes them (`tcp_options_write`): MSS; SACK_PERM + TS, or NOP NOP TS, or NOP NOP
    /// SACK_PERM; NOP WS; NOP NOP SACK blocks.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        if let Some(mss) = self.mss {
            out.extend_from_slice(&[KIND_MSS, 4]);
            out.extend_from_slice(&mss.to_be_bytes());
        }
        if let Some((tsval, tsecr)) = self.timestamps {
            if self.sack_permitted {
                out.extend_from_slice(&[KIND_SACK_PERM, 2]);
            } else {
                out.extend_from_slice(&[KIND_NOP, KIND_NOP]);
            }
            out.extend_from_slice(&[KIND_TS, 10]);
            out.extend_from_slice(&tsval.to_be_bytes());
            out.extend_from_slice(&tsecr.to_be_bytes());
        }
        if let Some(shift) = self.window_scale {
            out.extend_from_slice(&[KIND_NOP, KIND_WS, 3, shift]);
        }
        if self.sack_permitted && self.timestamps.is_none() {
            out.extend_from_slice(&[KIND_NOP, KIND_NOP, KIND_SACK_PERM, 2]);
        }
        let n = self.sack_blocks_that_fit();
        if n > 0 {
            // n <= 4, so the length fits a byte.
            let len = (2 + 8 * n) as u8;
            out.extend_from_slice(&[KIND_NOP, KIND_NOP, KIND_SACK, len]);
            for (left, right) in self.sack.iter().take(n) {
                out.extend_from_slice(&left.to_be_bytes());
                out.extend_from_slice(&right.to_be_bytes());
            }
        }
        // Every option group above is a multiple of 4 long; keep the promise anyway.
        while (out.len() - start) % 4 != 0 {
            out.push(KIND_EOL);
        }
    }
}

/// One TCP segment as the model sees it: header fields and a payload length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first byte (of the SYN or FIN when the segment has no
    /// payload).
    pub seq: u32,
    /// Acknowledgment number (meaningful when [`Flags::ACK`] is set).
    pub ack: u32,
    /// Header flags.
    pub flags: Flags,
    /// The raw 16-bit window field: already shifted right by the sender's window
    /// scale (never scaled on SYN segments, RFC 7323 §2.2).
    pub window: u16,
    /// Payload bytes.
    pub len: u32,
    /// Options.
    pub options: Options,
    /// The IP header's ECN field is ECT(0) (RFC 3168 §5): set by the sender on the new
    /// data segments of a connection that negotiated ECN, never on retransmissions,
    /// pure ACKs, SYNs or FINs without data (§6.1.4, §6.1.5). Not a TCP header field:
    /// the simulator copies it into the IP header and lets the link mark CE on it,
    /// then hands the mark back with [`Endpoint::on_segment_ce`](crate::Endpoint::on_segment_ce).
    pub ect: bool,
}

impl Segment {
    /// TCP header bytes: 20 plus the options.
    pub fn header_len(&self) -> usize {
        20 + self.options.encoded_len()
    }

    /// Sequence space the segment occupies: payload plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u32 {
        self.len
            + u32::from(self.flags.contains(Flags::SYN))
            + u32::from(self.flags.contains(Flags::FIN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_print_like_tcpdump() {
        assert_eq!((Flags::SYN | Flags::ACK).to_string(), "S.");
        assert_eq!((Flags::FIN | Flags::ACK | Flags::PSH).to_string(), "FP.");
        assert_eq!(Flags::ACK.to_string(), ".");
        assert!((Flags::SYN | Flags::ACK).contains(Flags::SYN));
        assert!(!Flags::ACK.contains(Flags::SYN | Flags::ACK));
        assert_eq!(Flags::CWR.0, 0x80);
    }

    #[test]
    fn linux_syn_options_layout() {
        let o = Options {
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamps: Some((0x0102_0304, 0)),
            sack: SackBlocks::new(),
        };
        let mut out = Vec::new();
        o.encode(&mut out);
        assert_eq!(
            out,
            [
                2, 4, 0x05, 0xb4, // MSS 1460
                4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, // SACK_PERM, TS
                1, 3, 3, 7, // NOP, WS 7
            ]
        );
        assert_eq!(o.encoded_len(), 20);
    }

    #[test]
    fn syn_without_timestamps_has_nop_nop_sack_perm_last() {
        let o = Options {
            mss: Some(1460),
            window_scale: Some(2),
            sack_permitted: true,
            ..Options::default()
        };
        let mut out = Vec::new();
        o.encode(&mut out);
        assert_eq!(out, [2, 4, 0x05, 0xb4, 1, 3, 3, 2, 1, 1, 4, 2]);
        assert_eq!(o.encoded_len(), 12);
    }

    #[test]
    fn data_segment_timestamps_then_sack() {
        let mut sack = SackBlocks::new();
        assert!(sack.push(100, 200));
        assert!(sack.push(300, 400));
        let o = Options {
            timestamps: Some((5, 6)),
            sack,
            ..Options::default()
        };
        let mut out = Vec::new();
        o.encode(&mut out);
        let mut want = vec![1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 6, 1, 1, 5, 18];
        for v in [100u32, 200, 300, 400] {
            want.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(out, want);
        assert_eq!(o.encoded_len(), 32);
        let seg = Segment {
            seq: 0,
            ack: 0,
            flags: Flags::ACK,
            window: 0,
            len: 0,
            options: o,
            ect: false,
        };
        assert_eq!(seg.header_len(), 52);
    }

    #[test]
    fn sack_blocks_beyond_40_bytes_are_left_out() {
        let mut sack = SackBlocks::new();
        for i in 0..4 {
            assert!(sack.push(i * 10, i * 10 + 5));
        }
        assert!(!sack.push(1, 2));
        let with_ts = Options {
            timestamps: Some((1, 1)),
            sack,
            ..Options::default()
        };
        assert_eq!(with_ts.sack_blocks_that_fit(), 3);
        assert_eq!(with_ts.encoded_len(), 40);
        let without = Options {
            sack,
            ..Options::default()
        };
        assert_eq!(without.encoded_len(), 36);
        let mut out = Vec::new();
        with_ts.encode(&mut out);
        assert_eq!(out.len(), 40);
    }

    #[test]
    fn truncate_keeps_equality_by_content() {
        let mut a = SackBlocks::new();
        a.push(1, 2);
        a.push(3, 4);
        a.truncate(1);
        let mut b = SackBlocks::new();
        b.push(1, 2);
        assert_eq!(a, b);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![(1, 2)]);
    }

    proptest::proptest! {
        #[test]
        fn encode_writes_encoded_len_bytes(
            mss in proptest::option::of(proptest::num::u16::ANY),
            ws in proptest::option::of(0u8..15),
            sp in proptest::bool::ANY,
            ts in proptest::option::of((proptest::num::u32::ANY, proptest::num::u32::ANY)),
            nblocks in 0usize..5,
        ) {
            let mut sack = SackBlocks::new();
            for i in 0..nblocks {
                sack.push(i as u32, i as u32 + 1);
            }
            let o = Options { mss, window_scale: ws, sack_permitted: sp, timestamps: ts, sack };
            let mut out = vec![0xAA];
            o.encode(&mut out);
            proptest::prop_assert_eq!(out.len() - 1, o.encoded_len());
            proptest::prop_assert!(o.encoded_len() <= 40);
            proptest::prop_assert_eq!(o.encoded_len() % 4, 0);
        }
    }
}
