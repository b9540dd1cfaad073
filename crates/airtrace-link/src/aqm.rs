//! Active queue management for [`Direction`](crate::link::Direction): RED and CoDel.
//!
//! A [`QueueDiscipline`] is configuration (plain data, validated by
//! [`QueueDiscipline::validate`]); [`Direction::with_queue`](crate::link::Direction::with_queue)
//! turns it into running state. The queue limit ([`QueueLimit`](crate::queue::QueueLimit))
//! still applies on top of either algorithm: a packet that does not fit is tail-dropped.
//!
//! # ECN
//!
//! Both algorithms can mark instead of dropping (`ecn: true`). Whether a packet is
//! ECN-capable (ECT) is said when it is sent:
//! [`Direction::send_ecn`](crate::link::Direction::send_ecn) takes the flag, plain
//! [`Direction::send`](crate::link::Direction::send) means "not ECT". A mark comes back
//! as `ce: true` on [`Event::Delivered`](crate::link::Event::Delivered); the caller sets
//! the CE codepoint in its own packet. This keeps the link free of any trait bound on
//! the item type (a test label, a packet handle and a real packet all work). A packet
//! that is not ECT is dropped where an ECT one would be marked.
//!
//! # RED (Floyd & Jacobson 1993; RFC 2309; "gentle" as in Floyd 2000)
//!
//! Decided at **enqueue**. For every arrival: if the queue is non-empty,
//! `avg ← (1 − w_q)·avg + w_q·q`; if it is empty, `avg ← (1 − w_q)^m·avg` with
//! `m = idle time / idle_packet_ns` (the packets that could have been sent while the
//! queue was empty). `q` is the number of packets waiting (fragments count one each;
//! the packet being transmitted does not count). Then, with
//! `p_b = max_p·(avg − min_th)/(max_th − min_th)`:
//!
//! - `avg < min_th`: enqueue, `count ← −1`;
//! - `min_th ≤ avg < max_th`: `count ← count + 1`, drop (or mark) with probability
//!   `p_a = p_b / (1 − count·p_b)` (1 once `count·p_b ≥ 1`), then `count ← 0` if dropped;
//!   this spaces drops uniformly between 1 and `1/p_b` arrivals apart;
//! - `max_th ≤ avg < 2·max_th` with `gentle`: the same with
//!   `p_b = max_p + (1 − max_p)·(avg − max_th)/max_th`;
//! - otherwise: drop (or mark), `count ← 0`.
//!
//! Exactly one number is drawn from the stream per arrival, whatever the branch, so two
//! runs that differ only in a threshold stay aligned packet by packet.
//!
//! # CoDel (RFC 8289)
//!
//! Decided at **dequeue**, with the RFC's pseudocode (section 5): the sojourn time of a
//! packet is dequeue time − enqueue time; once it has stayed at or above `target` for
//! `interval` (while more than `mtu_bytes` wait behind it), CoDel enters the dropping
//! state, drops one packet, and schedules the next drop `interval / sqrt(count)` after
//! the previous scheduled one, `count` rising by one per drop, until the sojourn time
//! falls below `target`. On re-entering soon after leaving (within 16 intervals)
//! `count` resumes from the drops of the last episode. With `ecn`, an ECT packet is
//! marked and sent instead, and that dequeue ends (as in Linux's `codel_dequeue`).
//! A dequeue-time drop is reported as [`Event::Dropped`](crate::link::Event::Dropped)
//! with reason [`DropReason::Aqm`](crate::record::DropReason::Aqm) at the dequeue time.
//!
//! # Fragmented datagrams
//!
//! Both algorithms act on whole datagrams: RED decides once when the datagram arrives
//! (counting its fragments in `q`), CoDel when its first fragment reaches the head of
//! the line; a dropped datagram takes all its fragments with it.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

/// How a [`Direction`](crate::link::Direction)'s queue chooses what to drop.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum QueueDiscipline {
    /// Drop arrivals that exceed the limit, nothing else (the default).
    #[default]
    DropTail,
    /// Random Early Detection.
    Red(RedConfig),
    /// Controlled Delay.
    CoDel(CoDelConfig),
}

