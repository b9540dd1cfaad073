//! Propagation: the power a radio receives from a transmitter at a distance, and the
//! PHY profile that says what that power means (decodable, sensed, ignored).
//!
//! Powers are in watts, as f64. Every decision works from squared distances with
//! `+ - * /` only (no `sqrt`, `log` or `pow` from libm, whose last bits may differ
//! between platforms), except the log-distance model with a non-integer exponent.

use serde::{Deserialize, Serialize};

/// Speed of light, m/s.
pub const LIGHT_M_PER_S: f64 = 299_792_458.0;

/// A node's place on the plane, metres.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Position {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
}

impl Position {
    /// Squared distance to `other`, m².
    pub fn dist2(self, other: Position) -> f64 {
        let (dx, dy) = (self.x - other.x, self.y - other.y);
        dx * dx + dy * dy
    }
}

/// How received power falls with distance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum Propagation {
    /// Two-ray ground reflection (Rappaport, "Wireless Communications", §4.6; ns-2's
    /// `TwoRayGround`): Friis free space, Pt·Gt·Gr·λ²/((4π)²·d²·L), up to the crossover
    /// distance 4π·ht·hr/λ, and Pt·Gt·Gr·ht²·hr²/(d⁴·L) beyond it.
    TwoRayGround {
        /// Carrier frequency, Hz.
        frequency_hz: f64,
        /// Antenna height above ground, m (the same at every node).
        antenna_height_m: f64,
        /// System loss L (1: none).
        system_loss: f64,
    },
    /// Log-distance path loss: the power at `reference_m` by Friis, then falling as
    /// d^−`exponent` (Rappaport §4.9).
    LogDistance {
        /// Carrier frequency, Hz.
        frequency_hz: f64,
        /// Path-loss exponent (2 free space, 2.7–3.5 urban, 3–5 indoors).
        exponent: f64,
        /// Reference distance, m.
        reference_m: f64,
    },
}

impl Propagation {
    /// ns-2's CMU WaveLAN radio: two-ray ground at 914 MHz, 1.5 m antennas, no loss.
    pub fn wavelan() -> Self {
        Propagation::TwoRayGround {
            frequency_hz: 914e6,
            antenna_height_m: 1.5,
            system_loss: 1.0,
        }
    }

    /// Received power, W, at squared distance `d2` m² from a transmitter of `pt_w` W
    /// (unity antenna gains). Distances under 1 cm count as 1 cm.
    pub fn received_w(&self, pt_w: f64, d2: f64) -> f64 {
        let d2 = d2.max(1e-4);
        match *self {
            Propagation::TwoRayGround {
                frequency_hz,
                antenna_height_m: h,
                system_loss,
            } => {
                let lambda = LIGHT_M_PER_S / frequency_hz;
                // Crossover distance 4π·ht·hr/λ, compared squared.
                let crossover = 4.0 * std::f64::consts::PI * h * h / lambda;
                if d2 < crossover * crossover {
                    friis(pt_w, lambda, d2) / system_loss
                } else {
                    pt_w * h * h * h * h / (d2 * d2 * system_loss)
                }
            }
            Propagation::LogDistance {
                frequency_hz,
                exponent,
                reference_m,
            } => {
                let lambda = LIGHT_M_PER_S / frequency_hz;
                let r2 = reference_m * reference_m;
                let at_reference = friis(pt_w, lambda, r2);
                if d2 <= r2 {
                    return friis(pt_w, lambda, d2);
                }
                let ratio = d2 / r2;
                // (d/d0)^n = (d²/d0²)^(n/2); integer exponents without libm.
                let falloff = if exponent == 2.0 {
                    ratio
                } else if exponent == 3.0 {
                    ratio * ratio.sqrt()
                } else if exponent == 4.0 {
                    ratio * ratio
                } else {
                    ratio.powf(exponent / 2.0)
                };
                at_reference / falloff
            }
        }
    }

