//! GSM RLP: the reliable link layer of non-transparent GSM circuit-switched data, as
//! measured by Ludwig et al. ("Multi-layer tracing of TCP over a reliable wireless
//! link", SIGMETRICS 1999), modelled frame by frame.
//!
//! [`GsmRlp`] is both directions of one link (they are coupled: selective rejects
//! travel in the reverse direction, and a link reset flushes both). It is clock-free
//! like [`Direction`](crate::link::Direction): [`GsmRlp::send`],
//! [`GsmRlp::next_deadline`], [`GsmRlp::poll_into`], every call taking `now_ns`.
//!
//! # The model (defaults from the study)
//!
//! - **Frames.** Fixed 30-byte frames carrying 24 bytes of user data, one frame slot
//!   every 20 ms per direction (9.6 kbit/s; 1200 bytes/s of user data). Slots are on
//!   the grid `k · 20 ms` from time 0, in both directions. A frame sent in the slot
//!   starting at `t` arrives at `t + 20 ms + one_way_delay`.
//! - **Byte stream.** RLP carries a byte stream and knows nothing of packets: IP
//!   packets are appended to the direction's stream in the order sent, and a frame
//!   takes the next `min(24, unsent)` bytes, so a frame can carry the end of one packet
//!   and the start of the next. A lone packet of `N` bytes takes `ceil(N / 24)` frames.
//!   (Framing overhead such as PPP's is the caller's to add to `len`.)
//! - **Interface buffer.** Packets wait in a per-direction buffer of at most
//!   `buffer_packets` packets (the study's 50) counting those with bytes not yet put
//!   into frames; a packet sent to a full buffer is refused (`Sent::Dropped(item,
//!   DropReason::Queue)`).
//! - **Loss.** Each frame transmission (first or retransmission) draws once from its
//!   direction's [`LossProcess`], at the start of its slot.
//! - **Selective reject.** The receiver notices a lost frame when the next slot's frame
//!   would arrive (RLP sends a frame in every slot, a supervisory one when idle), i.e.
//!   at `t + 2·20 ms + delay` for a frame sent at `t`. It sends an SREJ in the first
//!   reverse slot at or after that instant (`srej_sent`, piggy-backed: it takes no
//!   data capacity and is not itself lost), which reaches the sender 20 ms + delay
//!   later. The sender retransmits the frame in its first slot at or after the SREJ's
//!   arrival, ahead of new data (retransmissions in the order their SREJs arrived).
//!   With the default delay a retransmission starts 420 ms after the lost
//!   transmission: about the 400 ms RLP round trip the study quotes.
//! - **N2 and link reset.** A frame may be retransmitted at most `n2` times (default
//!   6, the study's default and the parameter its resets came from). When an SREJ
//!   arrives for a frame that has been lost `n2 + 1` times, the link resets at that
//!   instant: both senders and receivers flush their buffers (every packet with bytes
//!   already in frames and not yet delivered, in both directions, is dropped with
//!   [`DropReason::Reset`]; packets still wholly in the interface buffer above RLP
//!   survive and are sent after the reset), sequence
//!   numbers restart from 0, frames in the air are discarded, and no frame is sent
//!   for `reset_ns` (default 400 ms, one SABM/UA exchange taking an RLP round trip).
//!   Packets sent during the reset wait in the (empty) buffer.
//! - **Delivery.** In order: a packet is delivered when every frame up to the one
//!   holding its last byte has arrived; later frames that arrive while an earlier one
//!   is being recovered are held. The packet's delivery time is the arrival time of
//!   the frame that completes it.
//! - **Flow control** (L2R). `rate_bytes_per_s` per direction (default 1200, the
//!   channel's rate). Below 1200 the sender may put new data only in the slots `k`
//!   where `floor((k+1)·r/1200) > floor(k·r/1200)`, e.g. 4 slots of 5 at the 960
//!   bytes/s the study saw in some networks; retransmissions are not held back.
//! - **One-way delay** (default 180 ms): added to each frame's 20 ms slot, so that
//!   data frame + SREJ frame make the study's ~400 ms RLP round trip.
//!
//! Not modelled: checkpoint recovery and timer T1 (SREJs are never lost), supervisory
//! frame loss, XON/XOFF bursts (flow control is spread evenly), header compression.
//!
//! ```
//! use airtrace_link::record::LinkDir;
//! use airtrace_link::rlp::{GsmRlp, RlpConfig};
//! use airtrace_link::link::Event;
//! use airtrace_link::loss::{LossModel, LossProcess};
//! use airtrace_link::rng::Streams;
//!
//! const MS: i64 = 1_000_000;
//! let s = Streams::new(1);
//! let loss = |name| LossProcess::new(LossModel::None, s.stream(name)).unwrap();
//! let mut rlp = GsmRlp::new(RlpConfig::default(), [loss("rlp/down"), loss("rlp/up")]);
//! let _ = rlp.send(0, LinkDir::Down, "ping", 100); // 5 frames: slots 0..80 ms
//! let mut out = Vec::new();
//! while let Some(t) = rlp.next_deadline() {
//!     rlp.poll_into(t, &mut out);
//! }
//! // The 5th frame is sent at 80 ms, ends at 100 ms, arrives 180 ms later.
//! assert_eq!(out, [(LinkDir::Down, Event::Delivered { at_ns: 280 * MS, item: "ping", ce: false })]);
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::link::{Event, Sent};
use crate::loss::LossProcess;
use crate::record::{DropReason, LinkDir, LinkEventKind, LinkRecord, Log};

