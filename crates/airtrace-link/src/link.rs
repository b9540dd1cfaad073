//! One direction of a link: a queue (drop-tail, RED or CoDel), a transmitter (a fixed
//! rate or a Mahimahi delivery trace), an optional MTU (IPv4 fragmentation), a loss
//! process, and a propagation delay.
//!
//! [`Direction`] has no clock. The caller hands it packets with [`Direction::send`],
//! asks [`Direction::next_deadline`] when it next needs attention, and collects what
//! happened up to a time with [`Direction::poll_into`] (or [`Direction::poll`], which
//! allocates). The simulator calls these with its
//! event time, the emulator with the time since the run started; both get the same
//! events at the same `at_ns`.
//!
//! # Semantics
//!
//! - **Transmitter.** One packet at a time, in FIFO order. A packet of `len` bytes
//!   occupies it for its serialisation time, `ceil(len * 8 * 1e9 / rate)` ns (rate in
//!   bits/s); with no rate (unlimited) that time is 0. The next packet starts the
//!   instant the previous one ends, so back-to-back packets are spaced by exactly their
//!   serialisation time.
//! - **Trace-driven transmitter** ([`Direction::with_trace`]). Instead of a rate, a
//!   [`DeliveryTrace`] gives the times at which [`MTU_BYTES`] may leave, as in
//!   Mahimahi's `mm-link`. A packet of `len` bytes needs `max(1, ceil(len / MTU_BYTES))`
//!   opportunities: it takes the first unused opportunity at or after the time it
//!   reaches the head of the line, plus the consecutive ones its bytes need, and its
//!   transmission ends at the last of them. Each opportunity is used at most once; one
//!   that passes while no packet is waiting is wasted. The packet waiting for its
//!   opportunity holds the transmitter (it is not in the queue), and the trace loops.
//! - **Queue.** A packet sent while the transmitter is idle starts at once and never
//!   enters the queue. Otherwise it waits in the queue, or is dropped
//!   and handed back if the queue is full ([`Sent::Dropped`]). The packet being
//!   transmitted does not count against the queue limit.
//! - **Loss.** The [`LossProcess`] is asked once per packet (once per fragment of a
//!   fragmented datagram), at the time it starts its transmission ("sent onto the wire"; with a trace, the time of its first
//!   opportunity). A lost packet still occupies the
//!   transmitter for its serialisation time, so losses never change the timing of the
//!   other packets.
//! - **Delivery.** A packet whose transmission ends at `t` arrives at `t + delay`:
//!   [`Event::Delivered`] with `at_ns = t + delay`. A lost packet gives
//!   [`Event::Lost`] at the same `at_ns` it would have arrived at, so events come out
//!   in time order and a lossy run lines up with a loss-free one packet by packet.
//!   Events come out in time order; at equal times, arrivals before CoDel drops.
//! - **Queue discipline** ([`Direction::with_queue`]). Drop-tail by default; RED
//!   decides at enqueue (a refused packet comes back as `Sent::Dropped(item,
//!   DropReason::Aqm)`), CoDel at dequeue (a dropped packet comes out of `poll` as
//!   [`Event::Dropped`] at the dequeue time). With ECN on, an ECN-capable packet (sent
//!   with [`Direction::send_ecn`]) is marked instead and arrives as
//!   `Event::Delivered { ce: true, .. }`. See [`aqm`](crate::aqm).
//! - **Fragmentation** ([`Direction::with_mtu`]). A datagram longer than the MTU
//!   travels as [`fragments`] IPv4 fragments (payload pieces of `(mtu − 20) & !7`
//!   bytes, each with its own 20-byte header). Each fragment is its own transmission:
//!   its own serialisation time, its own queue slot (and bytes), its own loss draw.
//!   The datagram is delivered when its last fragment arrives; if any fragment is lost
//!   the datagram is [`Event::Lost`] at the last fragment's arrival time, naming the
//!   first fragment lost. Queue accounting: the fragments of a datagram enter the queue
//!   together at `send`, and a datagram whose fragments do not all fit is dropped
//!   whole (with the transmitter idle, the first fragment goes on the wire and only the
//!   rest must fit). AQM decides per datagram (see [`aqm`](crate::aqm)).
//! - **Log** ([`Direction::enable_log`], off by default). Records (see
//!   [`record`](crate::record)): `packet_dropped` (reason `queue` or `aqm`) and
//!   `ecn_marked` when decided, `fragment_delivered` / `fragment_lost` per fragment of
//!   a fragmented datagram and `packet_delivered` / `packet_lost` when the event is
//!   polled, at the event's time.
//! - **Deadlines.** [`Direction::next_deadline`] is the next time something must
//!   happen: a queued fragment starting, an arrival, a dequeue-time drop. A
//!   transmission with nothing behind it needs no wake-up at its end: its arrival is
//!   the deadline, and any call completes it exactly. [`Direction::idle_from`] tells
//!   when the transmitter falls idle.
//! - **Time.** Calls must not go back in time (checked in debug builds). Times
//!   saturate at `i64::MAX` instead of overflowing.
//!
//! ```
//! use airtrace_link::link::{Direction, Event, Sent};
//! use airtrace_link::loss::{LossModel, LossProcess};
//! use airtrace_link::queue::QueueLimit;
//! use airtrace_link::rng::Streams;
//!
//! const MS: i64 = 1_000_000;
//! let loss = LossProcess::new(LossModel::None, Streams::new(1).stream("down/loss"))?;
//! // 12 Mbit/s, 10 ms, room for 100 packets.
//! let mut down = Direction::new(Some(12_000_000), 10 * MS, QueueLimit::Packets(100), loss);
//! assert!(matches!(down.send(0, "hello", 1500), Sent::Queued));
//! // Serialised by 1 ms; with nothing queued behind it, the next thing to happen is
//! // its arrival.
//! assert_eq!(down.next_deadline(), Some(11 * MS));
//! assert!(down.poll(MS).is_empty());
//! assert_eq!(down.next_deadline(), Some(11 * MS)); // arrival
//! assert_eq!(down.poll(11 * MS), [Event::Delivered { at_ns: 11 * MS, item: "hello", ce: false }]);
//! assert_eq!(down.next_deadline(), None);
//! # Ok::<(), airtrace_link::loss::LossConfigError>(())
//! ```

use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;

use crate::aqm::{AqmConfigError, CoDelState, QueueDiscipline, RedState, Verdict};
use crate::loss::LossProcess;
use crate::queue::QueueLimit;
use crate::record::{DropReason, LinkDir, LinkEventKind, LinkRecord, Log};
use crate::trace::{DeliveryTrace, MTU_BYTES};

/// Bytes of an IPv4 header without options, repeated in every fragment.
pub const IPV4_HEADER_BYTES: usize = 20;

/// What [`Direction::send`] did with a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Sent<T> {
    /// Accepted: on the wire now, or waiting in the queue.
    Queued,
    /// Refused at once (the queue was full, or RED chose it); the packet is handed back.
    Dropped(T, DropReason),
}

/// One fragment of a datagram: `index` (from 0) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fragment {
    /// Which fragment, from 0.
    pub index: u32,
    /// How many fragments the datagram travelled as.
    pub count: u32,
}