    /// The distance, m, at which the received power falls to `power_w` (for messages
    /// and documentation; not used in decisions).
    pub fn range_m(&self, pt_w: f64, power_w: f64) -> f64 {
        // Bisection over the monotone received power.
        let (mut lo, mut hi) = (0.01f64, 1e6f64);
        for _ in 0..200 {
            let mid = (lo + hi) / 2.0;
            if self.received_w(pt_w, mid * mid) > power_w {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

fn friis(pt_w: f64, lambda: f64, d2: f64) -> f64 {
    let four_pi = 4.0 * std::f64::consts::PI;
    pt_w * lambda * lambda / (four_pi * four_pi * d2)
}

/// Watts from dBm.
pub fn dbm_to_w(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0) / 1000.0
}

/// dBm from watts (for captures and logs).
pub fn w_to_dbm(w: f64) -> f64 {
    10.0 * (w * 1000.0).log10()
}

/// What received power means at a radio: the PHY's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhyProfile {
    /// Transmit power, W.
    pub tx_power_w: f64,
    /// A frame at or above this power can be decoded (ns-2 `RXThresh_`), W.
    pub rx_threshold_w: f64,
    /// A signal at or above this power makes the medium busy and interferes (ns-2
    /// `CSThresh_`); weaker ones are not seen at all, W.
    pub cs_threshold_w: f64,
    /// A frame survives interference while its power is at least this many times the
    /// sum of the others' (ns-2 `CPThresh_`, 10 = 10 dB).
    pub capture_ratio: f64,
    /// Thermal noise floor for the radiotap header, W.
    pub noise_w: f64,
    /// Which frames a receiver synchronises to.
    pub sync: Sync,
    /// Whether interference adds up.
    pub interference: Interference,
}

/// Which frames a receiver locks onto when it is idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sync {
    /// Any frame it senses, even one too weak to decode, which then occupies it until
    /// its end (and ends in an error): ns-2's `WirelessPhy` passes such frames to the
    /// MAC marked in error, and `Mac802_11::recv` takes them as the frame being
    /// received.
    FirstSensed,
    /// Only a frame strong enough to decode; weaker ones are interference only (ns-3's
    /// preamble detection threshold).
    Decodable,
}

/// How the powers of overlapping signals combine against the frame being received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interference {
    /// The frame must stay `capture_ratio` above the sum of every other signal present.
    Additive,
    /// The frame must stay `capture_ratio` above each other signal on its own (ns-2's
    /// `Mac802_11::recv`, which compares two powers).
    Pairwise,
}

impl PhyProfile {
    /// ns-2's CMU WaveLAN radio (`Phy/WirelessPhy` defaults): 24.5 dBm, decode up to
    /// 250 m, sense and interfere up to 550 m with [`Propagation::wavelan`], capture
    /// at 10 dB, receivers lock onto the first frame they sense; interference adds up.
    pub fn wavelan() -> Self {
        PhyProfile {
            tx_power_w: 0.281_838_15,
            rx_threshold_w: 3.652e-10,
            cs_threshold_w: 1.559e-11,
            capture_ratio: 10.0,
            noise_w: dbm_to_w(-101.0),
            sync: Sync::FirstSensed,
            interference: Interference::Additive,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-2's thresholds put decoding at 250 m and carrier sense at 550 m.
    #[test]
    fn wavelan_ranges_are_250_and_550_metres() {
        let p = Propagation::wavelan();
        let phy = PhyProfile::wavelan();
        let rx = p.range_m(phy.tx_power_w, phy.rx_threshold_w);
        let cs = p.range_m(phy.tx_power_w, phy.cs_threshold_w);
        assert!((rx - 250.0).abs() < 0.1, "{rx}");
        assert!((cs - 550.0).abs() < 0.1, "{cs}");
    }

    /// 200 m against 400 m is 16 times the power (12 dB) on two-ray ground.
    #[test]
    fn two_ray_falls_as_the_fourth_power() {
        let p = Propagation::wavelan();
        let pt = PhyProfile::wavelan().tx_power_w;
        let near = p.received_w(pt, 200.0 * 200.0);
        let far = p.received_w(pt, 400.0 * 400.0);
        assert!((near / far - 16.0).abs() < 1e-9);
        assert!((w_to_dbm(near) - -60.50).abs() < 0.01, "{}", w_to_dbm(near));
    }

    #[test]
    fn log_distance_integer_and_fractional_exponents_agree_with_the_formula() {
        for n in [2.0, 3.0, 3.5, 4.0] {
            let p = Propagation::LogDistance {
                frequency_hz: 2.4e9,
                exponent: n,
                reference_m: 1.0,
            };
            let at1 = p.received_w(0.1, 1.0);
            let at10 = p.received_w(0.1, 100.0);
            let db = 10.0 * (at1 / at10).log10();
            assert!((db - 10.0 * n).abs() < 1e-9, "n {n}: {db} dB");
        }
    }
}
