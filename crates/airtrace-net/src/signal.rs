//! What happens to a signal on its way besides distance: walls it crosses, slow
//! shadowing, and the noise it must stand out of, and whether a frame survives that
//! (the SNR-driven frame errors of [`crate::dsss`]). Opt-in: a channel without a
//! [`SignalModel`] behaves exactly as before.
//!
//! - **Walls** are segments on the plane, each taking `loss_db` from every signal whose
//!   straight path crosses it (the multi-wall model of COST 231, "Digital mobile radio
//!   towards future generation systems", §4.7.3).
//! - **Shadowing** is log-normal (Rappaport, "Wireless Communications", §4.9.2): a
//!   Gaussian number of dB, σ = `shadowing_db`, per pair of stations and the same both
//!   ways. With a coherence time τ it changes slowly as a Gauss–Markov process: after a
//!   gap Δt the fade keeps ρ = e^(−Δt/τ) of itself and draws √(1−ρ²)·σ anew (Gudmundson,
//!   "Correlation model for shadow fading in mobile radio systems", 1991). That gives
//!   the bursts of bad frames Bachmann's Gilbert–Elliott fit describes; τ = 0 draws a new
//!   fade for every frame.
//! - **Frame errors**: a frame the receiver decoded above its thresholds is still lost
//!   with [`crate::dsss::frame_error`] of its rate, length and SNR (its power over the
//!   noise floor; the capture rule of [`crate::phy`] has already judged interference).
//!
//! Draws come from two random streams of their own (shadowing, errors), so a scenario
//! that turns this on moves no other stream.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use crate::dsss;
use crate::frame::{Frame, NodeId};
use crate::radio::Position;

/// A wall: a segment that takes `loss_db` from every signal crossing it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wall {
    /// One end.
    pub a: Position,
    /// The other end.
    pub b: Position,
    /// Attenuation, dB.
    pub loss_db: f64,
}

/// The settings of [`SignalModel`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SignalConfig {
    /// Walls between the stations.
    pub walls: Vec<Wall>,
    /// σ of the shadowing, dB (0: none).
    pub shadowing_db: f64,
    /// Coherence time τ of the shadowing, ns (0: a new fade for every frame).
    pub coherence_ns: i64,
    /// Lose frames by their SNR, rate and length ([`crate::dsss::frame_error`]).
    pub frame_errors: bool,
}

/// Walls, shadowing and frame errors of one channel (see the [module
/// documentation](self)).
#[derive(Debug)]
pub struct SignalModel {
    cfg: SignalConfig,
    shadow_rng: ChaCha8Rng,
    error_rng: ChaCha8Rng,
    /// Each pair's fade (dB) and when it was drawn, keyed by (lower id, higher id).
    fades: FxHashMap<(NodeId, NodeId), (i64, f64)>,
}

impl SignalModel {
    /// A signal model with its shadowing and error streams.
    pub fn new(cfg: SignalConfig, shadow_rng: ChaCha8Rng, error_rng: ChaCha8Rng) -> Self {
        SignalModel {
            cfg,
            shadow_rng,
            error_rng,
            fades: FxHashMap::default(),
        }
    }

    /// Its settings.
    pub fn config(&self) -> &SignalConfig {
        &self.cfg
    }

    /// Attenuation by the walls between `a` and `b`, dB (≥ 0).
    pub fn wall_loss_db(&self, a: Position, b: Position) -> f64 {
        self.cfg
            .walls
            .iter()
            .filter(|w| crosses(a, b, w.a, w.b))
            .map(|w| w.loss_db)
            .sum()
    }

    /// The gain, dB (≤ 0 on average), of a signal from `from` at `pa` to `to` at `pb`
    /// at time `now`: walls, then the pair's fade brought to `now`.
    pub fn gain_db(
        &mut self,
        now: i64,
        from: NodeId,
        to: NodeId,
        pa: Position,
        pb: Position,
    ) -> f64 {
        let walls = self.wall_loss_db(pa, pb);
        -walls + self.fade_db(now, from, to)
    }

    /// The pair's shadowing at `now`, dB.
    fn fade_db(&mut self, now: i64, from: NodeId, to: NodeId) -> f64 {
        let sigma = self.cfg.shadowing_db;
        if sigma.is_nan() || sigma <= 0.0 {
            return 0.0;
        }
        let key = (from.min(to), from.max(to));
        let last = self.fades.get(&key).copied();
        if let Some((at, db)) = last {
            if at == now {
                return db; // the other direction of this instant's pass
            }
        }
        let fresh = sigma * gaussian(&mut self.shadow_rng);
        let tau = self.cfg.coherence_ns;
        let db = match last {
            Some((at, old)) if tau > 0 => {
                let rho = (-((now - at).max(0) as f64) / tau as f64).exp();
                rho * old + (1.0 - rho * rho).sqrt() * fresh
            }
            _ => fresh,
        };
        self.fades.insert(key, (now, db));
        db
    }