/// Something that happened to a packet (a whole datagram) in a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<T> {
    /// The packet arrived at `at_ns` (a fragmented datagram: when its last fragment did).
    Delivered {
        /// Arrival time, in ns.
        at_ns: i64,
        /// The packet.
        item: T,
        /// AQM marked it Congestion Experienced (set CE in the packet).
        ce: bool,
    },
    /// The wire lost the packet; `at_ns` is when it would have arrived.
    Lost {
        /// When the packet (its last fragment) would have arrived, in ns.
        at_ns: i64,
        /// The packet.
        item: T,
        /// For a fragmented datagram, the first fragment lost.
        fragment: Option<Fragment>,
    },
    /// The link gave up on the packet after accepting it (CoDel at dequeue, ARQ retry
    /// limit, link reset).
    Dropped {
        /// When the link gave up, in ns.
        at_ns: i64,
        /// The packet.
        item: T,
        /// Why.
        reason: DropReason,
    },
}

impl<T> Event<T> {
    /// The time of the event, in ns.
    pub fn at_ns(&self) -> i64 {
        match self {
            Event::Delivered { at_ns, .. }
            | Event::Lost { at_ns, .. }
            | Event::Dropped { at_ns, .. } => *at_ns,
        }
    }

    /// The packet.
    pub fn item(&self) -> &T {
        match self {
            Event::Delivered { item, .. }
            | Event::Lost { item, .. }
            | Event::Dropped { item, .. } => item,
        }
    }
}

/// The number of IPv4 fragments of a datagram of `len` bytes under `mtu`, and the
/// length of fragment `index` (header included).
///
/// A datagram that fits (`len <= mtu`, or no MTU) is one fragment of `len` bytes.
/// Otherwise its payload (`len − 20`) is cut into pieces of `(mtu − 20) & !7` bytes (a
/// multiple of 8, as IPv4 requires of every fragment but the last) and each piece gets
/// its own 20-byte header.
pub fn fragments(len: usize, mtu: Option<usize>) -> u32 {
    match mtu {
        Some(mtu) if len > mtu => {
            let per = (mtu - IPV4_HEADER_BYTES) & !7;
            u32::try_from((len - IPV4_HEADER_BYTES).div_ceil(per)).unwrap_or(u32::MAX)
        }
        _ => 1,
    }
}

/// The length in bytes of fragment `index` of `count` of a `len`-byte datagram (see
/// [`fragments`]).
pub fn fragment_len(len: usize, mtu: Option<usize>, index: u32, count: u32) -> usize {
    if count <= 1 {
        return len;
    }
    let per = (mtu.unwrap_or(len) - IPV4_HEADER_BYTES) & !7;
    let payload = len - IPV4_HEADER_BYTES;
    let done = per * index as usize;
    IPV4_HEADER_BYTES + per.min(payload - done)
}

/// A datagram accepted by the link, none of whose fragments has started.
#[derive(Debug, Clone)]
struct Datagram<T> {
    item: T,
    len: usize,
    count: u32,
    /// Bytes of all its fragments, headers included.
    wire_bytes: usize,
    enq_ns: i64,
    ect: bool,
    ce: bool,
}

/// The datagram whose fragment `index` occupies the transmitter.
#[derive(Debug, Clone)]
struct Current<T> {
    dg: Datagram<T>,
    index: u32,
    frag_len: usize,
    end_ns: i64,
    lost: bool,
    first_lost: Option<u32>,
    /// The caller's id (0 when not logging).
    packet: u64,
}

/// A fragment past the transmitter; the last one carries its datagram's event.
#[derive(Debug, Clone)]
struct Arrival<T> {
    at_ns: i64,
    index: u32,
    count: u32,
    lost: bool,
    bytes: usize,
    packet: u64,
    done: Option<Event<T>>,
}

/// Queue discipline state.
#[derive(Debug, Clone)]
enum Discipline {
    DropTail,
    Red(Box<RedState>),
    CoDel(CoDelState),
}

/// What paces packets onto the wire.
#[derive(Debug, Clone)]
enum Transmitter {
    /// A fixed rate in bits per second; `None` is unlimited.
    Rate(Option<u64>),
    /// Delivery opportunities from a looping trace.
    Trace {
        trace: DeliveryTrace,
        /// The number of the first opportunity not yet used.
        next_opportunity: u64,
    },
}

impl Transmitter {
    /// Occupies the transmitter with a packet of `len` bytes that is ready at
    /// `start_ns`; returns when its transmission starts and ends, in ns.
    fn occupy(&mut self, start_ns: i64, len: usize) -> (i64, i64) {
        match self {
            Transmitter::Rate(rate_bps) => (
                start_ns,
                start_ns.saturating_add(serialisation_ns(*rate_bps, len)),
            ),
            Transmitter::Trace {
                trace,
                next_opportunity,
            } => {
                let needed = (len as u64).div_ceil(MTU_BYTES).max(1);
                let first = trace.first_at_or_after(start_ns).max(*next_opportunity);
                let last = first.saturating_add(needed - 1);
                *next_opportunity = last.saturating_add(1);
                (trace.time_ns(first), trace.time_ns(last))
            }
        }
    }
}

/// `ceil(len * 8 * 1e9 / rate)` ns, or 0 for an unlimited rate.
fn serialisation_ns(rate_bps: Option<u64>, len: usize) -> i64 {
    let Some(rate) = rate_bps else {
        return 0;
    };
    let bit_ns = len as u128 * 8 * 1_000_000_000;
    i64::try_from(bit_ns.div_ceil(u128::from(rate))).unwrap_or(i64::MAX)
}

/// One direction of a link (see the [module documentation](self) for the semantics).
#[derive(Debug, Clone)]
pub struct Direction<T> {
    transmitter: Transmitter,
    delay_ns: i64,
    limit: QueueLimit,
    discipline: Discipline,
    mtu: Option<usize>,
    /// Datagrams waiting, none of their fragments started.
    queue: VecDeque<Datagram<T>>,
    /// Fragments waiting (those of `queue` and the unstarted ones of `current`).
    queued_units: usize,
    /// Bytes of the waiting fragments.
    queued_bytes: usize,
    loss: LossProcess,
    current: Option<Current<T>>,
    /// Fragments past the transmitter, in arrival order (which is also time order).
    in_flight: VecDeque<Arrival<T>>,
    /// Dequeue-time drops (CoDel), in time order.
    dropped: VecDeque<Event<T>>,
    log: Log<T>,
    log_dir: LinkDir,
    /// The latest time seen, to check that time does not run backwards.
    last_now_ns: i64,
    /// When the last completed transmission ended.
    last_end_ns: i64,
}

impl<T> Direction<T> {
    /// A direction with the given rate in bits/s (`None` or `Some(0)`: unlimited),
    /// propagation delay in ns, queue limit and loss process; drop-tail, no MTU.
    ///
    /// # Panics
    ///
    /// If `delay_ns` is negative.
    pub fn new(rate_bps: Option<u64>, delay_ns: i64, limit: QueueLimit, loss: LossProcess) -> Self {
        let rate_bps = rate_bps.filter(|&r| r > 0);
        Self::with_transmitter(Transmitter::Rate(rate_bps), delay_ns, limit, loss)
    }

    /// A direction whose packets leave at the delivery opportunities of `trace` (see
    /// the [module documentation](self)), with the given propagation delay in ns, queue
    /// limit and loss process. The trace's time 0 is the run's time 0.
    ///
    /// # Panics
    ///
    /// If `delay_ns` is negative.
    pub fn with_trace(
        trace: DeliveryTrace,
        delay_ns: i64,
        limit: QueueLimit,
        loss: LossProcess,
    ) -> Self {
        let transmitter = Transmitter::Trace {
            trace,
            next_opportunity: 0,
        };
        Self::with_transmitter(transmitter, delay_ns, limit, loss)
    }

