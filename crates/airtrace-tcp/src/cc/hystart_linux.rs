//! Linux's HyStart: the slow-start exit of the kernel's cubic (`hystart_update` and
//! `cubictcp_acked` in net/ipv4/tcp_cubic.c, after Ha and Rhee's "Taming the
//! Elephants"), used by [`Cubic`](super::Cubic) when
//! [`Config::hystart_linux`](crate::Config::hystart_linux) is set. It is not RFC 9406's
//! HyStart++ ([`hystart`](super::hystart)): no conservative phase, slow start simply
//! ends (ssthresh = cwnd) on either of two signs that the path is full.
//!
//! - **Rounds.** A round ends with the first ACK that acknowledges beyond the SND.NXT
//!   recorded when it began; the next begins there (round_start = that ACK's time).
//! - **ACK train.** While the ACKs of a round come close together (each within
//!   [`ACK_DELTA_NS`], 2 ms, of the one before it) the train goes on; once it is longer
//!   than half of (delay_min + the ACK delay allowance) the ACKs are being spread by
//!   the bottleneck across half the minimum RTT: the pipe is full. The allowance is
//!   min(1 ms, 4 × 64 KiB of GSO / the pacing rate), the pacing rate being Linux's 2
//!   × cwnd / SRTT in slow start (`hystart_ack_delay`, `tcp_update_pacing_rate`); the
//!   halving is Linux's for a socket that is not paced (no fq qdisc, as the emulator's
//!   veth devices).
//! - **Delay increase.** The minimum RTT of a round's samples, once it has
//!   [`MIN_SAMPLES`] (8), compared on every later sample with delay_min (the smallest
//!   sample of the connection): above delay_min + clamp(delay_min/8, 4 ms, 16 ms), the
//!   queue is building.
//! - Only in slow start (cwnd < ssthresh) from [`LOW_WINDOW`] (16) segments on, and
//!   once per slow start: a timeout resets everything (delay_min too), so the slow
//!   start after it has its own HyStart (`cubictcp_state` on `TCP_CA_Loss`). Samples
//!   less than a second after a congestion-avoidance epoch began are discarded, as
//!   after a fast recovery (the caller, [`Cubic`](super::Cubic), does it).
//!
//! RTT samples are the endpoint's, from the send time of the newest segment the ACK
//! acknowledges that was never retransmitted (Linux's `ca_rtt_us`; in ns here).

use super::CcContext;

/// Slow start must have reached this many segments (`hystart_low_window`).
pub const LOW_WINDOW: u32 = 16;
/// Most spacing between two ACKs of one train, ns (`hystart_ack_delta_us`).
pub const ACK_DELTA_NS: i64 = 2_000_000;
/// RTT samples a round needs before its minimum is compared (`HYSTART_MIN_SAMPLES`).
pub const MIN_SAMPLES: u32 = 8;
/// Bounds of the delay threshold, ns (`HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`).
pub const DELAY_MIN_NS: i64 = 4_000_000;
/// See [`DELAY_MIN_NS`].
pub const DELAY_MAX_NS: i64 = 16_000_000;
/// Most ACK delay allowance, ns (`hystart_ack_delay`'s cap, 1 ms).
pub const MAX_ACK_DELAY_NS: i64 = 1_000_000;
/// The device's GSO size the allowance covers four of, bytes (a veth's 64 KiB).
pub const GSO_MAX_SIZE: u64 = 65_536;

/// Which sign ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A round's ACK train grew longer than half the minimum RTT.
    AckTrain,
    /// A round's minimum RTT rose above the connection's by the threshold.
    Delay,
}

