//! BBR v1 as Linux ships it (`net/ipv4/tcp_bbr.c`; draft-cardwell-iccrg-bbr-
//! congestion-control-00): a model of the path — the windowed maximum delivery rate
//! (over 10 round trips) and the windowed minimum RTT (over 10 s) — from which it sets
//! a pacing rate (gain × bandwidth) and cwnd (gain × BDP plus a quantization budget)
//! on every ACK, instead of growing cwnd and halving it on a loss.
//!
//! The state machine (`bbr_update_model`): STARTUP (pacing and cwnd gain 2/ln 2 ≈
//! 2.885) until three rounds without 25 % growth of the bandwidth estimate
//! (`bbr_check_full_bw_reached`); DRAIN (pacing gain 1/2.885) until the data in
//! flight is down to one BDP (`bbr_check_drain`); PROBE_BW, cycling its pacing gain
//! through 1.25, 0.75, then 1 six times, one phase per minimum RTT, from a random
//! phase drawn from the scenario's seeded stream (`bbr_reset_probe_bw_mode`,
//! `bbr_is_next_cycle_phase`), with a cwnd gain of 2; PROBE_RTT when the minimum RTT
//! is 10 s old: cwnd 4 segments for max(200 ms, one round), then back
//! (`bbr_update_min_rtt`, `bbr_check_probe_rtt_done`).
//!
//! Loss: no multiplicative decrease. On entering a fast recovery cwnd is held to
//! packet conservation (what is in flight plus what this ACK delivered) for one
//! round, then grows toward the target again; on leaving the recovery (or a timeout's
//! Loss phase) the cwnd saved when it began is restored
//! (`bbr_set_cwnd_to_recover_or_restore`); the bytes each ACK newly marks lost are
//! taken off cwnd first. `ssthresh` is not BBR's: it returns the current one
//! (`bbr_ssthresh`, saving cwnd), and sets it to one BDP on entering DRAIN.
//!
//! Units: bytes and nanoseconds, where Linux counts packets and microseconds; the
//! bandwidth is bytes per second of payload, the BDP rounded up to whole segments as
//! Linux rounds packets. Not modelled (Linux has them): the long-term bandwidth
//! estimate that detects token-bucket policers (`bbr_lt_bw_sampling`, which only
//! acts on loss rates of 20 % and more), the ACK-aggregation allowance
//! (`bbr_update_ack_aggregation`, `extra_acked`), the restart after an idle period
//! (`CA_EVENT_TX_START`: the simulated applications are bulk senders), and
//! `is_ack_delayed` in the min-RTT filter. BBR needs SACK here (the endpoint's
//! Reno and NewReno recoveries inflate cwnd themselves), which `Config::validate`
//! checks.

use super::{AckSample, CaEvent, CcContext, CongestionOps, CwndControl, INIT_CWND_SEGMENTS};
use crate::endpoint::Phase;

/// Linux's fixed point for gains: `BBR_UNIT` = 256 is 1.0.
pub const UNIT: u64 = 256;
/// STARTUP's pacing and cwnd gain, 2/ln 2 (`bbr_high_gain`): 739/256 ≈ 2.887.
pub const HIGH_GAIN: u64 = UNIT * 2885 / 1000 + 1;
/// DRAIN's pacing gain, 1/2.885 (`bbr_drain_gain`): 88/256.
pub const DRAIN_GAIN: u64 = UNIT * 1000 / 2885;
/// PROBE_BW's cwnd gain (`bbr_cwnd_gain`): 2.
pub const CWND_GAIN: u64 = UNIT * 2;
/// PROBE_BW's pacing-gain cycle (`bbr_pacing_gain`): 1.25, 0.75, then 1.0 six times.
pub const PACING_GAIN: [u64; CYCLE_LEN] = [
    UNIT * 5 / 4,
    UNIT * 3 / 4,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
];
/// Phases of the gain cycle.
pub const CYCLE_LEN: usize = 8;
/// The random first phase is drawn among this many (`bbr_cycle_rand`): never 0.75.
const CYCLE_RAND: u64 = 7;
/// Window of the bandwidth filter, rounds (`bbr_bw_rtts`).
pub const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// Window of the min-RTT filter (`bbr_min_rtt_win_sec`).
pub const MIN_RTT_WIN_NS: i64 = 10_000_000_000;
/// Least time in PROBE_RTT (`bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_NS: i64 = 200_000_000;
/// The least cwnd, and PROBE_RTT's, in segments (`bbr_cwnd_min_target`).
pub const CWND_MIN_SEGMENTS: u32 = 4;
/// Growth that counts as "more bandwidth" in STARTUP (`bbr_full_bw_thresh`): 1.25.
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
/// Rounds without it that end STARTUP (`bbr_full_bw_cnt`).
const FULL_BW_CNT: u32 = 3;
/// Pace 1 % below the estimate (`bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u64 = 1;
/// Below this pacing rate (bytes/s) one segment is a TSO burst, else two
/// (`bbr_min_tso_rate` = 1.2 Mbit/s).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// Linux's `sk_pacing_shift`: a TSO burst is about 1 ms of the pacing rate.
const PACING_SHIFT: u32 = 10;

