//! HyStart++ (RFC 9406): leaving the initial slow start on a rise of the RTT, before
//! the queue it builds overflows, shared by the algorithms ([`Reno`](super::Reno) and
//! [`Cubic`](super::Cubic) each hold one [`HyStart`]) and used when
//! [`Config::hystart`](crate::Config::hystart) is set.
//!
//! RFC 9406 §4.2, as modelled here:
//!
//! - A *round* starts with windowEnd = SND.NXT and ends with the first ACK that
//!   acknowledges everything up to windowEnd (snd.una ≥ windowEnd). At each round start
//!   lastRoundMinRTT = currentRoundMinRTT, currentRoundMinRTT = ∞, rttSampleCount = 0.
//! - Every ACK of new data with an RTT sample (the endpoint's RFC 6298 sample: the
//!   timestamp echo, or the timed segment) updates currentRoundMinRTT and counts.
//! - In slow start, once rttSampleCount ≥ N_RTT_SAMPLE (8) and both minima are known:
//!   RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms); if currentRoundMinRTT ≥
//!   lastRoundMinRTT + RttThresh, enter Conservative Slow Start (CSS) with
//!   cssBaselineMinRtt = currentRoundMinRTT.
//! - In CSS the slow-start increment is divided by CSS_GROWTH_DIVISOR (4); if, with
//!   8 samples, currentRoundMinRTT < cssBaselineMinRtt, the rise was spurious: back
//!   to slow start. After CSS_ROUNDS (5) round starts in CSS (the round CSS began in
//!   counts as the first), congestion avoidance: ssthresh = cwnd.
//! - Only the initial slow start (ssthresh still "arbitrarily high", §4.3); a loss,
//!   an ECN-Echo or a timeout sets ssthresh and ends HyStart++ for the connection.
//!
//! The slow-start increment itself is the endpoint's (RFC 3465's L = 2 with byte
//! counting, one SMSS per ACK without), not RFC 9406's L = 8 for a non-paced sender,
//! so that `hystart = true` changes nothing before the RTT rises.

use super::{slow_start, CcContext};
use crate::endpoint::INITIAL_SSTHRESH;

/// RTT samples a round needs before its minimum is compared (RFC 9406 §4.3).
pub const N_RTT_SAMPLE: u32 = 8;
/// Lower bound of RttThresh, ns (4 ms).
pub const MIN_RTT_THRESH_NS: i64 = 4_000_000;
/// Upper bound of RttThresh, ns (16 ms).
pub const MAX_RTT_THRESH_NS: i64 = 16_000_000;
/// RttThresh = lastRoundMinRTT / MIN_RTT_DIVISOR, clamped.
pub const MIN_RTT_DIVISOR: i64 = 8;
/// CSS grows cwnd this many times slower than slow start.
pub const CSS_GROWTH_DIVISOR: u32 = 4;
/// Rounds of CSS before congestion avoidance.
pub const CSS_ROUNDS: u32 = 5;

/// Where a [`HyStart`] is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HyStartPhase {
    /// Standard slow start (RFC 5681), watching the RTT.
    #[default]
    SlowStart,
    /// Conservative Slow Start; `rounds`: round starts seen in it.
    Css {
        /// Round starts since CSS began.
        rounds: u32,
    },
    /// Slow start is over (HyStart++ set ssthresh = cwnd, or a congestion event set
    /// it): nothing more to do.
    Done,
}

/// The HyStart++ state of one sender (RFC 9406 §4.2's variables; `None` is ∞).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HyStart {
    phase: HyStartPhase,
    window_end: Option<u32>,
    last_round_min_rtt: Option<i64>,
    current_round_min_rtt: Option<i64>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<i64>,
    /// Rounds started so far (for tests and traces).
    rounds: u32,
    /// Times CSS was entered.
    css_entries: u32,
}

