//! Radio stations sharing one channel: their positions, receivers ([`crate::phy`]) and
//! MACs ([`crate::dcf`]), and the events between them, in simulated time.
//!
//! Like a link of `airtrace-link`, it reads no clock: packets are offered with
//! [`Wireless::send`], [`Wireless::next_deadline`] says when it next needs a poll, and
//! [`Wireless::poll_into`] runs it up to a time and hands out what happened
//! ([`WirelessEvent`]).
//!
//! A transmission makes one pass over the stations: each one the signal reaches at or
//! above the carrier-sense threshold gets its first bit after the propagation delay
//! (at least 1 ns) and its last bit an air time later. Stations stand still unless the
//! channel is given their movement ([`Wireless::set_mobility`]); then each pass first
//! brings every station to where it is at the transmission's start, and the frame's
//! power at each receiver is that of those places for the whole frame (a frame lasts
//! a few milliseconds, in which a node at 30 m/s moves a few centimetres). Events at the same instant are
//! taken in a fixed order that follows the MAC's rule rather than the heap's: signals
//! and transmissions that end, then timers, then signals that start. So a station
//! whose backoff ends in the instant another frame's first bit arrives transmits (it
//! could not have sensed the frame yet), and two stations whose backoffs end in the
//! same slot collide, whatever the order they were scheduled in.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::dcf::{Dcf, DcfConfig, MacOut, Sdu};
use crate::frame::{Frame, FrameKind, NodeId, Payload};
use crate::mobility::Mobility;
use crate::phy::{Receiver, RxEvent, SignalId};
use crate::radio::{PhyProfile, Position, Propagation, LIGHT_M_PER_S};
use crate::signal::SignalModel;

/// What happened on the channel, for the network above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WirelessEvent {
    /// `node` received a packet from its neighbour `from`.
    Delivered {
        /// When, ns.
        at_ns: i64,
        /// The receiving station.
        node: NodeId,
        /// The neighbour that sent it.
        from: NodeId,
        /// The packet.
        payload: Payload,
    },
    /// `node` decoded a packet its neighbour `from` sent to another node (promiscuous
    /// mode, [`Wireless::set_promiscuous`]).
    Overheard {
        /// When, ns.
        at_ns: i64,
        /// The listening station.
        node: NodeId,
        /// The neighbour that sent it.
        from: NodeId,
        /// The packet.
        payload: Payload,
    },
    /// `node` finished sending a packet (acknowledged, or a broadcast).
    Sent {
        /// When, ns.
        at_ns: i64,
        /// The sending station.
        node: NodeId,
        /// The packet and its next hop.
        sdu: Sdu,
    },
    /// `node` gave the packet up after its last attempt.
    Failed {
        /// When, ns.
        at_ns: i64,
        /// The sending station.
        node: NodeId,
        /// The packet and its next hop.
        sdu: Sdu,
    },
    /// `node`'s rate adaptation changed the rate of its data frames to `neighbour`.
    RateChanged {
        /// When, ns.
        at_ns: i64,
        /// The station.
        node: NodeId,
        /// The neighbour.
        neighbour: NodeId,
        /// The old rate, bit/s.
        from_bps: u64,
        /// The new rate, bit/s.
        to_bps: u64,
    },
    /// `node`'s interface queue was full.
    QueueFull {
        /// When, ns.
        at_ns: i64,
        /// The station.
        node: NodeId,
        /// The packet dropped.
        sdu: Sdu,
    },
}

/// A frame as one station's radio saw it (for that station's air capture): one it
/// sent, or one it locked onto and decoded or lost. A station's records come in the
/// order their frames ended there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AirRecord {
    /// The station whose radio this is.
    pub node: NodeId,
    /// When the frame's first bit was on the air at this station, ns.
    pub start_ns: i64,
    /// The frame.
    pub frame: Frame,
    /// Power at the antenna, W: the received power, or for the station's own
    /// transmissions its transmit power.
    pub signal_w: f64,
    /// The frame was decoded intact (false: a bad FCS).
    pub intact: bool,
}