/// GSM RLP parameters; [`Default`] gives the study's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RlpConfig {
    /// Frame slot, in ns. Default 20 ms.
    pub frame_ns: i64,
    /// User data per frame, in bytes. Default 24 (of a 30-byte frame).
    pub frame_payload_bytes: usize,
    /// One-way delay added to each frame's slot, in ns. Default 180 ms.
    pub one_way_delay_ns: i64,
    /// Maximum retransmissions of one frame before the link resets. Default 6.
    pub n2: u32,
    /// Interface buffer per direction, in packets. Default 50.
    pub buffer_packets: usize,
    /// Data rate after flow control, bytes/s, per direction (index
    /// [`LinkDir::index`]). Default 1200 (no throttling); the study saw 960.
    pub rate_bytes_per_s: [u64; 2],
    /// How long a link reset keeps the link silent, in ns. Default 400 ms.
    pub reset_ns: i64,
}

impl Default for RlpConfig {
    fn default() -> Self {
        Self {
            frame_ns: 20_000_000,
            frame_payload_bytes: 24,
            one_way_delay_ns: 180_000_000,
            n2: 6,
            buffer_packets: 50,
            rate_bytes_per_s: [1200, 1200],
            reset_ns: 400_000_000,
        }
    }
}

/// A packet in a direction's buffer, not yet delivered.
#[derive(Debug, Clone)]
struct Pkt<T> {
    item: T,
    len: usize,
    /// Stream offset one past its last byte.
    end: u64,
}

/// A frame not yet delivered in order.
#[derive(Debug, Clone, Copy)]
struct Frame {
    start: u64,
    end: u64,
    transmissions: u32,
    losses: u32,
    arrived: bool,
}

/// Something scheduled inside the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    /// A frame transmission reaches the receiver (or is lost there).
    Arrival { dir: LinkDir, seq: u64, lost: bool },
    /// The receiver of `dir` sends an SREJ for `seq` in the reverse direction.
    SrejSent { dir: LinkDir, seq: u64 },
    /// The SREJ for `seq` reaches the sender of `dir`.
    SrejArrived { dir: LinkDir, seq: u64 },
    /// The reset started by `dir` is over.
    ResetDone { dir: LinkDir },
}

/// One direction's sender and receiver state.
#[derive(Debug, Clone)]
struct Side<T> {
    loss: LossProcess,
    rate: u64,
    buffer: VecDeque<Pkt<T>>,
    /// Bytes accepted so far (stream offset of the end).
    stream_end: u64,
    /// Bytes put into frames so far.
    framed: u64,
    /// Since when the unframed bytes have been waiting.
    data_ready_ns: i64,
    /// Sequence number of `frames[0]`.
    base_seq: u64,
    frames: VecDeque<Frame>,
    next_seq: u64,
    /// Frames to retransmit: (ready time, seq).
    retx: VecDeque<(i64, u64)>,
    /// The first slot index not yet used.
    next_slot: i64,
}

impl<T> Side<T> {
    fn new(loss: LossProcess, rate: u64) -> Self {
        Self {
            loss,
            rate,
            buffer: VecDeque::new(),
            stream_end: 0,
            framed: 0,
            data_ready_ns: 0,
            base_seq: 0,
            frames: VecDeque::new(),
            next_seq: 0,
            retx: VecDeque::new(),
            next_slot: 0,
        }
    }

    /// Packets with bytes not yet in frames (the interface buffer's occupancy).
    fn waiting(&self) -> usize {
        self.buffer.len() - self.buffer.partition_point(|p| p.end <= self.framed)
    }

