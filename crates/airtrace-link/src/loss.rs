//! Loss processes: does the link lose the packet sent at `now_ns`?
//!
//! A [`LossModel`] is configuration (validated, plain data); a [`LossProcess`] is that
//! model running on its own random stream, asked once per packet with
//! [`LossProcess::lose`]. Where to start: [`LossModel`]'s variants, then
//! [`LossProcess::new`].
//!
//! What it is not (yet): SNR-driven loss by frame length (Bachmann), delivery-opportunity
//! traces (Mahimahi), corruption, and the typed loss events the bundle will record.
//!
//! Random draws per packet are fixed for each model (Bernoulli: one; Gilbert-Elliott:
//! two; none for the others), whatever the parameter values, so two runs that differ
//! only in a probability stay aligned packet by packet. The burst schedule draws its
//! lengths and gaps in schedule order, so it depends only on the stream, not on when
//! packets are sent.
//!
//! ```
//! use airtrace_link::loss::{Dist, LossModel, LossProcess};
//! use airtrace_link::rng::Streams;
//!
//! // Rais & Tripathi (1995), model 4: 100 ms bursts once a second, fixed length.
//! let model = LossModel::Bursts {
//!     length: Dist::Fixed(100_000_000),
//!     gap: Dist::Fixed(900_000_000),
//! };
//! let mut loss = LossProcess::new(model, Streams::new(1).stream("link/down/loss"))?;
//! assert!(!loss.lose(899_999_999)); // still in the first good period
//! assert!(loss.lose(900_000_000)); // the first burst starts here
//! assert!(!loss.lose(1_000_000_000)); // and ends here
//! # Ok::<(), airtrace_link::loss::LossConfigError>(())
//! ```

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

/// A duration in nanoseconds: fixed, or drawn uniformly each time it is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist {
    /// Always this many nanoseconds.
    Fixed(i64),
    /// Uniform over the integers `min..=max` nanoseconds.
    Uniform {
        /// Smallest value, in ns.
        min: i64,
        /// Largest value, in ns (inclusive).
        max: i64,
    },
}

impl Dist {
    /// The mean, in ns.
    pub fn mean_ns(&self) -> f64 {
        match *self {
            Dist::Fixed(v) => v as f64,
            Dist::Uniform { min, max } => (min as f64 + max as f64) / 2.0,
        }
    }

    /// Checks that every value the distribution can produce is > 0 ns.
    fn validate(&self, field: &'static str) -> Result<(), LossConfigError> {
        match *self {
            Dist::Fixed(v) => positive(field, v),
            Dist::Uniform { min, max } => {
                if min > max {
                    return Err(LossConfigError::MinAboveMax { field, min, max });
                }
                positive(field, min)
            }
        }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> i64 {
        match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform { min, max } => rng.random_range(min..=max),
        }
    }
}