/// What one station put on the air.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TxCounters {
    /// Data frames, first attempts and retries.
    pub data: u64,
    /// Data frames with the Retry bit set.
    pub data_retries: u64,
    /// RTS frames, first attempts and retries.
    pub rts: u64,
    /// RTS frames with the Retry bit set.
    pub rts_retries: u64,
    /// CTS frames.
    pub cts: u64,
    /// ACK frames.
    pub acks: u64,
}

#[derive(Debug)]
struct Station {
    position: Position,
    sent: TxCounters,
    rx: Receiver,
    mac: Dcf,
    /// The earliest timer wake-up in the heap (`i64::MAX`: none).
    timer_at: i64,
    /// The frame this station is transmitting, and when it started.
    sending: Option<(i64, Frame)>,
    /// False for a node with no radio (a wired host): it hears nothing.
    radio: bool,
}

/// Heap entry kinds, in the order they are taken at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    SignalEnd = 0,
    TxEnd = 1,
    Timer = 2,
    SignalStart = 3,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    at: i64,
    kind: Kind,
    order: u64,
    node: NodeId,
    signal: SignalId,
    /// A signal start's received power, W, as `f64::to_bits` (0 otherwise).
    power_bits: u64,
}

#[derive(Debug, Clone, Copy)]
struct Signal {
    frame: Frame,
    /// Receivers that have not seen its end yet; the slot is free at 0.
    pending: u32,
}

/// The air records being taken.
#[derive(Debug)]
struct AirTap {
    /// Which stations' radios are recorded, by id.
    at: Vec<bool>,
    records: Vec<AirRecord>,
}

impl AirTap {
    fn push(&mut self, record: AirRecord) {
        if self.at.get(record.node as usize) == Some(&true) {
            self.records.push(record);
        }
    }
}

/// The stations on one channel (see the [module documentation](self)).
#[derive(Debug)]
pub struct Wireless {
    propagation: Propagation,
    phy: PhyProfile,
    stations: Vec<Station>,
    heap: BinaryHeap<Reverse<Entry>>,
    order: u64,
    /// Signals on the air, by id − `signal_base`.
    signals: std::collections::VecDeque<Option<Signal>>,
    signal_base: SignalId,
    air: Option<AirTap>,
    mac_out: Vec<MacOut>,
    out: Vec<WirelessEvent>,
    /// How the stations move (`None`: they stand still, the fast path).
    mobility: Option<Mobility>,
    /// The time the stations' positions were last brought to (with `mobility`).
    moved_at: i64,
    /// Walls, shadowing and SNR-driven frame errors (`None`: distance alone decides).
    signal: Option<SignalModel>,
    /// The power of the last data frame each station decoded from each other one, W,
    /// at `receiver * stations + sender` (`None`: not kept; see
    /// [`Wireless::keep_rx_power`]).
    rx_power: Option<Vec<f64>>,
}

impl Wireless {
    /// A channel with `propagation` and radios of `phy`, and no stations yet.
    pub fn new(propagation: Propagation, phy: PhyProfile) -> Self {
        Wireless {
            propagation,
            phy,
            stations: Vec::new(),
            heap: BinaryHeap::new(),
            order: 0,
            signals: std::collections::VecDeque::new(),
            signal_base: 0,
            air: None,
            mac_out: Vec::new(),
            out: Vec::new(),
            mobility: None,
            moved_at: i64::MIN,
            signal: None,
            rx_power: None,
        }
    }

    /// Keeps the received power of the last data frame each station decoded from
    /// each other one ([`Wireless::rx_power_w`]), what a card reports as a beacon's
    /// RSSI. Call it after adding every station.
    pub fn keep_rx_power(&mut self) {
        let n = self.stations.len();
        self.rx_power = Some(vec![0.0; n * n]);
    }

    /// The power, W, of the last data frame `node` decoded from `from`, if kept and
    /// one was decoded.
    pub fn rx_power_w(&self, node: NodeId, from: NodeId) -> Option<f64> {
        let n = self.stations.len();
        let w = *self
            .rx_power
            .as_ref()?
            .get(node as usize * n + from as usize)?;
        (w > 0.0).then_some(w)
    }

