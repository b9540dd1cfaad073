//! Frame error probability of IEEE 802.11b DSSS/CCK frames from the signal-to-noise
//! ratio, the rate and the frame's length.
//!
//! The curves are the textbook error rates of the four modulations of IEEE
//! 802.11-2020 §15 (DSSS) and §16 (HR/DSSS), after despreading: the noise bandwidth is
//! the 22 MHz channel, so the energy per bit over the noise density is the SNR times
//! the processing gain 22 MHz / bit rate (and per symbol, 22 MHz / symbol rate).
//!
//! - 1 Mbit/s, DBPSK: bit error ½·e^(−Eb/N0) (differential BPSK, Proakis, "Digital
//!   Communications", 4th ed., §5.2.8).
//! - 2 Mbit/s, DQPSK (Gray coded): the large-SNR approximation of its bit error,
//!   (√2+1)/√(8π√2) · (Eb/N0)^(−½) · e^(−(2−√2)·Eb/N0) (Proakis §5.2.8).
//! - 5.5 Mbit/s, CCK with 16 codewords (4 bits a symbol, 1.375 Msymbol/s): a
//!   biorthogonal set of 8 orthogonal words and their negatives, whose symbol error is
//!   1 − ∫_{−β}^{∞} (1 − 2Q(x+β))⁷ φ(x) dx with β² = Es/N0 (Proakis §5.2.3, eq. for
//!   biorthogonal signals; Pursley & Royster's reading for CCK).
//! - 11 Mbit/s, CCK with 256 codewords (8 bits a symbol): two such 16-word decisions
//!   with half the energy each, 1 − (1 − SER₁₆(Es/2))².
//!
//! These are the same curves ns-3's `DsssErrorRateModel` draws (with GSL), which is
//! where the effective β² of the CCK rates (the SNR times 22/1.375, halved per decision
//! at 11 Mbit/s) was checked against. A frame of n bits survives with probability
//! (1 − BER)ⁿ, or (1 − SER)^(n / bits per symbol) for CCK; the PLCP preamble and
//! header (sent at 1 Mbit/s) are not counted.
//!
//! The CCK integral is tabulated once per rate over SNRs of −10 to 25 dB in 0.05 dB
//! steps and read by linear interpolation; below the table the frame is lost, above
//! it the symbol error is taken as 0.

use std::sync::OnceLock;

/// Channel bandwidth of the despreading receiver, Hz.
const CHANNEL_HZ: f64 = 22e6;
/// CCK symbol rate, symbols/s.
const CCK_SYMBOLS_PER_S: f64 = 1.375e6;

/// Probability that a frame of `bytes` sent at `rate_bps` (1, 2, 5.5 or 11 Mbit/s; any
/// other rate is read as the next lower of these, at least 1 Mbit/s) is lost at a
/// signal-to-noise ratio of `snr` (linear, not dB). Always within 0..=1.
pub fn frame_error(rate_bps: u64, bytes: u32, snr: f64) -> f64 {
    let bits = f64::from(bytes) * 8.0;
    if snr.is_nan() || snr <= 0.0 {
        return 1.0;
    }
    let success = match rate_bps {
        r if r >= 11_000_000 => cck_success(Cck::Bits8, snr, bits / 8.0),
        r if r >= 5_500_000 => cck_success(Cck::Bits4, snr, bits / 4.0),
        r if r >= 2_000_000 => {
            let ebn0 = snr * CHANNEL_HZ / 2e6;
            (1.0 - dqpsk_ber(ebn0).min(0.5)).powf(bits)
        }
        _ => {
            let ebn0 = snr * CHANNEL_HZ / 1e6;
            (1.0 - 0.5 * (-ebn0).exp()).powf(bits)
        }
    };
    (1.0 - success).clamp(0.0, 1.0)
}

/// DQPSK bit error at `ebn0` (see the module documentation).
fn dqpsk_ber(ebn0: f64) -> f64 {
    let sqrt2 = std::f64::consts::SQRT_2;
    let k = (sqrt2 + 1.0) / (8.0 * std::f64::consts::PI * sqrt2).sqrt();
    k / ebn0.sqrt() * (-(2.0 - sqrt2) * ebn0).exp()
}

#[derive(Debug, Clone, Copy)]
enum Cck {
    /// 5.5 Mbit/s: one 16-word decision a symbol.
    Bits4,
    /// 11 Mbit/s: two 16-word decisions a symbol.
    Bits8,
}

const TABLE_LO_DB: f64 = -10.0;
const TABLE_STEP_DB: f64 = 0.05;
const TABLE_LEN: usize = 701; // −10 … 25 dB

/// Probability that `symbols` CCK symbols all survive at `snr`.
fn cck_success(kind: Cck, snr: f64, symbols: f64) -> f64 {
    let db = 10.0 * snr.log10();
    let pos = (db - TABLE_LO_DB) / TABLE_STEP_DB;
    if pos < 0.0 {
        return 0.0;
    }
    if pos >= (TABLE_LEN - 1) as f64 {
        return 1.0;
    }
    let table = &cck_tables()[kind as usize];
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    let ser = table[i] + (table[i + 1] - table[i]) * frac;
    (1.0 - ser).powf(symbols)
}