    /// Whether `frame`, received at `snr` (power over noise, linear), is lost to bit
    /// errors; always false when frame errors are off.
    pub fn frame_lost(&mut self, frame: &Frame, snr: f64) -> bool {
        if !self.cfg.frame_errors {
            return false;
        }
        let p = dsss::frame_error(frame.rate_bps, frame.bytes, snr);
        p > 0.0 && self.error_rng.random::<f64>() < p
    }
}

/// A standard normal draw (Box–Muller).
fn gaussian(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// True when segment p–q properly crosses segment a–b (touching an end counts).
fn crosses(p: Position, q: Position, a: Position, b: Position) -> bool {
    let orient = |o: Position, s: Position, t: Position| {
        let v = (s.x - o.x) * (t.y - o.y) - (s.y - o.y) * (t.x - o.x);
        v.partial_cmp(&0.0).map_or(0, |c| c as i32)
    };
    let (d1, d2) = (orient(a, b, p), orient(a, b, q));
    let (d3, d4) = (orient(p, q, a), orient(p, q, b));
    d1 * d2 <= 0 && d3 * d4 <= 0 && !(d1 == 0 && d2 == 0 && d3 == 0 && d4 == 0)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn at(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    fn signal(cfg: SignalConfig) -> SignalModel {
        SignalModel::new(
            cfg,
            ChaCha8Rng::seed_from_u64(1),
            ChaCha8Rng::seed_from_u64(2),
        )
    }

    /// Two walls between the rooms, one beside the path: 2 × 6 dB.
    #[test]
    fn walls_on_the_path_add_up_and_others_do_not_count() {
        let wall = |x: f64, loss_db| Wall {
            a: at(x, -5.0),
            b: at(x, 5.0),
            loss_db,
        };
        let s = signal(SignalConfig {
            walls: vec![wall(3.0, 6.0), wall(7.0, 6.0), wall(20.0, 9.0)],
            ..Default::default()
        });
        assert_eq!(s.wall_loss_db(at(0.0, 0.0), at(10.0, 0.0)), 12.0);
        assert_eq!(s.wall_loss_db(at(10.0, 0.0), at(0.0, 0.0)), 12.0);
        assert_eq!(s.wall_loss_db(at(0.0, 0.0), at(2.0, 0.0)), 0.0);
        // Passing beyond the wall's end.
        assert_eq!(s.wall_loss_db(at(0.0, 6.0), at(10.0, 6.0)), 0.0);
    }

    /// The fade is one per pair, the same both ways at one instant, nearly unchanged
    /// after a small part of τ and fresh after many; its spread is σ.
    #[test]
    fn shadowing_is_reciprocal_slow_and_of_spread_sigma() {
        let mut s = signal(SignalConfig {
            shadowing_db: 6.0,
            coherence_ns: 1_000_000_000,
            ..Default::default()
        });
        let (p, q) = (at(0.0, 0.0), at(1.0, 0.0));
        let g0 = s.gain_db(0, 1, 2, p, q);
        assert_eq!(s.gain_db(0, 2, 1, q, p), g0);
        let g1 = s.gain_db(1_000_000, 1, 2, p, q); // 1 ms later
        assert!((g1 - g0).abs() < 1.0, "{g0} then {g1}");
        let draws: Vec<f64> = (1..4000)
            .map(|i| s.gain_db(i * 10_000_000_000, 1, 2, p, q))
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd =
            (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!(
            mean.abs() < 0.5 && (sd - 6.0).abs() < 0.4,
            "mean {mean} sd {sd}"
        );
    }

    #[test]
    fn without_errors_no_frame_is_lost_and_with_them_a_weak_one_is() {
        let frame = Frame {
            kind: crate::frame::FrameKind::Data,
            src: 1,
            dst: 2,
            nav_ns: 0,
            seq: 0,
            retry: false,
            payload: None,
            bytes: 1500,
            rate_bps: 11_000_000,
            airtime_ns: 1,
        };
        let mut off = signal(SignalConfig::default());
        assert!(!off.frame_lost(&frame, 1.0));
        let mut on = signal(SignalConfig {
            frame_errors: true,
            ..Default::default()
        });
        assert!(on.frame_lost(&frame, 1.0));
        assert!(!on.frame_lost(&frame, 1000.0));
    }
}
