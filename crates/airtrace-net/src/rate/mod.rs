//! Rate adaptation: which of the 802.11b rates (1, 2, 5.5, 11 Mbit/s, IEEE 802.11-2020
//! §16.1 and §16.3.1) a station sends its data frames to one neighbour at, from the
//! fate of its earlier frames. One [`RateControl`] per neighbour; the MAC asks it for
//! the rate of each attempt ([`RateControl::rate_bps`]), tells it of every
//! acknowledged attempt ([`RateControl::on_success`]) and every missing ACK
//! ([`RateControl::on_failure`]), and hears back when the rate it sends new frames at
//! ([`RateControl::current_bps`]) changes.
//!
//! - [`arf`]: ARF, AARF and the MIMD prober, which step one rate up or down on runs of
//!   successes and failures.
//! - [`minstrel`]: a Minstrel-like sampler, which keeps each rate's delivery ratio and
//!   sends at the one with the best expected throughput, sampling the others.
//!
//! "Fixed" is no controller: the MAC sends at its configured rate.

mod arf;
mod minstrel;

/// The 802.11b DSSS/CCK rates, bit/s, slowest first.
pub const RATES_80211B: [u64; 4] = [1_000_000, 2_000_000, 5_500_000, 11_000_000];

/// Which controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateAlgorithm {
    /// Auto Rate Fallback.
    Arf,
    /// Adaptive ARF.
    Aarf,
    /// One step up per success, one down per failure.
    Mimd,
    /// Delivery ratios per rate, the best expected throughput, sampling.
    Minstrel,
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
    /// The index in [`RATES_80211B`] of the fastest rate allowed.
    fn top(&self) -> usize {
        RATES_80211B
            .iter()
            .rposition(|&r| r <= self.max_rate_bps)
            .unwrap_or(0)
    }
}

#[derive(Debug, Clone)]
enum Inner {
    Arf(arf::Arf),
    Minstrel(minstrel::Minstrel),
}

/// One neighbour's rate state (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct RateControl(Inner);

impl RateControl {
    /// A controller starting at the fastest rate allowed.
    pub fn new(cfg: RateConfig) -> Self {
        RateControl(match cfg.algorithm {
            RateAlgorithm::Minstrel => Inner::Minstrel(minstrel::Minstrel::new(cfg.top())),
            a => Inner::Arf(arf::Arf::new(a, cfg.top())),
        })
    }

    /// The rate of the next attempt, bit/s.
    pub fn rate_bps(&self) -> u64 {
        RATES_80211B[match &self.0 {
            Inner::Arf(c) => c.level(),
            Inner::Minstrel(c) => c.level(),
        }]
    }

    /// The rate the controller sends a new frame at, bit/s: for ARF, AARF and MIMD the
    /// rate of every attempt; for Minstrel its best rate (sample frames and retries
    /// go at others without changing it).
    pub fn current_bps(&self) -> u64 {
        RATES_80211B[match &self.0 {
            Inner::Arf(c) => c.level(),
            Inner::Minstrel(c) => c.best(),
        }]
    }

    /// An attempt was acknowledged. Returns the new [current](Self::current_bps) rate
    /// if it changed.
    pub fn on_success(&mut self) -> Option<u64> {
        self.outcome(true)
    }

    /// An attempt's ACK did not come. Returns the new [current](Self::current_bps)
    /// rate if it changed.
    pub fn on_failure(&mut self) -> Option<u64> {
        self.outcome(false)
    }

    fn outcome(&mut self, acked: bool) -> Option<u64> {
        let before = self.current_bps();
        match &mut self.0 {
            Inner::Arf(c) => c.outcome(acked),
            Inner::Minstrel(c) => c.outcome(acked),
        }
        let after = self.current_bps();
        (after != before).then_some(after)
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    pub const M: u64 = 1_000_000;

    pub fn control(algorithm: RateAlgorithm) -> RateControl {
        RateControl::new(RateConfig {
            algorithm,
            max_rate_bps: 11 * M,
        })
    }

    /// Feeds `outcomes` ('+' acknowledged, '-' not) and lists the rates (Mbit/s × 10)
    /// each change went to.
    pub fn run(c: &mut RateControl, outcomes: &str) -> Vec<u64> {
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

    /// Rate changes over `frames` attempts on a channel where 11 Mbit/s always fails
    /// and the other rates always get through.
    pub fn changes_where_eleven_fails(algorithm: RateAlgorithm, frames: usize) -> usize {
        let mut c = control(algorithm);
        let mut n = 0;
        for _ in 0..frames {
            let change = if c.rate_bps() == 11 * M {
                c.on_failure()
            } else {
                c.on_success()
            };
            n += usize::from(change.is_some());
        }
        n
    }
}