    /// Adds walls, shadowing and SNR-driven frame errors to the distance law (see
    /// [`crate::signal`]); the SNR is taken against the profile's `noise_w`.
    pub fn set_signal(&mut self, signal: SignalModel) {
        self.signal = Some(signal);
    }

    /// The mean SNR, dB, of `from`'s frames at `to` where they stand: distance and
    /// walls over the noise floor, without shadowing.
    pub fn mean_snr_db(&self, from: NodeId, to: NodeId) -> f64 {
        let (a, b) = (self.position(from), self.position(to));
        let walls = self.signal.as_ref().map_or(0.0, |s| s.wall_loss_db(a, b));
        crate::radio::w_to_dbm(self.received_w(from, to))
            - walls
            - crate::radio::w_to_dbm(self.phy.noise_w)
    }

    /// Makes the stations move as `mobility` says (station `i` along its node `i`'s
    /// path), each starting from its path's start. Call it after adding every station.
    pub fn set_mobility(&mut self, mobility: Mobility) {
        assert_eq!(
            mobility.nodes(),
            self.stations.len(),
            "one path per station"
        );
        for (i, st) in self.stations.iter_mut().enumerate() {
            st.position = mobility.path(i).start();
        }
        self.mobility = Some(mobility);
        self.moved_at = i64::MIN;
    }

    /// How the stations move, if they do.
    pub fn mobility(&self) -> Option<&Mobility> {
        self.mobility.as_ref()
    }

    /// Adds a station at `position` with its MAC settings and random stream; returns
    /// its id (stations are numbered from 0 in the order added).
    pub fn add_station(
        &mut self,
        position: Position,
        mac: DcfConfig,
        rng: rand_chacha::ChaCha8Rng,
    ) -> NodeId {
        let id = self.stations.len() as NodeId;
        self.stations.push(Station {
            position,
            sent: TxCounters::default(),
            rx: Receiver::default(),
            mac: Dcf::new(id, mac, rng),
            timer_at: i64::MAX,
            sending: None,
            radio: true,
        });
        id
    }

    /// Takes station `node`'s radio away (a node on wires only): it hears no frame
    /// and decodes no one. Its MAC must be given nothing to send.
    pub fn remove_radio(&mut self, node: NodeId) {
        self.stations[node as usize].radio = false;
    }

    /// From `now` station `node`'s radio hears the channel (`on`) or not: a station
    /// switching channels in a handoff hears no frame sent meanwhile (those already
    /// reaching it go on); what its MAC still sends goes out. Back on the channel it
    /// senses the frames already on the air that reach it (distance alone) until they
    /// end, and defers to them.
    pub fn set_listening(&mut self, now: i64, node: NodeId, on: bool) {
        self.stations[node as usize].radio = on;
        if !on {
            return;
        }
        let sensed_until = (0..self.stations.len() as NodeId)
            .filter(|&s| s != node)
            .filter_map(|s| {
                let (start, frame) = self.stations[s as usize].sending?;
                (self.received_w(s, node) >= self.phy.cs_threshold_w)
                    .then_some(start + frame.airtime_ns)
            })
            .max();
        if let Some(until) = sensed_until.filter(|&t| t > now) {
            let mut macs = std::mem::take(&mut self.mac_out);
            self.stations[node as usize]
                .mac
                .busy_until(now, until, &mut macs);
            self.apply(now, node, &mut macs);
            self.mac_out = macs;
        }
    }

    /// The number of stations.
    pub fn stations(&self) -> usize {
        self.stations.len()
    }

    /// Where station `node` is: for moving stations, where it was at the start of the
    /// latest transmission (its path's start before the first).
    pub fn position(&self, node: NodeId) -> Position {
        self.stations[node as usize].position
    }

    /// Received power at `to` of a frame sent by `from`, W, at their
    /// [`position`](Self::position)s.
    pub fn received_w(&self, from: NodeId, to: NodeId) -> f64 {
        let d2 = self.position(from).dist2(self.position(to));
        self.propagation.received_w(self.phy.tx_power_w, d2)
    }