/// Linux's HyStart state of one sender (`struct bictcp`'s HyStart fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinuxHyStart {
    /// `found`: the exit of this slow start, once taken.
    found: Option<Exit>,
    /// When the current round began, ns.
    round_start: i64,
    /// The last ACK of the current train, ns.
    last_ack: i64,
    /// SND.NXT when the current round began; `None` before the first round.
    end_seq: Option<u32>,
    /// The current round's minimum RTT sample, ns.
    curr_rtt: Option<i64>,
    /// Samples counted in the current round (up to [`MIN_SAMPLES`]).
    sample_cnt: u32,
    /// The smallest RTT sample since the last reset, ns.
    delay_min: Option<i64>,
}

/// a > b in sequence space (RFC 793 §3.3).
fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl LinuxHyStart {
    /// The exit taken in this slow start, if any.
    pub fn found(&self) -> Option<Exit> {
        self.found
    }

    /// The smallest RTT sample since the last reset, ns.
    pub fn delay_min_ns(&self) -> Option<i64> {
        self.delay_min
    }

    /// When the current round began, ns.
    pub fn round_start_ns(&self) -> i64 {
        self.round_start
    }

    /// The current round's minimum RTT sample, ns.
    pub fn round_min_rtt_ns(&self) -> Option<i64> {
        self.curr_rtt
    }

    /// `bictcp_hystart_reset`: a new round from now to SND.NXT.
    fn reset_round(&mut self, ctx: &CcContext) {
        self.round_start = ctx.now_ns;
        self.last_ack = ctx.now_ns;
        self.end_seq = Some(ctx.snd_nxt);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// An ACK of new data with its RTT sample (`cubictcp_acked`): delay_min, then the
    /// two detections while in slow start. Returns the ssthresh that ends slow start
    /// (the cwnd now), else `None`.
    pub fn on_ack(&mut self, ctx: &CcContext, rtt_ns: Option<i64>) -> Option<u32> {
        if !ctx.hystart_linux {
            return None;
        }
        let delay = rtt_ns?.max(1);
        let delay_min = self.delay_min.map_or(delay, |m| m.min(delay));
        self.delay_min = Some(delay_min);
        let in_slow_start = ctx.cwnd < ctx.ssthresh;
        if self.found.is_some() || !in_slow_start || ctx.cwnd < LOW_WINDOW * ctx.smss {
            return None;
        }
        self.found = self.detect(ctx, delay, delay_min);
        self.found.map(|_| ctx.cwnd)
    }

    /// `hystart_update`: the round bookkeeping and the two detections.
    fn detect(&mut self, ctx: &CcContext, delay: i64, delay_min: i64) -> Option<Exit> {
        if self.end_seq.is_none_or(|e| seq_gt(ctx.snd_una, e)) {
            self.reset_round(ctx);
        }
        let now = ctx.now_ns;
        if now - self.last_ack <= ACK_DELTA_NS {
            self.last_ack = now;
            // Not paced: half of delay_min (and of the allowance).
            let threshold = (delay_min + ack_delay_ns(ctx)) / 2;
            if now - self.round_start > threshold {
                return Some(Exit::AckTrain);
            }
        }
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
            return None;
        }
        let thresh = (delay_min / 8).clamp(DELAY_MIN_NS, DELAY_MAX_NS);
        (self.curr_rtt.is_some_and(|c| c > delay_min + thresh)).then_some(Exit::Delay)
    }

    /// A retransmission timeout (`cubictcp_state` on `TCP_CA_Loss`): everything
    /// reset, the slow start that follows has its own HyStart.
    pub fn on_loss(&mut self, ctx: &CcContext) {
        *self = LinuxHyStart::default();
        self.reset_round(ctx);
    }
}