impl QueueDiscipline {
    /// Checks the parameters; the error names the first field that breaks its rule.
    pub fn validate(&self) -> Result<(), AqmConfigError> {
        match self {
            QueueDiscipline::DropTail => Ok(()),
            QueueDiscipline::Red(c) => c.validate(),
            QueueDiscipline::CoDel(c) => c.validate(),
        }
    }
}

/// RED parameters. Thresholds are in packets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedConfig {
    /// Weight of the EWMA of the queue length, in (0, 1]. Default 0.002 (Floyd &
    /// Jacobson's recommendation).
    pub w_q: f64,
    /// Below this average nothing is dropped, in packets. Default 5.
    pub min_th: f64,
    /// At this average the drop probability reaches `max_p`, in packets (> `min_th`).
    /// Default 15 (3 × `min_th`, as Floyd suggests).
    pub max_th: f64,
    /// Drop probability at `max_th`, in [0, 1]. Default 0.1.
    pub max_p: f64,
    /// Between `max_th` and `2·max_th`, raise the probability linearly from `max_p` to
    /// 1 instead of dropping everything. Default true.
    pub gentle: bool,
    /// Mark ECT packets instead of dropping them. Default false.
    pub ecn: bool,
    /// Time to send one typical packet, in ns, to age the average over idle time
    /// (Floyd's `s`). Default 1 ms (1500 B at 12 Mbit/s).
    pub idle_packet_ns: i64,
}

impl Default for RedConfig {
    fn default() -> Self {
        Self {
            w_q: 0.002,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            gentle: true,
            ecn: false,
            idle_packet_ns: 1_000_000,
        }
    }
}

impl RedConfig {
    fn validate(&self) -> Result<(), AqmConfigError> {
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(AqmConfigError::Invalid("red.w_q must be in (0, 1]"));
        }
        if !(self.min_th >= 0.0 && self.max_th > self.min_th && self.max_th.is_finite()) {
            return Err(AqmConfigError::Invalid(
                "red: need 0 <= min_th < max_th (finite)",
            ));
        }
        if !(0.0..=1.0).contains(&self.max_p) {
            return Err(AqmConfigError::Invalid("red.max_p must be in [0, 1]"));
        }
        if self.idle_packet_ns <= 0 {
            return Err(AqmConfigError::Invalid("red.idle_packet_ns must be > 0"));
        }
        Ok(())
    }
}

/// CoDel parameters (RFC 8289 defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoDelConfig {
    /// Acceptable standing queue delay, in ns. Default 5 ms.
    pub target_ns: i64,
    /// Window over which the delay must stay above `target`, in ns. Default 100 ms.
    pub interval_ns: i64,
    /// A queue holding at most this many bytes behind the dequeued packet is never
    /// "above target" (the RFC's MAXPACKET). Default 1500.
    pub mtu_bytes: usize,
    /// Mark ECT packets instead of dropping them. Default false.
    pub ecn: bool,
}

impl Default for CoDelConfig {
    fn default() -> Self {
        Self {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            mtu_bytes: 1500,
            ecn: false,
        }
    }
}

impl CoDelConfig {
    fn validate(&self) -> Result<(), AqmConfigError> {
        if self.target_ns <= 0 || self.interval_ns <= 0 {
            return Err(AqmConfigError::Invalid(
                "codel: target_ns and interval_ns must be > 0",
            ));
        }
        Ok(())
    }
}

/// An AQM parameter that breaks its rule.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AqmConfigError {
    /// The message names the field and the rule.
    #[error("{0}")]
    Invalid(&'static str),
}

/// What RED decided for an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Enqueue,
    Mark,
    Drop,
}

/// RED running on its stream.
#[derive(Debug, Clone)]
pub(crate) struct RedState {
    cfg: RedConfig,
    rng: ChaCha8Rng,
    avg: f64,
    count: i64,
    /// When the queue last became empty, if it is empty.
    idle_since: Option<i64>,
}

impl RedState {
    pub(crate) fn new(cfg: RedConfig, rng: ChaCha8Rng) -> Self {
        Self {
            cfg,
            rng,
            avg: 0.0,
            count: -1,
            idle_since: None,
        }
    }

    /// The current average queue length, in packets.
    #[cfg(test)]
    pub(crate) fn avg(&self) -> f64 {
        self.avg
    }

    /// The queue has just become empty.
    pub(crate) fn queue_emptied(&mut self, now_ns: i64) {
        self.idle_since = Some(now_ns);
    }