    /// The shared part of [`new`](Self::new) and [`with_trace`](Self::with_trace).
    fn with_transmitter(
        transmitter: Transmitter,
        delay_ns: i64,
        limit: QueueLimit,
        loss: LossProcess,
    ) -> Self {
        assert!(delay_ns >= 0, "propagation delay {delay_ns} ns is negative");
        Self {
            transmitter,
            delay_ns,
            limit,
            discipline: Discipline::DropTail,
            mtu: None,
            queue: VecDeque::new(),
            queued_units: 0,
            queued_bytes: 0,
            loss,
            current: None,
            in_flight: VecDeque::new(),
            dropped: VecDeque::new(),
            log: Log::default(),
            log_dir: LinkDir::Down,
            last_now_ns: i64::MIN,
            last_end_ns: 0,
        }
    }

    /// Replaces the queue discipline (drop-tail by default) with `discipline`; `rng`
    /// is RED's stream (name it e.g. `"link0/down/aqm"`; unused by the others). The
    /// queue limit still applies. Use before the first packet.
    pub fn with_queue(
        mut self,
        discipline: QueueDiscipline,
        rng: ChaCha8Rng,
    ) -> Result<Self, AqmConfigError> {
        discipline.validate()?;
        self.discipline = match discipline {
            QueueDiscipline::DropTail => Discipline::DropTail,
            QueueDiscipline::Red(cfg) => Discipline::Red(Box::new(RedState::new(cfg, rng))),
            QueueDiscipline::CoDel(cfg) => Discipline::CoDel(CoDelState::new(cfg)),
        };
        Ok(self)
    }

    /// Sets the MTU in bytes: larger datagrams travel as IPv4 fragments (see the
    /// [module documentation](self)). `None` (the default): no fragmentation.
    ///
    /// # Panics
    ///
    /// If the MTU is below 28 bytes (a header and 8 bytes of payload).
    pub fn with_mtu(mut self, mtu: Option<usize>) -> Self {
        if let Some(m) = mtu {
            assert!(m >= IPV4_HEADER_BYTES + 8, "MTU {m} B is below 28 B");
        }
        self.mtu = mtu;
        self
    }

    /// Starts logging (see [`record`](crate::record)): records carry `dir` and the
    /// packet id `id(item)`.
    pub fn enable_log(&mut self, dir: LinkDir, id: fn(&T) -> u64) {
        self.log_dir = dir;
        self.log.enable(id);
    }

    /// Moves the records logged so far to the end of `out`.
    pub fn drain_log(&mut self, out: &mut Vec<LinkRecord>) {
        self.log.drain_into(out);
    }

    /// Offers the packet `item` of `len` bytes at `now_ns`, not ECN-capable. Same as
    /// [`send_ecn`](Self::send_ecn) with `ect = false`.
    pub fn send(&mut self, now_ns: i64, item: T, len: usize) -> Sent<T> {
        self.send_ecn(now_ns, item, len, false)
    }

    /// Offers the packet `item` of `len` bytes at `now_ns`; `ect`: it is ECN-capable,
    /// so AQM with `ecn` marks it instead of dropping it. If the transmitter is idle
    /// it starts at once; otherwise the packet joins the queue or is dropped.
    pub fn send_ecn(&mut self, now_ns: i64, item: T, len: usize, ect: bool) -> Sent<T> {
        self.advance(now_ns);
        let count = fragments(len, self.mtu);
        let wire_bytes = len + IPV4_HEADER_BYTES * (count as usize - 1);
        let mut dg = Datagram {
            item,
            len,
            count,
            wire_bytes,
            enq_ns: now_ns,
            ect,
            ce: false,
        };
        if let Discipline::Red(red) = &mut self.discipline {
            match red.on_arrival(now_ns, self.queued_units, ect) {
                Verdict::Enqueue => {}
                Verdict::Mark => {
                    dg.ce = true;
                    self.log_datagram(now_ns, LinkEventKind::EcnMarked, &dg);
                }
                Verdict::Drop => return self.refuse(now_ns, dg, DropReason::Aqm),
            }
        }
        let idle = self.current.is_none();
        let (units, bytes) = if idle {
            let first = fragment_len(len, self.mtu, 0, count);
            (count as usize - 1, wire_bytes - first)
        } else {
            (count as usize, wire_bytes)
        };
        let fits = match self.limit {
            QueueLimit::Packets(max) => self.queued_units + units <= max,
            QueueLimit::Bytes(max) => self.queued_bytes.saturating_add(bytes) <= max,
        };
        if !fits {
            return self.refuse(now_ns, dg, DropReason::Queue);
        }
        self.queued_units += count as usize;
        self.queued_bytes += wire_bytes;
        if idle {
            if let Discipline::CoDel(codel) = &mut self.discipline {
                // Enqueued and dequeued at once: a sojourn of 0.
                let _ = codel.ok_to_drop(now_ns, 0, 0);
                codel.dropping = false;
            }
            let packet = self.log.id(&dg.item);
            self.begin(now_ns, dg, 0, packet, None);
        } else {
            self.queue.push_back(dg);
        }
        Sent::Queued
    }

    /// When something next happens: the current transmission ends, a packet reaches
    /// the far end, or a dequeue-time drop is due. `None` when the link is empty. Call
    /// [`Direction::poll_into`] then.
    pub fn next_deadline(&self) -> Option<i64> {
        // A transmission with nothing behind it only leads to its arrival: no need to
        // wake at its end (`advance` completes it at any later call, exactly), which
        // saves a wake-up per packet on an unloaded link.
        let end = self.current.as_ref().map(|t| {
            if self.queued_units == 0 {
                t.end_ns.saturating_add(self.delay_ns)
            } else {
                t.end_ns
            }
        });
        let arrival = self.in_flight.front().map(|a| a.at_ns);
        let drop = self.dropped.front().map(Event::at_ns);
        end.into_iter().chain(arrival).chain(drop).min()
    }

    /// Advances to `now_ns` and appends to `out`, in time order, every event with
    /// `at_ns <= now_ns` not returned before (at equal times, arrivals before
    /// dequeue-time drops). Allocates nothing when `out` has room: the simulator keeps
    /// one buffer and clears it between calls.
    pub fn poll_into(&mut self, now_ns: i64, out: &mut Vec<Event<T>>) {
        self.advance(now_ns);
        loop {
            let a = self
                .in_flight
                .front()
                .map(|a| a.at_ns)
                .filter(|&t| t <= now_ns);
            let d = self
                .dropped
                .front()
                .map(Event::at_ns)
                .filter(|&t| t <= now_ns);
            match (a, d) {
                (None, None) => break,
                (Some(a), Some(d)) if d < a => out.extend(self.dropped.pop_front()),
                (None, Some(_)) => out.extend(self.dropped.pop_front()),
                _ => {
                    let Some(arrival) = self.in_flight.pop_front() else {
                        break;
                    };
                    self.log_arrival(&arrival);
                    out.extend(arrival.done);
                }
            }
        }
    }

    /// [`poll_into`](Self::poll_into) into a fresh `Vec` (convenient in tests and
    /// examples; the simulator's hot loop uses `poll_into`).
    pub fn poll(&mut self, now_ns: i64) -> Vec<Event<T>> {
        let mut out = Vec::new();
        self.poll_into(now_ns, &mut out);
        out
    }

