//! Stop-and-wait link-layer ARQ, like 802.11 DCF unicast retries (simplified).
//!
//! [`StopAndWait`] is both directions of a link: per direction a FIFO queue and one
//! packet at a time at the head of the line. The two directions are independent
//! ([`Medium::Separate`]) or two stations sharing one channel ([`Medium::Shared`], see
//! below). It is clock-free like [`Direction`](crate::link::Direction):
//! [`StopAndWait::send`], [`StopAndWait::next_deadline`], [`StopAndWait::poll_into`].
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
//! # Shared medium: collisions (IEEE 802.11-2020 §10.3.4.3)
//!
//! With [`Medium::Shared`] the two directions are two stations on one channel, as an
//! access point sending TCP data and a laptop sending the TCP ACKs. The channel is busy
//! from a transmission's `tx_start` to its `resolve`. A station whose attempt starts
//! while the channel is busy waits for it to be idle, then DIFS, then its slots. When a
//! station starts transmitting, the other one, if it is counting down:
//!
//! - has its countdown end in the same slot (`tx_start` less than one slot later): it
//!   cannot have sensed the first transmission yet and transmits too. Both frames are
//!   lost (a collision: `frame_lost` with reason `collision`), both senders time out
//!   and retry with a doubled window;
//! - else freezes its countdown: the slots already counted are kept, the rest resume
//!   DIFS after the channel falls idle.
//!
//! Not modelled: EIFS after a corrupted frame, RTS/CTS, hidden stations, the capture
//! effect. The loss process is still asked once per attempt (so that its stream does
//! not depend on collisions); a collided attempt is lost whatever it answers.
//!
//! # Rate adaptation: ARF
//!
//! [`StopAndWait::with_rate_adaptation`] gives each station Auto Rate Fallback
//! (Kamerman & Monteban, 1997), the rate adaptation of the 802.11b cards of Kuang, Xiao
//! and Williamson's study: a list of rates, each with the probability that the channel
//! corrupts an attempt sent at it (on top of the loss process). A station starts at the
//! fastest rate, steps down one rate after `down_after` failed attempts in a row, and
//! steps up one after `up_after` successes in a row; if the first attempt after a step up
//! fails it steps straight back down. Where the fastest rate mostly fails and the next
//! mostly works, ARF climbs, fails, and falls again every few frames: the thrashing the
//! study saw at 100 m.
//!
//! # What a sniffer sees
//!
//! [`StopAndWait::enable_air`] records every transmission as [`AirFrame`]s, in time
//! order: each data attempt at its `tx_start` with its fate, and the receiver's 802.11
//! ACK one SIFS after a frame arrives. The simulator writes them as a radiotap capture.
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

/// Whether the two directions contend for one channel (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Medium {
    /// Each direction has a channel of its own: no contention, no collisions.
    #[default]
    Separate,
    /// Both stations share one channel: DCF contention and collisions.
    Shared,
}

/// Short interframe space of 802.11b's DSSS PHY: between a frame's end and its ACK.
pub const SIFS_NS: i64 = 10_000;

/// What became of one transmission attempt, as a sniffer beside the receiver sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AirFate {
    /// Received intact (its 802.11 ACK follows).
    Received,
    /// Corrupted on the channel (the loss process): a bad FCS.
    Corrupted,
    /// Collided with the other station's frame: a bad FCS.
    Collided,
}

/// Auto Rate Fallback (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct RateAdaptation {
    /// The rates in bits/s, slowest first, each with the probability that the channel
    /// corrupts an attempt sent at it.
    pub rates: Vec<(u64, f64)>,
    /// Step up after this many successful attempts in a row (ARF: 10).
    pub up_after: u32,
    /// Step down after this many failed attempts in a row (ARF: 2).
    pub down_after: u32,
}

/// One station's ARF state.
#[derive(Debug, Clone)]
struct Arf {
    level: usize,
    successes: u32,
    failures: u32,
    /// The attempt after a step up: its failure steps back down at once.
    probing: bool,
    rng: ChaCha8Rng,
}