/// How a link loses packets. Validate with [`LossModel::validate`] (done by
/// [`LossProcess::new`]).
#[derive(Debug, Clone, PartialEq)]
pub enum LossModel {
    /// Nothing is lost.
    None,
    /// Each packet is lost independently with probability `p` (Rais & Tripathi 1995,
    /// model 1, "random losses").
    Bernoulli {
        /// Loss probability, in [0, 1].
        p: f64,
    },
    /// Two-state Markov chain advanced once per packet: Gilbert (1960), "Capacity of a
    /// burst-noise channel", Bell Syst. Tech. J. 39; Elliott (1963), "Estimates of
    /// error rates for codes on burst-noise channels", Bell Syst. Tech. J. 42. Rais &
    /// Tripathi (1995, section 3) describe wireless burst losses with this chain
    /// (their p_1 = `p_good_to_bad`, q_1 = `p_bad_to_good`).
    ///
    /// For each packet: it is lost with the loss probability of the current state,
    /// then the state moves. The chain starts in the good state. The stationary
    /// fraction of time in the bad state is `p_good_to_bad / (p_good_to_bad +
    /// p_bad_to_good)`, and a visit to the bad state lasts `1 / p_bad_to_good` packets
    /// on average.
    GilbertElliott {
        /// Probability of moving from good to bad after a packet, in [0, 1].
        p_good_to_bad: f64,
        /// Probability of moving from bad to good after a packet, in [0, 1].
        p_bad_to_good: f64,
        /// Loss probability in the good state, in [0, 1] (Gilbert's model: 0).
        loss_in_good: f64,
        /// Loss probability in the bad state, in [0, 1].
        loss_in_bad: f64,
    },
    /// Bursts scheduled in time, as in the kernel error model of Rais & Tripathi (1995,
    /// section 3, models 2-6): every packet sent during a burst is lost, every other
    /// packet gets through.
    ///
    /// The schedule starts at `now_ns = 0` with a good period of length `gap`, then a
    /// burst of length `length`, then a new gap, and so on; each length and gap is drawn
    /// afresh. A burst covers `[start, start + length)`. Times before 0 are in the
    /// first good period.
    ///
    /// The paper gives a burst length and an "interval" (e.g. "100 ms burst loss
    /// period at 1 sec intervals"). Here `gap` is the loss-free time between bursts;
    /// for bursts that start exactly once a second use `gap` = 1 s − `length`. For its
    /// uniform models (5 and 6) the paper gives only the means, so the range
    /// (`min`, `max`) is the scenario's choice.
    Bursts {
        /// Length of each burst, in ns (every value > 0).
        length: Dist,
        /// Loss-free time between bursts, in ns (every value > 0).
        gap: Dist,
    },
    /// A recorded loss pattern: the i-th packet is lost if entry `i % len` is true.
    /// The trace **cycles**: after the last entry it starts again from the first (as
    /// Mahimahi replays its traces). Must not be empty.
    Trace(Vec<bool>),
}

impl LossModel {
    /// Checks every parameter; the error names the first field that breaks its rule.
    pub fn validate(&self) -> Result<(), LossConfigError> {
        match self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { p } => probability("bernoulli.p", *p),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                probability("gilbert_elliott.p_good_to_bad", *p_good_to_bad)?;
                probability("gilbert_elliott.p_bad_to_good", *p_bad_to_good)?;
                probability("gilbert_elliott.loss_in_good", *loss_in_good)?;
                probability("gilbert_elliott.loss_in_bad", *loss_in_bad)
            }
            LossModel::Bursts { length, gap } => {
                length.validate("bursts.length")?;
                gap.validate("bursts.gap")
            }
            LossModel::Trace(entries) if entries.is_empty() => Err(LossConfigError::EmptyTrace),
            LossModel::Trace(_) => Ok(()),
        }
    }
}

/// A [`LossModel`] parameter that breaks its rule.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LossConfigError {
    /// A probability outside [0, 1] (or NaN).
    #[error("{field} = {value} is not a probability: it must be in [0, 1]")]
    NotAProbability {
        /// The parameter, e.g. `"gilbert_elliott.loss_in_bad"`.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A uniform distribution whose `min` exceeds its `max`.
    #[error("{field}: min = {min} ns must not exceed max = {max} ns")]
    MinAboveMax {
        /// The parameter, e.g. `"bursts.gap"`.
        field: &'static str,
        /// The `min` given, in ns.
        min: i64,
        /// The `max` given, in ns.
        max: i64,
    },
    /// A duration (or the smallest value of a distribution) that is not > 0.
    #[error("{field} = {value} ns must be > 0")]
    NotPositive {
        /// The parameter, e.g. `"bursts.length"`.
        field: &'static str,
        /// The value given, in ns.
        value: i64,
    },
    /// A loss trace with no entries.
    #[error("trace must have at least one entry")]
    EmptyTrace,
}

fn probability(field: &'static str, value: f64) -> Result<(), LossConfigError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(LossConfigError::NotAProbability { field, value })
    }
}

fn positive(field: &'static str, value: i64) -> Result<(), LossConfigError> {
    if value > 0 {
        Ok(())
    } else {
        Err(LossConfigError::NotPositive { field, value })
    }
}

