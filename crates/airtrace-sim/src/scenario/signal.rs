//! The opt-in radio keys of a `[network]`: `[network.signal]` (log-distance path loss,
//! transmit power, noise floor, shadowing, SNR-driven frame errors), the walls
//! `[[network.wall]]` and `network.rate_control`. docs/scenarios.md is the reference.

use serde::Deserialize;

use super::{invalid, Invalid, Key};
use crate::units::Duration;

/// `[network.signal]`: received power by the log-distance law, against a noise floor,
/// with shadowing and frame errors by SNR (`airtrace_net::signal`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalSpec {
    /// Carrier frequency, MHz. Default 2437 (802.11b channel 6).
    #[serde(default)]
    pub frequency_mhz: Option<f64>,
    /// Path-loss exponent n (2 free space, 3–4 indoors). Default 3.
    #[serde(default)]
    pub exponent: Option<f64>,
    /// Reference distance of the log-distance law (free space up to it), m. Default 1.
    #[serde(default)]
    pub reference_m: Option<f64>,
    /// Transmit power, dBm. Default 15.
    #[serde(default)]
    pub tx_power_dbm: Option<f64>,
    /// Noise (and steady interference) floor, dBm. Default −90.
    #[serde(default)]
    pub noise_dbm: Option<f64>,
    /// Frames weaker than this are not decoded (and not sensed), dBm. Default: the noise
    /// floor − 10 dB (the error curves decide above it).
    #[serde(default)]
    pub threshold_dbm: Option<f64>,
    /// σ of the log-normal shadowing, dB. Default 0.
    #[serde(default)]
    pub shadowing_db: Option<f64>,
    /// How long the shadowing takes to change (its coherence time). Default 0: a new
    /// draw for every frame.
    #[serde(default)]
    pub shadowing_time: Option<Duration>,
    /// Lose frames by SNR, rate and length (the 802.11b DSSS/CCK curves). Default true.
    #[serde(default)]
    pub frame_errors: Option<bool>,
}

/// `[[network.wall]]`: a wall from `from` to `to` (points `[x, y]`, m) taking `loss_db`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallSpec {
    /// One end, `[x, y]`, m.
    pub from: [f64; 2],
    /// The other end.
    pub to: [f64; 2],
    /// Attenuation, dB.
    pub loss_db: f64,
}

/// `network.rate_control`: how each station picks the rate of its data frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateControlSpec {
    /// Always `network.rate` (default).
    #[default]
    Fixed,
    /// Auto Rate Fallback.
    Arf,
    /// Adaptive ARF.
    Aarf,
    /// One rate up per success, one down per failure (Kuang's MIMD prober).
    Mimd,
    /// Delivery ratios per rate, the best expected throughput, sampling.
    Minstrel,
}

impl SignalSpec {
    /// Carrier frequency, Hz.
    pub fn frequency_hz(&self) -> f64 {
        self.frequency_mhz.unwrap_or(2437.0) * 1e6
    }
    /// The path-loss exponent.
    pub fn exponent(&self) -> f64 {
        self.exponent.unwrap_or(3.0)
    }
    /// The reference distance, m.
    pub fn reference_m(&self) -> f64 {
        self.reference_m.unwrap_or(1.0)
    }
    /// Transmit power, dBm.
    pub fn tx_power_dbm(&self) -> f64 {
        self.tx_power_dbm.unwrap_or(15.0)
    }
    /// Noise floor, dBm.
    pub fn noise_dbm(&self) -> f64 {
        self.noise_dbm.unwrap_or(-90.0)
    }
    /// Decoding and sensing threshold, dBm.
    pub fn threshold_dbm(&self) -> f64 {
        self.threshold_dbm.unwrap_or(self.noise_dbm() - 10.0)
    }
}

/// The checks of the radio keys of `[network]`.
pub(super) fn validate(
    signal: Option<&SignalSpec>,
    walls: &[WallSpec],
    rate_control: RateControlSpec,
    dsss: bool,
) -> Result<(), Invalid> {
    use Key::{Index, Name};
    let net = || Name("network");
    if rate_control != RateControlSpec::Fixed && !dsss {
        return Err(invalid(
            &[net(), Name("rate_control")],
            "rate adaptation needs mac = \"dsss\" (the 802.11b rates)",
        ));
    }
    if !walls.is_empty() && signal.is_none() {
        return Err(invalid(
            &[net(), Name("wall")],
            "walls need [network.signal] (the WaveLAN profile has none)",
        ));
    }
    for (i, w) in walls.iter().enumerate() {
        let here = |key| vec![net(), Name("wall"), Index(i), Name(key)];
        if !w.from.iter().chain(&w.to).all(|v| v.is_finite()) {
            return Err(invalid(&here("from"), "must be finite coordinates"));
        }
        if !(0.0..=200.0).contains(&w.loss_db) {
            return Err(invalid(&here("loss_db"), "must be between 0 and 200 dB"));
        }
    }
    let Some(s) = signal else {
        return Ok(());
    };
    let here = |key| vec![net(), Name("signal"), Name(key)];
    let checks: [(&'static str, Option<f64>, f64, f64); 7] = [
        ("frequency_mhz", s.frequency_mhz, 1.0, 100_000.0),
        ("exponent", s.exponent, 1.0, 8.0),
        ("reference_m", s.reference_m, 0.01, 1000.0),
        ("tx_power_dbm", s.tx_power_dbm, -50.0, 60.0),
        ("noise_dbm", s.noise_dbm, -200.0, 0.0),
        ("threshold_dbm", s.threshold_dbm, -200.0, 0.0),
        ("shadowing_db", s.shadowing_db, 0.0, 30.0),
    ];
    for (key, value, lo, hi) in checks {
        if let Some(v) = value {
            if !(lo..=hi).contains(&v) {
                return Err(invalid(
                    &here(key),
                    format!("must be between {lo} and {hi}"),
                ));
            }
        }
    }
    if let Some(t) = s.shadowing_time {
        if !(0..=86_400_000_000_000).contains(&t.0) {
            return Err(invalid(
                &here("shadowing_time"),
                "must be between 0 and 1 day",
            ));
        }
    }
    Ok(())
}