    /// Decides for a packet arriving at `now_ns` while `q` packets wait.
    pub(crate) fn on_arrival(&mut self, now_ns: i64, q: usize, ect: bool) -> Verdict {
        let u: f64 = self.rng.random();
        let c = &self.cfg;
        if q > 0 {
            self.avg = (1.0 - c.w_q) * self.avg + c.w_q * q as f64;
            self.idle_since = None;
        } else {
            if let Some(since) = self.idle_since {
                let m = (now_ns.saturating_sub(since)).max(0) as f64 / c.idle_packet_ns as f64;
                self.avg *= (1.0 - c.w_q).powf(m);
            } else {
                self.avg *= 1.0 - c.w_q;
            }
            self.idle_since = Some(now_ns);
        }
        let avg = self.avg;
        let p_b = if avg < c.min_th {
            self.count = -1;
            return Verdict::Enqueue;
        } else if avg < c.max_th {
            c.max_p * (avg - c.min_th) / (c.max_th - c.min_th)
        } else if c.gentle && avg < 2.0 * c.max_th {
            c.max_p + (1.0 - c.max_p) * (avg - c.max_th) / c.max_th
        } else {
            self.count = 0;
            return self.hit(ect);
        };
        self.count += 1;
        let spread = self.count as f64 * p_b;
        let p_a = if spread >= 1.0 {
            1.0
        } else {
            p_b / (1.0 - spread)
        };
        if u < p_a {
            self.count = 0;
            self.hit(ect)
        } else {
            Verdict::Enqueue
        }
    }

    fn hit(&self, ect: bool) -> Verdict {
        if self.cfg.ecn && ect {
            Verdict::Mark
        } else {
            Verdict::Drop
        }
    }
}

/// CoDel's state variables (RFC 8289 section 5.2), driven by
/// [`Direction`](crate::link::Direction)'s dequeue.
#[derive(Debug, Clone)]
pub(crate) struct CoDelState {
    pub(crate) cfg: CoDelConfig,
    first_above_time: Option<i64>,
    pub(crate) drop_next: i64,
    pub(crate) count: u32,
    lastcount: u32,
    pub(crate) dropping: bool,
}

impl CoDelState {
    pub(crate) fn new(cfg: CoDelConfig) -> Self {
        Self {
            cfg,
            first_above_time: None,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    /// The RFC's `dodequeue` verdict for a packet dequeued at `now_ns` after
    /// `sojourn_ns` in the queue, leaving `bytes_behind` bytes queued.
    pub(crate) fn ok_to_drop(&mut self, now_ns: i64, sojourn_ns: i64, bytes_behind: usize) -> bool {
        if sojourn_ns < self.cfg.target_ns || bytes_behind <= self.cfg.mtu_bytes {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now_ns.saturating_add(self.cfg.interval_ns));
                false
            }
            Some(t) => now_ns >= t,
        }
    }

    /// The queue was found empty at a dequeue (RFC: `first_above_time = 0`, leave the
    /// dropping state).
    pub(crate) fn queue_empty(&mut self) {
        self.first_above_time = None;
        self.dropping = false;
    }

    /// `t + interval / sqrt(count)`.
    pub(crate) fn control_law(&self, t: i64) -> i64 {
        let step = self.cfg.interval_ns as f64 / f64::from(self.count.max(1)).sqrt();
        t.saturating_add(step as i64)
    }