/// a ≥ b in sequence space (RFC 793 §3.3).
fn seq_ge(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

impl HyStart {
    /// Where it is.
    pub fn phase(&self) -> HyStartPhase {
        self.phase
    }

    /// True in Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        matches!(self.phase, HyStartPhase::Css { .. })
    }

    /// Rounds started so far.
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// Times CSS was entered (more than once when an RTT rise proved spurious).
    pub fn css_entries(&self) -> u32 {
        self.css_entries
    }

    /// The minimum RTT of the last complete round, ns.
    pub fn last_round_min_rtt_ns(&self) -> Option<i64> {
        self.last_round_min_rtt
    }

    /// True while HyStart++ applies: enabled, in the initial slow start.
    fn active(&self, ctx: &CcContext) -> bool {
        ctx.hystart && ctx.ssthresh == INITIAL_SSTHRESH && self.phase != HyStartPhase::Done
    }

    /// An ACK of new data with the RTT sample it gave, if any (the congestion
    /// control's `pkts_acked`): round bookkeeping, the RTT filter and the
    /// transitions of RFC 9406 §4.2. Returns the ssthresh that ends slow start after
    /// CSS_ROUNDS rounds of CSS (the cwnd now), else `None`.
    pub fn on_ack(&mut self, ctx: &CcContext, rtt_ns: Option<i64>) -> Option<u32> {
        if !self.active(ctx) {
            return None;
        }
        if self.window_end.is_none_or(|w| seq_ge(ctx.snd_una, w)) {
            // A round starts.
            self.window_end = Some(ctx.snd_nxt);
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            self.rounds += 1;
            if let HyStartPhase::Css { rounds } = &mut self.phase {
                *rounds += 1;
                if *rounds >= CSS_ROUNDS {
                    self.phase = HyStartPhase::Done;
                    return Some(ctx.cwnd);
                }
            }
        }
        let r = rtt_ns?;
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(r, |m| m.min(r)));
        self.rtt_sample_count += 1;
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return None;
        }
        let current = self.current_round_min_rtt.expect("a sample was taken");
        match self.phase {
            HyStartPhase::SlowStart => {
                if let Some(last) = self.last_round_min_rtt {
                    let thresh =
                        (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_NS, MAX_RTT_THRESH_NS);
                    if current >= last + thresh {
                        self.css_baseline_min_rtt = Some(current);
                        self.phase = HyStartPhase::Css { rounds: 0 };
                        self.css_entries += 1;
                    }
                }
            }
            HyStartPhase::Css { .. } => {
                if self.css_baseline_min_rtt.is_some_and(|b| current < b) {
                    // The RTT rise was spurious: back to slow start.
                    self.css_baseline_min_rtt = None;
                    self.phase = HyStartPhase::SlowStart;
                }
            }
            HyStartPhase::Done => {}
        }
        None
    }

    /// The slow-start cwnd after an ACK for `acked` bytes: RFC 5681's ([`slow_start`]),
    /// its increment divided by CSS_GROWTH_DIVISOR in CSS.
    pub fn slow_start(&self, ctx: &CcContext, acked: u32) -> u32 {
        let full = slow_start(ctx, acked);
        if self.in_css() && self.active(ctx) {
            ctx.cwnd + (full - ctx.cwnd) / CSS_GROWTH_DIVISOR
        } else {
            full
        }
    }

    /// A congestion event set ssthresh: slow start is over for good (§4.3).
    pub fn end(&mut self) {
        self.phase = HyStartPhase::Done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn ctx(cwnd: u32, snd_una: u32, snd_nxt: u32) -> CcContext {
        CcContext {
            now_ns: 0,
            smss: 1000,
            cwnd,
            ssthresh: INITIAL_SSTHRESH,
            flight_size: 0,
            srtt_ns: 0,
            byte_counting: true,
            hystart: true,
            hystart_linux: false,
            snd_una,
            snd_nxt,
        }
    }

    /// Feeds `n` ACKs with RTT `rtt` ms, snd.una from `una` on, SND.NXT `nxt`: the
    /// first starts a round when `una` reaches the last round's windowEnd.
    fn round(h: &mut HyStart, una: u32, nxt: u32, n: u32, rtt: i64) -> Option<u32> {
        let mut out = None;
        for i in 0..n {
            out = out.or(h.on_ack(&ctx(10_000, una + i, nxt), Some(rtt * MS)));
        }
        out
    }

    #[test]
    fn rtt_rise_enters_css_then_congestion_avoidance_after_five_rounds() {
        let mut h = HyStart::default();
        // Round 1 starts with the first ACK; windowEnd = 100_000.
        assert_eq!(h.on_ack(&ctx(10_000, 0, 100_000), Some(40 * MS)), None);
        round(&mut h, 0, 100_000, 9, 40);
        assert_eq!(h.phase(), HyStartPhase::SlowStart);
        // Round 2: min 44 ms < 40 + max(40/8, 4) = 45: stay.
        round(&mut h, 100_000, 200_000, 10, 44);
        assert_eq!(h.phase(), HyStartPhase::SlowStart);
        // Round 3: min 50 ≥ 44 + 5.5: CSS, once 8 samples are in.
        let mut c = ctx(10_000, 200_000, 300_000);
        for i in 0..8 {
            assert_eq!(h.phase(), HyStartPhase::SlowStart, "sample {i}");
            c.snd_una = 200_000 + i;
            h.on_ack(&c, Some(50 * MS));
        }
        assert_eq!(h.phase(), HyStartPhase::Css { rounds: 0 });
        // CSS growth: a quarter of slow start's.
        assert_eq!(h.slow_start(&c, 2000), 10_500);
        // Four more round starts in CSS, then the fifth sets ssthresh = cwnd.
        for k in 0..4 {
            assert_eq!(
                round(&mut h, 300_000 + k * 100_000, 400_000 + k * 100_000, 10, 52),
                None
            );
        }
        assert_eq!(h.phase(), HyStartPhase::Css { rounds: 4 });
        assert_eq!(
            h.on_ack(&ctx(12_345, 700_000, 800_000), Some(52 * MS)),
            Some(12_345)
        );
        assert_eq!(h.phase(), HyStartPhase::Done);
        assert_eq!(h.slow_start(&c, 2000), 12_000);
    }

    #[test]
    fn a_lower_rtt_in_css_resumes_slow_start() {
        let mut h = HyStart::default();
        round(&mut h, 0, 100_000, 10, 100);
        // 100 ms: RttThresh = 12.5 ms.
        round(&mut h, 100_000, 200_000, 10, 113);
        assert!(h.in_css());
        // Next round's minimum below the baseline (113): slow start again.
        round(&mut h, 200_000, 300_000, 10, 105);
        assert_eq!(h.phase(), HyStartPhase::SlowStart);
        assert_eq!(h.css_entries(), 1);
    }

    #[test]
    fn rtt_thresh_is_clamped_and_needs_eight_samples() {
        // 200 ms / 8 = 25 ms, clamped to 16: a 17 ms rise triggers.
        let mut h = HyStart::default();
        round(&mut h, 0, 100_000, 10, 200);
        round(&mut h, 100_000, 200_000, 10, 217);
        assert!(h.in_css());
        // 10 ms / 8 = 1.25 ms, clamped to 4: a 3 ms rise does not.
        let mut h = HyStart::default();
        round(&mut h, 0, 100_000, 10, 10);
        round(&mut h, 100_000, 200_000, 10, 13);
        assert!(!h.in_css());
        // Seven samples are not enough.
        let mut h = HyStart::default();
        round(&mut h, 0, 100_000, 10, 40);
        round(&mut h, 100_000, 200_000, 7, 80);
        assert!(!h.in_css());
    }

    #[test]
    fn inactive_without_the_option_or_after_slow_start() {
        let mut h = HyStart::default();
        let mut c = ctx(10_000, 0, 100_000);
        c.hystart = false;
        assert_eq!(h.on_ack(&c, Some(40 * MS)), None);
        assert_eq!(h.rounds(), 0);
        assert_eq!(h.slow_start(&c, 2000), 12_000);
        c.hystart = true;
        c.ssthresh = 50_000;
        assert_eq!(h.on_ack(&c, Some(40 * MS)), None);
        assert_eq!(h.rounds(), 0);
        c.ssthresh = INITIAL_SSTHRESH;
        h.end();
        assert_eq!(h.on_ack(&c, Some(40 * MS)), None);
        assert_eq!(h.rounds(), 0);
    }
}