    /// The packet holding stream byte `offset`.
    fn packet_at(&self, offset: u64) -> Option<&Pkt<T>> {
        self.buffer
            .get(self.buffer.partition_point(|p| p.end <= offset))
    }

    fn frame_mut(&mut self, seq: u64) -> &mut Frame {
        let i = usize::try_from(seq - self.base_seq).expect("frame index");
        &mut self.frames[i]
    }
}

/// Both directions of a GSM RLP link (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct GsmRlp<T> {
    cfg: RlpConfig,
    sides: [Side<T>; 2],
    timers: BinaryHeap<Reverse<(i64, u64, Timer)>>,
    timer_order: u64,
    /// A reset is in progress until this time.
    resetting_until: Option<i64>,
    out: VecDeque<(LinkDir, Event<T>)>,
    log: Log<T>,
    last_now_ns: i64,
}

impl<T> GsmRlp<T> {
    /// Its configuration.
    pub fn config(&self) -> &RlpConfig {
        &self.cfg
    }

    /// A link with `cfg` and one loss process per direction (index
    /// [`LinkDir::index`]: down, up).
    ///
    /// # Panics
    ///
    /// If a time or size in `cfg` is not positive (the delay may be 0), or a rate is 0.
    pub fn new(cfg: RlpConfig, loss: [LossProcess; 2]) -> Self {
        assert!(
            cfg.frame_ns > 0 && cfg.frame_payload_bytes > 0,
            "empty RLP frames"
        );
        assert!(
            cfg.one_way_delay_ns >= 0 && cfg.reset_ns >= 0,
            "negative RLP time"
        );
        assert!(cfg.rate_bytes_per_s.iter().all(|&r| r > 0), "RLP rate 0");
        let [down, up] = loss;
        Self {
            sides: [
                Side::new(down, cfg.rate_bytes_per_s[0]),
                Side::new(up, cfg.rate_bytes_per_s[1]),
            ],
            cfg,
            timers: BinaryHeap::new(),
            timer_order: 0,
            resetting_until: None,
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

    /// Packets in `dir`'s interface buffer with bytes not yet in frames.
    pub fn buffered(&self, dir: LinkDir) -> usize {
        self.sides[dir.index()].waiting()
    }

    /// Offers packet `item` of `len` bytes (0 counts as 1) to travel in `dir` at
    /// `now_ns`. Refused when the interface buffer is full.
    pub fn send(&mut self, now_ns: i64, dir: LinkDir, item: T, len: usize) -> Sent<T> {
        self.advance(now_ns);
        let side = &mut self.sides[dir.index()];
        let waiting = side.waiting();
        if waiting >= self.cfg.buffer_packets {
            if self.log.on() {
                let id = self.log.id(&item);
                self.log.records.push(
                    LinkRecord::new(now_ns, dir, LinkEventKind::PacketDropped)
                        .packet(id)
                        .bytes(len)
                        .queue(waiting)
                        .reason(DropReason::Queue),
                );
            }
            return Sent::Dropped(item, DropReason::Queue);
        }
        let len = len.max(1);
        if side.framed == side.stream_end {
            side.data_ready_ns = now_ns;
        }
        side.stream_end += len as u64;
        let end = side.stream_end;
        side.buffer.push_back(Pkt { item, len, end });
        Sent::Queued
    }

    /// When something next happens inside the link, or `now` if events are waiting to
    /// be polled. `None` when the link is idle.
    pub fn next_deadline(&self) -> Option<i64> {
        if let Some((_, e)) = self.out.front() {
            return Some(e.at_ns());
        }
        self.next_internal().map(|(t, _)| t)
    }

    /// Advances to `now_ns` and appends to `out`, in time order, every packet event
    /// (delivered, dropped by a reset) up to `now_ns`, with the direction the packet
    /// travelled.
    pub fn poll_into(&mut self, now_ns: i64, out: &mut Vec<(LinkDir, Event<T>)>) {
        self.advance(now_ns);
        out.extend(self.out.drain(..));
    }

    /// The earliest internal step: a timer (first on ties) or a side's next slot.
    fn next_internal(&self) -> Option<(i64, Step)> {
        let timer = self
            .timers
            .peek()
            .map(|Reverse((t, _, _))| (*t, Step::Timer));
        let slots = LinkDir::BOTH.into_iter().filter_map(|d| {
            self.next_slot(d)
                .map(|k| (k * self.cfg.frame_ns, Step::Slot(d, k)))
        });
        timer.into_iter().chain(slots).min_by_key(|&(t, s)| (t, s))
    }

    /// The slot index at which `dir` will next send a frame, if it has one to send.
    fn next_slot(&self, dir: LinkDir) -> Option<i64> {
        if self.resetting_until.is_some() {
            return None;
        }
        let side = &self.sides[dir.index()];
        let f = self.cfg.frame_ns;
        let ceil = |t: i64| t.div_euclid(f) + i64::from(t.rem_euclid(f) != 0);
        let retx = side
            .retx
            .front()
            .map(|&(ready, _)| side.next_slot.max(ceil(ready)));
        let data = (side.framed < side.stream_end).then(|| {
            let mut k = side.next_slot.max(ceil(side.data_ready_ns));
            while !self.flow_open(side.rate, k) {
                k += 1;
            }
            k
        });
        retx.into_iter().chain(data).min()
    }

    /// May new data go into slot `k` at `rate` bytes/s?
    fn flow_open(&self, rate: u64, k: i64) -> bool {
        let full = self.cfg.frame_payload_bytes as u128 * 1_000_000_000;
        let per_slot = u128::from(rate) * self.cfg.frame_ns as u128;
        if per_slot >= full {
            return true;
        }
        let k = k.max(0) as u128;
        (k + 1) * per_slot / full > k * per_slot / full
    }

    fn schedule(&mut self, at_ns: i64, timer: Timer) {
        self.timer_order += 1;
        self.timers.push(Reverse((at_ns, self.timer_order, timer)));
    }

    fn advance(&mut self, now_ns: i64) {
        debug_assert!(now_ns >= self.last_now_ns, "link asked about the past");
        self.last_now_ns = now_ns;
        while let Some((t, step)) = self.next_internal().filter(|&(t, _)| t <= now_ns) {
            match step {
                Step::Timer => {
                    let Some(Reverse((_, _, timer))) = self.timers.pop() else {
                        break;
                    };
                    self.on_timer(t, timer);
                }
                Step::Slot(dir, k) => self.on_slot(dir, k),
            }
        }
    }

    /// Sends the frame of slot `k` of `dir`: a retransmission if one is ready, else new
    /// data.
    fn on_slot(&mut self, dir: LinkDir, k: i64) {
        let t = k * self.cfg.frame_ns;
        let arrive = t + self.cfg.frame_ns + self.cfg.one_way_delay_ns;
        let payload = self.cfg.frame_payload_bytes as u64;
        let open = self.flow_open(self.sides[dir.index()].rate, k);
        let side = &mut self.sides[dir.index()];
        side.next_slot = k + 1;
        let (seq, kind) = match side.retx.front() {
            Some(&(ready, seq)) if ready <= t => {
                side.retx.pop_front();
                (seq, LinkEventKind::FrameRetransmitted)
            }
            _ => {
                if !(open && side.framed < side.stream_end && side.data_ready_ns <= t) {
                    return;
                }
                let bytes = payload.min(side.stream_end - side.framed);
                let seq = side.next_seq;
                side.next_seq += 1;
                side.frames.push_back(Frame {
                    start: side.framed,
                    end: side.framed + bytes,
                    transmissions: 0,
                    losses: 0,
                    arrived: false,
                });
                side.framed += bytes;
                if side.framed < side.stream_end {
                    side.data_ready_ns = t;
                }
                (seq, LinkEventKind::FrameSent)
            }
        };
        let lost = side.loss.lose(t);
        let frame = side.frame_mut(seq);
        frame.transmissions += 1;
        let (attempt, start, bytes) = (frame.transmissions, frame.start, frame.end - frame.start);
        if self.log.on() {
            let side = &self.sides[dir.index()];
            let packet = side.packet_at(start).map(|p| self.log.id(&p.item));
            let mut r = LinkRecord::new(t, dir, kind)
                .frame(seq)
                .attempt(attempt)
                .bytes(bytes as usize)
                .queue(side.waiting());
            r.packet = packet;
            self.log.records.push(r);
        }
        self.schedule(arrive, Timer::Arrival { dir, seq, lost });
    }

    fn on_timer(&mut self, t: i64, timer: Timer) {
        let f = self.cfg.frame_ns;
        match timer {
            Timer::Arrival { dir, seq, lost } => {
                let side = &mut self.sides[dir.index()];
                let frame = side.frame_mut(seq);
                let (attempt, bytes) = (frame.transmissions, frame.end - frame.start);
                if lost {
                    frame.losses += 1;
                    // Noticed when the next slot's frame arrives; SREJ in the first
                    // reverse slot from then.
                    let noticed = t + f;
                    let srej =
                        noticed.div_euclid(f) * f + if noticed.rem_euclid(f) != 0 { f } else { 0 };
                    self.schedule(srej, Timer::SrejSent { dir, seq });
                } else {
                    frame.arrived = true;
                }
                let kind = if lost {
                    LinkEventKind::FrameLost
                } else {
                    LinkEventKind::FrameDelivered
                };
                self.log.push(|| {
                    LinkRecord::new(t, dir, kind)
                        .frame(seq)
                        .attempt(attempt)
                        .bytes(bytes as usize)
                });
                if !lost {
                    self.deliver_in_order(t, dir);
                }
            }
            Timer::SrejSent { dir, seq } => {
                self.log
                    .push(|| LinkRecord::new(t, dir, LinkEventKind::SrejSent).frame(seq));
                let back = t + f + self.cfg.one_way_delay_ns;
                self.schedule(back, Timer::SrejArrived { dir, seq });
            }
            Timer::SrejArrived { dir, seq } => {
                let n2 = self.cfg.n2;
                let side = &mut self.sides[dir.index()];
                let frame = *side.frame_mut(seq);
                if frame.losses > n2 {
                    self.reset(t, dir, seq, frame.transmissions);
                } else {
                    side.retx.push_back((t, seq));
                }
            }
            Timer::ResetDone { dir } => {
                self.resetting_until = None;
                let k = t.div_euclid(f) + i64::from(t.rem_euclid(f) != 0);
                for side in &mut self.sides {
                    side.next_slot = side.next_slot.max(k);
                }
                self.log
                    .push(|| LinkRecord::new(t, dir, LinkEventKind::LinkResetDone));
            }
        }
    }

    /// Delivers the packets of `dir` completed by the in-order frames arrived so far.
    fn deliver_in_order(&mut self, t: i64, dir: LinkDir) {
        let side = &mut self.sides[dir.index()];
        let mut delivered_to = None;
        while side.frames.front().is_some_and(|f| f.arrived) {
            delivered_to = side.frames.pop_front().map(|f| f.end);
            side.base_seq += 1;
        }
        let Some(upto) = delivered_to else { return };
        while side.buffer.front().is_some_and(|p| p.end <= upto) {
            let Some(p) = side.buffer.pop_front() else {
                break;
            };
            if self.log.on() {
                let id = self.log.id(&p.item);
                let q = side.waiting();
                self.log.records.push(
                    LinkRecord::new(t, dir, LinkEventKind::PacketDelivered)
                        .packet(id)
                        .bytes(p.len)
                        .queue(q),
                );
            }
            self.out.push_back((
                dir,
                Event::Delivered {
                    at_ns: t,
                    item: p.item,
                    ce: false,
                },
            ));
        }
    }

    /// A link reset at `t` because frame `seq` of `dir` failed `attempts` times.
    fn reset(&mut self, t: i64, dir: LinkDir, seq: u64, attempts: u32) {
        self.log.push(|| {
            LinkRecord::new(t, dir, LinkEventKind::LinkReset)
                .frame(seq)
                .attempt(attempts)
        });
        for d in LinkDir::BOTH {
            let side = &mut self.sides[d.index()];
            // RLP flushes its own buffers: every packet with bytes already in frames is
            // lost. Packets still wholly in the interface buffer above RLP survive and
            // start the stream afresh.
            let framed = side.framed;
            let first_kept = side
                .buffer
                .partition_point(|p| p.end - (p.len as u64) < framed);
            let mut kept = side.buffer.split_off(first_kept);
            let buffer = std::mem::take(&mut side.buffer);
            let shift = kept
                .front()
                .map_or(side.stream_end, |p| p.end - p.len as u64);
            for p in kept.iter_mut() {
                p.end -= shift;
            }
            side.stream_end -= shift;
            side.buffer = kept;
            for p in buffer {
                if self.log.on() {
                    let id = self.log.id(&p.item);
                    self.log.records.push(
                        LinkRecord::new(t, d, LinkEventKind::PacketDropped)
                            .packet(id)
                            .bytes(p.len)
                            .queue(0)
                            .reason(DropReason::Reset),
                    );
                }
                self.out.push_back((
                    d,
                    Event::Dropped {
                        at_ns: t,
                        item: p.item,
                        reason: DropReason::Reset,
                    },
                ));
            }
            side.framed = 0;
            side.base_seq = 0;
            side.next_seq = 0;
            side.frames.clear();
            side.retx.clear();
        }
        self.timers.clear();
        let until = t.saturating_add(self.cfg.reset_ns);
        self.resetting_until = Some(until);
        self.schedule(until, Timer::ResetDone { dir });
    }
}

/// What [`GsmRlp::next_internal`] found to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Timer,
    Slot(LinkDir, i64),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossModel;
    use crate::rng::Streams;
    use LinkEventKind::*;

    const MS: i64 = 1_000_000;

    /// (ms, direction, kind, frame, attempt) of a log record.
    type FrameLine = (i64, LinkDir, LinkEventKind, Option<u64>, Option<u32>);

    fn rlp_with(cfg: RlpConfig, down: LossModel, up: LossModel) -> GsmRlp<u32> {
        let s = Streams::new(3);
        let mut rlp = GsmRlp::new(
            cfg,
            [
                LossProcess::new(down, s.stream("rlp/down/loss")).unwrap(),
                LossProcess::new(up, s.stream("rlp/up/loss")).unwrap(),
            ],
        );
        rlp.enable_log(|p| u64::from(*p));
        rlp
    }

    fn rlp(down: LossModel) -> GsmRlp<u32> {
        rlp_with(RlpConfig::default(), down, LossModel::None)
    }

    fn drain(rlp: &mut GsmRlp<u32>) -> Vec<(LinkDir, Event<u32>)> {
        let mut out = Vec::new();
        while let Some(t) = rlp.next_deadline() {
            rlp.poll_into(t, &mut out);
        }
        out
    }

    fn delivered(dir: LinkDir, at_ns: i64, item: u32) -> (LinkDir, Event<u32>) {
        (
            dir,
            Event::Delivered {
                at_ns,
                item,
                ce: false,
            },
        )
    }

    fn reset_drop(dir: LinkDir, at_ns: i64, item: u32) -> (LinkDir, Event<u32>) {
        (
            dir,
            Event::Dropped {
                at_ns,
                item,
                reason: DropReason::Reset,
            },
        )
    }

    fn log_of(rlp: &mut GsmRlp<u32>) -> Vec<LinkRecord> {
        let mut log = Vec::new();
        rlp.drain_log(&mut log);
        log
    }

    #[test]
    fn clean_transfer_takes_one_slot_per_24_bytes() {
        for (len, frames) in [(1, 1), (24, 1), (25, 2), (100, 5), (1500, 63)] {
            let cfg = RlpConfig {
                one_way_delay_ns: 0,
                ..RlpConfig::default()
            };
            let mut r = rlp_with(cfg, LossModel::None, LossModel::None);
            let _ = r.send(0, LinkDir::Down, 7, len);
            assert_eq!(
                drain(&mut r),
                [delivered(LinkDir::Down, frames * 20 * MS, 7)],
                "{len} B"
            );
        }
        // With the default 180 ms delay, 100 B: frames in slots 0..80 ms, the last
        // ends at 100 ms and arrives at 280 ms.
        let mut r = rlp(LossModel::None);
        let _ = r.send(0, LinkDir::Down, 1, 100);
        assert_eq!(drain(&mut r), [delivered(LinkDir::Down, 280 * MS, 1)]);
        let log = log_of(&mut r);
        let sent: Vec<(i64, Option<u64>, Option<u32>)> = log
            .iter()
            .filter(|x| x.kind == FrameSent)
            .map(|x| (x.t_ns / MS, x.frame, x.bytes))
            .collect();
        assert_eq!(
            sent,
            [
                (0, Some(0), Some(24)),
                (20, Some(1), Some(24)),
                (40, Some(2), Some(24)),
                (60, Some(3), Some(24)),
                (80, Some(4), Some(4))
            ]
        );
        assert_eq!(
            log.last().map(|x| (x.t_ns, x.kind)),
            Some((280 * MS, PacketDelivered))
        );
    }

    #[test]
    fn frames_carry_a_byte_stream_across_packets() {
        let mut r = rlp(LossModel::None);
        let _ = r.send(0, LinkDir::Down, 1, 100);
        let _ = r.send(0, LinkDir::Down, 2, 100);
        let _ = r.send(5 * MS, LinkDir::Up, 3, 10); // next slot: 20 ms
                                                    // 200 B = 9 frames (not 10): the 5th frame carries 4 + 20 bytes.
        assert_eq!(
            drain(&mut r),
            [
                delivered(LinkDir::Up, 220 * MS, 3),
                delivered(LinkDir::Down, 280 * MS, 1),
                delivered(LinkDir::Down, 360 * MS, 2)
            ]
        );
    }

    #[test]
    fn a_lost_frame_is_retransmitted_after_the_srej_and_delivery_stays_in_order() {
        // The 2nd transmission (frame 1, at 20 ms) is lost, everything else arrives.
        let mut r = rlp(LossModel::Trace(vec![false, true, false, false, false]));
        let _ = r.send(0, LinkDir::Down, 1, 24); // frame 0
        let _ = r.send(0, LinkDir::Down, 2, 48); // frames 1, 2
        let _ = r.send(0, LinkDir::Down, 3, 24); // frame 3
                                                 // Frame 1: sent 20, lost at 220; noticed at 240 when frame 2 arrives; SREJ in
                                                 // the up slot at 240, at the sender at 240 + 20 + 180 = 440; resent in slot
                                                 // 440; arrives 640. Packet 3 (complete at 260) waits for packet 2.
        assert_eq!(
            drain(&mut r),
            [
                delivered(LinkDir::Down, 200 * MS, 1),
                delivered(LinkDir::Down, 640 * MS, 2),
                delivered(LinkDir::Down, 640 * MS, 3)
            ]
        );
        let frames: Vec<FrameLine> = log_of(&mut r)
            .iter()
            .filter(|x| x.kind != PacketDelivered)
            .map(|x| (x.t_ns / MS, x.dir, x.kind, x.frame, x.attempt))
            .collect();
        use LinkDir::Down;
        assert_eq!(
            frames,
            [
                (0, Down, FrameSent, Some(0), Some(1)),
                (20, Down, FrameSent, Some(1), Some(1)),
                (40, Down, FrameSent, Some(2), Some(1)),
                (60, Down, FrameSent, Some(3), Some(1)),
                (200, Down, FrameDelivered, Some(0), Some(1)),
                (220, Down, FrameLost, Some(1), Some(1)),
                (240, Down, FrameDelivered, Some(2), Some(1)),
                (240, Down, SrejSent, Some(1), None),
                (260, Down, FrameDelivered, Some(3), Some(1)),
                (440, Down, FrameRetransmitted, Some(1), Some(2)),
                (640, Down, FrameDelivered, Some(1), Some(2)),
            ]
        );
    }

    #[test]
    fn a_frame_lost_n2_plus_one_times_resets_the_link_and_flushes_what_rlp_holds() {
        // Down loses its first 7 transmissions (1 + N2), then nothing.
        let mut down_loss = vec![true; 7];
        down_loss.extend([false; 10]);
        let mut r = rlp(LossModel::Trace(down_loss));
        let _ = r.send(0, LinkDir::Down, 100, 24); // one frame, lost 7 times
        for i in 0..20 {
            let _ = r.send(0, LinkDir::Up, i, 240); // 10 frames each, 4 s of data
        }
        let mut out = Vec::new();
        r.poll_into(3000 * MS, &mut out);
        let _ = r.send(3000 * MS, LinkDir::Down, 101, 24); // during the reset
        out.extend(drain(&mut r));
        // Frame 0 goes at 0, 420, ..., 2520 ms (each retransmission 420 ms after the
        // last); the SREJ for the 7th loss arrives at 2520 + 420 = 2940 ms: reset.
        // Up packet k completes at 200·(k+1) + 180 ms: 0..=12 are through by then.
        let mut want: Vec<(LinkDir, Event<u32>)> = (0..13)
            .map(|k| delivered(LinkDir::Up, (200 * (i64::from(k) + 1) + 180) * MS, k))
            .collect();
        // The reset flushes what RLP holds: the down frame's packet and up packets 13
        // and 14, whose bytes were in frames. Packets 15..=19 are still wholly in the
        // interface buffer above RLP: they survive.
        want.push(reset_drop(LinkDir::Down, 2940 * MS, 100));
        want.extend((13..15).map(|k| reset_drop(LinkDir::Up, 2940 * MS, k)));
        // After 400 ms of reset, packet 101 goes in slot 3340 ms and arrives 200 later;
        // up packet 15 starts in the same slot, its 10th frame leaves at 3520 ms.
        want.push(delivered(LinkDir::Down, 3540 * MS, 101));
        want.extend(
            (15..20).map(|k| delivered(LinkDir::Up, (3720 + 200 * (i64::from(k) - 15)) * MS, k)),
        );
        assert_eq!(out, want);

        let log = log_of(&mut r);
        let down_frames: Vec<(i64, LinkEventKind, Option<u32>)> = log
            .iter()
            .filter(|x| x.dir == LinkDir::Down && x.frame == Some(0))
            .filter(|x| matches!(x.kind, FrameSent | FrameRetransmitted | LinkReset))
            .map(|x| (x.t_ns / MS, x.kind, x.attempt))
            .collect();
        let mut want_frames: Vec<(i64, LinkEventKind, Option<u32>)> = vec![(0, FrameSent, Some(1))];
        want_frames.extend((1..7).map(|i| (420 * i64::from(i), FrameRetransmitted, Some(i + 1))));
        want_frames.push((2940, LinkReset, Some(7)));
        want_frames.push((3340, FrameSent, Some(1))); // packet 101, sequence numbers restart
        assert_eq!(down_frames, want_frames);
        let resets: Vec<(i64, LinkEventKind)> = log
            .iter()
            .filter(|x| matches!(x.kind, LinkReset | LinkResetDone))
            .map(|x| (x.t_ns / MS, x.kind))
            .collect();
        assert_eq!(resets, [(2940, LinkReset), (3340, LinkResetDone)]);
        let flushed = log
            .iter()
            .filter(|x| x.reason == Some(DropReason::Reset))
            .count();
        assert_eq!(flushed, 3, "packet 100 down, 13 and 14 up");
    }

    #[test]
    fn n2_retransmissions_are_allowed() {
        // Lost 6 times, then the 6th retransmission (N2 = 6) gets through: no reset.
        let mut loss = vec![true; 6];
        loss.push(false);
        let mut r = rlp(LossModel::Trace(loss));
        let _ = r.send(0, LinkDir::Down, 1, 24);
        // 7th transmission at 6·420 ms, arrives 200 ms later.
        assert_eq!(
            drain(&mut r),
            [delivered(LinkDir::Down, (6 * 420 + 200) * MS, 1)]
        );
    }

    #[test]
    fn flow_control_at_960_bytes_per_second_uses_four_slots_of_five() {
        let cfg = RlpConfig {
            rate_bytes_per_s: [960, 1200],
            ..RlpConfig::default()
        };
        let mut r = rlp_with(cfg, LossModel::None, LossModel::None);
        let _ = r.send(0, LinkDir::Down, 1, 2400); // 100 frames
        let _ = r.send(0, LinkDir::Up, 2, 2400);
        // Down skips slots 0, 5, 10 ...: the 100th frame goes in slot 124 (2480 ms).
        assert_eq!(
            drain(&mut r),
            [
                delivered(LinkDir::Up, 2180 * MS, 2),
                delivered(LinkDir::Down, 2680 * MS, 1)
            ]
        );
    }

    #[test]
    fn interface_buffer_refuses_the_51st_packet() {
        let mut r = rlp(LossModel::None);
        for i in 0..50 {
            assert_eq!(r.send(0, LinkDir::Up, i, 100), Sent::Queued);
        }
        assert_eq!(r.buffered(LinkDir::Up), 50);
        assert_eq!(
            r.send(0, LinkDir::Up, 50, 100),
            Sent::Dropped(50, DropReason::Queue)
        );
        assert_eq!(r.send(0, LinkDir::Down, 51, 100), Sent::Queued);
        // Once the first packet's 5 frames are out, there is room again.
        assert_eq!(r.send(100 * MS, LinkDir::Up, 52, 100), Sent::Queued);
    }

    #[test]
    fn same_seed_same_events() {
        let run = |seed: u64| {
            let s = Streams::new(seed);
            let model = LossModel::Bernoulli { p: 0.3 };
            let mut r = GsmRlp::new(
                RlpConfig {
                    n2: 2,
                    ..RlpConfig::default()
                },
                [
                    LossProcess::new(model.clone(), s.stream("rlp/down/loss")).unwrap(),
                    LossProcess::new(model, s.stream("rlp/up/loss")).unwrap(),
                ],
            );
            r.enable_log(|p: &u32| u64::from(*p));
            let mut out = Vec::new();
            let mut refused = 0;
            for i in 0..400u32 {
                let now = i64::from(i) * 50 * MS;
                r.poll_into(now, &mut out);
                let dir = if i % 3 == 0 {
                    LinkDir::Up
                } else {
                    LinkDir::Down
                };
                if let Sent::Dropped(..) = r.send(now, dir, i, 40 + (i as usize % 4) * 30) {
                    refused += 1;
                }
            }
            out.extend(drain(&mut r));
            (out, refused, log_of(&mut r))
        };
        let (a, refused, log) = run(11);
        assert_eq!(run(11), (a.clone(), refused, log.clone()));
        assert_ne!(run(12).0, a);
        assert_eq!(a.len() + refused, 400);
        assert!(a.windows(2).all(|w| w[0].1.at_ns() <= w[1].1.at_ns()));
        assert!(
            log.windows(2).all(|w| w[0].t_ns <= w[1].t_ns),
            "log in time order"
        );
        assert!(log.iter().any(|x| x.kind == LinkReset));
    }
}
