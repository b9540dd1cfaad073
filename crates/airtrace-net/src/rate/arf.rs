//! Rate controllers that step through the ladder on runs of outcomes.
//!
//! - **ARF**, Auto Rate Fallback (Kamerman & Monteban, "WaveLAN-II: a high-performance
//!   wireless LAN for the unlicensed band", Bell Labs Technical Journal, 1997): one rate
//!   down after 2 failures in a row, one up after 10 successes in a row; the first
//!   frame after a step up is a probe, and its failure steps straight back down.
//! - **AARF**, Adaptive ARF (Lacage, Manshaei & Turletti, "IEEE 802.11 rate adaptation:
//!   a practical approach", MSWiM 2004, §4): ARF whose success threshold doubles (up
//!   to 50) each time a probe fails, and returns to 10 when the rate falls after two
//!   failures; on a channel where the higher rate keeps failing it probes ever less.
//! - **MIMD**, the multiplicative-increase, multiplicative-decrease prober Kuang, Xiao
//!   & Williamson blame for the thrashing they saw at 100 m: every step of the
//!   802.11b ladder is about a doubling (or halving), and the prober takes one up after
//!   a single success and one down after a single failure, so on a channel where one
//!   rate works and the next fails it changes rate on almost every frame. (The study
//!   names the behaviour, not the card's code; this is its plainest reading.)

use super::RateAlgorithm;

/// ARF's and AARF's success threshold, and AARF's floor.
const ARF_UP_AFTER: u32 = 10;
/// AARF's ceiling on the success threshold.
const AARF_MAX_UP_AFTER: u32 = 50;
/// ARF's failures in a row before falling.
const ARF_DOWN_AFTER: u32 = 2;

/// One neighbour's ARF, AARF or MIMD state.
#[derive(Debug, Clone)]
pub(super) struct Arf {
    algorithm: RateAlgorithm,
    /// The index of the fastest rate allowed.
    top: usize,
    level: usize,
    successes: u32,
    failures: u32,
    /// The frame after a step up has not been answered yet.
    probing: bool,
    /// Successes in a row that take the rate up (AARF changes it).
    up_after: u32,
}

impl Arf {
    /// `algorithm` (not Minstrel) starting at rate `top`, the fastest allowed.
    pub(super) fn new(algorithm: RateAlgorithm, top: usize) -> Self {
        let up_after = match algorithm {
            RateAlgorithm::Mimd => 1,
            _ => ARF_UP_AFTER,
        };
        Arf {
            algorithm,
            top,
            level: top,
            successes: 0,
            failures: 0,
            probing: false,
            up_after,
        }
    }

    /// The index of the next attempt's rate.
    pub(super) fn level(&self) -> usize {
        self.level
    }

    /// Takes in an attempt's outcome.
    pub(super) fn outcome(&mut self, acked: bool) {
        if acked {
            self.on_success();
        } else {
            self.on_failure();
        }
    }

    fn on_success(&mut self) {
        self.failures = 0;
        self.probing = false;
        self.successes += 1;
        if self.successes >= self.up_after && self.level < self.top {
            self.successes = 0;
            self.level += 1;
            self.probing = self.algorithm != RateAlgorithm::Mimd;
        }
    }

    fn on_failure(&mut self) {
        self.successes = 0;
        self.failures += 1;
        let probe_failed = self.probing;
        self.probing = false;
        let down_after = match self.algorithm {
            RateAlgorithm::Mimd => 1,
            _ => ARF_DOWN_AFTER,
        };
        if !(probe_failed || self.failures >= down_after) || self.level == 0 {
            return;
        }
        if self.algorithm == RateAlgorithm::Aarf {
            self.up_after = if probe_failed {
                (self.up_after * 2).min(AARF_MAX_UP_AFTER)
            } else {
                ARF_UP_AFTER
            };
        }
        self.failures = 0;
        self.level -= 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::rate::test_util::{changes_where_eleven_fails, control, run, M};
    use crate::rate::{RateAlgorithm, RateConfig, RateControl};

    #[test]
    fn arf_falls_after_two_failures_and_climbs_after_ten_successes() {
        let mut c = control(RateAlgorithm::Arf);
        assert_eq!(c.rate_bps(), 11 * M);
        // One failure is forgiven; two in a row fall a step; two more, another.
        assert_eq!(run(&mut c, "-+-"), Vec::<u64>::new());
        assert_eq!(run(&mut c, "-"), vec![55]);
        assert_eq!(run(&mut c, "--"), vec![20]);
        assert_eq!(run(&mut c, "------"), vec![10]); // and no lower than 1 Mbit/s
                                                     // Nine successes are not enough, the tenth climbs.
        assert_eq!(run(&mut c, "+++++++++"), Vec::<u64>::new());
        assert_eq!(run(&mut c, "+"), vec![20]);
    }

    #[test]
    fn arf_falls_back_at_once_when_its_probe_fails() {
        let mut c = control(RateAlgorithm::Arf);
        run(&mut c, "--");
        assert_eq!(c.rate_bps(), 5_500_000);
        // Ten successes probe 11 Mbit/s; the probe fails: back to 5.5 at once, and the
        // next probe comes after ten more successes.
        assert_eq!(run(&mut c, "++++++++++-"), vec![110, 55]);
        assert_eq!(run(&mut c, "++++++++++-"), vec![110, 55]);
    }

    #[test]
    fn aarf_doubles_its_patience_after_each_failed_probe_and_resets_on_a_real_fall() {
        let mut c = control(RateAlgorithm::Aarf);
        run(&mut c, "--");
        assert_eq!(run(&mut c, &format!("{}-", "+".repeat(10))), vec![110, 55]);
        // Now 20 successes before the next probe, then 40, then at most 50.
        assert_eq!(run(&mut c, &"+".repeat(19)), Vec::<u64>::new());
        assert_eq!(run(&mut c, "+-"), vec![110, 55]);
        assert_eq!(run(&mut c, &"+".repeat(39)), Vec::<u64>::new());
        assert_eq!(run(&mut c, "+-"), vec![110, 55]);
        assert_eq!(run(&mut c, &"+".repeat(49)), Vec::<u64>::new());
        assert_eq!(run(&mut c, "+-"), vec![110, 55]);
        assert_eq!(run(&mut c, &"+".repeat(49)), Vec::<u64>::new());
        assert_eq!(run(&mut c, "+"), vec![110]);
        // Two failures at 11 Mbit/s (not a probe) fall and reset the threshold to 10.
        assert_eq!(run(&mut c, "+--"), vec![55]);
        assert_eq!(run(&mut c, &"+".repeat(10)), vec![110]);
    }

    /// Where 11 Mbit/s fails and 5.5 works, MIMD changes rate on every frame; over the
    /// same 40 frames ARF changes 7 times and AARF, probing
    /// ever less often, 5.
    #[test]
    fn mimd_thrashes_where_arf_and_aarf_settle() {
        let changes = |algorithm| changes_where_eleven_fails(algorithm, 40);
        assert_eq!(changes(RateAlgorithm::Mimd), 40);
        assert_eq!(changes(RateAlgorithm::Arf), 7);
        assert_eq!(changes(RateAlgorithm::Aarf), 5);
    }

    #[test]
    fn a_lower_ceiling_caps_the_climb() {
        let mut c = RateControl::new(RateConfig {
            algorithm: RateAlgorithm::Mimd,
            max_rate_bps: 2 * M,
        });
        assert_eq!(c.rate_bps(), 2 * M);
        assert_eq!(run(&mut c, "++-+"), vec![10, 20]);
    }
}
