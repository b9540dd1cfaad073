//! Data the capture missed: segments the receiver acknowledged that never appear in the
//! capture, and were never seen retransmitted either.
//!
//! The analyzer flags a segment beyond the highest sequence number seen
//! (`lost_segment`) and an ACK of data never seen (`ack_lost_segment`), as Wireshark
//! does; both read like network loss. But a gap that the receiver acknowledges with no
//! retransmission in between was no loss: the packet went through and the capture
//! missed it (a busy capture host, a mirror port over its rate, a full capture buffer).
//! [`CaptureGaps`] tells the two apart per direction of data: a gap is opened when data
//! skips ahead, closed as *network* business when any later segment fills some of it
//! (reordering, or a retransmission repairing a loss), and counted as a *capture* drop
//! when a cumulative ACK covers it whole first. An ACK beyond everything captured
//! counts the same way (the tail of a flight was missed).
//!
//! The loss detectors never see these gaps: they count retransmissions, and a capture
//! drop has none. The finding (`capture_drops`, see [`crate::detect`]) says how many
//! there were so that the connection's `lost_segments` and retransmission counts can be
//! read with them in mind.

use crate::finding::MAX_EVIDENCE;

/// Gaps remembered per direction; the oldest is forgotten (then neither counted nor
/// excused) when more are open.
const MAX_OPEN_GAPS: usize = 64;

/// One gap in the captured sequence space, not yet filled nor acknowledged.
#[derive(Debug, Clone, Copy)]
struct Gap {
    start: u32,
    end: u32,
    /// The first segment after it.
    frame: u64,
    t_ns: i64,
}

/// What one direction's data tells about the capture's own losses.
#[derive(Debug, Clone, Default)]
pub struct CaptureGaps {
    /// One past the highest sequence number captured (relative, SYN and FIN included).
    seen_end: Option<u32>,
    open: Vec<Gap>,
    /// Gaps acknowledged without ever being captured.
    pub gaps: u64,
    /// Bytes in them.
    pub bytes: u64,
    /// Segments in them (bytes over the MSS, rounded up per gap).
    pub segments: u64,
    /// Frames showing them: the segment after each gap and the ACK that covered it.
    pub frames: Vec<u64>,
    /// From when the first was seen missing to when the last was acknowledged, ns.
    pub first_ns: Option<i64>,
    /// See `first_ns`.
    pub last_ns: Option<i64>,
}

/// `a` is after `b` in sequence space (RFC 1982 arithmetic).
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl CaptureGaps {
    /// `[seq, end)` falls (in part) in a gap: the capture never saw those bytes before.
    pub fn never_seen(&self, seq: u32, end: u32) -> bool {
        seq != end
            && self
                .open
                .iter()
                .any(|g| after(g.end, seq) && after(end, g.start))
    }

    /// A segment of this direction `[seq, end)` was captured (`end` counts SYN and FIN).
    pub fn segment(&mut self, seq: u32, end: u32, frame: u64, t_ns: i64) {
        if seq != end {
            // Any byte of a gap captured after all: the gap was reordering or a network
            // loss being repaired, not the capture's.
            self.open
                .retain(|g| !(after(g.end, seq) && after(end, g.start)));
        }
        match self.seen_end {
            Some(e) if after(seq, e) => {
                if self.open.len() == MAX_OPEN_GAPS {
                    self.open.remove(0);
                }
                self.open.push(Gap {
                    start: e,
                    end: seq,
                    frame,
                    t_ns,
                });
                self.seen_end = Some(end);
            }
            Some(e) if !after(end, e) => {}
            _ => self.seen_end = Some(end),
        }
    }

    /// The peer's cumulative ACK reached `ack` (relative): the gaps below it were
    /// received, so the capture missed them. `mss` sizes them in segments. An ACK more
    /// than `reach` bytes beyond everything captured cannot be true (no sender runs
    /// that far ahead of the receiver's window) and counts for nothing.
    pub fn ack(&mut self, ack: u32, frame: u64, t_ns: i64, mss: u32, reach: u32) {
        let Some(seen_end) = self.seen_end else {
            return; // no data of this direction captured yet: nothing to compare with
        };
        let mut i = 0;
        while i < self.open.len() {
            let g = self.open[i];
            if after(g.end, ack) {
                i += 1;
                continue;
            }
            self.open.remove(i);
            self.count(
                g.end.wrapping_sub(g.start),
                Some(g.frame),
                frame,
                (g.t_ns, t_ns),
                mss,
            );
        }
        if after(ack, seen_end) && ack.wrapping_sub(seen_end) <= reach {
            // Acknowledged beyond anything captured: the end of a flight was missed.
            self.seen_end = Some(ack);
            self.count(ack.wrapping_sub(seen_end), None, frame, (t_ns, t_ns), mss);
        }
    }

    /// Counts a gap of `bytes`, seen missing at `missed_ns` and acknowledged at `acked_ns`.
    fn count(
        &mut self,
        bytes: u32,
        after_gap: Option<u64>,
        ack_frame: u64,
        (missed_ns, acked_ns): (i64, i64),
        mss: u32,
    ) {
        self.gaps += 1;
        self.bytes += u64::from(bytes);
        self.segments += u64::from(bytes.div_ceil(mss.max(1)).max(1));
        for f in after_gap.into_iter().chain([ack_frame]) {
            if self.frames.len() < MAX_EVIDENCE {
                self.frames.push(f);
            }
        }
        self.first_ns = Some(self.first_ns.map_or(missed_ns, |f| f.min(missed_ns)));
        self.last_ns = Some(self.last_ns.map_or(acked_ns, |l| l.max(acked_ns)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_acknowledged_is_the_captures_a_gap_filled_is_not() {
        let mut g = CaptureGaps::default();
        g.segment(0, 1, 1, 0); // SYN
        g.segment(1, 1001, 2, 10);
        g.segment(2001, 3001, 3, 20); // 1001..2001 missing
        g.segment(4001, 5001, 4, 30); // 3001..4001 missing
        g.segment(3001, 4001, 5, 40); // ... until it comes late: not the capture's
        g.ack(5001, 6, 50, 1000, u32::MAX);
        assert_eq!((g.gaps, g.bytes, g.segments), (1, 1000, 1));
        assert_eq!(g.frames, [3, 6]);
        // The ACK of a FIN covers its sequence number, which was captured.
        g.segment(5001, 5002, 7, 60);
        g.ack(5002, 8, 70, 1000, u32::MAX);
        assert_eq!(g.gaps, 1);
        // An ACK past everything captured: the tail was missed.
        g.ack(7002, 9, 80, 1000, u32::MAX);
        assert_eq!((g.gaps, g.bytes, g.segments), (2, 3000, 3));
        assert_eq!(g.frames, [3, 6, 9]);
    }

    #[test]
    fn an_ack_further_ahead_than_any_window_allows_counts_for_nothing() {
        // A RST acknowledging 872 MB past a 30 kB transfer (issue 18 class 6).
        let mut g = CaptureGaps::default();
        g.segment(1, 29_201, 1, 0);
        g.ack(29_201 + 872_000_000, 2, 10, 1460, 131_070);
        assert_eq!((g.gaps, g.bytes), (0, 0));
        // Within reach it is the capture's loss, as before.
        g.ack(29_201 + 2920, 3, 20, 1460, 131_070);
        assert_eq!((g.gaps, g.bytes, g.segments), (1, 2920, 2));
    }
}
