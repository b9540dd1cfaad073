//! Stop-and-wait link-layer ARQ, like 802.11 DCF unicast retries (simplified).
//!
//! [`StopAndWait`] is both directions of a link, each independent (no shared medium,
//! no collisions): a FIFO queue and one packet at a time at the head of the line. It is
//! clock-free like [`Direction`](crate::link::Direction): [`StopAndWait::send`],
//! [`StopAndWait::next_deadline`], [`StopAndWait::poll_into`].
//!
//! # Timing of one attempt
//!
//! An attempt begins at `b` (the packet reaching the head of the line, or the end of
//! the previous attempt). Then:
//!
//! ```text
//! tx_start  = b + backoff            (drawn per attempt, see Backoff)
//! tx_end    = tx_start + len·8/rate  (rounded up to the ns)
//! rx_at     = tx_end + delay         frame_delivered / frame_lost
//! resolve   = rx_at + ack_ns         the sender knows: ACK received, or ACK timeout
//! ```
//!
//! The loss process is asked once per attempt, at `tx_start`. A delivered packet is
//! [`Event::Delivered`] at `rx_at`, and the next packet's first attempt begins at
//! `resolve` (the ACK is not lost in this model). A lost attempt is retried at
//! `resolve`, up to `retry_limit` transmissions in all (IEEE 802.11 counts attempts:
//! dot11ShortRetryLimit = 7 means at most 7 transmissions); after the last one fails,
//! the packet is [`Event::Dropped`] with [`DropReason::RetryLimit`] at its `resolve`.
//!
//! # Backoff
//!
//! [`Backoff::Slotted`] is DCF's: before each attempt wait `difs_ns` plus a uniform
//! number of slots in `0..=cw`; `cw` starts at `cw_min`, becomes `2·cw + 1` (at most
//! `cw_max`) after each failed attempt, and returns to `cw_min` after a success or a
//! drop. The slot counts come from the direction's own named stream (one draw per
//! attempt). Defaults are 802.11b's DSSS PHY: 20 µs slots, DIFS 50 µs, CW 31..1023.
//!
//! ```
//! use airtrace_link::arq::{Backoff, StopAndWait, StopAndWaitConfig};
//! use airtrace_link::link::Event;
//! use airtrace_link::loss::{LossModel, LossProcess};
//! use airtrace_link::record::LinkDir;
//! use airtrace_link::rng::Streams;
//!
//! const MS: i64 = 1_000_000;
//! let s = Streams::new(1);
//! let cfg = StopAndWaitConfig {
//!     rate_bps: Some(12_000_000), // 1500 B in 1 ms
//!     delay_ns: MS,
//!     ack_ns: MS,
//!     backoff: Backoff::None,
//!     ..StopAndWaitConfig::default()
//! };
//! // The first attempt is lost, the second arrives.
//! let lossy = LossProcess::new(LossModel::Trace(vec![true, false]), s.stream("down/loss")).unwrap();
//! let clean = LossProcess::new(LossModel::None, s.stream("up/loss")).unwrap();
//! let mut link = StopAndWait::new(cfg, [lossy, clean], [s.stream("down/mac"), s.stream("up/mac")]);
//! let _ = link.send(0, LinkDir::Down, "x", 1500);
//! let mut out = Vec::new();
//! while let Some(t) = link.next_deadline() {
//!     link.poll_into(t, &mut out);
//! }
//! // Attempt 1: 0..1 ms, lost at 2, timeout at 3. Attempt 2: 3..4 ms, arrives at 5.
//! assert_eq!(out, [(LinkDir::Down, Event::Delivered { at_ns: 5 * MS, item: "x", ce: false })]);
//! ```

use std::collections::VecDeque;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::link::{Event, Sent};
use crate::loss::LossProcess;
use crate::queue::{DropTail, QueueLimit};
use crate::record::{DropReason, LinkDir, LinkEventKind, LinkRecord, Log};

/// The wait before each transmission attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    /// None: attempts follow each other at once.
    None,
    /// The same wait before every attempt, in ns.
    Fixed(i64),
    /// DCF: `difs_ns` plus a uniform number of `slot_ns` slots in `0..=cw`, the
    /// contention window `cw` doubling (+1) from `cw_min` up to `cw_max` per failure.
    Slotted {
        /// Fixed part, in ns (DIFS).
        difs_ns: i64,
        /// One backoff slot, in ns.
        slot_ns: i64,
        /// Initial contention window, in slots.
        cw_min: u32,
        /// Largest contention window, in slots.
        cw_max: u32,
    },
}

