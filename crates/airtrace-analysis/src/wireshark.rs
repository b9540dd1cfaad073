//! Wireshark's `tcp.analysis.*` flags, with the meaning Wireshark 4.0 gives them.
//!
//! Users script against these flags and compare them with tshark, so this module
//! follows the checks of Wireshark's `tcp_analyze_sequence_number()` one by one, in
//! their order, on raw sequence numbers and raw (unscaled) windows, including its
//! quirks (a `lastack` that may move backwards, a duplicate-ACK counter that only
//! resets when the ACK number changes). docs/analysis.md lists the rules and where
//! airtrace deliberately differs: capture duplicates and 802.11 MAC retries never
//! reach this module.
//!
//! It reads and writes only [`FlowState`] (one per direction) and [`ConvState`].

use airtrace_wire::{tcp_flags, Tcp};

use crate::annotation::Flags;
use crate::seq;

/// A fast retransmission follows the last ACK of the peer within this time.
const FAST_RETRANSMIT_WINDOW_NS: i64 = 20_000_000;
/// Out-of-order threshold while the initial RTT is not known.
const DEFAULT_OOO_THRESHOLD_NS: i64 = 3_000_000;

/// Window scale not known (no SYN seen).
const WSCALE_UNKNOWN: i8 = -1;
/// Window scaling not in use (a SYN without the option).
const WSCALE_NONE: i8 = -2;

/// The state Wireshark keeps for one direction of a connection. Zero means "unset"
/// for `nextseq`, `maxseqtobeacked` and `lastack`, as in Wireshark.
#[derive(Clone, Copy, Debug)]
pub struct FlowState {
    /// Highest "next sequence number" sent so far.
    pub nextseq: u32,
    pub nextseqtime: i64,
    /// End of the contiguous data sent, which an ACK may cover without a gap.
    pub maxseqtobeacked: u32,
    /// The ACK field of this direction's last segment (whatever its flags).
    pub lastack: u32,
    /// Time of this direction's last segment.
    pub lastacktime: i64,
    /// Duplicate ACKs sent since the ACK number last changed (`u32::MAX` is
    /// Wireshark's "-1", left by an ACK of unseen data).
    pub dupacknum: u32,
    /// Raw window field of this direction's last segment (`u32::MAX`: none yet).
    pub window: u32,
    /// Window scale shift of this direction, or [`WSCALE_UNKNOWN`] / [`WSCALE_NONE`].
    pub win_scale: i8,
    /// This direction sent a SYN and no pure ACK since.
    pub is_first_ack: bool,
    /// The flags of this direction's previous segment.
    pub lastsegmentflags: Flags,
    /// Base of the relative sequence numbers: the ISN, or one before the first
    /// sequence number seen (or the peer's first ACK number minus one).
    pub base_seq: Option<u32>,
}

impl Default for FlowState {
    fn default() -> Self {
        FlowState {
            nextseq: 0,
            nextseqtime: 0,
            maxseqtobeacked: 0,
            lastack: 0,
            lastacktime: 0,
            dupacknum: 0,
            window: u32::MAX,
            win_scale: WSCALE_UNKNOWN,
            is_first_ack: false,
            lastsegmentflags: Flags::default(),
            base_seq: None,
        }
    }
}

impl FlowState {
    /// The window field of `tcp` (sent in this direction) in bytes: scaled when the
    /// scale is known (RFC 7323 section 2.3; the window of a SYN is never scaled).
    pub fn scaled_window(&self, tcp: &Tcp) -> u32 {
        let w = tcp.window as u32;
        if tcp.flags & tcp_flags::SYN != 0 || self.win_scale < 0 {
            w
        } else {
            w << self.win_scale
        }
    }
}

/// Per-connection state: the time of the last SYN and the initial RTT, which is
/// Wireshark's out-of-order threshold.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConvState {
    /// Time of the most recent SYN without ACK (0: none).
    pub mru_syn: i64,
    /// From that SYN to the first pure ACK in either direction (0: not known).
    pub first_rtt: i64,
}

/// Sets the relative-sequence bases before a segment is analysed.
pub fn set_bases(fwd: &mut FlowState, rev: &mut FlowState, tcp: &Tcp) {
    if fwd.base_seq.is_none() {
        let syn = tcp.flags & tcp_flags::SYN != 0;
        fwd.base_seq = Some(if syn {
            tcp.seq
        } else {
            tcp.seq.wrapping_sub(1)
        });
    }
    if rev.base_seq.is_none() && tcp.flags & tcp_flags::ACK != 0 {
        rev.base_seq = Some(tcp.ack.wrapping_sub(1));
    }
}