    /// True when `to` decodes `from`'s frames on a quiet channel (both have radios).
    pub fn decodes(&self, from: NodeId, to: NodeId) -> bool {
        self.stations[from as usize].radio
            && self.stations[to as usize].radio
            && self.received_w(from, to) >= self.phy.rx_threshold_w
    }

    /// True when radios at `a` and `b` decode each other's frames on a quiet channel.
    pub fn decodes_between(&self, a: Position, b: Position) -> bool {
        self.propagation.received_w(self.phy.tx_power_w, a.dist2(b)) >= self.phy.rx_threshold_w
    }

    /// The radios' profile.
    pub fn phy(&self) -> &PhyProfile {
        &self.phy
    }

    /// Starts recording every frame the radios of the stations `nodes` send, decode
    /// or fail to (see [`AirRecord`]).
    pub fn enable_air(&mut self, nodes: &[NodeId]) {
        let mut at = vec![false; self.stations.len()];
        for &n in nodes {
            at[n as usize] = true;
        }
        self.air = Some(AirTap {
            at,
            records: Vec::new(),
        });
    }

    /// Records the frames still being sent (at the end of a run) as their senders'
    /// radios will have sent them, so that the records hold every frame
    /// [`Wireless::sent`] counts.
    pub fn flush_air(&mut self) {
        if let Some(air) = self.air.as_mut() {
            for (node, st) in self.stations.iter().enumerate() {
                if let Some((start_ns, frame)) = st.sending {
                    air.push(AirRecord {
                        node: node as NodeId,
                        start_ns,
                        frame,
                        signal_w: self.phy.tx_power_w,
                        intact: true,
                    });
                }
            }
        }
    }

    /// Moves the recorded frames to `out`.
    pub fn drain_air(&mut self, out: &mut Vec<AirRecord>) {
        if let Some(air) = self.air.as_mut() {
            out.append(&mut air.records);
        }
    }

    /// What station `node` put on the air.
    pub fn sent(&self, node: NodeId) -> TxCounters {
        self.stations[node as usize].sent
    }

    /// A station's MAC (for its counters and settings).
    pub fn mac(&self, node: NodeId) -> &Dcf {
        &self.stations[node as usize].mac
    }

    /// Every station's MAC hands up the data frames it decodes for others too.
    pub fn set_promiscuous(&mut self, on: bool) {
        for st in &mut self.stations {
            st.mac.set_promiscuous(on);
        }
    }

    /// Takes out of `node`'s interface queue the packets `pick` chooses.
    pub fn take_queued(&mut self, node: NodeId, pick: impl FnMut(&Sdu) -> bool) -> Vec<Sdu> {
        self.stations[node as usize].mac.take_queued(pick)
    }

    /// Offers a packet to `node`'s MAC for one hop.
    pub fn send(&mut self, now: i64, node: NodeId, sdu: Sdu) {
        let mut out = std::mem::take(&mut self.mac_out);
        self.stations[node as usize].mac.enqueue(now, sdu, &mut out);
        self.apply(now, node, &mut out);
        self.mac_out = out;
    }

    /// When the channel next needs a poll.
    pub fn next_deadline(&self) -> Option<i64> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    /// Runs every event due up to `now` and appends what happened to `out`.
    pub fn poll_into(&mut self, now: i64, out: &mut Vec<WirelessEvent>) {
        let mut macs = std::mem::take(&mut self.mac_out);
        while let Some(Reverse(e)) = self.heap.peek().copied() {
            if e.at > now {
                break;
            }
            self.heap.pop();
            match e.kind {
                Kind::Timer => {
                    let st = &mut self.stations[e.node as usize];
                    if st.timer_at != e.at {
                        continue; // superseded by an earlier wake-up
                    }
                    st.timer_at = i64::MAX;
                    st.mac.on_timer(e.at, &mut macs);
                    self.apply(e.at, e.node, &mut macs);
                }
                Kind::TxEnd => self.tx_end(e.at, e.node, &mut macs),
                Kind::SignalStart => {
                    let power = f64::from_bits(e.power_bits);
                    self.signal_start(e.at, e.node, e.signal, power, &mut macs);
                }
                Kind::SignalEnd => self.signal_end(e.at, e.node, e.signal, &mut macs),
            }
        }
        out.append(&mut self.out);
        self.mac_out = macs;
    }