/// Parameters of a [`StopAndWait`] link (both directions alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopAndWaitConfig {
    /// Data rate, bits/s (`None`: unlimited). Default 11 Mbit/s.
    pub rate_bps: Option<u64>,
    /// One-way propagation delay, in ns. Default 1 µs.
    pub delay_ns: i64,
    /// From the data frame's arrival until the sender knows the outcome (SIFS + ACK
    /// frame + the way back; the ACK timeout for a lost frame), in ns. Default 314 µs
    /// (802.11b: SIFS 10 µs + a 14-byte ACK at 1 Mbit/s with the long preamble).
    pub ack_ns: i64,
    /// Transmissions per packet at most (first + retries). Default 7.
    pub retry_limit: u32,
    /// Wait before each attempt. Default 802.11b DCF (see the module doc).
    pub backoff: Backoff,
    /// Queue behind the head of the line, per direction. Default 50 packets.
    pub queue: QueueLimit,
}

impl Default for StopAndWaitConfig {
    fn default() -> Self {
        Self {
            rate_bps: Some(11_000_000),
            delay_ns: 1_000,
            ack_ns: 314_000,
            retry_limit: 7,
            backoff: Backoff::Slotted {
                difs_ns: 50_000,
                slot_ns: 20_000,
                cw_min: 31,
                cw_max: 1023,
            },
            queue: QueueLimit::Packets(50),
        }
    }
}

/// Where the head-of-line packet's current attempt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Backing off until `tx_start`.
    Waiting,
    /// On the wire / in the air until `rx_at`.
    Flying,
    /// Waiting for the ACK (or its timeout) until `resolve`.
    Acking,
}

#[derive(Debug, Clone)]
struct Hol<T> {
    /// `None` once delivered.
    item: Option<T>,
    len: usize,
    attempt: u32,
    phase: Phase,
    lost: bool,
    tx_start: i64,
    rx_at: i64,
    resolve: i64,
}

#[derive(Debug, Clone)]
struct Side<T> {
    loss: LossProcess,
    rng: ChaCha8Rng,
    queue: DropTail<T>,
    cw: u32,
    hol: Option<Hol<T>>,
}

impl<T> Side<T> {
    fn next_time(&self) -> Option<i64> {
        self.hol.as_ref().map(|h| match h.phase {
            Phase::Waiting => h.tx_start,
            Phase::Flying => h.rx_at,
            Phase::Acking => h.resolve,
        })
    }
}

/// Both directions of a stop-and-wait ARQ link (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct StopAndWait<T> {
    cfg: StopAndWaitConfig,
    sides: [Side<T>; 2],
    out: VecDeque<(LinkDir, Event<T>)>,
    log: Log<T>,
    last_now_ns: i64,
}

impl<T> StopAndWait<T> {
    /// A link with `cfg`, one loss process and one backoff stream per direction (index
    /// [`LinkDir::index`]: down, up).
    ///
    /// # Panics
    ///
    /// If `retry_limit` is 0 or a time is negative.
    pub fn new(cfg: StopAndWaitConfig, loss: [LossProcess; 2], rng: [ChaCha8Rng; 2]) -> Self {
        assert!(
            cfg.retry_limit >= 1,
            "retry_limit must allow one transmission"
        );
        assert!(cfg.delay_ns >= 0 && cfg.ack_ns >= 0, "negative ARQ time");
        let cw_min = match cfg.backoff {
            Backoff::Slotted { cw_min, .. } => cw_min,
            _ => 0,
        };
        let [l0, l1] = loss;
        let [r0, r1] = rng;
        let side = |loss, rng| Side {
            loss,
            rng,
            queue: DropTail::new(cfg.queue),
            cw: cw_min,
            hol: None,
        };
        Self {
            sides: [side(l0, r0), side(l1, r1)],
            cfg,
            out: VecDeque::new(),
            log: Log::default(),
            last_now_ns: i64::MIN,
        }
    }

    /// Starts logging (see [`record`](crate::record)); `id` names a packet.
    pub fn enable_log(&mut self, id: fn(&T) -> u64) {
        self.log.enable(id);
    }

