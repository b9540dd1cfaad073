//! A Minstrel-like sampler (after Minstrel, D. Smithies and F. Fietkau's rate control of
//! Linux mac80211, `rc80211_minstrel.c`): instead of reacting to runs of outcomes it
//! keeps, for every rate, the share of attempts that got through, and sends at the rate
//! whose expected throughput is best.
//!
//! - **Statistics.** Every [`UPDATE_EVERY`] outcomes each rate tried since the last
//!   update folds its delivery ratio into an exponentially weighted average (new
//!   samples weigh [`EWMA_NEW`], as Minstrel's 25 %). A rate's expected throughput is
//!   that ratio over the air time of a 1500-byte frame at it, with the preamble, DIFS,
//!   mean backoff, SIFS and ACK of 802.11b ([`FIXED_US`]); ratios under 10 % count as
//!   none, as in Minstrel.
//! - **Sampling.** Every [`SAMPLE_EVERY`]-th frame samples another rate, each in turn
//!   (Minstrel draws them at random, 10 % of frames; a fixed turn needs no random
//!   stream). A rate faster than the best is sampled on the frame's first attempt; a
//!   slower one only on its second, if the first (at the best rate) failed, so that
//!   sampling a slow rate costs no air time while the best rate works; a slower rate
//!   left untried over [`MAX_SAMPLE_SKIPPED`] updates is sampled first (Minstrel's
//!   `sample_skipped`, `rc80211_minstrel.c`).
//! - **Retry chain.** A frame's first attempt goes at the chosen rate, the second at the
//!   most reliable rate (or a deferred sample rate), the rest at the lowest (Minstrel's
//!   chain: best throughput, second best, best probability, lowest; the second best is
//!   left out).
//!
//! The controller sees attempts, not frames: the attempt after a frame given up at
//! the retry limit counts as one more retry (at the lowest rate) until one succeeds.

use super::RATES_80211B;

/// Outcomes between two updates of the statistics.
const UPDATE_EVERY: u32 = 10;
/// Weight of the new delivery ratio in the average.
const EWMA_NEW: f64 = 0.25;
/// Every this many frames, one goes at a sample rate.
const SAMPLE_EVERY: u32 = 10;
/// Updates a slower rate may go untried before it is sampled on a first attempt.
const MAX_SAMPLE_SKIPPED: u32 = 20;
/// Per-frame time besides the data bits at 802.11b (long preamble 192 µs, DIFS 50 µs,
/// mean backoff 15.5 slots of 20 µs, SIFS 10 µs, ACK 304 µs), µs.
const FIXED_US: f64 = 192.0 + 50.0 + 310.0 + 10.0 + 304.0;

/// One neighbour's Minstrel-like state.
#[derive(Debug, Clone)]
pub(super) struct Minstrel {
    /// The index of the fastest rate allowed.
    top: usize,
    /// Each rate's averaged delivery ratio (`None`: never tried).
    ratio: [Option<f64>; 4],
    /// Attempts and successes since the last update.
    attempts: [u32; 4],
    successes: [u32; 4],
    outcomes: u32,
    /// Frames delivered (for the sampling turn).
    frames: u32,
    /// The next rate to sample.
    sample: usize,
    /// A slower rate to sample on the current frame's second attempt, if its first fails.
    deferred: Option<usize>,
    /// Per rate, the updates since it was last tried.
    sample_skipped: [u32; 4],
    /// The rate of the best expected throughput, and the most reliable one.
    best: usize,
    reliable: usize,
    /// The rate of the next attempt, and the failed attempts of the current frame.
    level: usize,
    retries: u32,
}

impl Minstrel {
    /// A sampler starting at rate `top`, the fastest allowed.
    pub(super) fn new(top: usize) -> Self {
        Minstrel {
            top,
            ratio: [None; 4],
            attempts: [0; 4],
            successes: [0; 4],
            outcomes: 0,
            frames: 0,
            sample: 0,
            deferred: None,
            sample_skipped: [0; 4],
            best: top,
            reliable: top,
            level: top,
            retries: 0,
        }
    }

    /// The index of the next attempt's rate.
    pub(super) fn level(&self) -> usize {
        self.level
    }

    /// The index of the rate of the best expected throughput.
    pub(super) fn best(&self) -> usize {
        self.best
    }