    /// Entering the dropping state at `now_ns` (after the first drop or mark).
    pub(crate) fn enter_dropping(&mut self, now_ns: i64) {
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        self.count = 1;
        if delta > 1 && delta < u32::MAX / 2 && now_ns - self.drop_next < 16 * self.cfg.interval_ns
        {
            self.count = delta;
        }
        self.drop_next = self.control_law(now_ns);
        self.lastcount = self.count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Streams;

    /// Fraction of `n` arrivals RED drops with the average pinned at `q` (w_q = 1).
    fn drop_rate(cfg: RedConfig, q: usize, n: usize) -> f64 {
        let mut red = RedState::new(cfg, Streams::new(5).stream("test/aqm"));
        let drops = (0..n)
            .filter(|&i| red.on_arrival(i as i64, q, false) == Verdict::Drop)
            .count();
        assert_eq!(red.avg(), q as f64);
        drops as f64 / n as f64
    }

    fn pinned() -> RedConfig {
        RedConfig {
            w_q: 1.0,
            gentle: false,
            ..RedConfig::default()
        }
    }

    /// The long-run drop rate of count-based RED at a fixed `p_b`: after a drop,
    /// arrival k (k = 1, 2 ...) survives with probability (1 − (k+1)·p_b)/(1 − k·p_b),
    /// so P(gap > k) = (1 − (k+1)·p_b)/(1 − p_b) and the rate is 1 / E[gap].
    fn expected_rate(p_b: f64) -> f64 {
        let mut mean_gap = 1.0;
        let mut k = 1.0;
        loop {
            let survive = (1.0 - (k + 1.0) * p_b) / (1.0 - p_b);
            if survive <= 0.0 {
                break;
            }
            mean_gap += survive;
            k += 1.0;
        }
        1.0 / mean_gap
    }

    #[test]
    fn red_drop_probability_rises_between_the_thresholds() {
        let mut last = 0.0;
        for q in [6, 8, 10, 12, 14] {
            let p_b = 0.1 * (q as f64 - 5.0) / 10.0;
            let want = expected_rate(p_b);
            let got = drop_rate(pinned(), q, 200_000);
            assert!((got - want).abs() < 0.05 * want, "q={q}: {got} vs {want}");
            assert!(got > last, "q={q}: rate must rise");
            last = got;
        }
        // Roughly twice p_b: drops are spread out, not clustered.
        assert!((expected_rate(0.05) - 0.1).abs() < 0.01);
    }

    #[test]
    fn red_below_min_keeps_everything_above_max_drops_everything() {
        assert_eq!(drop_rate(pinned(), 4, 10_000), 0.0);
        assert_eq!(drop_rate(pinned(), 15, 10_000), 1.0);
        // Gentle: at avg 16, p_b = 0.1 + 0.9·(16 − 15)/15 = 0.16 instead of 1.
        let gentle = RedConfig {
            gentle: true,
            ..pinned()
        };
        let got = drop_rate(gentle, 16, 100_000);
        let want = expected_rate(0.16);
        assert!((got - want).abs() < 0.05 * want, "{got} vs {want}");
        assert_eq!(drop_rate(gentle, 30, 1000), 1.0);
    }

    #[test]
    fn red_average_follows_the_ewma_and_ages_over_idle_time() {
        let cfg = RedConfig {
            w_q: 0.5,
            ..RedConfig::default()
        };
        let mut red = RedState::new(cfg, Streams::new(5).stream("test/aqm"));
        let _ = red.on_arrival(0, 4, false);
        assert_eq!(red.avg(), 2.0);
        let _ = red.on_arrival(0, 4, false);
        assert_eq!(red.avg(), 3.0);
        red.queue_emptied(10_000_000);
        // 2 ms idle = 2 packet times: avg · 0.5².
        let _ = red.on_arrival(12_000_000, 0, false);
        assert_eq!(red.avg(), 0.75);
    }

    #[test]
    fn red_marks_ect_packets_when_ecn_is_on() {
        let cfg = RedConfig {
            ecn: true,
            ..pinned()
        };
        let mut red = RedState::new(cfg, Streams::new(5).stream("test/aqm"));
        assert_eq!(red.on_arrival(0, 20, true), Verdict::Mark);
        assert_eq!(red.on_arrival(0, 20, false), Verdict::Drop);
    }

    #[test]
    fn invalid_configs_are_refused() {
        let bad = [
            QueueDiscipline::Red(RedConfig {
                w_q: 0.0,
                ..RedConfig::default()
            }),
            QueueDiscipline::Red(RedConfig {
                max_th: 5.0,
                ..RedConfig::default()
            }),
            QueueDiscipline::Red(RedConfig {
                max_p: 1.5,
                ..RedConfig::default()
            }),
            QueueDiscipline::CoDel(CoDelConfig {
                interval_ns: 0,
                ..CoDelConfig::default()
            }),
        ];
        for d in bad {
            assert!(d.validate().is_err(), "{d:?}");
        }
        assert!(QueueDiscipline::Red(RedConfig::default())
            .validate()
            .is_ok());
        assert!(QueueDiscipline::CoDel(CoDelConfig::default())
            .validate()
            .is_ok());
    }
}