    fn push(&mut self, at: i64, kind: Kind, node: NodeId, signal: SignalId) {
        self.push_power(at, kind, node, signal, 0.0);
    }

    fn push_power(&mut self, at: i64, kind: Kind, node: NodeId, signal: SignalId, power_w: f64) {
        self.order += 1;
        self.heap.push(Reverse(Entry {
            at,
            kind,
            order: self.order,
            node,
            signal,
            power_bits: power_w.to_bits(),
        }));
    }

    fn signal(&self, id: SignalId) -> &Signal {
        self.signals[(id - self.signal_base) as usize]
            .as_ref()
            .expect("a signal on the air")
    }

    /// Carries out what `node`'s MAC asked for, then asks it when it next needs its
    /// timer.
    fn apply(&mut self, now: i64, node: NodeId, macs: &mut Vec<MacOut>) {
        let mut i = 0;
        while i < macs.len() {
            let m = macs[i];
            i += 1;
            match m {
                MacOut::Transmit(frame) => self.transmit(now, node, frame, macs),
                MacOut::Deliver { from, payload } => self.out.push(WirelessEvent::Delivered {
                    at_ns: now,
                    node,
                    from,
                    payload,
                }),
                MacOut::Overheard { from, payload } => self.out.push(WirelessEvent::Overheard {
                    at_ns: now,
                    node,
                    from,
                    payload,
                }),
                MacOut::Sent(sdu) => self.out.push(WirelessEvent::Sent {
                    at_ns: now,
                    node,
                    sdu,
                }),
                MacOut::Failed(sdu) => self.out.push(WirelessEvent::Failed {
                    at_ns: now,
                    node,
                    sdu,
                }),
                MacOut::QueueFull(sdu) => self.out.push(WirelessEvent::QueueFull {
                    at_ns: now,
                    node,
                    sdu,
                }),
                MacOut::RateChanged {
                    neighbour,
                    from_bps,
                    to_bps,
                } => self.out.push(WirelessEvent::RateChanged {
                    at_ns: now,
                    node,
                    neighbour,
                    from_bps,
                    to_bps,
                }),
            }
        }
        macs.clear();
        let st = &mut self.stations[node as usize];
        if let Some(t) = st.mac.next_timer() {
            let t = t.max(now);
            if t < st.timer_at {
                st.timer_at = t;
                self.push(t, Kind::Timer, node, 0);
            }
        }
    }

    /// Brings every station to where it is at `now`, if they move.
    fn move_stations(&mut self, now: i64) {
        let Some(mobility) = self.mobility.as_mut() else {
            return;
        };
        if self.moved_at != now {
            for (i, st) in self.stations.iter_mut().enumerate() {
                st.position = mobility.position(i, now);
            }
            self.moved_at = now;
        }
    }

    /// `node` puts `frame` on the air: one pass over the other stations.
    fn transmit(&mut self, now: i64, node: NodeId, frame: Frame, macs: &mut Vec<MacOut>) {
        self.move_stations(now);
        let st = &mut self.stations[node as usize];
        let was_busy = st.rx.busy();
        st.rx.tx_start();
        st.sending = Some((now, frame));
        let c = &mut st.sent;
        match frame.kind {
            FrameKind::Data => {
                c.data += 1;
                c.data_retries += u64::from(frame.retry);
            }
            FrameKind::Rts => {
                c.rts += 1;
                c.rts_retries += u64::from(frame.retry);
            }
            FrameKind::Cts => c.cts += 1,
            FrameKind::Ack => c.acks += 1,
        }
        let from = st.position;
        if !was_busy {
            st.mac.on_cca(now, true, macs);
        }
        let end = now + frame.airtime_ns;
        self.push(end, Kind::TxEnd, node, 0);
        let id = self.signal_base + self.signals.len() as SignalId;
        let mut reached = 0;
        for r in 0..self.stations.len() {
            if r == node as usize || !self.stations[r].radio {
                continue;
            }
            let to = self.stations[r].position;
            let d2 = to.dist2(from);
            let mut power = self.propagation.received_w(self.phy.tx_power_w, d2);
            if let Some(signal) = self.signal.as_mut() {
                let gain_db = signal.gain_db(now, node, r as NodeId, from, to);
                power *= 10f64.powf(gain_db / 10.0);
            }
            if power < self.phy.cs_threshold_w {
                continue;
            }
            let delay = ((d2.sqrt() / LIGHT_M_PER_S * 1e9).round() as i64).max(1);
            self.push_power(now + delay, Kind::SignalStart, r as NodeId, id, power);
            self.push(end + delay, Kind::SignalEnd, r as NodeId, id);
            reached += 1;
        }
        self.signals.push_back((reached > 0).then_some(Signal {
            frame,
            pending: reached,
        }));
        self.trim_signals();
    }