    /// Takes in the outcome of an attempt at [`Self::level`] and picks the next rate.
    pub(super) fn outcome(&mut self, acked: bool) {
        self.attempts[self.level] += 1;
        self.successes[self.level] += u32::from(acked);
        self.outcomes += 1;
        if self.outcomes >= UPDATE_EVERY {
            self.update();
        }
        if acked {
            self.retries = 0;
            self.frames += 1;
            self.deferred = None;
            self.level = if self.frames % SAMPLE_EVERY == 0 {
                self.sample_or_defer()
            } else {
                self.best
            };
        } else {
            self.retries += 1;
            self.level = match (self.retries, self.deferred.take()) {
                (1, Some(sample)) => sample,
                (1, None) => self.reliable,
                _ => 0,
            };
        }
    }

    /// The first attempt's rate of a sampling frame: the sample rate when it is faster
    /// than the best (or a slower one untried over [`MAX_SAMPLE_SKIPPED`] updates), else
    /// the best, with the sample kept for the second attempt.
    fn sample_or_defer(&mut self) -> usize {
        let sample = self.next_sample();
        if sample > self.best || self.sample_skipped[sample] >= MAX_SAMPLE_SKIPPED {
            sample
        } else {
            self.deferred = Some(sample);
            self.best
        }
    }

    /// The next rate in the sampling turn other than the best.
    fn next_sample(&mut self) -> usize {
        for _ in 0..=self.top {
            let r = self.sample;
            self.sample = if r >= self.top { 0 } else { r + 1 };
            if r != self.best {
                return r;
            }
        }
        self.best
    }

    /// Folds the outcomes since the last update into the averages; picks the best and
    /// the most reliable rate.
    fn update(&mut self) {
        for r in 0..=self.top {
            self.sample_skipped[r] = if self.attempts[r] > 0 {
                0
            } else {
                self.sample_skipped[r] + 1
            };
            if self.attempts[r] > 0 {
                let now = f64::from(self.successes[r]) / f64::from(self.attempts[r]);
                self.ratio[r] = Some(match self.ratio[r] {
                    Some(old) => (1.0 - EWMA_NEW) * old + EWMA_NEW * now,
                    None => now,
                });
            }
        }
        self.attempts = [0; 4];
        self.successes = [0; 4];
        self.outcomes = 0;
        let throughput = |r: usize| match self.ratio[r] {
            Some(p) if p >= 0.1 => {
                let mbps = RATES_80211B[r] as f64 / 1e6;
                p / (FIXED_US + 12_000.0 / mbps)
            }
            _ => 0.0,
        };
        // Ties go to the faster rate (`>=` while counting up).
        let (mut best, mut reliable) = (0, 0);
        for r in 0..=self.top {
            if throughput(r) >= throughput(best) {
                best = r;
            }
            if self.ratio[r].unwrap_or(0.0) >= self.ratio[reliable].unwrap_or(0.0) {
                reliable = r;
            }
        }
        self.best = best;
        self.reliable = reliable;
    }
}

#[cfg(test)]
mod tests {
    use crate::rate::test_util::{changes_where_eleven_fails, control, M};
    use crate::rate::RateAlgorithm;

    /// A first attempt at 11 Mbit/s fails: the retry goes at the most reliable rate
    /// (still 11, nothing is known yet), the next at 1 Mbit/s; the frame gets through
    /// and the next frame goes at the best rate again. None of it changes the best
    /// rate, so none is a rate change.
    #[test]
    fn a_failed_frame_retries_at_the_most_reliable_rate_then_the_lowest() {
        let mut c = control(RateAlgorithm::Minstrel);
        let mut rates = vec![c.rate_bps() / 100_000];
        for ok in [false, false, true] {
            let change = if ok { c.on_success() } else { c.on_failure() };
            assert_eq!(change, None);
            rates.push(c.rate_bps() / 100_000);
        }
        assert_eq!(rates, vec![110, 110, 10, 110]);
        assert_eq!(c.current_bps(), 11 * M);
    }

