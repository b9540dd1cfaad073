//! One direction of a link: a drop-tail queue, a transmitter (a fixed rate or a
//! Mahimahi delivery trace), a loss process, and a propagation delay.
//!
//! [`Direction`] has no clock. The caller hands it packets with [`Direction::send`],
//! asks [`Direction::next_deadline`] when it next needs attention, and collects what
//! happened up to a time with [`Direction::poll`]. The simulator calls these with its
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
//!   enters the queue. Otherwise it waits in the [`DropTail`] queue, or is dropped
//!   and handed back if the queue is full ([`Sent::Dropped`]). The packet being
//!   transmitted does not count against the queue limit.
//! - **Loss.** The [`LossProcess`] is asked once per packet, at the time the packet
//!   starts its transmission ("sent onto the wire"; with a trace, the time of its first
//!   opportunity). A lost packet still occupies the
//!   transmitter for its serialisation time, so losses never change the timing of the
//!   other packets.
//! - **Delivery.** A packet whose transmission ends at `t` arrives at `t + delay`:
//!   [`Event::Delivered`] with `at_ns = t + delay`. A lost packet gives
//!   [`Event::Lost`] at the same `at_ns` it would have arrived at, so events come out
//!   in time order and a lossy run lines up with a loss-free one packet by packet.
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
//! assert_eq!(down.next_deadline(), Some(MS)); // end of serialisation
//! assert!(down.poll(MS).is_empty());
//! assert_eq!(down.next_deadline(), Some(11 * MS)); // arrival
//! assert_eq!(down.poll(11 * MS), [Event::Delivered { at_ns: 11 * MS, item: "hello" }]);
//! assert_eq!(down.next_deadline(), None);
//! # Ok::<(), airtrace_link::loss::LossConfigError>(())
//! ```

use std::collections::VecDeque;

use crate::loss::LossProcess;
use crate::queue::{DropTail, QueueLimit};
use crate::trace::{DeliveryTrace, MTU_BYTES};

/// What [`Direction::send`] did with a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Sent<T> {
    /// Accepted: on the wire now, or waiting in the queue.
    Queued,
    /// The queue was full; the packet is handed back.
    Dropped(T),
}

/// Something that happened to a packet at the far end of a [`Direction`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<T> {
    /// The packet arrived at `at_ns`.
    Delivered {
        /// Arrival time: end of transmission + propagation delay, in ns.
        at_ns: i64,
        /// The packet.
        item: T,
    },
    /// The loss process lost the packet; `at_ns` is when it would have arrived.
    Lost {
        /// When the packet would have arrived, in ns.
        at_ns: i64,
        /// The packet.
        item: T,
    },
}

impl<T> Event<T> {
    /// The time of the event, in ns.
    pub fn at_ns(&self) -> i64 {
        match self {
            Event::Delivered { at_ns, .. } | Event::Lost { at_ns, .. } => *at_ns,
        }
    }
}

/// The packet occupying the transmitter.
#[derive(Debug, Clone)]
struct Transmission<T> {
    item: T,
    lost: bool,
    end_ns: i64,
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
    queue: DropTail<T>,
    loss: LossProcess,
    transmitting: Option<Transmission<T>>,
    /// Packets past the transmitter, in arrival order (which is also time order).
    in_flight: VecDeque<Event<T>>,
    /// The latest time seen, to check that time does not run backwards.
    last_now_ns: i64,
}