    fn trim_signals(&mut self) {
        while let Some(None) = self.signals.front() {
            self.signals.pop_front();
            self.signal_base += 1;
        }
    }

    fn tx_end(&mut self, now: i64, node: NodeId, macs: &mut Vec<MacOut>) {
        let st = &mut self.stations[node as usize];
        let (start_ns, frame) = st.sending.take().expect("a transmission in progress");
        if let Some(air) = self.air.as_mut() {
            air.push(AirRecord {
                node,
                start_ns,
                frame,
                signal_w: self.phy.tx_power_w,
                intact: true,
            });
        }
        st.mac.on_tx_end(now, &frame, macs);
        st.rx.tx_end();
        if !st.rx.busy() {
            st.mac.on_cca(now, false, macs);
        }
        self.apply(now, node, macs);
    }

    fn signal_start(
        &mut self,
        now: i64,
        node: NodeId,
        id: SignalId,
        power: f64,
        macs: &mut Vec<MacOut>,
    ) {
        let frame = self.signal(id).frame;
        let end = now + frame.airtime_ns;
        let st = &mut self.stations[node as usize];
        let was_busy = st.rx.busy();
        let ev = st.rx.signal_start(&self.phy, id, power, end, frame);
        if !was_busy {
            st.mac.on_cca(now, true, macs);
        }
        if let RxEvent::Captured { end_ns } = ev {
            st.mac.on_captured(now, end_ns);
        }
        self.apply(now, node, macs);
    }

    fn signal_end(&mut self, now: i64, node: NodeId, id: SignalId, macs: &mut Vec<MacOut>) {
        let st = &mut self.stations[node as usize];
        let mut ev = st.rx.signal_end(id);
        if let (RxEvent::Frame { frame, power_w }, Some(signal)) = (ev, self.signal.as_mut()) {
            if signal.frame_lost(&frame, power_w / self.phy.noise_w) {
                ev = RxEvent::Error { frame, power_w };
            }
        }
        let idle = !st.rx.busy();
        let heard = match ev {
            RxEvent::Frame { frame, power_w } => {
                if let (Some(kept), FrameKind::Data) = (self.rx_power.as_mut(), frame.kind) {
                    let n = self.stations.len();
                    kept[node as usize * n + frame.src as usize] = power_w;
                }
                let st = &mut self.stations[node as usize];
                st.mac.on_rx(now, &frame, macs);
                Some((frame, power_w, true))
            }
            RxEvent::Error { frame, power_w } => {
                let st = &mut self.stations[node as usize];
                st.mac.on_rx_error(now, macs);
                Some((frame, power_w, false))
            }
            RxEvent::None | RxEvent::Captured { .. } => None,
        };
        if let (Some(air), Some((frame, signal_w, intact))) = (self.air.as_mut(), heard) {
            air.push(AirRecord {
                node,
                start_ns: now - frame.airtime_ns,
                frame,
                signal_w,
                intact,
            });
        }
        let st = &mut self.stations[node as usize];
        if idle {
            st.mac.on_cca(now, false, macs);
        }
        let slot = (id - self.signal_base) as usize;
        if let Some(s) = self.signals[slot].as_mut() {
            s.pending -= 1;
            if s.pending == 0 {
                self.signals[slot] = None;
                self.trim_signals();
            }
        }
        self.apply(now, node, macs);
    }
}