/// The flags of one segment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Verdict {
    pub flags: Flags,
    pub dupack_num: u32,
}

/// Analyses one segment sent in the `fwd` direction. `seen_before` says that every
/// byte of the segment was captured before: then it is a retransmission, never
/// out of order, however soon it follows (airtrace's one departure from Wireshark's
/// checks; Wireshark tells the two apart by a time threshold alone).
///
/// Always inlined: it is called once per packet, by `Conn::process`.
#[inline(always)]
pub fn analyze(
    fwd: &mut FlowState,
    rev: &mut FlowState,
    conv: &ConvState,
    tcp: &Tcp,
    ts: i64,
    seen_before: bool,
) -> Verdict {
    let seq = tcp.seq;
    let ack = tcp.ack;
    let seglen = tcp.payload_len;
    let f = tcp.flags;
    let window = tcp.window as u32;
    let syn_fin_rst = f & (tcp_flags::SYN | tcp_flags::FIN | tcp_flags::RST) != 0;
    let mut v = Verdict::default();

    'fwd: {
        // Zero-window probe: one byte at the next sequence number into a zero window.
        if seglen == 1 && seq == fwd.nextseq && rev.window == 0 {
            v.flags.insert(Flags::ZERO_WINDOW_PROBE);
            break 'fwd;
        }
        if window == 0 && !syn_fin_rst {
            v.flags.insert(Flags::ZERO_WINDOW);
        }
        // Beyond the highest sequence number seen: the segment before was not captured.
        if fwd.nextseq != 0 && seq::gt(seq, fwd.nextseq) && f & tcp_flags::RST == 0 {
            v.flags.insert(Flags::LOST_SEGMENT);
        }
        if syn_fin_rst {
            break 'fwd;
        }
        // Keep-alive: 0 or 1 byte, one byte below the next expected sequence number.
        if seglen <= 1 && seq == fwd.nextseq.wrapping_sub(1) {
            v.flags.insert(Flags::KEEP_ALIVE);
        }
        if seglen > 0 {
            // Window full: the segment reaches the right edge of the peer's window.
            if rev.win_scale != WSCALE_UNKNOWN {
                let shift = if rev.is_first_ack || rev.win_scale == WSCALE_NONE {
                    0
                } else {
                    rev.win_scale as u32
                };
                let edge = rev.lastack.wrapping_add(rev.window.wrapping_shl(shift));
                if seq.wrapping_add(seglen) == edge {
                    v.flags.insert(Flags::WINDOW_FULL);
                }
            }
            break 'fwd;
        }
        // No data, same sequence and ACK numbers as before: a window update, the
        // answer to a keep-alive or a zero-window probe, or a duplicate ACK.
        if seq != fwd.nextseq || ack != fwd.lastack {
            break 'fwd;
        }
        if window != 0 && window != fwd.window {
            v.flags.insert(Flags::WINDOW_UPDATE);
        } else if window != 0 {
            if rev.lastsegmentflags.contains(Flags::KEEP_ALIVE) {
                v.flags.insert(Flags::KEEP_ALIVE_ACK);
                break 'fwd;
            }
            fwd.dupacknum = if fwd.dupacknum == u32::MAX {
                1
            } else {
                fwd.dupacknum + 1
            };
            v.flags.insert(Flags::DUPLICATE_ACK);
            v.dupack_num = fwd.dupacknum;
        } else if window == fwd.window && rev.lastsegmentflags.contains(Flags::ZERO_WINDOW_PROBE) {
            v.flags.insert(Flags::ZERO_WINDOW_PROBE_ACK);
        }
    }
    if ack != fwd.lastack {
        fwd.dupacknum = 0;
    }

    // An ACK beyond what the peer was seen to send: the peer's segment was not captured.
    if rev.maxseqtobeacked != 0 && seq::gt(ack, rev.maxseqtobeacked) && f & tcp_flags::ACK != 0 {
        if seq::lt(rev.maxseqtobeacked, rev.nextseq) {
            rev.maxseqtobeacked = rev.nextseq;
            v.flags.insert(Flags::ACK_LOST_SEGMENT);
        } else {
            if rev.dupacknum == 0 {
                v.flags.insert(Flags::ACK_LOST_SEGMENT);
            }
            rev.dupacknum = u32::MAX;
        }
    }

    // Retransmission, fast retransmission, out-of-order or spurious retransmission.
    if seglen > 0 || f & (tcp_flags::SYN | tcp_flags::FIN) != 0 {
        let mut not_advanced = fwd.nextseq != 0 && seq::lt(seq, fwd.nextseq);
        if seglen > 1 && fwd.nextseq.wrapping_sub(1) == seq {
            not_advanced = false;
        }
        let syn_fin = u32::from(f & (tcp_flags::SYN | tcp_flags::FIN) != 0);
        let ooo_threshold = if conv.first_rtt != 0 {
            conv.first_rtt
        } else {
            DEFAULT_OOO_THRESHOLD_NS
        };
        let since = |t: i64| u64::try_from(ts - t).unwrap_or(u64::MAX);
        if v.flags.contains(Flags::KEEP_ALIVE) {
            // A keep-alive is not a retransmission.
        } else if seglen > 0 && rev.lastack != 0 && seq::le(seq.wrapping_add(seglen), rev.lastack) {
            v.flags.insert(Flags::SPURIOUS_RETRANSMISSION);
            v.flags.insert(Flags::RETRANSMISSION);
        } else if not_advanced
            && rev.dupacknum >= 2
            && rev.lastack == seq
            && since(rev.lastacktime) < FAST_RETRANSMIT_WINDOW_NS as u64
        {
            v.flags.insert(Flags::FAST_RETRANSMISSION);
            v.flags.insert(Flags::RETRANSMISSION);
        } else if not_advanced
            && !seen_before
            && since(fwd.nextseqtime) < ooo_threshold as u64
            && fwd.nextseq != seq.wrapping_add(seglen).wrapping_add(syn_fin)
        {
            v.flags.insert(Flags::OUT_OF_ORDER);
        } else if not_advanced {
            v.flags.insert(Flags::RETRANSMISSION);
        }
    }

    // State updates.
    let mut nextseq = seq.wrapping_add(seglen);
    if f & (tcp_flags::SYN | tcp_flags::FIN) != 0 {
        nextseq = nextseq.wrapping_add(1);
    }
    let probe = v.flags.contains(Flags::ZERO_WINDOW_PROBE);
    if (seq::gt(nextseq, fwd.nextseq) || fwd.nextseq == 0) && !probe {
        fwd.nextseq = nextseq;
        fwd.nextseqtime = ts;
    }
    if (seq == fwd.maxseqtobeacked || fwd.maxseqtobeacked == 0) && !probe {
        fwd.maxseqtobeacked = fwd.nextseq;
    }
    fwd.window = window;
    fwd.lastack = ack;
    fwd.lastacktime = ts;
    fwd.lastsegmentflags = v.flags;
    v
}