    /// Moves the records logged so far to the end of `out`.
    pub fn drain_log(&mut self, out: &mut Vec<LinkRecord>) {
        self.log.drain_into(out);
    }

    /// Packets waiting behind the head of the line in `dir`.
    pub fn queued(&self, dir: LinkDir) -> usize {
        self.sides[dir.index()].queue.len()
    }

    /// Offers packet `item` of `len` bytes to travel in `dir` at `now_ns`: it becomes
    /// the head of the line at once if the direction is idle, else it queues or is
    /// refused.
    pub fn send(&mut self, now_ns: i64, dir: LinkDir, item: T, len: usize) -> Sent<T> {
        self.advance(now_ns);
        let side = &mut self.sides[dir.index()];
        if side.hol.is_none() {
            self.begin(dir, now_ns, item, len, 1);
            return Sent::Queued;
        }
        match side.queue.enqueue(item, len) {
            Ok(()) => Sent::Queued,
            Err(item) => {
                if self.log.on() {
                    let id = self.log.id(&item);
                    let q = self.sides[dir.index()].queue.len();
                    self.log.records.push(
                        LinkRecord::new(now_ns, dir, LinkEventKind::PacketDropped)
                            .packet(id)
                            .bytes(len)
                            .queue(q)
                            .reason(DropReason::Queue),
                    );
                }
                Sent::Dropped(item, DropReason::Queue)
            }
        }
    }

    /// When something next happens, or the time of the first event waiting to be
    /// polled. `None` when both directions are idle.
    pub fn next_deadline(&self) -> Option<i64> {
        if let Some((_, e)) = self.out.front() {
            return Some(e.at_ns());
        }
        self.sides.iter().filter_map(Side::next_time).min()
    }

    /// Advances to `now_ns` and appends to `out`, in time order, every packet event up
    /// to `now_ns` with the direction the packet travelled.
    pub fn poll_into(&mut self, now_ns: i64, out: &mut Vec<(LinkDir, Event<T>)>) {
        self.advance(now_ns);
        out.extend(self.out.drain(..));
    }

    fn advance(&mut self, now_ns: i64) {
        debug_assert!(now_ns >= self.last_now_ns, "link asked about the past");
        self.last_now_ns = now_ns;
        loop {
            let next = LinkDir::BOTH
                .into_iter()
                .filter_map(|d| self.sides[d.index()].next_time().map(|t| (t, d)))
                .min();
            match next {
                Some((t, dir)) if t <= now_ns => self.step(dir),
                _ => break,
            }
        }
    }

    /// Starts attempt `attempt` of a packet at the head of `dir` at `b`.
    fn begin(&mut self, dir: LinkDir, b: i64, item: T, len: usize, attempt: u32) {
        let cfg = self.cfg;
        let side = &mut self.sides[dir.index()];
        let wait = match cfg.backoff {
            Backoff::None => 0,
            Backoff::Fixed(ns) => ns,
            Backoff::Slotted {
                difs_ns, slot_ns, ..
            } => {
                let slots = side.rng.random_range(0..=side.cw);
                difs_ns.saturating_add(slot_ns.saturating_mul(i64::from(slots)))
            }
        };
        let tx_start = b.saturating_add(wait);
        let tx_end = tx_start.saturating_add(serialisation_ns(cfg.rate_bps, len));
        let rx_at = tx_end.saturating_add(cfg.delay_ns);
        side.hol = Some(Hol {
            item: Some(item),
            len,
            attempt,
            phase: Phase::Waiting,
            lost: false,
            tx_start,
            rx_at,
            resolve: rx_at.saturating_add(cfg.ack_ns),
        });
    }

