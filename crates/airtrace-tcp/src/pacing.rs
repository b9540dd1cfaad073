//! Pacing: a sender that releases each data segment no earlier than the previous
//! release plus the previous segment's length over the pacing rate, as Linux's TCP
//! paces by itself without the fq qdisc (the earliest departure time `tcp_wstamp_ns`
//! advanced in `tcp_update_skb_after_send`, the send held back in
//! `tcp_pacing_check`, and the `pacing_timer` hrtimer that resumes it).
//!
//! Only a congestion control that asks for it paces (BBR, [`crate::cc::bbr`]): the
//! endpoint keeps a [`Pacer`] and asks it before every data segment, new or
//! retransmitted; pure ACKs are never paced. What it is not: fq's per-flow pacing
//! with its quantum and its initial 10-segment burst per flow, nor TSO autosizing.
//!
//! ```
//! use airtrace_tcp::pacing::Pacer;
//! let mut p = Pacer::default();
//! // Linux does not pace the first 10 data segments.
//! for _ in 0..10 {
//!     assert_eq!(p.release_at(0), None);
//!     p.on_send(0, 1000, 1_000_000);
//! }
//! p.on_send(0, 1000, 1_000_000); // the 11th: 1000 B at 1 MB/s is 1 ms
//! assert_eq!(p.release_at(0), Some(1_000_000));
//! assert_eq!(p.release_at(1_000_000), None);
//! ```

/// The earliest departure time of the next data segment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    /// Linux's `tcp_wstamp_ns`: no data segment leaves before it.
    wstamp_ns: i64,
    /// Data segments sent, retransmissions included (`data_segs_out`).
    segs_out: u64,
}

/// Linux's `sch_fq` lets the first 10 segments of a flow go unpaced, and its TCP
/// does the same (`tp->data_segs_out >= 10` in `tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;

impl Pacer {
    /// The earliest departure time of the next data segment (`tcp_wstamp_ns`).
    pub fn departure_ns(&self) -> i64 {
        self.wstamp_ns
    }

    /// `tcp_pacing_check`: `None` if a data segment may leave at `now`, else the
    /// time it may (the pacing timer's expiry).
    pub fn release_at(&self, now: i64) -> Option<i64> {
        (self.wstamp_ns > now).then_some(self.wstamp_ns)
    }

    /// A data segment of `len` payload bytes left at `now`, paced at `rate` bytes
    /// per second (0: no pacing): `tcp_update_skb_after_send`. The next may leave
    /// len/rate later; when the sender was idle past its departure time, up to half
    /// of that gap is taken off as credit ("OS jitter"), as Linux does.
    pub fn on_send(&mut self, now: i64, len: u32, rate: u64) {
        let prior = self.wstamp_ns;
        self.wstamp_ns = self.wstamp_ns.max(now);
        if rate > 0 && self.segs_out >= UNPACED_SEGMENTS {
            let mut len_ns = (u128::from(len) * 1_000_000_000 / u128::from(rate)) as i64;
            let credit = self.wstamp_ns - prior;
            len_ns -= (len_ns / 2).min(credit);
            self.wstamp_ns += len_ns;
        }
        self.segs_out += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn past_the_first_ten() -> Pacer {
        let mut p = Pacer::default();
        for _ in 0..UNPACED_SEGMENTS {
            p.on_send(0, 1448, 1_448_000);
        }
        assert_eq!(p.release_at(0), None, "the first ten are not paced");
        p
    }

    /// Back to back at 1448 B per ms: each release is 1 ms after the previous one.
    #[test]
    fn segments_leave_one_length_over_rate_apart() {
        let mut p = past_the_first_ten();
        let mut now = 0;
        for k in 1..=5 {
            p.on_send(now, 1448, 1_448_000);
            let at = p.release_at(now).expect("held back");
            assert_eq!(at, k * MS);
            now = at;
            assert_eq!(p.release_at(now), None);
        }
    }

    /// A sender idle past its departure time gets half a segment's time as credit:
    /// the next release comes 0.5 ms after the send, not 1 ms; a long idle period
    /// gives no more than that half.
    #[test]
    fn idle_credit_is_at_most_half_a_slot() {
        let mut p = past_the_first_ten();
        p.on_send(0, 1448, 1_448_000);
        // Departure time 1 ms; the sender comes back at 10 ms.
        p.on_send(10 * MS, 1448, 1_448_000);
        assert_eq!(p.release_at(10 * MS), Some(10 * MS + MS / 2));
        // Back at 10.7 ms: 0.2 ms of credit.
        p.on_send(10 * MS + 7 * MS / 10, 1448, 1_448_000);
        assert_eq!(
            p.release_at(10 * MS),
            Some(10 * MS + 7 * MS / 10 + 8 * MS / 10)
        );
    }

    /// Rate 0 (the congestion control has no rate yet) paces nothing.
    #[test]
    fn zero_rate_paces_nothing() {
        let mut p = past_the_first_ten();
        p.on_send(0, 1448, 0);
        assert_eq!(p.release_at(0), None);
    }
}