impl Arf {
    /// Takes in the outcome of an attempt.
    fn outcome(&mut self, ra: &RateAdaptation, success: bool) {
        if success {
            self.failures = 0;
            self.probing = false;
            self.successes += 1;
            if self.successes >= ra.up_after && self.level + 1 < ra.rates.len() {
                self.level += 1;
                self.successes = 0;
                self.probing = true;
            }
        } else {
            self.successes = 0;
            self.failures += 1;
            if (self.probing || self.failures >= ra.down_after) && self.level > 0 {
                self.level -= 1;
                self.failures = 0;
            }
            self.probing = false;
        }
    }
}

/// A frame on the air (see [`StopAndWait::enable_air`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AirFrame {
    /// When it started, ns.
    pub t_ns: i64,
    /// The direction of the data it concerns (an ACK travels the other way).
    pub dir: LinkDir,
    /// The data frame itself, or its ACK.
    pub kind: AirKind,
}

/// See [`AirFrame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AirKind {
    /// A transmission attempt of a packet.
    Data {
        /// The packet (the id the link was given with [`StopAndWait::enable_air`]).
        packet: u64,
        /// 1 for the first transmission, 2 for the first retry...
        attempt: u32,
        /// Bytes of the packet.
        bytes: usize,
        /// The rate it was sent at, bits/s (`None`: unlimited).
        rate_bps: Option<u64>,
        /// What became of it.
        fate: AirFate,
    },
    /// The receiver's 802.11 ACK of a frame received intact.
    Ack,
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
    /// Separate channels (the default) or one shared channel with collisions.
    pub medium: Medium,
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
            medium: Medium::Separate,
        }
    }
}

impl StopAndWaitConfig {
    /// The backoff's fixed part and slot length, in ns (a slot of 0 without slots).
    fn wait_parts(&self) -> (i64, i64) {
        match self.backoff {
            Backoff::None => (0, 0),
            Backoff::Fixed(ns) => (ns, 0),
            Backoff::Slotted {
                difs_ns, slot_ns, ..
            } => (difs_ns, slot_ns),
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
    /// It collided with the other station's frame (shared medium).
    collided: bool,
    /// Backoff slots still to count down before `tx_start`...
    slots: u32,
    /// ...counted from here (the end of DIFS).
    contend_from: i64,
    /// The rate of this attempt.
    rate_bps: Option<u64>,
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
    /// Rate adaptation, when on.
    arf: Option<Arf>,
}

impl<T> Hol<T> {
    /// Sets the attempt's times from its countdown.
    fn schedule(&mut self, cfg: &StopAndWaitConfig, slot_ns: i64) {
        let rate_bps = self.rate_bps;
        self.tx_start = self
            .contend_from
            .saturating_add(slot_ns.saturating_mul(i64::from(self.slots)));
        let tx_end = self
            .tx_start
            .saturating_add(serialisation_ns(rate_bps, self.len));
        self.rx_at = tx_end.saturating_add(cfg.delay_ns);
        self.resolve = self.rx_at.saturating_add(cfg.ack_ns);
    }
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

/// The frames recorded on the air, with the function that names a packet.
type AirTap<T> = (fn(&T) -> u64, Vec<AirFrame>);

/// Both directions of a stop-and-wait ARQ link (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct StopAndWait<T> {
    cfg: StopAndWaitConfig,
    sides: [Side<T>; 2],
    out: VecDeque<(LinkDir, Event<T>)>,
    log: Log<T>,
    last_now_ns: i64,
    /// Shared medium: the channel is busy until then.
    busy_until: i64,
    /// Frames on the air, when recorded (see [`StopAndWait::enable_air`]).
    air: Option<AirTap<T>>,
    /// Rate adaptation (see [`StopAndWait::with_rate_adaptation`]).
    rates: Option<RateAdaptation>,
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
            arf: None,
        };
        Self {
            sides: [side(l0, r0), side(l1, r1)],
            cfg,
            out: VecDeque::new(),
            log: Log::default(),
            last_now_ns: i64::MIN,
            busy_until: i64::MIN,
            air: None,
            rates: None,
        }
    }