/// A [`LossModel`] running on its own random stream.
#[derive(Debug, Clone)]
pub struct LossProcess {
    rng: ChaCha8Rng,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_in_good: f64,
        loss_in_bad: f64,
        bad: bool,
    },
    Bursts {
        length: Dist,
        gap: Dist,
        /// The current or next burst is `[burst_start, burst_end)`.
        burst_start: i64,
        burst_end: i64,
        /// The latest `now_ns` seen, to check that time does not run backwards.
        last_now: i64,
    },
    Trace {
        entries: Vec<bool>,
        next: usize,
    },
}

impl LossProcess {
    /// Validates `model` and starts it on `rng` (take it from
    /// [`Streams::stream`](crate::rng::Streams::stream) with a name of its own).
    pub fn new(model: LossModel, mut rng: ChaCha8Rng) -> Result<Self, LossConfigError> {
        model.validate()?;
        let state = match model {
            LossModel::None => State::None,
            LossModel::Bernoulli { p } => State::Bernoulli { p },
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => State::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
                bad: false,
            },
            LossModel::Bursts { length, gap } => {
                let burst_start = gap.sample(&mut rng);
                let burst_end = burst_start.saturating_add(length.sample(&mut rng));
                State::Bursts {
                    length,
                    gap,
                    burst_start,
                    burst_end,
                    last_now: i64::MIN,
                }
            }
            LossModel::Trace(entries) => State::Trace { entries, next: 0 },
        };
        Ok(Self { rng, state })
    }

    /// Decides whether the packet sent at `now_ns` is lost, and advances the process by
    /// one packet.
    ///
    /// `now_ns` is simulated time in the simulator and time since the start of the run
    /// in the emulator; calls must not go back in time (checked in debug builds). Only
    /// [`LossModel::Bursts`] looks at the time.
    pub fn lose(&mut self, now_ns: i64) -> bool {
        let rng = &mut self.rng;
        match &mut self.state {
            State::None => false,
            State::Bernoulli { p } => chance(rng, *p),
            State::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
                bad,
            } => {
                let lost = chance(rng, if *bad { *loss_in_bad } else { *loss_in_good });
                let p_move = if *bad { *p_bad_to_good } else { *p_good_to_bad };
                if chance(rng, p_move) {
                    *bad = !*bad;
                }
                lost
            }
            State::Bursts {
                length,
                gap,
                burst_start,
                burst_end,
                last_now,
            } => {
                debug_assert!(now_ns >= *last_now, "loss process asked about the past");
                *last_now = now_ns;
                // Durations are > 0, so each step moves the window forward; once the
                // window saturates at i64::MAX it stays there.
                while now_ns >= *burst_end && *burst_end != i64::MAX {
                    *burst_start = burst_end.saturating_add(gap.sample(rng));
                    *burst_end = burst_start.saturating_add(length.sample(rng));
                }
                (*burst_start..*burst_end).contains(&now_ns)
            }
            State::Trace { entries, next } => {
                let lost = entries[*next];
                *next = (*next + 1) % entries.len();
                lost
            }
        }
    }
}

