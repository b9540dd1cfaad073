//! CUBIC congestion control, RFC 9438 (Linux's default, `cubic`).
//!
//! After a congestion event the window follows a cubic function of the time since the
//! congestion-avoidance stage began (the epoch): concave up to the window where the
//! last loss happened (W_max), flat around it, convex beyond (§4.2, §4.4, §4.5); never
//! slower than a Reno flow with the same β would grow (the Reno-friendly region,
//! §4.3). A loss takes the window to β_cubic = 0.7 of itself (§4.6), with fast
//! convergence lowering W_max when losses come before the window reaches it (§4.7);
//! after a timeout the next epoch starts from the window it begins with (§4.8).
//!
//! Units: windows in segments (f64, cwnd / SMSS), times in seconds, as the RFC writes
//! its formulas; the endpoint's cwnd stays in bytes, grown by whole bytes with the
//! fraction carried. Only +, −, ×, ÷ and a Newton cube root ([`cbrt`]) are used, so
//! runs are reproducible bit for bit on any IEEE 754 machine (no libm).
//!
//! As the RFC and Linux: ssthresh = max(cwnd·β, 2·SMSS) on cwnd, not FlightSize
//! (§4.6 allows either; Linux's `bictcp_recalc_ssthresh` uses cwnd); RTT in the target
//! W_cubic(t + RTT) is the endpoint's smoothed RTT (Linux uses the minimum RTT).
//!
//! Slow start is Reno's (§4.10 allows it), with HyStart++ (RFC 9406,
//! [`hystart`](super::hystart)) when [`Config::hystart`](crate::Config::hystart) is
//! set; when HyStart++ ends slow start (ssthresh = cwnd, no reduction) the first
//! epoch starts with W_max = cwnd, K = 0. Not modelled yet: Linux's epoch shift after an idle period (`CA_EVENT_TX_START`), and §5.8's
//! treatment of application-limited periods (the epoch's clock keeps running, though
//! cwnd only grows while it limits the sender).

use super::{CaEvent, CcContext, CongestionOps, HyStart, LinuxHyStart};

/// C, RFC 9438 §4.2 / §5 (segments per second³).
pub const C: f64 = 0.4;
/// β_cubic, the multiplicative decrease factor, RFC 9438 §4.6.
pub const BETA: f64 = 0.7;
/// α_cubic = 3(1 − β_cubic)/(1 + β_cubic), RFC 9438 §4.3: Reno-friendly additive
/// increase per window, until W_est reaches cwnd_prior.
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// Cube root of `x` ≥ 0 by Newton's iteration from above (x < 0 gives 0), with only
/// IEEE 754 basic operations, so the result is the same on every machine.
pub fn cbrt(x: f64) -> f64 {
    if x <= 0.0 || x.is_nan() {
        return 0.0;
    }
    // y³ − x is convex for y > 0, so from any y ≥ cbrt(x) the iterates decrease
    // monotonically to the root; stop when rounding stops them.
    let mut y = if x > 1.0 { x } else { 1.0 };
    loop {
        let next = (2.0 * y + x / (y * y)) / 3.0;
        if next >= y {
            return y;
        }
        y = next;
    }
}

/// K = cbrt((W_max − cwnd_epoch)/C), RFC 9438 §4.2 eq. (2), seconds: the time the
/// cubic function takes to come back to W_max. 0 when cwnd_epoch ≥ W_max.
pub fn k(w_max: f64, cwnd_epoch: f64) -> f64 {
    cbrt((w_max - cwnd_epoch) / C)
}

/// W_cubic(t) = C·(t − K)³ + W_max, RFC 9438 §4.2 eq. (1), segments.
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    let d = t - k;
    C * d * d * d + w_max
}

/// The current congestion-avoidance stage (RFC 9438's epoch).
#[derive(Clone, Debug, PartialEq)]
pub struct Epoch {
    /// t_epoch: when the stage began, ns.
    pub start_ns: i64,
    /// cwnd_epoch: cwnd when it began, segments.
    pub cwnd_epoch: f64,
    /// K, seconds.
    pub k: f64,
    /// W_est, the Reno-friendly estimate, segments (§4.3).
    pub w_est: f64,
    /// Fraction of a byte of growth not yet added to cwnd.
    carry: f64,
}