    /// Takes the head of `dir` through its next phase.
    fn step(&mut self, dir: LinkDir) {
        let side = &mut self.sides[dir.index()];
        let Some(hol) = side.hol.as_mut() else { return };
        match hol.phase {
            Phase::Waiting => {
                hol.lost = side.loss.lose(hol.tx_start);
                hol.phase = Phase::Flying;
                if self.log.on() {
                    let kind = if hol.attempt == 1 {
                        LinkEventKind::FrameSent
                    } else {
                        LinkEventKind::FrameRetransmitted
                    };
                    let id = hol.item.as_ref().map_or(0, |i| self.log.id(i));
                    let r = LinkRecord::new(hol.tx_start, dir, kind)
                        .packet(id)
                        .attempt(hol.attempt)
                        .bytes(hol.len)
                        .queue(side.queue.len());
                    self.log.records.push(r);
                }
            }
            Phase::Flying => {
                hol.phase = Phase::Acking;
                let id = hol.item.as_ref().map_or(0, |i| self.log.id(i));
                let (t, attempt, len) = (hol.rx_at, hol.attempt, hol.len);
                if hol.lost {
                    self.log.push(|| {
                        LinkRecord::new(t, dir, LinkEventKind::FrameLost)
                            .packet(id)
                            .attempt(attempt)
                            .bytes(len)
                    });
                    return;
                }
                let item = hol.item.take();
                if self.log.on() {
                    let q = side.queue.len();
                    let frame = LinkRecord::new(t, dir, LinkEventKind::FrameDelivered)
                        .packet(id)
                        .attempt(attempt)
                        .bytes(len);
                    let packet = LinkRecord::new(t, dir, LinkEventKind::PacketDelivered)
                        .packet(id)
                        .bytes(len)
                        .queue(q);
                    self.log.records.extend([frame, packet]);
                }
                if let Some(item) = item {
                    self.out.push_back((
                        dir,
                        Event::Delivered {
                            at_ns: t,
                            item,
                            ce: false,
                        },
                    ));
                }
            }
            Phase::Acking => {
                let Some(hol) = side.hol.take() else { return };
                let t = hol.resolve;
                let (cw_min, cw_max) = match self.cfg.backoff {
                    Backoff::Slotted { cw_min, cw_max, .. } => (cw_min, cw_max),
                    _ => (0, 0),
                };
                match hol.item {
                    Some(item) if hol.lost && hol.attempt < self.cfg.retry_limit => {
                        side.cw = side.cw.saturating_mul(2).saturating_add(1).min(cw_max);
                        self.begin(dir, t, item, hol.len, hol.attempt + 1);
                        return;
                    }
                    Some(item) => {
                        if self.log.on() {
                            let id = self.log.id(&item);
                            self.log.records.push(
                                LinkRecord::new(t, dir, LinkEventKind::PacketDropped)
                                    .packet(id)
                                    .attempt(hol.attempt)
                                    .bytes(hol.len)
                                    .queue(side.queue.len())
                                    .reason(DropReason::RetryLimit),
                            );
                        }
                        self.out.push_back((
                            dir,
                            Event::Dropped {
                                at_ns: t,
                                item,
                                reason: DropReason::RetryLimit,
                            },
                        ));
                    }
                    None => {}
                }
                let side = &mut self.sides[dir.index()];
                side.cw = cw_min;
                if let Some((next, len)) = side.queue.dequeue() {
                    self.begin(dir, t, next, len, 1);
                }
            }
        }
    }
}