impl<T> Direction<T> {
    /// A direction with the given rate in bits/s (`None` or `Some(0)`: unlimited),
    /// propagation delay in ns, queue limit and loss process.
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
            queue: DropTail::new(limit),
            loss,
            transmitting: None,
            in_flight: VecDeque::new(),
            last_now_ns: i64::MIN,
        }
    }

    /// Offers the packet `item` of `len` bytes at `now_ns`. If the transmitter is idle
    /// it starts at once; otherwise the packet joins the queue or is dropped.
    pub fn send(&mut self, now_ns: i64, item: T, len: usize) -> Sent<T> {
        self.advance(now_ns);
        if self.transmitting.is_none() {
            self.start(now_ns, item, len);
            return Sent::Queued;
        }
        match self.queue.enqueue(item, len) {
            Ok(()) => Sent::Queued,
            Err(item) => Sent::Dropped(item),
        }
    }

    /// When something next happens: the current transmission ends or a packet reaches
    /// the far end. `None` when the link is empty. Call [`Direction::poll`] then.
    pub fn next_deadline(&self) -> Option<i64> {
        let end = self.transmitting.as_ref().map(|t| t.end_ns);
        let arrival = self.in_flight.front().map(Event::at_ns);
        end.into_iter().chain(arrival).min()
    }

    /// Advances to `now_ns` and appends to `out`, in time order, every event with
    /// `at_ns <= now_ns` not returned before. Allocates nothing when `out` has room:
    /// the simulator keeps one buffer and clears it between calls.
    pub fn poll_into(&mut self, now_ns: i64, out: &mut Vec<Event<T>>) {
        self.advance(now_ns);
        while self.in_flight.front().is_some_and(|e| e.at_ns() <= now_ns) {
            out.extend(self.in_flight.pop_front());
        }
    }

    /// [`poll_into`](Self::poll_into) into a fresh `Vec` (convenient in tests and
    /// examples; the simulator's hot loop uses `poll_into`).
    pub fn poll(&mut self, now_ns: i64) -> Vec<Event<T>> {
        let mut out = Vec::new();
        self.poll_into(now_ns, &mut out);
        out
    }

    /// Packets waiting in the queue (not counting the one being transmitted).
    pub fn queue(&self) -> &DropTail<T> {
        &self.queue
    }

    /// Completes every transmission that ends by `now_ns`, starting each next queued
    /// packet at the exact instant the previous one ended.
    fn advance(&mut self, now_ns: i64) {
        debug_assert!(now_ns >= self.last_now_ns, "link asked about the past");
        self.last_now_ns = now_ns;
        while let Some(done) = self.transmitting.take_if(|t| t.end_ns <= now_ns) {
            let at_ns = done.end_ns.saturating_add(self.delay_ns);
            let item = done.item;
            self.in_flight.push_back(if done.lost {
                Event::Lost { at_ns, item }
            } else {
                Event::Delivered { at_ns, item }
            });
            if let Some((next, len)) = self.queue.dequeue() {
                self.start(done.end_ns, next, len);
            }
        }
    }

    /// Gives the idle transmitter `item`, ready at `start_ns`.
    fn start(&mut self, start_ns: i64, item: T, len: usize) {
        let (wire_ns, end_ns) = self.transmitter.occupy(start_ns, len);
        let lost = self.loss.lose(wire_ns);
        self.transmitting = Some(Transmission { item, lost, end_ns });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        Event::Delivered { at_ns, item }
    }

    #[test]
    fn single_packet_serialises_then_propagates() {
        // 1500 B at 12 Mbit/s = 12,000 bits / 12e6 bit/s = 1 ms; then 10 ms of wire.
        let mut d = plain(Some(12_000_000), 10 * MS);
        assert_eq!(d.send(0, 1, 1500), Sent::Queued);
        assert_eq!(d.next_deadline(), Some(MS)); // transmission ends
        assert_eq!(d.poll(MS), []);
        assert_eq!(d.next_deadline(), Some(11 * MS)); // arrival
        assert_eq!(d.poll(11 * MS - 1), []); // not a nanosecond early
        assert_eq!(d.poll(11 * MS), [delivered(11 * MS, 1)]);
        assert_eq!(d.next_deadline(), None);
    }

    #[test]
    fn back_to_back_packets_are_spaced_by_serialisation_time() {
        let mut d = plain(Some(12_000_000), 10 * MS);
        for i in 0..3 {
            assert_eq!(d.send(0, i, 1500), Sent::Queued);
        }
        assert_eq!(d.queue().len(), 2); // first on the wire, two waiting
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
        assert_eq!(d.queue().len(), 0);
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
        assert_eq!(d.send(0, 3, 1500), Sent::Dropped(3));
        // t = 1 ms: packet 0 done, packet 1 on the wire, room for one more.
        assert_eq!(d.send(MS, 4, 1500), Sent::Queued);
        assert_eq!(d.send(MS, 5, 1500), Sent::Dropped(5));
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
        assert_eq!(d.send(0, 2, 501), Sent::Dropped(2));
        assert_eq!(d.send(0, 3, 500), Sent::Queued);
        assert_eq!(d.queue().bytes(), 2000);
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
                if let Sent::Dropped(p) = d.send(now, i, 500 + (i as usize % 7) * 150) {
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
        assert_eq!(d.queue().len(), 0); // two left at 0 ms, the third holds the transmitter
        assert_eq!(d.next_deadline(), Some(5 * MS)); // the third's opportunity
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
        assert_eq!(d.next_deadline(), Some(5 * MS));
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
                if let Sent::Dropped(_) = d.send(now, i, 200 + (i as usize % 9) * 300) {
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

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "asked about the past")]
    fn rejects_time_running_backwards_in_debug_builds() {
        let mut d = plain(None, 0);
        let _ = d.poll(5);
        let _ = d.send(4, 1, 1);
    }
}