    /// Fragments (packets, when nothing is fragmented) waiting in the queue, not
    /// counting the one being transmitted.
    pub fn queue_len(&self) -> usize {
        self.queued_units
    }

    /// Bytes waiting in the queue, not counting the fragment being transmitted.
    pub fn queue_bytes(&self) -> usize {
        self.queued_bytes
    }

    /// When the transmitter falls (or fell) idle: the end of the transmission under
    /// way when nothing waits behind it, the end of the last one when idle, `None`
    /// while fragments wait in the queue. Lets a caller measure idle time without
    /// polling at every transmission's end.
    pub fn idle_from(&self) -> Option<i64> {
        if self.queued_units > 0 {
            return None;
        }
        Some(self.current.as_ref().map_or(self.last_end_ns, |t| t.end_ns))
    }

    /// Completes every transmission that ends by `now_ns`, starting each next fragment
    /// or queued datagram at the exact instant the previous one ended.
    fn advance(&mut self, now_ns: i64) {
        debug_assert!(now_ns >= self.last_now_ns, "link asked about the past");
        self.last_now_ns = now_ns;
        while let Some(mut cur) = self.current.take_if(|t| t.end_ns <= now_ns) {
            let end_ns = cur.end_ns;
            self.last_end_ns = end_ns;
            let at_ns = end_ns.saturating_add(self.delay_ns);
            if cur.lost && cur.first_lost.is_none() {
                cur.first_lost = Some(cur.index);
            }
            let (index, count, lost, bytes, packet) =
                (cur.index, cur.dg.count, cur.lost, cur.frag_len, cur.packet);
            if index + 1 < count {
                self.in_flight.push_back(Arrival {
                    at_ns,
                    index,
                    count,
                    lost,
                    bytes,
                    packet,
                    done: None,
                });
                self.begin(end_ns, cur.dg, index + 1, packet, cur.first_lost);
                continue;
            }
            let dg = cur.dg;
            let done = match cur.first_lost {
                None => Event::Delivered {
                    at_ns,
                    item: dg.item,
                    ce: dg.ce,
                },
                Some(first) => Event::Lost {
                    at_ns,
                    item: dg.item,
                    fragment: (count > 1).then_some(Fragment {
                        index: first,
                        count,
                    }),
                },
            };
            self.in_flight.push_back(Arrival {
                at_ns,
                index,
                count,
                lost,
                bytes,
                packet,
                done: Some(done),
            });
            if let Some(next) = self.dequeue(end_ns) {
                let packet = self.log.id(&next.item);
                self.begin(end_ns, next, 0, packet, None);
            }
        }
    }

    /// Puts fragment `index` of `dg` on the idle transmitter at `start_ns`.
    fn begin(
        &mut self,
        start_ns: i64,
        dg: Datagram<T>,
        index: u32,
        packet: u64,
        first_lost: Option<u32>,
    ) {
        let frag_len = fragment_len(dg.len, self.mtu, index, dg.count);
        self.queued_units -= 1;
        self.queued_bytes -= frag_len;
        if self.queued_units == 0 {
            if let Discipline::Red(red) = &mut self.discipline {
                red.queue_emptied(start_ns);
            }
        }
        let (wire_ns, end_ns) = self.transmitter.occupy(start_ns, frag_len);
        let lost = self.loss.lose(wire_ns);
        self.current = Some(Current {
            dg,
            index,
            frag_len,
            end_ns,
            lost,
            first_lost,
            packet,
        });
    }

    /// Takes the next datagram for the transmitter at `now_ns`, letting CoDel drop or
    /// mark (RFC 8289 section 5.5, with marking as in Linux).
    fn dequeue(&mut self, now_ns: i64) -> Option<Datagram<T>> {
        if !matches!(self.discipline, Discipline::CoDel(_)) {
            return self.pop();
        }
        let Some(mut p) = self.pop() else {
            self.codel().queue_empty();
            return None;
        };
        let mut ok = self.codel_ok(now_ns, &p);
        let ecn = self.codel().cfg.ecn;
        if self.codel().dropping {
            if !ok {
                self.codel().dropping = false;
            }
            while self.codel().dropping && now_ns >= self.codel().drop_next {
                self.codel().count += 1;
                if ecn && p.ect {
                    p.ce = true;
                    self.log_datagram(now_ns, LinkEventKind::EcnMarked, &p);
                    let c = self.codel();
                    c.drop_next = c.control_law(c.drop_next);
                    return Some(p);
                }
                self.drop_at_dequeue(now_ns, p);
                let Some(next) = self.pop() else {
                    self.codel().queue_empty();
                    return None;
                };
                p = next;
                ok = self.codel_ok(now_ns, &p);
                let c = self.codel();
                if ok {
                    c.drop_next = c.control_law(c.drop_next);
                } else {
                    c.dropping = false;
                }
            }
        } else if ok {
            if ecn && p.ect {
                p.ce = true;
                self.log_datagram(now_ns, LinkEventKind::EcnMarked, &p);
            } else {
                self.drop_at_dequeue(now_ns, p);
                match self.pop() {
                    Some(next) => {
                        p = next;
                        let _ = self.codel_ok(now_ns, &p);
                    }
                    None => {
                        self.codel().queue_empty();
                        self.codel().enter_dropping(now_ns);
                        return None;
                    }
                }
            }
            self.codel().enter_dropping(now_ns);
        }
        Some(p)
    }

    /// CoDel's verdict for `p`, dequeued at `now_ns` (it is already out of `queue`).
    fn codel_ok(&mut self, now_ns: i64, p: &Datagram<T>) -> bool {
        let behind = self.queued_bytes - p.wire_bytes;
        let sojourn = now_ns.saturating_sub(p.enq_ns);
        self.codel().ok_to_drop(now_ns, sojourn, behind)
    }

    fn codel(&mut self) -> &mut CoDelState {
        match &mut self.discipline {
            Discipline::CoDel(c) => c,
            _ => unreachable!("CoDel state asked of another discipline"),
        }
    }

    /// The next waiting datagram (its fragments still counted as queued).
    fn pop(&mut self) -> Option<Datagram<T>> {
        self.queue.pop_front()
    }

    /// Drops a dequeued datagram (all its fragments) at `now_ns`.
    fn drop_at_dequeue(&mut self, now_ns: i64, dg: Datagram<T>) {
        self.queued_units -= dg.count as usize;
        self.queued_bytes -= dg.wire_bytes;
        self.log_drop(now_ns, &dg, DropReason::Aqm);
        self.dropped.push_back(Event::Dropped {
            at_ns: now_ns,
            item: dg.item,
            reason: DropReason::Aqm,
        });
    }

    /// Hands back a datagram refused at `send`.
    fn refuse(&mut self, now_ns: i64, dg: Datagram<T>, reason: DropReason) -> Sent<T> {
        self.log_drop(now_ns, &dg, reason);
        Sent::Dropped(dg.item, reason)
    }

    fn log_drop(&mut self, now_ns: i64, dg: &Datagram<T>, reason: DropReason) {
        if self.log.on() {
            let (id, q) = (self.log.id(&dg.item), self.queued_units);
            let dir = self.log_dir;
            self.log.push(|| {
                LinkRecord::new(now_ns, dir, LinkEventKind::PacketDropped)
                    .packet(id)
                    .bytes(dg.len)
                    .queue(q)
                    .reason(reason)
            });
        }
    }