/// CUBIC's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cubic {
    /// W_max, segments: the window before the last reduction (lowered by fast
    /// convergence), or cwnd_epoch when that is larger (and after a timeout, §4.8).
    w_max: f64,
    /// cwnd_prior, segments: cwnd when ssthresh was last set (§4.3, §4.6).
    cwnd_prior: f64,
    /// The congestion-avoidance stage under way; `None` from a reduction until the
    /// first ACK in congestion avoidance.
    epoch: Option<Epoch>,
    /// HyStart++ in the initial slow start (inert unless `Config::hystart`).
    hystart: HyStart,
    /// Linux's HyStart (inert unless `Config::hystart_linux`).
    hystart_linux: LinuxHyStart,
}

impl Cubic {
    /// The HyStart++ state.
    pub fn hystart(&self) -> &HyStart {
        &self.hystart
    }

    /// Linux's HyStart state.
    pub fn hystart_linux(&self) -> &LinuxHyStart {
        &self.hystart_linux
    }

    /// W_max, segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// cwnd_prior, segments.
    pub fn cwnd_prior(&self) -> f64 {
        self.cwnd_prior
    }

    /// The congestion-avoidance stage under way, if any.
    pub fn epoch(&self) -> Option<&Epoch> {
        self.epoch.as_ref()
    }

    /// W_cubic(t) for the epoch under way, at `now_ns`, segments.
    pub fn w_cubic_at(&self, now_ns: i64) -> Option<f64> {
        let e = self.epoch.as_ref()?;
        let t = (now_ns - e.start_ns) as f64 / 1e9;
        Some(w_cubic(t, e.k, self.w_max))
    }
}

impl CongestionOps for Cubic {
    /// RFC 9438 §4.6: ssthresh = max(cwnd·β_cubic, 2·SMSS) (bytes, rounded down, on
    /// cwnd as Linux does), cwnd_prior = cwnd; §4.7 fast convergence: W_max =
    /// cwnd·(1 + β)/2 when cwnd is below the previous W_max (the flow is losing
    /// bandwidth), else W_max = cwnd. The epoch ends.
    fn ssthresh(&mut self, ctx: &CcContext) -> u32 {
        let cwnd = f64::from(ctx.cwnd) / f64::from(ctx.smss);
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        self.epoch = None;
        let reduced = (u64::from(ctx.cwnd) * 7 / 10) as u32; // β_cubic = 0.7
        reduced.max(2 * ctx.smss)
    }

    /// Below ssthresh, Reno's slow start (§4.10). Above, RFC 9438 §4.2–4.5: the first
    /// ACK starts the epoch (t_epoch = now, cwnd_epoch = cwnd, K from W_max, W_est =
    /// cwnd_epoch); each ACK for `acked` bytes (one SMSS per ACK without byte counting)
    /// adds α·acked/cwnd to W_est (α = 1 once W_est ≥ cwnd_prior, §4.3); if W_cubic(t)
    /// < W_est, cwnd = W_est (the Reno-friendly region, §4.3; never lowered, as Linux),
    /// else cwnd grows by (target − cwnd)/cwnd per SMSS acknowledged, target =
    /// W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd] (§4.4 concave, §4.5 convex).
    fn cong_avoid(&mut self, ctx: &CcContext, acked: u32) -> u32 {
        if ctx.cwnd < ctx.ssthresh {
            return self.hystart.slow_start(ctx, acked);
        }
        let smss = f64::from(ctx.smss);
        let cwnd = f64::from(ctx.cwnd) / smss;
        if self.epoch.is_none() {
            // §4.2: K = 0 and W_max = cwnd_epoch when the window is already at or above
            // W_max (and after a timeout, §4.8, where W_max was cleared).
            if self.w_max < cwnd {
                self.w_max = cwnd;
            }
            self.epoch = Some(Epoch {
                start_ns: ctx.now_ns,
                cwnd_epoch: cwnd,
                k: k(self.w_max, cwnd),
                w_est: cwnd,
                carry: 0.0,
            });
        }
        let w_max = self.w_max;
        let cwnd_prior = self.cwnd_prior;
        let e = self.epoch.as_mut().expect("epoch started above");
        let segs = if ctx.byte_counting {
            f64::from(acked) / smss
        } else {
            1.0
        };
        // §4.3: W_est grows by α per window of data acknowledged.
        let alpha = if e.w_est >= cwnd_prior { 1.0 } else { ALPHA };
        e.w_est += alpha * segs / cwnd;
        let t = (ctx.now_ns - e.start_ns) as f64 / 1e9;
        let rtt = ctx.srtt_ns.max(0) as f64 / 1e9;
        let next = if w_cubic(t, e.k, w_max) < e.w_est {
            e.w_est.max(cwnd)
        } else {
            let target = w_cubic(t + rtt, e.k, w_max).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * segs
        };
        let grow = (next - cwnd) * smss + e.carry;
        let whole = grow.floor().max(0.0);
        e.carry = grow - whole;
        // Within u32: cwnd at most doubles here (the target is clamped to 1.5·cwnd).
        ctx.cwnd
            .saturating_add(whole.min(f64::from(u32::MAX)) as u32)
    }