/// Symbol error of each CCK rate on the SNR grid, computed once.
fn cck_tables() -> &'static [Vec<f64>; 2] {
    static TABLES: OnceLock<[Vec<f64>; 2]> = OnceLock::new();
    TABLES.get_or_init(|| {
        let grid = |f: &dyn Fn(f64) -> f64| -> Vec<f64> {
            (0..TABLE_LEN)
                .map(|i| {
                    let snr = 10f64.powf((TABLE_LO_DB + TABLE_STEP_DB * i as f64) / 10.0);
                    f(snr)
                })
                .collect()
        };
        let es = |snr: f64| snr * CHANNEL_HZ / CCK_SYMBOLS_PER_S;
        [
            grid(&|snr| biorthogonal16_ser(es(snr))),
            grid(&|snr| {
                let half = biorthogonal16_ser(es(snr) / 2.0);
                1.0 - (1.0 - half) * (1.0 - half)
            }),
        ]
    })
}

/// Symbol error of 16 biorthogonal signals at symbol energy over noise `es_n0`
/// (β² = Es/N0): the chance that the received word is not the one sent, written as
/// Q(β) (the matched correlator is negative) plus, over the correlator's value x above
/// −β, the chance that one of the other 7 orthogonal pairs beats it, 1 − (1 −
/// 2Q(x+β))⁷. Composite Simpson's rule over x in [−β, 12].
fn biorthogonal16_ser(es_n0: f64) -> f64 {
    let beta = es_n0.sqrt();
    let (a, b) = (-beta, 12.0);
    let n = 2400; // even
    let h = (b - a) / n as f64;
    let f = |x: f64| {
        // x + β ≥ 0, so Q ≤ ½ (the fit of erfc can overshoot ½ by 10⁻⁸ at 0).
        let q = q_function(x + beta).min(0.5);
        // 1 − (1 − 2q)⁷, exact for small q.
        let miss = -(7.0 * (-2.0 * q).ln_1p()).exp_m1();
        miss * (-x * x / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt()
    };
    let mut sum = f(a) + f(b);
    for k in 1..n {
        let w = if k % 2 == 1 { 4.0 } else { 2.0 };
        sum += w * f(a + h * k as f64);
    }
    (q_function(beta) + sum * h / 3.0).clamp(0.0, 1.0)
}

/// The Gaussian tail Q(x) = ½·erfc(x/√2).
fn q_function(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

/// The complementary error function, with a relative error below 1.2·10⁻⁷ everywhere
/// (the Chebyshev fit of Press et al., "Numerical Recipes", 2nd ed., §6.2).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(x: f64) -> f64 {
        10f64.powf(x / 10.0)
    }

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122),
            (1.0, 0.157_299_207),
            (2.0, 0.004_677_735),
            (3.0, 2.209_049_7e-5),
            (-1.0, 1.842_700_793),
        ] {
            let got = erfc(x);
            assert!(((got - want) / want).abs() < 2e-7, "erfc({x}) = {got}");
        }
    }

    /// Each faster rate needs more SNR for the same frame: at 3 dB a 1500-byte frame
    /// gets through at 1 and 2 Mbit/s, mostly not at 11.
    #[test]
    fn faster_rates_need_more_snr() {
        let snr = db(3.0);
        let per: Vec<f64> = [1_000_000, 2_000_000, 5_500_000, 11_000_000]
            .iter()
            .map(|&r| frame_error(r, 1500, snr))
            .collect();
        assert!(per.windows(2).all(|w| w[0] <= w[1]), "{per:?}");
        assert!(per[0] < 1e-6 && per[1] < 0.05, "{per:?}");
        assert!(per[3] > 0.9, "{per:?}");
    }

    /// The SNR at which a 1024-byte frame is lost half the time. At 1 Mbit/s it has a
    /// closed form: BER = 1 − ½^(1/8192) = ½·e^(−22·SNR), SNR = −4.04 dB. Each faster
    /// rate needs 2.5 to 4.5 dB more (−4.0, 0.5, 3.1, 6.1 dB; ns-3's DSSS frame
    /// success plot has the same ladder).
    #[test]
    fn half_loss_points_climb_by_rate() {
        let half = |rate| {
            let (mut lo, mut hi) = (-15.0, 25.0);
            for _ in 0..60 {
                let mid = (lo + hi) / 2.0;
                if frame_error(rate, 1024, db(mid)) > 0.5 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let points: Vec<f64> = [1_000_000, 2_000_000, 5_500_000, 11_000_000]
            .iter()
            .map(|&r| half(r))
            .collect();
        let ber: f64 = 1.0 - 0.5f64.powf(1.0 / 8192.0);
        let closed = 10.0 * ((-(2.0 * ber).ln()) / 22.0).log10();
        assert!(
            (points[0] - closed).abs() < 1e-6,
            "{points:?} against {closed}"
        );
        for w in points.windows(2) {
            assert!((2.5..=4.6).contains(&(w[1] - w[0])), "{points:?}");
        }
        assert!((points[3] - 6.1).abs() < 0.2, "{points:?}");
    }

    /// Longer frames are lost more often at one SNR; bad input gives a probability.
    #[test]
    fn longer_frames_fail_more_and_bad_input_is_bounded() {
        let snr = db(4.0);
        assert!(frame_error(2_000_000, 64, snr) < frame_error(2_000_000, 1500, snr));
        for snr in [f64::NAN, -1.0, 0.0, f64::INFINITY, 1e300] {
            for rate in [0, 1_000_000, 2_000_000, 5_500_000, 11_000_000, u64::MAX] {
                let p = frame_error(rate, 1500, snr);
                assert!((0.0..=1.0).contains(&p), "{rate} {snr}: {p}");
            }
        }
    }
}