/// `hystart_ack_delay`: min(1 ms, 4 × GSO size / pacing rate), the pacing rate being
/// 200 % of cwnd/SRTT in slow start (120 % once cwnd ≥ ssthresh/2); 0 before an RTT
/// is known.
fn ack_delay_ns(ctx: &CcContext) -> i64 {
    if ctx.srtt_ns <= 0 {
        return 0;
    }
    let percent: u64 = if ctx.cwnd < ctx.ssthresh / 2 {
        200
    } else {
        120
    };
    // bytes per second = percent/100 × cwnd / SRTT.
    let rate = u64::from(ctx.cwnd) * percent * 10_000_000 / ctx.srtt_ns as u64;
    if rate == 0 {
        return MAX_ACK_DELAY_NS;
    }
    let ns = 4 * GSO_MAX_SIZE * 1_000_000_000 / rate;
    (ns.min(MAX_ACK_DELAY_NS as u64)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::INITIAL_SSTHRESH;

    const MS: i64 = 1_000_000;

    fn ctx(now: i64, cwnd_segs: u32, snd_una: u32, snd_nxt: u32) -> CcContext {
        CcContext {
            now_ns: now,
            smss: 1000,
            cwnd: cwnd_segs * 1000,
            ssthresh: INITIAL_SSTHRESH,
            flight_size: 0,
            srtt_ns: 100 * MS,
            byte_counting: true,
            hystart: false,
            hystart_linux: true,
            snd_una,
            snd_nxt,
        }
    }

    #[test]
    fn the_ack_delay_allowance_is_capped_at_one_millisecond() {
        // 2 × 100 segments / 100 ms = 2 MB/s: 262 144 / 2e6 s, far above 1 ms.
        assert_eq!(ack_delay_ns(&ctx(0, 100, 0, 0)), MAX_ACK_DELAY_NS);
        // 2 × 20 000 segments / 100 ms = 400 MB/s: 0.655 ms.
        assert_eq!(ack_delay_ns(&ctx(0, 20_000, 0, 0)), 655_360);
        let mut c = ctx(0, 100, 0, 0);
        c.srtt_ns = 0;
        assert_eq!(ack_delay_ns(&c), 0);
    }

    /// A delay rise ends slow start once; a timeout resets everything, delay_min too,
    /// and the slow start after it can end again by itself.
    #[test]
    fn a_timeout_gives_the_next_slow_start_its_own_hystart() {
        let mut h = LinuxHyStart::default();
        // Nine samples 3 ms apart (no train): 40 ms, then 60 ms ≥ 40 + 5 ms.
        let mut exit = None;
        for i in 0..9u32 {
            let rtt = if i == 0 { 40 } else { 60 };
            let c = ctx(i64::from(i) * 3 * MS, 20, i * 1000, 100_000);
            exit = exit.or(h.on_ack(&c, Some(rtt * MS)));
        }
        // The first sample is the round's minimum: 40 ms, no rise yet.
        assert_eq!((exit, h.found()), (None, None));
        let mut h = LinuxHyStart::default();
        h.on_ack(&ctx(0, 20, 0, 100_000), Some(40 * MS));
        for i in 1..=9u32 {
            let c = ctx(1_000 * MS + i64::from(i) * 3 * MS, 20, 100_001 + i, 200_000);
            exit = exit.or(h.on_ack(&c, Some(60 * MS)));
        }
        assert_eq!((exit, h.found()), (Some(20_000), Some(Exit::Delay)));
        assert_eq!(
            h.on_ack(&ctx(2_000 * MS, 20, 150_000, 200_000), Some(60 * MS)),
            None
        );
        h.on_loss(&ctx(3_000 * MS, 1, 150_000, 200_000));
        assert_eq!((h.found(), h.delay_min_ns()), (None, None));
        assert_eq!(h.round_start_ns(), 3_000 * MS);
    }

    #[test]
    fn nothing_below_sixteen_segments_or_without_the_option() {
        let mut h = LinuxHyStart::default();
        let mut c = ctx(0, 15, 0, 100_000);
        assert_eq!(h.on_ack(&c, Some(100 * MS)), None);
        assert_eq!(h.delay_min_ns(), Some(100 * MS));
        assert_eq!(h.end_seq, None);
        c.hystart_linux = false;
        let mut off = LinuxHyStart::default();
        assert_eq!(off.on_ack(&c, Some(100 * MS)), None);
        assert_eq!(off.delay_min_ns(), None);
    }
}