/// True with probability `p`, always consuming exactly one draw (p = 0 is never, p = 1
/// always, since the draw lies in [0, 1)).
fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    rng.random::<f64>() < p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Streams;
    use proptest::prelude::*;

    const MS: i64 = 1_000_000;

    fn process(model: LossModel, seed: u64) -> LossProcess {
        LossProcess::new(model, Streams::new(seed).stream("test/loss")).unwrap()
    }

    /// Loss decisions for `n` packets, one every `spacing_ns` starting at 0.
    fn pattern(model: LossModel, seed: u64, n: usize, spacing_ns: i64) -> Vec<bool> {
        let mut p = process(model, seed);
        (0..n as i64).map(|i| p.lose(i * spacing_ns)).collect()
    }

    fn fraction_lost(pattern: &[bool]) -> f64 {
        pattern.iter().filter(|&&l| l).count() as f64 / pattern.len() as f64
    }

    /// Lengths of maximal runs of consecutive losses.
    fn loss_runs(pattern: &[bool]) -> Vec<usize> {
        pattern
            .split(|&lost| !lost)
            .map(<[bool]>::len)
            .filter(|&n| n > 0)
            .collect()
    }

    fn gilbert(p_gb: f64, p_bg: f64) -> LossModel {
        LossModel::GilbertElliott {
            p_good_to_bad: p_gb,
            p_bad_to_good: p_bg,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        }
    }

    // ---- determinism ----

    #[test]
    fn same_seed_same_pattern_different_seed_different_pattern() {
        let models = [
            LossModel::Bernoulli { p: 0.1 },
            gilbert(0.01, 0.2),
            LossModel::Bursts {
                length: Dist::Uniform {
                    min: 50 * MS,
                    max: 150 * MS,
                },
                gap: Dist::Uniform {
                    min: 500 * MS,
                    max: 1500 * MS,
                },
            },
        ];
        for model in models {
            let a = pattern(model.clone(), 1, 20_000, MS);
            let b = pattern(model.clone(), 1, 20_000, MS);
            let c = pattern(model.clone(), 2, 20_000, MS);
            assert_eq!(a, b, "{model:?}");
            assert_ne!(a, c, "{model:?}");
        }
    }

    // ---- none and trace ----

    #[test]
    fn none_loses_nothing() {
        assert!(!pattern(LossModel::None, 1, 1000, MS).contains(&true));
    }

    #[test]
    fn trace_cycles_from_the_start() {
        let trace = vec![false, true, true];
        let got = pattern(LossModel::Trace(trace), 1, 7, MS);
        assert_eq!(got, [false, true, true, false, true, true, false]);
    }

    // ---- Bernoulli ----

    #[test]
    fn bernoulli_rate_over_100k_packets() {
        for p in [0.01, 0.1, 0.5] {
            let rate = fraction_lost(&pattern(LossModel::Bernoulli { p }, 3, 100_000, MS));
            // 4 standard deviations of a binomial proportion.
            let tolerance = 4.0 * (p * (1.0 - p) / 100_000.0_f64).sqrt();
            assert!((rate - p).abs() < tolerance, "p = {p}, rate = {rate}");
        }
    }

    #[test]
    fn bernoulli_boundaries_never_and_always() {
        assert!(!pattern(LossModel::Bernoulli { p: 0.0 }, 1, 10_000, MS).contains(&true));
        assert!(!pattern(LossModel::Bernoulli { p: 1.0 }, 1, 10_000, MS).contains(&false));
    }

    // ---- Gilbert-Elliott ----

    #[test]
    fn gilbert_elliott_mean_burst_and_stationary_loss() {
        // (p_good_to_bad, p_bad_to_good): mean burst 1/q packets, loss p/(p+q).
        for (p, q) in [(0.01, 0.1), (0.05, 0.5), (0.1, 0.9)] {
            let got = pattern(gilbert(p, q), 5, 1_000_000, MS);
            let runs = loss_runs(&got);
            let mean_run = runs.iter().sum::<usize>() as f64 / runs.len() as f64;
            let rate = fraction_lost(&got);
            let (want_run, want_rate) = (1.0 / q, p / (p + q));
            assert!(
                (mean_run / want_run - 1.0).abs() < 0.05,
                "p={p} q={q}: mean burst {mean_run}, want {want_run}"
            );
            assert!(
                (rate / want_rate - 1.0).abs() < 0.05,
                "p={p} q={q}: loss rate {rate}, want {want_rate}"
            );
        }
    }

    #[test]
    fn gilbert_elliott_loss_in_good_state_alone_is_bernoulli() {
        let model = LossModel::GilbertElliott {
            p_good_to_bad: 0.0,
            p_bad_to_good: 1.0,
            loss_in_good: 0.2,
            loss_in_bad: 1.0,
        };
        let rate = fraction_lost(&pattern(model, 8, 100_000, MS));
        assert!((rate - 0.2).abs() < 0.006, "rate = {rate}");
    }

    // ---- bursts scheduled in time (Rais & Tripathi 1995) ----

    #[test]
    fn fixed_bursts_lose_exactly_the_packets_inside() {
        // A packet every 1 ms; 100 ms bursts starting once a second (model 4).
        let model = LossModel::Bursts {
            length: Dist::Fixed(100 * MS),
            gap: Dist::Fixed(900 * MS),
        };
        let got = pattern(model, 1, 10_000, MS);
        for (i, &lost) in got.iter().enumerate() {
            assert_eq!(lost, i % 1000 >= 900, "packet {i} at {i} ms");
        }
        assert_eq!(got.iter().filter(|&&l| l).count(), 1000); // exactly 10 %
    }

    #[test]
    fn fixed_burst_boundaries_are_half_open() {
        let model = LossModel::Bursts {
            length: Dist::Fixed(10 * MS),
            gap: Dist::Fixed(190 * MS),
        };
        let mut p = process(model, 1);
        assert!(!p.lose(190 * MS - 1)); // just before the burst
        assert!(p.lose(190 * MS)); // its first nanosecond
        assert!(p.lose(200 * MS - 1)); // its last nanosecond
        assert!(!p.lose(200 * MS)); // just after
        assert!(p.lose(390 * MS)); // the next burst
    }

    #[test]
    fn uniform_bursts_mean_length_and_gap() {
        // Rais & Tripathi model 5: 100 ms mean bursts, 1 s mean good periods.
        let (length, gap) = (
            Dist::Uniform {
                min: 50 * MS,
                max: 150 * MS,
            },
            Dist::Uniform {
                min: 500 * MS,
                max: 1500 * MS,
            },
        );
        // A packet every 1 ms for ~3 hours: about 10,000 bursts.
        let got = pattern(LossModel::Bursts { length, gap }, 11, 11_000_000, MS);
        let runs = loss_runs(&got);
        let mean_burst_ms = runs.iter().sum::<usize>() as f64 / runs.len() as f64;
        assert!(
            (mean_burst_ms - 100.0).abs() < 1.0,
            "mean burst {mean_burst_ms} ms"
        );
        assert!(
            runs.iter().all(|&n| (50..=150).contains(&n)),
            "burst outside range"
        );
        let want_rate = length.mean_ns() / (length.mean_ns() + gap.mean_ns());
        let rate = fraction_lost(&got);
        assert!(
            (rate / want_rate - 1.0).abs() < 0.02,
            "rate {rate}, want {want_rate}"
        );
    }

    #[test]
    fn bursts_survive_a_jump_to_the_end_of_time() {
        let model = LossModel::Bursts {
            length: Dist::Fixed(i64::MAX / 2),
            gap: Dist::Fixed(i64::MAX / 2),
        };
        // Gap [0, MAX/2), burst [MAX/2, MAX - 1), then a gap that saturates at MAX.
        let mut p = process(model, 1);
        assert!(!p.lose(0));
        assert!(p.lose(i64::MAX / 2));
        assert!(p.lose(i64::MAX - 2));
        assert!(!p.lose(i64::MAX - 1));
        assert!(!p.lose(i64::MAX)); // terminates instead of looping
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "asked about the past")]
    fn bursts_reject_time_running_backwards_in_debug_builds() {
        let model = LossModel::Bursts {
            length: Dist::Fixed(MS),
            gap: Dist::Fixed(MS),
        };
        let mut p = process(model, 1);
        p.lose(5 * MS);
        p.lose(4 * MS);
    }

    /// Pins the numbers: a change here changes every recorded scenario's losses.
    #[test]
    fn snapshot_of_first_decisions() {
        let show = |v: Vec<bool>| {
            v.iter()
                .map(|&l| if l { 'x' } else { '.' })
                .collect::<String>()
        };
        let bernoulli = show(pattern(LossModel::Bernoulli { p: 0.5 }, 1, 32, MS));
        let ge = show(pattern(gilbert(0.2, 0.3), 1, 32, MS));
        let bursts = show(pattern(
            LossModel::Bursts {
                length: Dist::Uniform {
                    min: 2 * MS,
                    max: 6 * MS,
                },
                gap: Dist::Uniform {
                    min: MS,
                    max: 8 * MS,
                },
            },
            1,
            32,
            MS,
        ));
        assert_eq!(bernoulli, "..x.....xx.x.x..x.xx.x.x.xxx.x.x");
        assert_eq!(ge, "......xxxxx.xx.x........x..xxxxx");
        assert_eq!(bursts, ".......xxxx.xxxx......xxxx......");
    }

    // ---- validation ----

    #[test]
    fn invalid_parameters_are_rejected_naming_the_field() {
        use LossConfigError::*;
        let cases = [
            (LossModel::Bernoulli { p: 1.0000001 }, "bernoulli.p"),
            (LossModel::Bernoulli { p: -0.1 }, "bernoulli.p"),
            (LossModel::Bernoulli { p: f64::NAN }, "bernoulli.p"),
            (
                LossModel::GilbertElliott {
                    p_good_to_bad: 0.1,
                    p_bad_to_good: 0.1,
                    loss_in_good: 0.0,
                    loss_in_bad: 2.0,
                },
                "gilbert_elliott.loss_in_bad",
            ),
            (
                LossModel::Bursts {
                    length: Dist::Fixed(0),
                    gap: Dist::Fixed(MS),
                },
                "bursts.length",
            ),
            (
                LossModel::Bursts {
                    length: Dist::Fixed(MS),
                    gap: Dist::Uniform { min: 0, max: MS },
                },
                "bursts.gap",
            ),
            (
                LossModel::Bursts {
                    length: Dist::Uniform {
                        min: 2 * MS,
                        max: MS,
                    },
                    gap: Dist::Fixed(MS),
                },
                "bursts.length",
            ),
        ];
        for (model, want_field) in cases {
            let err = model.validate().unwrap_err();
            let field = match &err {
                NotAProbability { field, .. }
                | MinAboveMax { field, .. }
                | NotPositive { field, .. } => *field,
                EmptyTrace => "trace",
            };
            assert_eq!(field, want_field, "{model:?}");
            assert!(err.to_string().starts_with(want_field), "{err}");
            assert!(LossProcess::new(model, Streams::new(0).stream("x")).is_err());
        }
        assert_eq!(LossModel::Trace(vec![]).validate(), Err(EmptyTrace));
    }

    #[test]
    fn boundary_parameters_are_accepted() {
        let ok = [
            LossModel::Bernoulli { p: 0.0 },
            LossModel::Bernoulli { p: 1.0 },
            LossModel::Bursts {
                length: Dist::Uniform { min: 1, max: 1 },
                gap: Dist::Fixed(1),
            },
            LossModel::Trace(vec![true]),
        ];
        for model in ok {
            assert_eq!(model.validate(), Ok(()), "{model:?}");
        }
        assert_eq!(
            LossModel::Bernoulli { p: 1.5 }
                .validate()
                .unwrap_err()
                .to_string(),
            "bernoulli.p = 1.5 is not a probability: it must be in [0, 1]"
        );
    }

    // ---- properties ----

    fn dist() -> impl Strategy<Value = Dist> {
        prop_oneof![
            (1..200 * MS).prop_map(Dist::Fixed),
            (1..100 * MS, 0..100 * MS).prop_map(|(min, extra)| Dist::Uniform {
                min,
                max: min + extra
            }),
        ]
    }

    proptest! {
        /// Whether a packet at time t is lost does not depend on which other packets
        /// were sent before it: the schedule belongs to the link, not to the traffic.
        #[test]
        fn burst_schedule_is_independent_of_probe_times(
            length in dist(),
            gap in dist(),
            seed in any::<u64>(),
            mut times in prop::collection::vec(0..20_000 * MS, 1..200),
        ) {
            times.sort_unstable();
            let model = LossModel::Bursts { length, gap };
            let mut sparse = process(model.clone(), seed);
            let mut dense = process(model, seed);
            let mut t_dense = 0;
            for &t in &times {
                while t_dense < t {
                    dense.lose(t_dense);
                    t_dense += 7 * MS;
                }
                prop_assert_eq!(sparse.lose(t), dense.lose(t), "t = {}", t);
            }
        }
    }
}