    /// Turns on Auto Rate Fallback in both stations (see the [module
    /// documentation](self)), each drawing its per-rate corruption from its own stream
    /// (index [`LinkDir::index`]). The rates replace `rate_bps`; each station starts at
    /// the fastest.
    ///
    /// # Panics
    ///
    /// If `rates.rates` is empty.
    pub fn with_rate_adaptation(mut self, rates: RateAdaptation, rng: [ChaCha8Rng; 2]) -> Self {
        assert!(!rates.rates.is_empty(), "rate adaptation needs a rate");
        for (side, rng) in self.sides.iter_mut().zip(rng) {
            side.arf = Some(Arf {
                level: rates.rates.len() - 1,
                successes: 0,
                failures: 0,
                probing: false,
                rng,
            });
        }
        self.rates = Some(rates);
        self
    }

    /// Starts recording the frames on the air (see the [module documentation](self));
    /// `id` names a packet.
    pub fn enable_air(&mut self, id: fn(&T) -> u64) {
        self.air = Some((id, Vec::new()));
    }

    /// Moves the frames recorded so far to the end of `out`, in time order.
    pub fn drain_air(&mut self, out: &mut Vec<AirFrame>) {
        if let Some((_, frames)) = self.air.as_mut() {
            out.append(frames);
        }
    }