/// What a segment changes after its own analysis: window scale options, the
/// `is_first_ack` state and the initial RTT.
pub fn after(fwd: &mut FlowState, rev: &mut FlowState, conv: &mut ConvState, tcp: &Tcp, ts: i64) {
    let f = tcp.flags;
    let syn = f & tcp_flags::SYN != 0;
    let ack = f & tcp_flags::ACK != 0;
    if syn {
        if !ack {
            conv.mru_syn = ts;
        }
        fwd.is_first_ack = true;
    }
    if ack && !syn {
        if conv.mru_syn != 0 && conv.first_rtt == 0 {
            conv.first_rtt = ts - conv.mru_syn;
        }
        fwd.is_first_ack = false;
    }
    if let Some(shift) = tcp.window_scale {
        fwd.win_scale = shift.min(14) as i8;
    }
    // RFC 7323 section 2.2: scaling is in effect only if both SYNs carry the option.
    if syn {
        if fwd.win_scale == WSCALE_UNKNOWN {
            fwd.win_scale = WSCALE_NONE;
            rev.win_scale = WSCALE_NONE;
        } else if ack && rev.win_scale == WSCALE_NONE {
            fwd.win_scale = WSCALE_NONE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32, ack: u32, len: u32, flags: u16, window: u16) -> Tcp {
        Tcp {
            seq,
            ack,
            payload_len: len,
            flags,
            window,
            ..Default::default()
        }
    }

    const A: u16 = tcp_flags::ACK;

    /// Runs segments (direction, tcp, time ms) through the analysis; returns the verdicts.
    fn run(segments: &[(usize, Tcp, i64)]) -> Vec<Verdict> {
        let mut flows = [FlowState::default(), FlowState::default()];
        let mut conv = ConvState::default();
        segments
            .iter()
            .map(|(d, t, ms)| {
                let (a, b) = flows.split_at_mut(1);
                let (fwd, rev) = if *d == 0 {
                    (&mut a[0], &mut b[0])
                } else {
                    (&mut b[0], &mut a[0])
                };
                set_bases(fwd, rev, t);
                let v = analyze(fwd, rev, &conv, t, ms * 1_000_000, false);
                after(fwd, rev, &mut conv, t, ms * 1_000_000);
                v
            })
            .collect()
    }

    #[test]
    fn three_dupacks_then_fast_retransmission() {
        let v = run(&[
            (0, seg(1000, 1, 100, A, 500), 0),
            (0, seg(1100, 1, 100, A, 500), 1),
            (1, seg(1, 1100, 0, A, 500), 10),
            (1, seg(1, 1100, 0, A, 500), 11),
            (1, seg(1, 1100, 0, A, 500), 12),
            (1, seg(1, 1100, 0, A, 500), 13),
            (0, seg(1100, 1, 100, A, 500), 14),
        ]);
        assert_eq!((v[3].flags, v[3].dupack_num), (Flags::DUPLICATE_ACK, 1));
        assert_eq!(v[5].dupack_num, 3);
        assert!(
            v[6].flags.contains(Flags::FAST_RETRANSMISSION)
                && v[6].flags.contains(Flags::RETRANSMISSION)
        );
    }

    #[test]
    fn late_repeat_is_a_retransmission_and_early_one_out_of_order() {
        let v = run(&[
            (0, seg(1000, 1, 100, A, 500), 0),
            (0, seg(1100, 1, 100, A, 500), 1),
            (0, seg(1000, 1, 100, A, 500), 2),
            (0, seg(1000, 1, 100, A, 500), 300),
        ]);
        assert_eq!(
            v[2].flags,
            Flags::OUT_OF_ORDER,
            "within 3 ms of the highest segment"
        );
        assert_eq!(v[3].flags, Flags::RETRANSMISSION);
    }

    #[test]
    fn an_early_repeat_of_captured_bytes_is_a_retransmission() {
        let mut fwd = FlowState::default();
        let mut rev = FlowState::default();
        let conv = ConvState::default();
        for (t, ms) in [
            (seg(1000, 1, 100, A, 500), 0),
            (seg(1100, 1, 100, A, 500), 1),
        ] {
            analyze(&mut fwd, &mut rev, &conv, &t, ms * 1_000_000, false);
        }
        let repeat = seg(1000, 1, 100, A, 500);
        let v = analyze(&mut fwd, &mut rev, &conv, &repeat, 2_000_000, true);
        assert_eq!(v.flags, Flags::RETRANSMISSION);
    }

    #[test]
    fn already_acknowledged_data_is_spurious() {
        let v = run(&[
            (0, seg(1000, 1, 100, A, 500), 0),
            (1, seg(1, 1100, 0, A, 500), 10),
            (0, seg(1000, 1, 100, A, 500), 500),
        ]);
        assert!(v[2].flags.contains(Flags::SPURIOUS_RETRANSMISSION));
    }

    #[test]
    fn zero_window_then_probe_and_its_ack() {
        let v = run(&[
            (0, seg(1000, 1, 100, A, 500), 0),
            (1, seg(1, 1100, 0, A, 0), 10),
            (0, seg(1100, 1, 1, A, 500), 20),
            (1, seg(1, 1100, 0, A, 0), 30),
        ]);
        assert_eq!(v[1].flags, Flags::ZERO_WINDOW);
        assert_eq!(v[2].flags, Flags::ZERO_WINDOW_PROBE);
        assert!(v[3].flags.contains(Flags::ZERO_WINDOW_PROBE_ACK));
    }

    #[test]
    fn gap_is_a_lost_segment_and_its_ack_acks_unseen_data() {
        let v = run(&[
            (0, seg(1000, 1, 100, A, 500), 0),
            (1, seg(1, 1100, 0, A, 500), 5),
            (0, seg(1200, 1, 100, A, 500), 10),
            (1, seg(1, 1300, 0, A, 500), 20),
        ]);
        assert!(v[2].flags.contains(Flags::LOST_SEGMENT));
        assert!(v[3].flags.contains(Flags::ACK_LOST_SEGMENT));
    }

    #[test]
    fn window_scale_needs_both_syns() {
        let mut syn = seg(0, 0, 0, tcp_flags::SYN, 100);
        syn.window_scale = Some(7);
        let synack = seg(0, 1, 0, tcp_flags::SYN | A, 100);
        let mut flows = [FlowState::default(), FlowState::default()];
        let mut conv = ConvState::default();
        let (a, b) = flows.split_at_mut(1);
        after(&mut a[0], &mut b[0], &mut conv, &syn, 1);
        assert_eq!(a[0].win_scale, 7);
        after(&mut b[0], &mut a[0], &mut conv, &synack, 2);
        assert_eq!((a[0].win_scale, b[0].win_scale), (WSCALE_NONE, WSCALE_NONE));
    }
}