    /// A reduction ends the epoch (the next begins with the first ACK in congestion
    /// avoidance). After a timeout W_max is cleared, so that the next epoch has K = 0
    /// and W_max = its cwnd_epoch (RFC 9438 §4.8).
    fn cwnd_event(&mut self, ctx: &CcContext, ev: CaEvent) {
        self.epoch = None;
        self.hystart.end();
        if ev == CaEvent::Loss {
            self.w_max = 0.0;
            self.hystart_linux.on_loss(ctx);
        }
    }

    /// HyStart++ (RFC 9406), or Linux's HyStart, which, as Linux's
    /// `cubictcp_acked`, takes no sample in the first second of an epoch (just after
    /// a fast recovery).
    fn pkts_acked(&mut self, ctx: &CcContext, rtt_ns: Option<i64>) -> Option<u32> {
        if ctx.hystart_linux {
            let fresh_epoch = self
                .epoch
                .as_ref()
                .is_some_and(|e| ctx.now_ns - e.start_ns < 1_000_000_000);
            if fresh_epoch {
                return None;
            }
            return self.hystart_linux.on_ack(ctx, rtt_ns);
        }
        self.hystart.on_ack(ctx, rtt_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn cube_roots() {
        assert_eq!(cbrt(0.0), 0.0);
        assert_eq!(cbrt(-5.0), 0.0);
        assert_eq!(cbrt(27.0), 3.0);
        assert_eq!(cbrt(1.0), 1.0);
        assert!(close(cbrt(2.0), 1.259_921_049_894_873, 1e-15));
        assert!(close(cbrt(0.001), 0.1, 1e-15));
        assert!(close(cbrt(1e9), 1000.0, 1e-9));
    }

    #[test]
    fn alpha_is_three_tenths_over_one_point_seven() {
        // 3·0.3/1.7 = 0.9/1.7
        assert!(close(ALPHA, 0.529_411_764_705_882_4, 1e-15));
    }

    /// W_max = 100 segments, a loss takes cwnd to 70: K = cbrt(30/0.4) = cbrt(75)
    /// = 4.217163... s.
    #[test]
    fn k_after_a_loss_from_100_segments() {
        let k = k(100.0, 70.0);
        assert!(close(k, 4.217_163_326_508_746, 1e-12));
        // K·K·K·C = W_max − cwnd_epoch.
        assert!(close(C * k * k * k, 30.0, 1e-12));
        assert_eq!(super::k(50.0, 60.0), 0.0);
    }

    /// W_cubic(0) = cwnd_epoch, W_cubic(K) = W_max, symmetric around K.
    #[test]
    fn w_cubic_by_hand() {
        let k = k(100.0, 70.0);
        assert!(close(w_cubic(0.0, k, 100.0), 70.0, 1e-12));
        assert!(close(w_cubic(k, k, 100.0), 100.0, 1e-12));
        // 1 s either side of K: ±C·1³ = ±0.4.
        assert!(close(w_cubic(k - 1.0, k, 100.0), 99.6, 1e-12));
        assert!(close(w_cubic(k + 1.0, k, 100.0), 100.4, 1e-12));
        // t = 10 s, K = 2: 0.4·8³ + 20 = 224.8.
        assert!(close(w_cubic(10.0, 2.0, 20.0), 224.8, 1e-12));
    }

    fn ctx(now_s: f64, cwnd_segs: u32, ssthresh_segs: u32) -> CcContext {
        CcContext {
            now_ns: (now_s * 1e9) as i64,
            smss: 1000,
            cwnd: cwnd_segs * 1000,
            ssthresh: ssthresh_segs * 1000,
            flight_size: cwnd_segs * 1000,
            srtt_ns: 100_000_000,
            byte_counting: true,
            hystart: false,
            hystart_linux: false,
            snd_una: 0,
            snd_nxt: 0,
        }
    }

    #[test]
    fn loss_sets_ssthresh_w_max_and_fast_convergence() {
        let mut c = Cubic::default();
        assert_eq!(c.ssthresh(&ctx(0.0, 100, 50)), 70_000);
        assert_eq!((c.w_max(), c.cwnd_prior()), (100.0, 100.0));
        // Another loss below W_max: W_max = 80·1.7/2 = 68 (§4.7).
        assert_eq!(c.ssthresh(&ctx(1.0, 80, 70)), 56_000);
        assert!(close(c.w_max(), 68.0, 1e-12));
        assert_eq!(c.cwnd_prior(), 80.0);
        // Never below 2·SMSS.
        assert_eq!(c.ssthresh(&ctx(2.0, 2, 2)), 2_000);
    }

    #[test]
    fn epoch_starts_at_the_first_ack_in_congestion_avoidance() {
        let mut c = Cubic::default();
        c.ssthresh(&ctx(0.0, 100, 50));
        // Slow start below ssthresh: + min(acked, 2·SMSS).
        assert_eq!(c.cong_avoid(&ctx(0.1, 60, 70), 3000), 62_000);
        assert!(c.epoch().is_none());
        let w = c.cong_avoid(&ctx(0.2, 70, 70), 1000);
        let e = c.epoch().unwrap().clone();
        assert_eq!((e.start_ns, e.cwnd_epoch), (200_000_000, 70.0));
        assert!(close(e.k, 4.217_163_326_508_746, 1e-12));
        // At t = 0 W_cubic = cwnd_epoch = 70 and W_est = 70 + α·1/70 is above it: the
        // Reno-friendly region, cwnd = W_est (70.00756 segments, 70007 bytes).
        assert!(close(e.w_est, 70.0 + ALPHA / 70.0, 1e-12));
        assert_eq!(w, 70_007);
        // 0.8 s later W_cubic(0.8) = 100 − 0.4·3.417³ ≈ 84.0, far above W_est: cwnd
        // grows by (W_cubic(0.9) − cwnd)/cwnd per SMSS: (85.40 − 70)/70 = 0.22 segments.
        let w = c.cong_avoid(&ctx(1.0, 70, 70), 1000);
        let target = w_cubic(0.9, e.k, 100.0);
        assert!(close(target, 85.3997, 1e-4));
        let carry = (70.0 + ALPHA / 70.0) * 1000.0 - 70_007.0;
        let grow = (target - 70.0) / 70.0 * 1000.0 + carry;
        assert_eq!(w, 70_000 + grow.floor() as u32);
        assert_eq!(w, 70_220);
    }

    #[test]
    fn timeout_clears_w_max() {
        let mut c = Cubic::default();
        c.ssthresh(&ctx(0.0, 100, 50));
        c.cwnd_event(&ctx(0.0, 1, 70), CaEvent::Loss);
        assert_eq!(c.w_max(), 0.0);
        c.cong_avoid(&ctx(3.0, 70, 70), 1000);
        let e = c.epoch().unwrap();
        assert_eq!((e.k, c.w_max()), (0.0, 70.0));
    }
}