const NS_PER_S: u128 = 1_000_000_000;

/// BBR's mode (`enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up: the delivery rate doubles each round.
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Cycle the pacing gain around the estimated bandwidth.
    ProbeBw,
    /// Cut inflight to 4 segments to measure the path's RTT again.
    ProbeRtt,
}

/// Linux's `win_minmax` running maximum (Kathleen Nichols' algorithm, three
/// samples: the best, second best and third best of the window's sub-windows), on
/// round counts: `minmax_running_max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MaxFilter {
    /// (time, value), best first.
    s: [(u64, u64); 3],
}

impl MaxFilter {
    fn get(&self) -> u64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }

    fn running_max(&mut self, win: u64, t: u64, v: u64) {
        let val = (t, v);
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            self.reset(t, v);
            return;
        }
        if v >= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        // minmax_subwin_update: age the best samples out of the window.
        let dt = t - self.s[0].0;
        if dt > win {
            self.s = [self.s[1], self.s[2], val];
            if t - self.s[0].0 > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
    }
}

/// SplitMix64: the small seeded generator of the random first gain phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// BBR's state (Linux's `struct bbr`).
#[derive(Clone, Debug, PartialEq)]
pub struct Bbr {
    mode: Mode,
    /// Minimum RTT over the last 10 s, ns; `None` before any sample.
    min_rtt_ns: Option<i64>,
    min_rtt_stamp: i64,
    /// When PROBE_RTT may end (set once inflight is down to 4 segments).
    probe_rtt_done_stamp: Option<i64>,
    probe_rtt_round_done: bool,
    /// Max delivery rate, bytes/s, over the last `BW_RTTS` rounds.
    bw: MaxFilter,
    /// Packet-timed rounds so far.
    rtt_cnt: u64,
    /// `delivered` at the end of the current round.
    next_rtt_delivered: u64,
    round_start: bool,
    /// Delivered clock when the current gain phase began.
    cycle_stamp: i64,
    cycle_idx: usize,
    prev_phase: Phase,
    packet_conservation: bool,
    pacing_gain: u64,
    cwnd_gain: u64,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    /// The last good cwnd, restored after a recovery or PROBE_RTT.
    prior_cwnd: u32,
    has_seen_rtt: bool,
    /// Bytes per second; 0 until `init`.
    pacing_rate: u64,
    rng: SplitMix64,
}

impl Default for Bbr {
    fn default() -> Self {
        Bbr {
            mode: Mode::Startup,
            min_rtt_ns: None,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_stamp: 0,
            cycle_idx: 0,
            prev_phase: Phase::Open,
            packet_conservation: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            prior_cwnd: 0,
            has_seen_rtt: false,
            pacing_rate: 0,
            rng: SplitMix64::default(),
        }
    }
}

impl Bbr {
    /// Seeds the draw of PROBE_BW's first gain phase (Linux: `prandom_u32_max`).
    pub fn seed(&mut self, seed: u64) {
        self.rng = SplitMix64(seed);
    }

    /// The mode now.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate: the windowed max delivery rate, bytes/s.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The min-RTT estimate, ns.
    pub fn min_rtt_ns(&self) -> Option<i64> {
        self.min_rtt_ns
    }

    /// The pacing gain now, in 1/256.
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    /// The cwnd gain now, in 1/256.
    pub fn cwnd_gain(&self) -> u64 {
        self.cwnd_gain
    }

    /// PROBE_BW's phase index (0: gain 1.25, 1: 0.75, 2–7: 1.0).
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    /// STARTUP found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Packet-timed rounds so far.
    pub fn rounds(&self) -> u64 {
        self.rtt_cnt
    }