    /// Where 11 Mbit/s always fails and 5.5 always works, after the first updates the
    /// sampler sends at 5.5 Mbit/s, trying the others every tenth frame; its best rate
    /// changes a few times at the start (11, 1, 5.5), where MIMD changes rate on every
    /// frame.
    #[test]
    fn minstrel_settles_on_the_best_rate_and_samples_the_others() {
        let mut c = control(RateAlgorithm::Minstrel);
        let at = attempts_per_rate(&mut c, 1000, |rate, _| rate != 11 * M);
        assert!(at[2] > 850, "attempts per rate {at:?}");
        assert!(
            at[0] > 0 && at[1] > 0 && at[3] > 0,
            "every rate sampled: {at:?}"
        );
        let changes = changes_where_eleven_fails(RateAlgorithm::Minstrel, 1000);
        assert!(changes <= 3, "{changes}");
        assert_eq!(changes_where_eleven_fails(RateAlgorithm::Mimd, 1000), 1000);
    }

    /// While the best rate (5.5 Mbit/s) gets every frame through, a sampling frame for
    /// a slower rate goes at the best rate and keeps the sample for a retry that never
    /// comes; only a rate untried over [`super::MAX_SAMPLE_SKIPPED`] updates (200
    /// attempts) is sampled first. A
    /// faster rate (11) is still sampled first. Before, every tenth frame went at the
    /// next rate in turn, slow ones included: 1 and 2 Mbit/s took 65 of 1000 attempts (10 now).
    #[test]
    fn slower_rates_are_sampled_on_the_retry_not_the_first_attempt() {
        let mut c = control(RateAlgorithm::Minstrel);
        attempts_per_rate(&mut c, 200, |rate, _| rate != 11 * M);
        let at = attempts_per_rate(&mut c, 1000, |rate, _| rate != 11 * M);
        assert!(at[0] + at[1] <= 12, "attempts per rate {at:?}");
        assert!(at[0] > 0 && at[1] > 0, "still sampled now and then: {at:?}");
        assert!(at[3] >= 25, "11 Mbit/s sampled first: {at:?}");
    }

    /// A deferred sample rate takes the second attempt when the first, at the best rate,
    /// fails; the third goes at the lowest rate as before.
    #[test]
    fn a_failed_first_attempt_tries_the_deferred_sample() {
        let mut c = control(RateAlgorithm::Minstrel);
        attempts_per_rate(&mut c, 200, |rate, _| rate != 11 * M);
        // Find a sampling frame whose sample was deferred: the frame's first attempt goes
        // at the best rate (5.5), and its failure sends the retry at a slower rate other
        // than the most reliable one or the lowest.
        let mut seen = Vec::new();
        for _ in 0..200 {
            let first = c.rate_bps();
            c.on_failure();
            let second = c.rate_bps();
            c.on_failure();
            let third = c.rate_bps();
            for _ in 0..12 {
                let ok = c.rate_bps() != 11 * M;
                if ok {
                    c.on_success();
                } else {
                    c.on_failure();
                }
            }
            seen.push((first / 100_000, second / 100_000, third / 100_000));
        }
        assert!(seen.contains(&(55, 20, 10)), "{seen:?}");
        assert!(seen.iter().all(|&(_, _, third)| third == 10), "{seen:?}");
    }

    /// The best rate is the best expected throughput, not the best delivery ratio:
    /// 11 Mbit/s getting 80 % through (about 4.9 Mbit/s of 1500-byte frames) beats
    /// 5.5 Mbit/s getting all through (3.9 Mbit/s).
    #[test]
    fn a_lossy_fast_rate_beats_a_clean_slow_one() {
        let mut c = control(RateAlgorithm::Minstrel);
        attempts_per_rate(&mut c, 1000, |rate, i| rate != 11 * M || i % 5 != 0);
        let at = attempts_per_rate(&mut c, 500, |rate, i| rate != 11 * M || i % 5 != 0);
        assert!(at[3] > 350, "attempts per rate {at:?}");
    }

    /// Runs `n` attempts, each acknowledged when `ok(rate, attempt number at that
    /// rate)`; returns the attempts per rate, slowest first.
    fn attempts_per_rate(
        c: &mut crate::rate::RateControl,
        n: usize,
        ok: impl Fn(u64, usize) -> bool,
    ) -> [usize; 4] {
        let mut at = [0usize; 4];
        for _ in 0..n {
            let rate = c.rate_bps();
            let i = crate::rate::RATES_80211B
                .iter()
                .position(|&r| r == rate)
                .unwrap();
            at[i] += 1;
            if ok(rate, at[i]) {
                c.on_success();
            } else {
                c.on_failure();
            }
        }
        at
    }
}