/// `ceil(len · 8 · 1e9 / rate)` ns, or 0 for an unlimited rate.
fn serialisation_ns(rate_bps: Option<u64>, len: usize) -> i64 {
    let Some(rate) = rate_bps.filter(|&r| r > 0) else {
        return 0;
    };
    let bit_ns = len as u128 * 8 * 1_000_000_000;
    i64::try_from(bit_ns.div_ceil(u128::from(rate))).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossModel;
    use crate::rng::Streams;
    use LinkEventKind::*;

    const MS: i64 = 1_000_000;
    const US: i64 = 1_000;

    /// 1500 B in 1 ms, 1 ms each way, 1 ms of ACK turnaround, no backoff.
    fn simple() -> StopAndWaitConfig {
        StopAndWaitConfig {
            rate_bps: Some(12_000_000),
            delay_ns: MS,
            ack_ns: MS,
            backoff: Backoff::None,
            ..StopAndWaitConfig::default()
        }
    }

    fn link(cfg: StopAndWaitConfig, down: LossModel) -> StopAndWait<u32> {
        let s = Streams::new(9);
        let mut l = StopAndWait::new(
            cfg,
            [
                LossProcess::new(down, s.stream("down/loss")).unwrap(),
                LossProcess::new(LossModel::None, s.stream("up/loss")).unwrap(),
            ],
            [s.stream("down/mac"), s.stream("up/mac")],
        );
        l.enable_log(|p| u64::from(*p));
        l
    }

    fn drain(l: &mut StopAndWait<u32>) -> Vec<(LinkDir, Event<u32>)> {
        let mut out = Vec::new();
        while let Some(t) = l.next_deadline() {
            l.poll_into(t, &mut out);
        }
        out
    }

    fn log_of(l: &mut StopAndWait<u32>) -> Vec<(i64, LinkEventKind, Option<u64>, Option<u32>)> {
        let mut log = Vec::new();
        l.drain_log(&mut log);
        log.iter()
            .map(|r| (r.t_ns, r.kind, r.packet, r.attempt))
            .collect()
    }

    #[test]
    fn retries_until_success_with_exact_timing() {
        // Attempts 1 and 2 lost, 3 arrives. Each attempt: 1 ms on the wire, 1 ms of
        // flight, 1 ms until the sender knows: attempts start at 0, 3 and 6 ms.
        let mut l = link(simple(), LossModel::Trace(vec![true, true, false, false]));
        let _ = l.send(0, LinkDir::Down, 1, 1500);
        let _ = l.send(0, LinkDir::Down, 2, 1500); // waits for packet 1's ACK at 9 ms
        assert_eq!(l.queued(LinkDir::Down), 1);
        let d = |at, item| {
            (
                LinkDir::Down,
                Event::Delivered {
                    at_ns: at,
                    item,
                    ce: false,
                },
            )
        };
        assert_eq!(drain(&mut l), [d(8 * MS, 1), d(11 * MS, 2)]);
        assert_eq!(
            log_of(&mut l),
            [
                (0, FrameSent, Some(1), Some(1)),
                (2 * MS, FrameLost, Some(1), Some(1)),
                (3 * MS, FrameRetransmitted, Some(1), Some(2)),
                (5 * MS, FrameLost, Some(1), Some(2)),
                (6 * MS, FrameRetransmitted, Some(1), Some(3)),
                (8 * MS, FrameDelivered, Some(1), Some(3)),
                (8 * MS, PacketDelivered, Some(1), None),
                (9 * MS, FrameSent, Some(2), Some(1)),
                (11 * MS, FrameDelivered, Some(2), Some(1)),
                (11 * MS, PacketDelivered, Some(2), None),
            ]
        );
    }

    #[test]
    fn drops_at_the_retry_limit_then_serves_the_next_packet() {
        let cfg = StopAndWaitConfig {
            retry_limit: 3,
            ..simple()
        };
        let mut l = link(cfg, LossModel::Trace(vec![true, true, true, false]));
        let _ = l.send(0, LinkDir::Down, 1, 1500);
        let _ = l.send(0, LinkDir::Down, 2, 1500);
        // Three transmissions at 0, 3, 6 ms, all lost; dropped when the third's ACK
        // times out at 9 ms; packet 2 goes at 9 ms and arrives at 11.
        assert_eq!(
            drain(&mut l),
            [
                (
                    LinkDir::Down,
                    Event::Dropped {
                        at_ns: 9 * MS,
                        item: 1,
                        reason: DropReason::RetryLimit
                    }
                ),
                (
                    LinkDir::Down,
                    Event::Delivered {
                        at_ns: 11 * MS,
                        item: 2,
                        ce: false
                    }
                )
            ]
        );
        let log = log_of(&mut l);
        assert_eq!(log[6], (9 * MS, PacketDropped, Some(1), Some(3)));
        assert_eq!(log.iter().filter(|r| r.1 == FrameLost).count(), 3);
    }

    #[test]
    fn default_retry_limit_is_seven_transmissions() {
        let mut l = link(simple(), LossModel::Bernoulli { p: 1.0 });
        let _ = l.send(0, LinkDir::Up, 5, 1500); // up is loss-free
        let _ = l.send(0, LinkDir::Down, 6, 1500);
        let out = drain(&mut l);
        assert_eq!(
            out,
            [
                (
                    LinkDir::Up,
                    Event::Delivered {
                        at_ns: 2 * MS,
                        item: 5,
                        ce: false
                    }
                ),
                (
                    LinkDir::Down,
                    Event::Dropped {
                        at_ns: 21 * MS,
                        item: 6,
                        reason: DropReason::RetryLimit
                    }
                )
            ]
        );
    }

    #[test]
    fn fixed_backoff_delays_every_attempt() {
        let cfg = StopAndWaitConfig {
            backoff: Backoff::Fixed(500 * US),
            ..simple()
        };
        let mut l = link(cfg, LossModel::Trace(vec![true, false]));
        let _ = l.send(0, LinkDir::Down, 1, 1500);
        // 0.5 + 1 + 1 (lost) + 1 (timeout) = 3.5; 4 .. 5 on the wire, arrives at 6 ms.
        assert_eq!(
            drain(&mut l),
            [(
                LinkDir::Down,
                Event::Delivered {
                    at_ns: 6 * MS,
                    item: 1,
                    ce: false
                }
            )]
        );
    }

    #[test]
    fn slotted_backoff_doubles_the_window_and_is_deterministic() {
        let cfg = StopAndWaitConfig {
            backoff: Backoff::Slotted {
                difs_ns: 50 * US,
                slot_ns: 20 * US,
                cw_min: 3,
                cw_max: 15,
            },
            retry_limit: 6,
            ..simple()
        };
        let run = |seed: u64| {
            let s = Streams::new(seed);
            let mut l = StopAndWait::new(
                cfg,
                [
                    LossProcess::new(LossModel::Bernoulli { p: 1.0 }, s.stream("d")).unwrap(),
                    LossProcess::new(LossModel::None, s.stream("u")).unwrap(),
                ],
                [s.stream("down/mac"), s.stream("up/mac")],
            );
            l.enable_log(|p: &u32| u64::from(*p));
            let _ = l.send(0, LinkDir::Down, 1, 1500);
            let _ = drain(&mut l);
            let starts: Vec<i64> = log_of(&mut l)
                .iter()
                .filter(|r| matches!(r.1, FrameSent | FrameRetransmitted))
                .map(|r| r.0)
                .collect();
            starts
        };
        let starts = run(1);
        assert_eq!(starts, run(1));
        assert_ne!(starts, run(2));
        // Attempt i waits DIFS + s slots after the previous one resolved (3 ms after
        // it started), s within its window: 3, 7, 15, 15, 15, 15.
        let mut prev_resolve = 0;
        for (i, &t) in starts.iter().enumerate() {
            let cw = [3, 7, 15, 15, 15, 15][i];
            let slots = (t - prev_resolve - 50 * US) / (20 * US);
            assert_eq!((t - prev_resolve - 50 * US) % (20 * US), 0);
            assert!(
                (0..=cw).contains(&slots),
                "attempt {i}: {slots} slots > {cw}"
            );
            prev_resolve = t + 3 * MS;
        }
        assert_eq!(starts.len(), 6);
    }

    #[test]
    fn full_queue_refuses() {
        let cfg = StopAndWaitConfig {
            queue: QueueLimit::Packets(1),
            ..simple()
        };
        let mut l = link(cfg, LossModel::None);
        assert_eq!(l.send(0, LinkDir::Down, 1, 100), Sent::Queued); // head of line
        assert_eq!(l.send(0, LinkDir::Down, 2, 100), Sent::Queued); // queued
        assert_eq!(
            l.send(0, LinkDir::Down, 3, 100),
            Sent::Dropped(3, DropReason::Queue)
        );
        assert_eq!(l.send(0, LinkDir::Up, 4, 100), Sent::Queued); // the other direction
    }

    #[test]
    fn same_seed_same_events() {
        let run = |seed: u64| {
            let s = Streams::new(seed);
            let mut l = StopAndWait::new(
                StopAndWaitConfig::default(),
                [
                    LossProcess::new(LossModel::Bernoulli { p: 0.8 }, s.stream("d")).unwrap(),
                    LossProcess::new(LossModel::Bernoulli { p: 0.2 }, s.stream("u")).unwrap(),
                ],
                [s.stream("down/mac"), s.stream("up/mac")],
            );
            let mut out = Vec::new();
            for i in 0..300u32 {
                let now = i64::from(i) * 700 * US;
                l.poll_into(now, &mut out);
                let dir = if i % 4 == 0 {
                    LinkDir::Up
                } else {
                    LinkDir::Down
                };
                let _ = l.send(now, dir, i, 1500);
            }
            out.extend(drain(&mut l));
            out
        };
        let a = run(5);
        assert_eq!(a, run(5));
        assert_ne!(a, run(6));
        assert!(a.windows(2).all(|w| w[0].1.at_ns() <= w[1].1.at_ns()));
        assert!(a.iter().any(|e| matches!(
            e.1,
            Event::Dropped {
                reason: DropReason::RetryLimit,
                ..
            }
        )));
    }
}
