//! Rate adaptation: which of the 802.11b rates (1, 2, 5.5, 11 Mbit/s, IEEE 802.11-2020
//! §16.1 and §16.3.1) a station sends its data frames to one neighbour at, from the
//! fate of its earlier frames. One [`RateControl`] per neighbour; the MAC tells it of
//! every acknowledged data frame ([`RateControl::on_success`]) and every missing ACK
//! ([`RateControl::on_failure`]), and it answers with the new rate when it changes.
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
//!
//! "Fixed" is no controller: the MAC sends at its configured rate.

/// The 802.11b DSSS/CCK rates, bit/s, slowest first.
pub const RATES_80211B: [u64; 4] = [1_000_000, 2_000_000, 5_500_000, 11_000_000];

/// ARF's and AARF's success threshold, and AARF's floor.
const ARF_UP_AFTER: u32 = 10;
/// AARF's ceiling on the success threshold.
const AARF_MAX_UP_AFTER: u32 = 50;
/// ARF's failures in a row before falling.
const ARF_DOWN_AFTER: u32 = 2;

/// Which controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateAlgorithm {
    /// Auto Rate Fallback.
    Arf,
    /// Adaptive ARF.
    Aarf,
    /// One step up per success, one down per failure.
    Mimd,
}

/// A controller's settings: the algorithm and the fastest rate it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateConfig {
    /// The algorithm.
    pub algorithm: RateAlgorithm,
    /// The fastest rate allowed (and the one it starts at), bit/s: one of
    /// [`RATES_80211B`], or the highest below it.
    pub max_rate_bps: u64,
}

impl RateConfig {
    fn top(&self) -> usize {
        RATES_80211B
            .iter()
            .rposition(|&r| r <= self.max_rate_bps)
            .unwrap_or(0)
    }
}

/// One neighbour's rate state (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct RateControl {
    cfg: RateConfig,
    level: usize,
    successes: u32,
    failures: u32,
    /// The frame after a step up has not been answered yet.
    probing: bool,
    /// Successes in a row that take the rate up (AARF changes it).
    up_after: u32,
}

impl RateControl {
    /// A controller starting at the fastest rate allowed.
    pub fn new(cfg: RateConfig) -> Self {
        let up_after = match cfg.algorithm {
            RateAlgorithm::Arf | RateAlgorithm::Aarf => ARF_UP_AFTER,
            RateAlgorithm::Mimd => 1,
        };
        RateControl {
            level: cfg.top(),
            cfg,
            successes: 0,
            failures: 0,
            probing: false,
            up_after,
        }
    }

    /// The rate of the next data frame, bit/s.
    pub fn rate_bps(&self) -> u64 {
        RATES_80211B[self.level]
    }

    /// A data frame was acknowledged. Returns the new rate if it changed.
    pub fn on_success(&mut self) -> Option<u64> {
        self.failures = 0;
        self.probing = false;
        self.successes += 1;
        if self.successes >= self.up_after && self.level < self.cfg.top() {
            self.successes = 0;
            self.level += 1;
            self.probing = self.cfg.algorithm != RateAlgorithm::Mimd;
            return Some(self.rate_bps());
        }
        None
    }

    /// A data frame's ACK did not come. Returns the new rate if it changed.
    pub fn on_failure(&mut self) -> Option<u64> {
        self.successes = 0;
        self.failures += 1;
        let probe_failed = self.probing;
        self.probing = false;
        let down_after = match self.cfg.algorithm {
            RateAlgorithm::Arf | RateAlgorithm::Aarf => ARF_DOWN_AFTER,
            RateAlgorithm::Mimd => 1,
        };
        if !(probe_failed || self.failures >= down_after) || self.level == 0 {
            return None;
        }
        if self.cfg.algorithm == RateAlgorithm::Aarf {
            self.up_after = if probe_failed {
                (self.up_after * 2).min(AARF_MAX_UP_AFTER)
            } else {
                ARF_UP_AFTER
            };
        }
        self.failures = 0;
        self.level -= 1;
        Some(self.rate_bps())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1_000_000;

    fn control(algorithm: RateAlgorithm) -> RateControl {
        RateControl::new(RateConfig {
            algorithm,
            max_rate_bps: 11 * M,
        })
    }

    /// Feeds `outcomes` ('+' acknowledged, '-' not) and lists the rates (Mbit/s × 10)
    /// each change went to.
    fn run(c: &mut RateControl, outcomes: &str) -> Vec<u64> {
        outcomes
            .chars()
            .filter_map(|o| match o {
                '+' => c.on_success(),
                '-' => c.on_failure(),
                _ => None,
            })
            .map(|r| r / 100_000)
            .collect()
    }

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
        let changes = |algorithm| {
            let mut c = control(algorithm);
            let mut n = 0;
            for _ in 0..40 {
                let change = if c.rate_bps() == 11 * M {
                    c.on_failure()
                } else {
                    c.on_success()
                };
                n += usize::from(change.is_some());
            }
            n
        };
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
