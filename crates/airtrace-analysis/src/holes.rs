//! Gaps in a direction's sequence space: ranges below the highest sequence number
//! sent that the capture never saw.
//!
//! They tell a retransmission (bytes captured before) from a segment filling a gap
//! (bytes never captured: reordered, or lost before the capture point), which a
//! time threshold alone, as Wireshark uses, cannot.

use crate::seq;

/// At most this many gaps are remembered per direction; older ones are forgotten
/// (their bytes then count as seen).
const MAX_HOLES: usize = 32;

/// The uncaptured ranges `[start, end)` of one direction, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct Holes {
    ranges: Vec<(u32, u32)>,
}

impl Holes {
    /// Records that `[start, end)` was skipped.
    pub(crate) fn add(&mut self, start: u32, end: u32) {
        if self.ranges.len() == MAX_HOLES {
            self.ranges.remove(0);
        }
        self.ranges.push((start, end));
    }

    /// True if any byte of `[start, end)` lies in a gap.
    #[inline]
    pub(crate) fn overlaps(&self, start: u32, end: u32) -> bool {
        self.ranges
            .iter()
            .any(|&(a, b)| seq::lt(start, b) && seq::lt(a, end))
    }

    /// How many bytes of `[start, end)` lie in gaps.
    pub(crate) fn missing(&self, start: u32, end: u32) -> u64 {
        self.ranges
            .iter()
            .filter_map(|&gap| common(gap, start, end))
            .map(|(lo, hi)| hi.wrapping_sub(lo) as u64)
            .sum()
    }

    /// Marks `[start, end)` as captured; returns how many gap bytes it filled.
    pub(crate) fn fill(&mut self, start: u32, end: u32) -> u64 {
        if !self.overlaps(start, end) {
            return 0;
        }
        let mut filled = 0u64;
        let mut kept = Vec::with_capacity(self.ranges.len() + 1);
        for &(a, b) in &self.ranges {
            let Some((lo, hi)) = common((a, b), start, end) else {
                kept.push((a, b));
                continue;
            };
            filled += hi.wrapping_sub(lo) as u64;
            if seq::lt(a, start) {
                kept.push((a, start));
            }
            if seq::lt(end, b) {
                kept.push((end, b));
            }
        }
        self.ranges = kept;
        filled
    }
}

/// The part of gap `(a, b)` inside `[start, end)`, if any.
fn common((a, b): (u32, u32), start: u32, end: u32) -> Option<(u32, u32)> {
    (seq::lt(start, b) && seq::lt(a, end))
        .then(|| (seq::max(a, start), if seq::lt(b, end) { b } else { end }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filling_a_gap_piece_by_piece() {
        let mut h = Holes::default();
        h.add(100, 400);
        assert!(h.overlaps(350, 500) && !h.overlaps(400, 500) && !h.overlaps(0, 100));
        assert_eq!(h.missing(0, 1000), 300);
        assert_eq!(h.missing(350, 500), 50);
        assert_eq!(h.fill(200, 300), 100);
        assert_eq!(h.missing(150, 250), 50);
        assert!(!h.overlaps(200, 300) && h.overlaps(150, 201));
        assert_eq!(h.fill(0, 1000), 200);
        assert!(!h.overlaps(0, 1000));
    }

    #[test]
    fn at_most_max_holes_are_kept() {
        let mut h = Holes::default();
        for i in 0..(MAX_HOLES as u32 + 1) {
            h.add(i * 10, i * 10 + 5);
        }
        assert!(!h.overlaps(0, 5), "the oldest gap was forgotten");
        assert!(h.overlaps(10, 15));
    }
}