    /// `bbr_rate_bytes_per_sec` and `bbr_bw_to_pacing_rate`: `bw` × gain, 1 % less.
    fn pacing_rate_for(bw: u64, gain: u64) -> u64 {
        let r = u128::from(bw) * u128::from(gain) / u128::from(UNIT);
        (r * u128::from(100 - PACING_MARGIN_PERCENT) / 100) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain × cwnd / SRTT (1 ms before an RTT
    /// sample).
    fn init_pacing_rate(&mut self, ctx: &CcContext) {
        let rtt = if ctx.srtt_ns > 0 {
            self.has_seen_rtt = true;
            ctx.srtt_ns
        } else {
            1_000_000
        };
        let bw = u128::from(ctx.cwnd) * NS_PER_S / rtt as u128;
        self.pacing_rate = Self::pacing_rate_for(bw as u64, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower before the pipe was found full.
    fn set_pacing_rate(&mut self, ctx: &CcContext, bw: u64, gain: u64) {
        if !self.has_seen_rtt && ctx.srtt_ns > 0 {
            self.init_pacing_rate(ctx);
        }
        let rate = Self::pacing_rate_for(bw, gain);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: the burst the sender's TSO would make, about 1 ms of
    /// the pacing rate, at least 1 segment below 1.2 Mbit/s and 2 above
    /// (`bbr_min_tso_segs`), at most 127.
    fn tso_segs_goal(&self, smss: u32) -> u32 {
        let min = if self.pacing_rate < MIN_TSO_RATE {
            1
        } else {
            2
        };
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(65_536);
        ((bytes / u64::from(smss.max(1))) as u32).max(min).min(0x7f)
    }

    /// `bbr_bdp`: ceil(bw × min_rtt × gain), in whole segments; the initial window
    /// (10 segments) before an RTT sample.
    fn bdp_segments(&self, smss: u32, bw: u64, gain: u64) -> u32 {
        let Some(min_rtt) = self.min_rtt_ns else {
            return INIT_CWND_SEGMENTS;
        };
        let num = u128::from(bw) * min_rtt.max(0) as u128 * u128::from(gain);
        let den = NS_PER_S * u128::from(UNIT) * u128::from(smss.max(1));
        num.div_ceil(den).min(u128::from(u32::MAX / smss.max(1))) as u32
    }

    /// `bbr_quantization_budget`: + 3 TSO bursts, rounded up to an even number of
    /// segments, + 2 in PROBE_BW's 1.25 phase.
    fn quantization_budget(&self, smss: u32, segs: u32) -> u32 {
        let mut cwnd = segs + 3 * self.tso_segs_goal(smss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the in-flight target for `gain`, bytes.
    fn inflight(&self, smss: u32, bw: u64, gain: u64) -> u32 {
        let segs = self.quantization_budget(smss, self.bdp_segments(smss, bw, gain));
        segs.saturating_mul(smss)
    }

    /// `bbr_packets_in_net_at_edt`: what will still be in the network when the next
    /// paced segment leaves (the one leaving counted when probing up).
    fn in_net_at_edt(&self, ctx: &CcContext, ack: &AckSample, inflight_now: u32) -> u32 {
        let wait = (ack.edt_ns.max(ctx.now_ns) - ctx.now_ns) as u128;
        let delivered_meanwhile = u128::from(self.bw.get()) * wait / NS_PER_S;
        let mut at_edt = u128::from(inflight_now);
        if self.pacing_gain > UNIT {
            at_edt += u128::from(self.tso_segs_goal(ctx.smss) * ctx.smss);
        }
        at_edt.saturating_sub(delivered_meanwhile) as u32
    }

    /// `bbr_save_cwnd`: the cwnd to restore, unless a recovery or PROBE_RTT cut it.
    fn save_cwnd(&mut self, cwnd: u32) {
        self.prior_cwnd = if matches!(self.prev_phase, Phase::Open | Phase::Disorder)
            && self.mode != Mode::ProbeRtt
        {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// `bbr_update_bw`: round counting, then the sample into the max filter
    /// (an app-limited one only if it is no lower than the estimate).
    fn update_bw(&mut self, ack: &AckSample) {
        self.round_start = false;
        let rs = &ack.rs;
        let Some(rate) = rs.rate_bytes_per_s() else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = ack.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if !rs.is_app_limited || rate >= self.bw.get() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, rate);
        }
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, ack: &AckSample) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = ack.delivered_ns;
    }

    /// `bbr_is_next_cycle_phase`: a phase lasts one min RTT; the 1.25 phase until
    /// inflight reaches 1.25 BDP (or a loss), the 0.75 phase until it falls to one
    /// BDP.
    fn is_next_cycle_phase(&self, ctx: &CcContext, ack: &AckSample) -> bool {
        let full_length = ack.delivered_ns - self.cycle_stamp > self.min_rtt_ns.unwrap_or(i64::MAX);
        if self.pacing_gain == UNIT {
            return full_length;
        }
        let inflight = self.in_net_at_edt(ctx, ack, ack.prior_in_flight);
        let bw = self.bw.get();
        if self.pacing_gain > UNIT {
            return full_length
                && (ack.rs.losses > 0
                    || inflight >= self.inflight(ctx.smss, bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(ctx.smss, bw, UNIT)
    }

    /// `bbr_reset_probe_bw_mode`: a random phase among all but the 0.75 one.
    fn reset_probe_bw_mode(&mut self, ack: &AckSample) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - (self.rng.next() % CYCLE_RAND) as usize;
        self.advance_cycle_phase(ack);
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, ack: &AckSample) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(ack);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_check_full_bw_reached`: three rounds, not app-limited, whose estimate did
    /// not grow by 25 %.
    fn check_full_bw_reached(&mut self, ack: &AckSample) {
        if self.full_bw_reached || !self.round_start || ack.rs.is_app_limited {
            return;
        }
        let thresh = u128::from(self.full_bw) * u128::from(FULL_BW_THRESH) / u128::from(UNIT);
        if u128::from(self.bw.get()) >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP → DRAIN (ssthresh = one BDP) → PROBE_BW once
    /// inflight is down to one BDP.
    fn check_drain(&mut self, ctx: &CcContext, ack: &AckSample, out: &mut CwndControl) {
        let bw = self.bw.get();
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            out.ssthresh = Some(self.inflight(ctx.smss, bw, UNIT));
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(ctx, ack, ack.in_flight) <= self.inflight(ctx.smss, bw, UNIT)
        {
            self.reset_probe_bw_mode(ack);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, ctx: &CcContext, ack: &AckSample, out: &mut CwndControl) {
        if self.probe_rtt_done_stamp.is_none_or(|d| ctx.now_ns <= d) {
            return;
        }
        self.min_rtt_stamp = ctx.now_ns;
        out.cwnd = out.cwnd.max(self.prior_cwnd);
        self.reset_mode(ack);
    }

    /// `bbr_update_min_rtt`: the 10-s min filter, and PROBE_RTT when it expires.
    fn update_min_rtt(&mut self, ctx: &CcContext, ack: &AckSample, out: &mut CwndControl) {
        let now = ctx.now_ns;
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN_NS;
        if let Some(rtt) = ack.rs.rtt_ns {
            if expired || self.min_rtt_ns.is_none_or(|m| rtt <= m) {
                self.min_rtt_ns = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(out.cwnd);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples in PROBE_RTT are app-limited: they say nothing of the path.
            out.app_limited = true;
            let min_flight = CWND_MIN_SEGMENTS * ctx.smss;
            if self.probe_rtt_done_stamp.is_none() && ack.in_flight <= min_flight {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_NS);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = ack.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(ctx, ack, out);
                }
            }
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: losses off cwnd; packet conservation
    /// for the first round of a recovery; the saved cwnd back when it ends. True
    /// while conserving (cwnd is then final).
    fn recover_or_restore(&mut self, ctx: &CcContext, ack: &AckSample, cwnd: &mut u32) -> bool {
        let acked = ack.rs.acked_sacked;
        let in_recovery = |p: Phase| matches!(p, Phase::Recovery | Phase::Loss);
        if ack.rs.losses > 0 {
            *cwnd = cwnd.saturating_sub(ack.rs.losses).max(ctx.smss);
        }
        if ack.phase == Phase::Recovery && self.prev_phase != Phase::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = ack.delivered;
            *cwnd = ack.in_flight + acked;
        } else if in_recovery(self.prev_phase) && !in_recovery(ack.phase) {
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_phase = ack.phase;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(ack.in_flight + acked);
            return true;
        }
        false
    }

    /// `bbr_set_cwnd`: toward gain × BDP + the quantization budget, by at most what
    /// was delivered; only down to it once the pipe was found full; at least 4
    /// segments; 4 in PROBE_RTT.
    fn set_cwnd(&mut self, ctx: &CcContext, ack: &AckSample, out: &mut CwndControl) {
        let acked = ack.rs.acked_sacked;
        let smss = ctx.smss;
        let mut cwnd = out.cwnd;
        if acked > 0 && !self.recover_or_restore(ctx, ack, &mut cwnd) {
            let target = self.inflight(smss, self.bw.get(), self.cwnd_gain);
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || ack.delivered < u64::from(INIT_CWND_SEGMENTS * smss) {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_SEGMENTS * smss);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_SEGMENTS * smss);
        }
        out.cwnd = cwnd;
    }
}

impl CongestionOps for Bbr {
    /// `bbr_ssthresh`: BBR does not reduce on a loss; it saves cwnd for
    /// `recover_or_restore` and keeps ssthresh.
    fn ssthresh(&mut self, ctx: &CcContext) -> u32 {
        self.save_cwnd(ctx.cwnd);
        ctx.ssthresh
    }

    /// Never called: BBR sets cwnd itself ([`CongestionOps::cong_control`]).
    fn cong_avoid(&mut self, ctx: &CcContext, _acked: u32) -> u32 {
        ctx.cwnd
    }

    /// `bbr_set_state`: a timeout ends the round and restarts full-pipe detection's
    /// reference.
    fn cwnd_event(&mut self, _ctx: &CcContext, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.prev_phase = Phase::Loss;
            self.full_bw = 0;
            self.round_start = true;
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    /// `bbr_init`, when the handshake completes: min RTT from it, the initial
    /// pacing rate.
    fn init(&mut self, ctx: &CcContext, min_rtt_ns: Option<i64>) {
        self.min_rtt_ns = min_rtt_ns;
        self.min_rtt_stamp = ctx.now_ns;
        self.init_pacing_rate(ctx);
    }

    /// `bbr_undo_cwnd`: a spurious slow-down; full-pipe detection starts over.
    fn undo_cwnd(&mut self, _ctx: &CcContext) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
    }

    fn controls_cwnd(&self) -> bool {
        true
    }

    /// `bbr_main`: the model from the rate sample, then pacing rate and cwnd.
    fn cong_control(&mut self, ctx: &CcContext, ack: &AckSample) -> Option<CwndControl> {
        let mut out = CwndControl {
            cwnd: ctx.cwnd,
            ssthresh: None,
            app_limited: false,
        };
        self.update_bw(ack);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(ctx, ack) {
            self.advance_cycle_phase(ack);
        }
        self.check_full_bw_reached(ack);
        self.check_drain(ctx, ack, &mut out);
        self.update_min_rtt(ctx, ack, &mut out);
        self.update_gains();
        let bw = self.bw.get();
        self.set_pacing_rate(ctx, bw, self.pacing_gain);
        self.set_cwnd(ctx, ack, &mut out);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `win_minmax`: a new max replaces everything; an old max ages out after the
    /// window, and the best of the later samples takes its place.
    #[test]
    fn max_filter_forgets_after_its_window() {
        let mut f = MaxFilter::default();
        f.running_max(10, 1, 100);
        f.running_max(10, 2, 50);
        f.running_max(10, 5, 70);
        assert_eq!(f.get(), 100);
        f.running_max(10, 11, 60);
        assert_eq!(
            f.get(),
            100,
            "round 11 is still within 10 rounds of round 1"
        );
        f.running_max(10, 12, 40);
        assert_eq!(f.get(), 70, "round 1's 100 is out; the best since is 70");
        f.running_max(10, 13, 200);
        assert_eq!(f.get(), 200);
    }

    /// Linux's gains, in 1/256.
    #[test]
    fn gains_are_linuxs() {
        assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
        assert_eq!(PACING_GAIN[..3], [320, 192, 256]);
    }

    /// The random first phase is never 0.75 (index 1), and all others come up.
    #[test]
    fn first_probe_bw_phase_is_never_the_drain_phase() {
        let mut seen = [false; CYCLE_LEN];
        let ack = AckSample::default();
        for seed in 0..200 {
            let mut b = Bbr::default();
            b.seed(seed);
            b.reset_probe_bw_mode(&ack);
            seen[b.cycle_idx] = true;
        }
        assert_eq!(seen, [true, false, true, true, true, true, true, true]);
    }
}