    fn log_datagram(&mut self, now_ns: i64, kind: LinkEventKind, dg: &Datagram<T>) {
        if self.log.on() {
            let (id, q, dir) = (self.log.id(&dg.item), self.queued_units, self.log_dir);
            self.log.push(|| {
                LinkRecord::new(now_ns, dir, kind)
                    .packet(id)
                    .bytes(dg.len)
                    .queue(q)
            });
        }
    }

    fn log_arrival(&mut self, a: &Arrival<T>) {
        if !self.log.on() {
            return;
        }
        let (dir, q) = (self.log_dir, self.queued_units);
        if a.count > 1 {
            let kind = if a.lost {
                LinkEventKind::FragmentLost
            } else {
                LinkEventKind::FragmentDelivered
            };
            self.log.push(|| {
                LinkRecord::new(a.at_ns, dir, kind)
                    .packet(a.packet)
                    .frame(u64::from(a.index))
                    .bytes(a.bytes)
                    .fragments(a.count)
            });
        }
        let Some(done) = &a.done else { return };
        let kind = match done {
            Event::Delivered { .. } => LinkEventKind::PacketDelivered,
            _ => LinkEventKind::PacketLost,
        };
        let mut r = LinkRecord::new(a.at_ns, dir, kind)
            .packet(a.packet)
            .queue(q);
        if a.count > 1 {
            r = r.fragments(a.count);
        } else {
            r = r.bytes(a.bytes);
        }
        self.log.records.push(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{CoDelConfig, RedConfig};
    use crate::loss::LossModel;
    use crate::rng::Streams;

    const US: i64 = 1_000;
    const MS: i64 = 1_000_000;

    fn link(
        rate: Option<u64>,
        delay_ns: i64,
        limit: QueueLimit,
        loss: LossModel,
    ) -> Direction<u32> {
        let loss = LossProcess::new(loss, Streams::new(7).stream("test/down/loss")).unwrap();
        Direction::new(rate, delay_ns, limit, loss)
    }

    fn plain(rate: Option<u64>, delay_ns: i64) -> Direction<u32> {
        link(rate, delay_ns, QueueLimit::Packets(1000), LossModel::None)
    }

    /// Polls at every deadline until the link is empty; returns all events.
    fn drain(d: &mut Direction<u32>) -> Vec<Event<u32>> {
        let mut events = Vec::new();
        while let Some(t) = d.next_deadline() {
            events.extend(d.poll(t));
        }
        events
    }

    fn delivered(at_ns: i64, item: u32) -> Event<u32> {
        Event::Delivered {
            at_ns,
            item,
            ce: false,
        }
    }

    #[test]
    fn single_packet_serialises_then_propagates() {
        // 1500 B at 12 Mbit/s = 12,000 bits / 12e6 bit/s = 1 ms; then 10 ms of wire.
        let mut d = plain(Some(12_000_000), 10 * MS);
        assert_eq!(d.send(0, 1, 1500), Sent::Queued);
        // Nothing waits behind it: the next deadline is its arrival, not its end.
        assert_eq!(d.next_deadline(), Some(11 * MS));
        assert_eq!(d.idle_from(), Some(MS)); // the transmitter falls idle at 1 ms
        assert_eq!(d.poll(MS), []);
        assert_eq!(d.next_deadline(), Some(11 * MS)); // arrival
        assert_eq!(d.poll(11 * MS - 1), []); // not a nanosecond early
        assert_eq!(d.poll(11 * MS), [delivered(11 * MS, 1)]);
        assert_eq!(d.next_deadline(), None);
    }

    #[test]
    fn poll_into_appends_to_the_callers_buffer() {
        let mut d = plain(Some(12_000_000), 0);
        for i in 0..3 {
            let _ = d.send(0, i, 1500);
        }
        let mut out = vec![delivered(-1, 99)]; // whatever the caller already holds
        d.poll_into(2 * MS, &mut out);
        assert_eq!(
            out,
            [delivered(-1, 99), delivered(MS, 0), delivered(2 * MS, 1)]
        );
        out.clear();
        let cap = out.capacity();
        d.poll_into(3 * MS, &mut out);
        assert_eq!(
            (out.as_slice(), out.capacity()),
            (&[delivered(3 * MS, 2)][..], cap)
        );
    }

    #[test]
    fn back_to_back_packets_are_spaced_by_serialisation_time() {
        let mut d = plain(Some(12_000_000), 10 * MS);
        for i in 0..3 {
            assert_eq!(d.send(0, i, 1500), Sent::Queued);
        }
        assert_eq!(d.queue_len(), 2); // first on the wire, two waiting
                                      // Polling only once, late, still gives the exact times.
        assert_eq!(
            d.poll(20 * MS),
            [
                delivered(11 * MS, 0),
                delivered(12 * MS, 1),
                delivered(13 * MS, 2)
            ]
        );
    }

    #[test]
    fn serialisation_time_rounds_up_to_the_nanosecond() {
        // 1 B at 3 bit/s: 8/3 s = 2_666_666_666.67 ns, rounded up.
        let mut d = plain(Some(3), 0);
        let _ = d.send(0, 1, 1);
        let _ = d.send(0, 2, 1);
        assert_eq!(
            drain(&mut d),
            [delivered(2_666_666_667, 1), delivered(5_333_333_334, 2)]
        );
    }

    #[test]
    fn packet_sent_as_the_transmitter_frees_up_starts_at_once() {
        let mut d = plain(Some(12_000_000), 0);
        let _ = d.send(0, 1, 1500);
        let _ = d.send(MS, 2, 1500); // the first ends exactly now
        assert_eq!(d.queue_len(), 0);
        assert_eq!(drain(&mut d), [delivered(MS, 1), delivered(2 * MS, 2)]);
    }

    #[test]
    fn idle_gap_restarts_at_send_time() {
        let mut d = plain(Some(12_000_000), 10 * MS);
        let _ = d.send(0, 1, 1500);
        let _ = d.send(5 * MS, 2, 1500); // link idle since 1 ms
        assert_eq!(
            drain(&mut d),
            [delivered(11 * MS, 1), delivered(16 * MS, 2)]
        );
    }

    #[test]
    fn queue_of_two_drops_the_third_of_a_burst() {
        let mut d = link(
            Some(12_000_000),
            10 * MS,
            QueueLimit::Packets(2),
            LossModel::None,
        );
        // t = 0: packet 0 takes the transmitter (1 ms), then a burst of 3 arrives.
        assert_eq!(d.send(0, 0, 1500), Sent::Queued);
        assert_eq!(d.send(0, 1, 1500), Sent::Queued);
        assert_eq!(d.send(0, 2, 1500), Sent::Queued);
        assert_eq!(d.send(0, 3, 1500), Sent::Dropped(3, DropReason::Queue));
        // t = 1 ms: packet 0 done, packet 1 on the wire, room for one more.
        assert_eq!(d.send(MS, 4, 1500), Sent::Queued);
        assert_eq!(d.send(MS, 5, 1500), Sent::Dropped(5, DropReason::Queue));
        assert_eq!(
            drain(&mut d),
            [
                delivered(11 * MS, 0),
                delivered(12 * MS, 1),
                delivered(13 * MS, 2),
                delivered(14 * MS, 4)
            ]
        );
    }

    #[test]
    fn byte_limited_queue() {
        let mut d = link(
            Some(12_000_000),
            0,
            QueueLimit::Bytes(2000),
            LossModel::None,
        );
        let _ = d.send(0, 0, 1500); // on the wire, not in the queue
        assert_eq!(d.send(0, 1, 1500), Sent::Queued);
        assert_eq!(d.send(0, 2, 501), Sent::Dropped(2, DropReason::Queue));
        assert_eq!(d.send(0, 3, 500), Sent::Queued);
        assert_eq!(d.queue_bytes(), 2000);
    }

    #[test]
    fn unlimited_rate_is_delay_only() {
        for rate in [None, Some(0)] {
            let mut d = link(rate, 10 * MS, QueueLimit::Packets(0), LossModel::None);
            for i in 0..3 {
                assert_eq!(d.send(i64::from(i) * US, i, 65_535), Sent::Queued);
            }
            let _ = d.send(5 * US, 10, 1500);
            let _ = d.send(5 * US, 11, 1500); // same instant: still no wait
            assert_eq!(
                drain(&mut d),
                [
                    delivered(10 * MS, 0),
                    delivered(10 * MS + US, 1),
                    delivered(10 * MS + 2 * US, 2),
                    delivered(10 * MS + 5 * US, 10),
                    delivered(10 * MS + 5 * US, 11)
                ]
            );
        }
    }

    #[test]
    fn total_loss_keeps_the_timing() {
        let mut lossless = plain(Some(12_000_000), 10 * MS);
        let mut lossy = link(
            Some(12_000_000),
            10 * MS,
            QueueLimit::Packets(1000),
            LossModel::Bernoulli { p: 1.0 },
        );
        for i in 0..5 {
            let _ = lossless.send(0, i, 1500);
            let _ = lossy.send(0, i, 1500);
        }
        let want = drain(&mut lossless);
        let got = drain(&mut lossy);
        assert_eq!(got.len(), 5);
        for (g, w) in got.iter().zip(&want) {
            assert!(matches!(g, Event::Lost { .. }), "{g:?}");
            assert_eq!(g.at_ns(), w.at_ns());
        }
        assert_eq!(got[4].at_ns(), 15 * MS);
    }

    #[test]
    fn same_seed_same_events() {
        let run = |seed: u64| {
            let loss = LossProcess::new(
                LossModel::Bernoulli { p: 0.3 },
                Streams::new(seed).stream("link0/down/loss"),
            )
            .unwrap();
            let mut d = Direction::new(Some(1_000_000), 5 * MS, QueueLimit::Bytes(20_000), loss);
            let mut events = Vec::new();
            let mut dropped = Vec::new();
            for i in 0..200u32 {
                let now = i64::from(i) * 3 * MS;
                events.extend(d.poll(now));
                if let Sent::Dropped(p, DropReason::Queue) =
                    d.send(now, i, 500 + (i as usize % 7) * 150)
                {
                    dropped.push(p);
                }
            }
            events.extend(drain(&mut d));
            (events, dropped)
        };
        let (a, a_dropped) = run(42);
        assert_eq!(run(42), (a.clone(), a_dropped.clone()));
        assert_ne!(run(43).0, a);
        assert!(
            a.windows(2).all(|w| w[0].at_ns() <= w[1].at_ns()),
            "time order"
        );
        let lost = a.iter().filter(|e| matches!(e, Event::Lost { .. })).count();
        assert!(lost > 0 && lost < a.len());
        assert_eq!(a.len() + a_dropped.len(), 200); // every packet accounted for
    }

    /// A link driven by the trace "0 0 5 10" (ms), queue of 1000 packets.
    fn traced(delay_ns: i64, loss: LossModel) -> Direction<u32> {
        let trace = DeliveryTrace::parse("t", "0\n0\n5\n10\n").unwrap();
        let loss = LossProcess::new(loss, Streams::new(7).stream("test/down/loss")).unwrap();
        Direction::with_trace(trace, delay_ns, QueueLimit::Packets(1000), loss)
    }

    #[test]
    fn trace_delivers_one_packet_per_opportunity() {
        let mut d = traced(10 * MS, LossModel::None);
        for i in 0..3 {
            assert_eq!(d.send(0, i, 1500), Sent::Queued);
        }
        assert_eq!(d.queue_len(), 0); // two left at 0 ms, the third holds the transmitter
                                      // The first two arrive at 10 ms; the third leaves at its opportunity (5 ms) with
                                      // nothing behind it, so no wake-up is needed before the arrivals.
        assert_eq!(d.next_deadline(), Some(10 * MS));
        assert_eq!(d.idle_from(), Some(5 * MS));
        assert_eq!(
            drain(&mut d),
            [
                delivered(10 * MS, 0),
                delivered(10 * MS, 1),
                delivered(15 * MS, 2)
            ]
        );
    }

    #[test]
    fn trace_packet_waits_for_the_next_opportunity() {
        let mut d = traced(10 * MS, LossModel::None);
        assert_eq!(d.send(MS, 7, 100), Sent::Queued);
        assert_eq!(d.idle_from(), Some(5 * MS)); // it leaves at the 5 ms opportunity
        assert_eq!(d.next_deadline(), Some(15 * MS)); // and arrives 10 ms later
        assert_eq!(d.poll(5 * MS), []);
        assert_eq!(d.poll(15 * MS), [delivered(15 * MS, 7)]);
    }

    #[test]
    fn trace_wastes_opportunities_on_an_empty_queue() {
        let mut d = traced(0, LossModel::None);
        let _ = d.send(0, 0, 1500); // uses the first 0 ms opportunity; the second is wasted
        assert_eq!(d.poll(6 * MS), [delivered(0, 0)]); // 5 ms also passes unused
        let _ = d.send(6 * MS, 1, 1500);
        let _ = d.send(6 * MS, 2, 1500);
        // 10 ms (last line) and 10 ms (next cycle's first "0"), both of the same ms.
        assert_eq!(
            drain(&mut d),
            [delivered(10 * MS, 1), delivered(10 * MS, 2)]
        );
    }

    #[test]
    fn trace_loops_past_its_period() {
        let mut d = traced(MS, LossModel::None);
        for i in 0..9 {
            let _ = d.send(0, i, 1500);
        }
        let times: Vec<i64> = drain(&mut d).iter().map(|e| e.at_ns() / MS).collect();
        // Opportunities 0, 0, 5, 10 | 10, 10, 15, 20 | 20: each plus 1 ms of delay.
        assert_eq!(times, [1, 1, 6, 11, 11, 11, 16, 21, 21]);
    }

    #[test]
    fn trace_large_packet_uses_consecutive_opportunities() {
        let mut d = traced(0, LossModel::None);
        let _ = d.send(0, 0, 1501); // two opportunities: both at 0 ms
        let _ = d.send(0, 1, 3000); // two more: 5 and 10 ms
        let _ = d.send(0, 2, 0); // an empty packet still takes one: 10 ms (next cycle)
        assert_eq!(
            drain(&mut d),
            [
                delivered(0, 0),
                delivered(10 * MS, 1),
                delivered(10 * MS, 2)
            ]
        );
    }

    #[test]
    fn trace_applies_loss_per_packet_and_keeps_the_timing() {
        let mut lossless = traced(2 * MS, LossModel::None);
        let mut lossy = traced(2 * MS, LossModel::Bernoulli { p: 1.0 });
        for i in 0..6 {
            let _ = lossless.send(0, i, 1500);
            let _ = lossy.send(0, i, 1500);
        }
        let want = drain(&mut lossless);
        let got = drain(&mut lossy);
        assert_eq!(got.len(), 6);
        for (g, w) in got.iter().zip(&want) {
            assert!(matches!(g, Event::Lost { .. }), "{g:?}");
            assert_eq!(g.at_ns(), w.at_ns());
        }
    }

    #[test]
    fn trace_same_seed_same_events() {
        let run = |seed: u64| {
            let trace = DeliveryTrace::parse("t", "0\n0\n3\n4\n4\n9\n").unwrap();
            let loss = LossProcess::new(
                LossModel::Bernoulli { p: 0.3 },
                Streams::new(seed).stream("link0/down/loss"),
            )
            .unwrap();
            let mut d = Direction::with_trace(trace, 5 * MS, QueueLimit::Packets(8), loss);
            let mut events = Vec::new();
            let mut dropped = 0;
            for i in 0..300u32 {
                let now = i64::from(i) * MS / 2;
                events.extend(d.poll(now));
                if let Sent::Dropped(_, DropReason::Queue) =
                    d.send(now, i, 200 + (i as usize % 9) * 300)
                {
                    dropped += 1;
                }
            }
            events.extend(drain(&mut d));
            (events, dropped)
        };
        let (a, a_dropped) = run(42);
        assert_eq!(run(42), (a.clone(), a_dropped));
        assert_ne!(run(43).0, a);
        assert!(a.windows(2).all(|w| w[0].at_ns() <= w[1].at_ns()));
        let lost = a.iter().filter(|e| matches!(e, Event::Lost { .. })).count();
        assert!(lost > 0 && lost < a.len() && a_dropped > 0);
        assert_eq!(a.len() + a_dropped, 300);
    }

    fn codel_link(ecn: bool) -> Direction<u32> {
        let cfg = CoDelConfig {
            ecn,
            ..CoDelConfig::default()
        };
        link(
            Some(12_000_000),
            0,
            QueueLimit::Packets(10_000),
            LossModel::None,
        )
        .with_queue(
            QueueDiscipline::CoDel(cfg),
            Streams::new(7).stream("test/aqm"),
        )
        .unwrap()
    }

    /// When CoDel should act on a queue whose sojourn time stays above target from
    /// 5 ms on, dequeues falling on whole milliseconds: first at 5 ms + interval, then
    /// at the first dequeue at or after each `drop_next`, which advances by
    /// `interval / sqrt(count)`.
    fn codel_schedule(n: usize) -> Vec<i64> {
        let interval = 100 * MS;
        let mut times = vec![105 * MS];
        let mut drop_next = 205 * MS;
        for count in 2..=n as u32 {
            times.push((drop_next + MS - 1) / MS * MS);
            drop_next += (interval as f64 / f64::from(count).sqrt()) as i64;
        }
        times
    }

    #[test]
    fn codel_drops_after_an_interval_above_target_then_ever_faster() {
        let mut d = codel_link(false);
        // 600 packets at once on a 1 ms/packet link: packet k waits k ms.
        for i in 0..600 {
            assert_eq!(d.send(0, i, 1500), Sent::Queued);
        }
        let events = drain(&mut d);
        let drops: Vec<i64> = events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Event::Dropped {
                        reason: DropReason::Aqm,
                        ..
                    }
                )
            })
            .map(Event::at_ns)
            .collect();
        assert_eq!(drops[..8], codel_schedule(8)[..]);
        // 105, 205, 276, 334 ms ...: gaps shrink as 100/sqrt(count) ms.
        assert_eq!(drops[2], 276 * MS);
        let gaps: Vec<i64> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.windows(2).take(6).all(|g| g[1] <= g[0]), "{gaps:?}");
        // Nothing before the first interval has passed; every packet accounted for.
        assert!(events
            .iter()
            .take_while(|e| e.at_ns() < 105 * MS)
            .all(|e| matches!(e, Event::Delivered { .. })));
        assert_eq!(events.len(), 600);
        assert!(events.windows(2).all(|w| w[0].at_ns() <= w[1].at_ns()));
    }

    #[test]
    fn codel_with_ecn_marks_where_it_would_drop() {
        let mut d = codel_link(true);
        for i in 0..600 {
            assert_eq!(d.send_ecn(0, i, 1500, true), Sent::Queued);
        }
        let events = drain(&mut d);
        assert!(events.iter().all(|e| matches!(e, Event::Delivered { .. })));
        // A marked packet leaves at its dequeue time and takes 1 ms on the wire.
        let marks: Vec<i64> = events
            .iter()
            .filter(|e| matches!(e, Event::Delivered { ce: true, .. }))
            .map(|e| e.at_ns() - MS)
            .collect();
        assert_eq!(marks[..8], codel_schedule(8)[..]);
        // Packets that are not ECN-capable are still dropped.
        let mut d = codel_link(true);
        for i in 0..600 {
            let _ = d.send(0, i, 1500);
        }
        assert!(drain(&mut d)
            .iter()
            .any(|e| matches!(e, Event::Dropped { at_ns, .. } if *at_ns == 105 * MS)));
    }

    fn red_link(ecn: bool) -> Direction<u32> {
        let cfg = RedConfig {
            w_q: 1.0,
            min_th: 2.0,
            max_th: 4.0,
            gentle: false,
            ecn,
            ..RedConfig::default()
        };
        link(Some(12_000_000), 0, QueueLimit::Packets(6), LossModel::None)
            .with_queue(
                QueueDiscipline::Red(cfg),
                Streams::new(7).stream("test/aqm"),
            )
            .unwrap()
    }

    #[test]
    fn red_in_a_direction_drops_at_enqueue_and_marks_with_ecn() {
        // Average = instantaneous queue (w_q = 1); at 4 waiting everything is dropped.
        let mut d = red_link(false);
        let sent: Vec<Sent<u32>> = (0..8).map(|i| d.send(0, i, 1500)).collect();
        assert!(sent[..5].iter().all(|s| *s == Sent::Queued)); // 1 on the wire, 4 wait
        assert_eq!(sent[7], Sent::Dropped(7, DropReason::Aqm));
        assert!(d.queue_len() <= 4);
        // With ECN, ECT packets are marked instead, until the queue limit (6) is hit.
        let mut d = red_link(true);
        let sent: Vec<Sent<u32>> = (0..9).map(|i| d.send_ecn(0, i, 1500, true)).collect();
        assert_eq!(sent[..7], vec![Sent::Queued; 7][..]);
        assert_eq!(sent[7], Sent::Dropped(7, DropReason::Queue));
        let events = drain(&mut d);
        let marked = events
            .iter()
            .filter(|e| matches!(e, Event::Delivered { ce: true, .. }))
            .count();
        assert!(marked >= 2, "{events:?}");
        assert!(events.iter().all(|e| matches!(e, Event::Delivered { .. })));
    }

    #[test]
    fn aqm_same_seed_same_events() {
        let run = |seed: u64, discipline: QueueDiscipline| {
            let loss = LossProcess::new(LossModel::None, Streams::new(seed).stream("l")).unwrap();
            let mut d = Direction::new(Some(1_000_000), 5 * MS, QueueLimit::Packets(40), loss)
                .with_queue(discipline, Streams::new(seed).stream("link0/down/aqm"))
                .unwrap();
            let mut events = Vec::new();
            for i in 0..500u32 {
                let now = i64::from(i) * MS;
                d.poll_into(now, &mut events);
                if let Sent::Dropped(p, r) = d.send(now, i, 200 + (i as usize % 5) * 100) {
                    events.push(Event::Dropped {
                        at_ns: now,
                        item: p,
                        reason: r,
                    });
                }
            }
            events.extend(drain(&mut d));
            events
        };
        let red = QueueDiscipline::Red(RedConfig {
            w_q: 0.2,
            ..RedConfig::default()
        });
        let codel = QueueDiscipline::CoDel(CoDelConfig::default());
        for q in [red, codel] {
            let a = run(42, q);
            assert_eq!(a, run(42, q));
            assert_eq!(a.len(), 500);
            let aqm = a
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        Event::Dropped {
                            reason: DropReason::Aqm,
                            ..
                        }
                    )
                })
                .count();
            assert!(aqm > 0, "{q:?}");
        }
        assert_ne!(run(42, red), run(43, red));
    }

    #[test]
    fn fragment_counts_follow_ipv4_rules() {
        assert_eq!(fragments(1500, Some(1500)), 1);
        assert_eq!(fragments(1501, Some(1500)), 2);
        assert_eq!(fragments(4000, None), 1);
        // NFS's 8 KB write: 8192 B of data + 8 B UDP + 20 B IP = 8220 B; 8200 B of
        // payload in 1480 B pieces = 6 fragments, the last carrying 800 B.
        assert_eq!(fragments(8220, Some(1500)), 6);
        assert_eq!(fragment_len(8220, Some(1500), 5, 6), 820);
        // A 576 B MTU leaves 556 B, rounded down to 552 (a multiple of 8).
        assert_eq!(fragments(1500, Some(576)), 3);
        assert_eq!(fragment_len(1500, Some(576), 0, 3), 572);
        assert_eq!(fragment_len(1500, Some(576), 2, 3), 20 + 1480 - 2 * 552);
        for (len, mtu) in [(8220, 1500), (65_535, 576), (29, 28), (100, 28)] {
            let n = fragments(len, Some(mtu));
            let total: usize = (0..n).map(|i| fragment_len(len, Some(mtu), i, n)).sum();
            assert_eq!(total, len + 20 * (n as usize - 1), "{len} / {mtu}");
            assert!((0..n).all(|i| fragment_len(len, Some(mtu), i, n) <= mtu));
        }
    }

    fn fragmenting(loss: LossModel, limit: QueueLimit) -> Direction<u32> {
        let mut d = link(Some(12_000_000), 10 * MS, limit, loss).with_mtu(Some(1500));
        d.enable_log(LinkDir::Down, |p| u64::from(*p));
        d
    }

    #[test]
    fn three_fragments_are_three_transmissions_delivered_with_the_last() {
        let mut d = fragmenting(LossModel::None, QueueLimit::Packets(100));
        // 4000 B: payload 3980 B = 1480 + 1480 + 1020 → fragments of 1500, 1500, 1040 B:
        // 1 ms + 1 ms + 1040·8/12e6 s (693,333.3 ns, rounded up) on the wire.
        assert_eq!(d.send(0, 9, 4000), Sent::Queued);
        assert_eq!(d.queue_len(), 2); // fragments 1 and 2 wait
        let last = 2 * MS + 693_334 + 10 * MS;
        assert_eq!(drain(&mut d), [delivered(last, 9)]);
        let mut log = Vec::new();
        d.drain_log(&mut log);
        let arrivals: Vec<(i64, LinkEventKind, Option<u64>, Option<u32>)> = log
            .iter()
            .map(|r| (r.t_ns, r.kind, r.frame, r.bytes))
            .collect();
        use LinkEventKind::*;
        assert_eq!(
            arrivals,
            [
                (11 * MS, FragmentDelivered, Some(0), Some(1500)),
                (12 * MS, FragmentDelivered, Some(1), Some(1500)),
                (last, FragmentDelivered, Some(2), Some(1040)),
                (last, PacketDelivered, None, None),
            ]
        );
        assert!(log.iter().all(|r| r.packet == Some(9)));
        assert_eq!(log[3].fragments, Some(3));
    }

    #[test]
    fn one_lost_fragment_loses_the_datagram() {
        // The loss trace loses the 2nd transmission only: fragment 1 of datagram 0.
        let loss = LossModel::Trace(vec![false, true, false, false, false, false]);
        let mut d = fragmenting(loss, QueueLimit::Packets(100));
        let _ = d.send(0, 0, 4000);
        let _ = d.send(0, 1, 4000);
        let events = drain(&mut d);
        let first_end = 2 * MS + 693_334 + 10 * MS;
        assert_eq!(
            events,
            [
                Event::Lost {
                    at_ns: first_end,
                    item: 0,
                    fragment: Some(Fragment { index: 1, count: 3 })
                },
                delivered(first_end + 2 * MS + 693_334, 1)
            ]
        );
        let mut log = Vec::new();
        d.drain_log(&mut log);
        let lost: Vec<(LinkEventKind, Option<u64>)> = log
            .iter()
            .filter(|r| r.packet == Some(0))
            .map(|r| (r.kind, r.frame))
            .collect();
        use LinkEventKind::*;
        assert_eq!(
            lost,
            [
                (FragmentDelivered, Some(0)),
                (FragmentLost, Some(1)),
                (FragmentDelivered, Some(2)),
                (PacketLost, None)
            ]
        );
    }

    #[test]
    fn a_datagram_that_does_not_fit_is_dropped_whole() {
        let mut d = fragmenting(LossModel::None, QueueLimit::Packets(3));
        assert_eq!(d.send(0, 0, 4000), Sent::Queued); // 1 on the wire, 2 wait
        assert_eq!(d.send(0, 1, 3000), Sent::Dropped(1, DropReason::Queue)); // needs 3
        assert_eq!(d.send(0, 2, 1000), Sent::Queued); // 1 fits
        assert_eq!(d.queue_len(), 3);
        let mut log = Vec::new();
        d.drain_log(&mut log);
        assert_eq!(
            log,
            [
                LinkRecord::new(0, LinkDir::Down, LinkEventKind::PacketDropped)
                    .packet(1)
                    .bytes(3000)
                    .queue(2)
                    .reason(DropReason::Queue)
            ]
        );
    }

    #[test]
    fn log_is_empty_unless_enabled_and_follows_the_events() {
        let mut quiet = link(
            Some(12_000_000),
            0,
            QueueLimit::Packets(1),
            LossModel::Bernoulli { p: 0.5 },
        );
        for i in 0..10 {
            let _ = quiet.send(0, i, 1500);
        }
        let _ = drain(&mut quiet);
        let mut log = Vec::new();
        quiet.drain_log(&mut log);
        assert!(log.is_empty());

        let mut d = link(
            Some(12_000_000),
            0,
            QueueLimit::Packets(1),
            LossModel::Trace(vec![true, false]),
        );
        d.enable_log(LinkDir::Up, |p| u64::from(*p) + 100);
        for i in 0..3 {
            let _ = d.send(0, i, 1500);
        }
        let _ = drain(&mut d);
        d.drain_log(&mut log);
        let kinds: Vec<(i64, LinkEventKind, Option<u64>)> =
            log.iter().map(|r| (r.t_ns, r.kind, r.packet)).collect();
        use LinkEventKind::*;
        assert_eq!(
            kinds,
            [
                (0, PacketDropped, Some(102)),
                (MS, PacketLost, Some(100)),
                (2 * MS, PacketDelivered, Some(101))
            ]
        );
        assert!(log.iter().all(|r| r.dir == LinkDir::Up));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "asked about the past")]
    fn rejects_time_running_backwards_in_debug_builds() {
        let mut d = plain(None, 0);
        let _ = d.poll(5);
        let _ = d.send(4, 1, 1);
    }
}