    /// The link's settings.
    pub fn config(&self) -> &StopAndWaitConfig {
        &self.cfg
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

    /// Starts attempt `attempt` of a packet at the head of `dir` at `b`: its backoff
    /// counts from `b`, or on a shared medium from when the channel falls idle.
    fn begin(&mut self, dir: LinkDir, b: i64, item: T, len: usize, attempt: u32) {
        let cfg = self.cfg;
        let (fixed, slot_ns) = cfg.wait_parts();
        let side = &mut self.sides[dir.index()];
        let slots = match cfg.backoff {
            Backoff::Slotted { .. } => side.rng.random_range(0..=side.cw),
            Backoff::None | Backoff::Fixed(_) => 0,
        };
        let from = match cfg.medium {
            Medium::Separate => b,
            Medium::Shared => b.max(self.busy_until),
        };
        let rate_bps = match (&self.rates, &side.arf) {
            (Some(ra), Some(arf)) => Some(ra.rates[arf.level].0),
            _ => cfg.rate_bps,
        };
        let mut hol = Hol {
            item: Some(item),
            len,
            attempt,
            phase: Phase::Waiting,
            lost: false,
            collided: false,
            slots,
            contend_from: from.saturating_add(fixed),
            rate_bps,
            tx_start: 0,
            rx_at: 0,
            resolve: 0,
        };
        hol.schedule(&cfg, slot_ns);
        side.hol = Some(hol);
    }

    /// Shared medium: the head of `dir` starts transmitting at `t` until `end`. The
    /// other station collides with it or freezes its countdown.
    fn seize_medium(&mut self, dir: LinkDir, t: i64, end: i64) {
        let cfg = self.cfg;
        let (fixed, slot_ns) = cfg.wait_parts();
        self.busy_until = self.busy_until.max(end);
        let [a, b] = &mut self.sides;
        let (me, other) = if dir.index() == 0 { (a, b) } else { (b, a) };
        let Some(o) = other.hol.as_mut().filter(|o| o.phase == Phase::Waiting) else {
            return;
        };
        if o.tx_start < t.saturating_add(slot_ns.max(1)) {
            // Same slot: neither could sense the other.
            o.collided = true;
            if let Some(h) = me.hol.as_mut() {
                h.collided = true;
            }
            self.busy_until = self.busy_until.max(o.resolve);
        } else {
            if slot_ns > 0 {
                let counted = (t - o.contend_from).max(0) / slot_ns;
                o.slots = o
                    .slots
                    .saturating_sub(u32::try_from(counted).unwrap_or(u32::MAX));
            }
            o.contend_from = end.saturating_add(fixed);
            o.schedule(&cfg, slot_ns);
        }
    }

    /// Takes the head of `dir` through its next phase.
    fn step(&mut self, dir: LinkDir) {
        let side = &mut self.sides[dir.index()];
        let Some(hol) = side.hol.as_mut() else { return };
        match hol.phase {
            Phase::Waiting => {
                let mut corrupted = side.loss.lose(hol.tx_start);
                if let (Some(ra), Some(arf)) = (&self.rates, side.arf.as_mut()) {
                    // The channel at this rate; drawn for every attempt.
                    corrupted |= arf.rng.random_bool(ra.rates[arf.level].1);
                }
                hol.phase = Phase::Flying;
                let (t, end, attempt, len, rate_bps) = (
                    hol.tx_start,
                    hol.resolve,
                    hol.attempt,
                    hol.len,
                    hol.rate_bps,
                );
                if self.cfg.medium == Medium::Shared {
                    self.seize_medium(dir, t, end);
                }
                let side = &mut self.sides[dir.index()];
                let Some(hol) = side.hol.as_mut() else { return };
                hol.lost = corrupted || hol.collided;
                let fate = if hol.collided {
                    AirFate::Collided
                } else if corrupted {
                    AirFate::Corrupted
                } else {
                    AirFate::Received
                };
                let queued = side.queue.len();
                let item = hol.item.as_ref();
                if let (Some((id, frames)), Some(item)) = (self.air.as_mut(), item) {
                    let packet = id(item);
                    frames.push(AirFrame {
                        t_ns: t,
                        dir,
                        kind: AirKind::Data {
                            packet,
                            attempt,
                            bytes: len,
                            rate_bps,
                            fate,
                        },
                    });
                }
                if self.log.on() {
                    let kind = if attempt == 1 {
                        LinkEventKind::FrameSent
                    } else {
                        LinkEventKind::FrameRetransmitted
                    };
                    let id = item.map_or(0, |i| self.log.id(i));
                    let r = LinkRecord::new(t, dir, kind)
                        .packet(id)
                        .attempt(attempt)
                        .bytes(len)
                        .queue(queued);
                    self.log.records.push(r);
                }
            }
            Phase::Flying => {
                hol.phase = Phase::Acking;
                let id = hol.item.as_ref().map_or(0, |i| self.log.id(i));
                let (t, attempt, len) = (hol.rx_at, hol.attempt, hol.len);
                if hol.lost {
                    let collided = hol.collided;
                    self.log.push(|| {
                        let r = LinkRecord::new(t, dir, LinkEventKind::FrameLost)
                            .packet(id)
                            .attempt(attempt)
                            .bytes(len);
                        if collided {
                            r.reason(DropReason::Collision)
                        } else {
                            r
                        }
                    });
                    return;
                }
                let ack_at = t.saturating_add(SIFS_NS.min(self.cfg.ack_ns));
                if let Some((_, frames)) = self.air.as_mut() {
                    frames.push(AirFrame {
                        t_ns: ack_at,
                        dir,
                        kind: AirKind::Ack,
                    });
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
                if let (Some(ra), Some(arf)) = (&self.rates, side.arf.as_mut()) {
                    arf.outcome(ra, !hol.lost);
                }
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

    /// `simple()` on one shared channel, with a fixed 50 µs wait before each attempt.
    fn shared(backoff: Backoff) -> StopAndWaitConfig {
        StopAndWaitConfig {
            medium: Medium::Shared,
            backoff,
            ..simple()
        }
    }

    fn delivered_at(events: &[(LinkDir, Event<u32>)], item: u32) -> i64 {
        events
            .iter()
            .find_map(|(_, e)| match e {
                Event::Delivered { at_ns, item: i, .. } if *i == item => Some(*at_ns),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn shared_medium_defers_a_station_that_senses_the_channel_busy() {
        // Down transmits at 50 µs until its ACK at 3.05 ms. Up's own countdown would
        // end at 51 µs, after a fixed-wait "slot" of 1 ns: it senses the channel busy
        // and waits for it to fall idle, then its 50 µs again.
        let mut l = link(shared(Backoff::Fixed(50 * US)), LossModel::None);
        let _ = l.send(0, LinkDir::Down, 1, 1500);
        let _ = l.send(US, LinkDir::Up, 2, 1500);
        let events = drain(&mut l);
        assert_eq!(delivered_at(&events, 1), 50 * US + 2 * MS);
        assert_eq!(
            delivered_at(&events, 2),
            50 * US + 3 * MS + 50 * US + 2 * MS
        );
        // On separate channels both go at once.
        let mut l = link(
            StopAndWaitConfig {
                medium: Medium::Separate,
                ..shared(Backoff::Fixed(50 * US))
            },
            LossModel::None,
        );
        let _ = l.send(0, LinkDir::Down, 1, 1500);
        let _ = l.send(US, LinkDir::Up, 2, 1500);
        assert_eq!(delivered_at(&drain(&mut l), 2), 51 * US + 2 * MS);
    }

    #[test]
    fn same_slot_collides_and_both_retry() {
        // CW 0: both countdowns end right after DIFS, in the same slot. Both frames are
        // lost; both stations time out, double the window (0 → 1) and retry.
        let dcf = Backoff::Slotted {
            difs_ns: 50 * US,
            slot_ns: 20 * US,
            cw_min: 0,
            cw_max: 1023,
        };
        let mut l = link(shared(dcf), LossModel::None);
        l.enable_air(|p| u64::from(*p));
        let _ = l.send(0, LinkDir::Down, 1, 1500);
        let _ = l.send(0, LinkDir::Up, 2, 1500);
        let events = drain(&mut l);
        assert_eq!(
            events.len(),
            2,
            "both packets arrive in the end: {events:?}"
        );
        let mut log = Vec::new();
        l.drain_log(&mut log);
        let collisions: Vec<_> = log
            .iter()
            .filter(|r| r.reason == Some(DropReason::Collision))
            .collect();
        // Collisions come in pairs (one frame of each station, same attempt number);
        // with CW 1 after the first, the retries may collide again.
        assert!(
            collisions.len() >= 2 && collisions.len() % 2 == 0,
            "{collisions:?}"
        );
        assert!(collisions.iter().all(|r| r.kind == FrameLost));
        for pair in collisions.chunks(2) {
            assert_ne!(pair[0].dir, pair[1].dir);
            assert_eq!(pair[0].attempt, pair[1].attempt);
        }
        assert_eq!(collisions[0].attempt, Some(1));
        let mut air = Vec::new();
        l.drain_air(&mut air);
        let fates: Vec<_> = air
            .iter()
            .filter_map(|f| match f.kind {
                AirKind::Data {
                    packet,
                    attempt,
                    fate,
                    ..
                } => Some((packet, attempt, fate)),
                AirKind::Ack => None,
            })
            .collect();
        assert_eq!(
            &fates[..2],
            [(1, 1, AirFate::Collided), (2, 1, AirFate::Collided)]
        );
        assert!(
            air.windows(2).all(|w| w[0].t_ns <= w[1].t_ns),
            "air frames in time order"
        );
        assert_eq!(
            air.iter().filter(|f| f.kind == AirKind::Ack).count(),
            2,
            "one ACK per packet received"
        );
        // The attempts after the collisions: each frame on the channel alone.
        let data: Vec<_> = air
            .iter()
            .filter(|f| f.kind != AirKind::Ack)
            .skip(collisions.len())
            .collect();
        for w in data.windows(2) {
            assert!(w[1].t_ns >= w[0].t_ns + 3 * MS, "{w:?}");
        }
    }

    #[test]
    fn a_frozen_countdown_keeps_the_slots_already_counted() {
        // Down: CW 0 → transmits at 50 µs. Up: draws its slots from 0..=1023 with this
        // seed; whatever it drew, its transmission starts a whole number of slots after
        // the channel falls idle + DIFS, and the slots counted before the freeze count.
        let dcf = Backoff::Slotted {
            difs_ns: 50 * US,
            slot_ns: 20 * US,
            cw_min: 1023,
            cw_max: 1023,
        };
        for seed in 0..20 {
            let s = Streams::new(seed);
            let none = || LossProcess::new(LossModel::None, s.stream("x")).unwrap();
            let mut l = StopAndWait::<u32>::new(
                shared(dcf),
                [none(), none()],
                [s.stream("d"), s.stream("u")],
            );
            l.enable_air(|p| u64::from(*p));
            let _ = l.send(0, LinkDir::Down, 1, 1500);
            let _ = l.send(0, LinkDir::Up, 2, 1500);
            let _ = drain(&mut l);
            let mut air = Vec::new();
            l.drain_air(&mut air);
            let starts: Vec<_> = air
                .iter()
                .filter(|f| f.kind != AirKind::Ack)
                .map(|f| (f.dir, f.t_ns))
                .collect();
            assert_eq!(
                starts.len(),
                2,
                "no collision in 1024 slots with these seeds: {starts:?}"
            );
            let ((_, first), (_, second)) = (starts[0], starts[1]);
            // The first one's countdown: (first - 50 µs) / 20 µs slots. The second
            // counted as many before it froze, then the rest after idle + DIFS.
            let busy_end = first + 3 * MS;
            let after = second - (busy_end + 50 * US);
            assert!(
                after >= 0 && after % (20 * US) == 0,
                "seed {seed}: {starts:?}"
            );
        }
    }

    #[test]
    fn arf_falls_after_two_failures_climbs_after_successes_and_falls_back_from_a_failed_probe() {
        // 11 Mbit/s always fails, 1 Mbit/s always works; step up after 3 successes.
        let ra = RateAdaptation {
            rates: vec![(1_000_000, 0.0), (11_000_000, 1.0)],
            up_after: 3,
            down_after: 2,
        };
        let s = Streams::new(3);
        let mut l = link(simple(), LossModel::None)
            .with_rate_adaptation(ra, [s.stream("d"), s.stream("u")]);
        l.enable_air(|p| u64::from(*p));
        for p in 1..=6 {
            let _ = l.send(0, LinkDir::Down, p, 1500);
        }
        assert_eq!(drain(&mut l).len(), 6, "every packet gets through");
        let mut air = Vec::new();
        l.drain_air(&mut air);
        let sent: Vec<_> = air
            .iter()
            .filter_map(|f| match f.kind {
                AirKind::Data {
                    packet, rate_bps, ..
                } => Some((packet, rate_bps.unwrap() / 1_000_000)),
                AirKind::Ack => None,
            })
            .collect();
        // Packet 1 fails twice at 11 and falls to 1; three successes climb to 11; the
        // probe (packet 4) fails and falls straight back.
        assert_eq!(
            sent,
            [
                (1, 11),
                (1, 11),
                (1, 1),
                (2, 1),
                (3, 1),
                (4, 11),
                (4, 1),
                (5, 1),
                (6, 1)
            ]
        );
        // Air time follows the rate: 1500 B take 12 ms at 1 Mbit/s.
        let t: Vec<_> = air
            .iter()
            .filter(|f| f.kind != AirKind::Ack)
            .map(|f| f.t_ns)
            .collect();
        assert_eq!(
            t[3] - t[2],
            12 * MS + 2 * MS,
            "1 Mbit/s frame, 1 ms flight, 1 ms ACK"
        );
    }
}
