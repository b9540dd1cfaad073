//! The 802.11 Distributed Coordination Function (IEEE 802.11-2020 §10.3) of one
//! station: carrier sense with the NAV, DIFS/EIFS, binary exponential backoff frozen
//! while the medium is busy, RTS/CTS, ACKs, retry limits and duplicate detection.
//!
//! Sans-IO: the station is told what its radio senses and receives
//! ([`Dcf::on_cca`], [`Dcf::on_rx`], [`Dcf::on_rx_error`], [`Dcf::on_tx_end`]) and
//! when its timer is due ([`Dcf::on_timer`]); it answers with [`MacOut`]s (transmit
//! this frame now, deliver this packet, this packet was sent or given up) and says
//! when it next needs its timer ([`Dcf::next_timer`]).
//!
//! [`DcfConfig::ns2`] reproduces the 802.11 of ns-2's CMU wireless extensions, whose
//! departures from the standard Holland & Vaidya's results depend on (see
//! docs/ns2-chain-model.md): EIFS kept as a NAV, a CTS refused while the NAV runs, the
//! contention window doubled when the medium is busy at the end of the first DIFS;
//! and those of ns-2.1b8a's code in particular (the CMU code the paper ran): a first
//! access after a DIFS alone, the data a DIFS after the CTS, a retry's backoff from
//! the timeout, and the short retry count and CW reset by a data frame that follows
//! the station's own CTS.

use std::collections::VecDeque;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use crate::frame::{Frame, FrameKind, NodeId, Payload, Plcp, BROADCAST};
use crate::rate::{RateConfig, RateControl};

/// A station's 802.11 settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcfConfig {
    /// aSlotTime, ns.
    pub slot_ns: i64,
    /// aSIFSTime, ns.
    pub sifs_ns: i64,
    /// aCWmin (slots; the window is 0..=CW, or 0..CW with `backoff_below_cw`).
    pub cw_min: u32,
    /// aCWmax.
    pub cw_max: u32,
    /// Transmission attempts of a frame sent without RTS (dot11ShortRetryLimit), and of
    /// an RTS.
    pub short_attempts: u32,
    /// Transmission attempts of a data frame sent after an RTS (dot11LongRetryLimit).
    pub long_attempts: u32,
    /// Data frames whose MAC frame is longer than this many bytes go after RTS/CTS
    /// (dot11RTSThreshold; 0: every unicast frame, ns-2's default; `u32::MAX`: none).
    pub rts_threshold: u32,
    /// Rate of data frames, bit/s (with `rate_control`, the fastest it may choose).
    pub data_rate_bps: u64,
    /// Rate adaptation per neighbour ([`crate::rate`]); `None`: always `data_rate_bps`.
    pub rate_control: Option<RateConfig>,
    /// Rate of control frames (RTS, CTS, ACK) and broadcasts, bit/s.
    pub basic_rate_bps: u64,
    /// PLCP preamble and header.
    pub plcp: Plcp,
    /// Bytes a data frame adds to its packet (MAC header, FCS, LLC/SNAP).
    pub data_overhead: u32,
    /// RTS, CTS and ACK frame lengths, bytes.
    pub rts_bytes: u32,
    /// See `rts_bytes`.
    pub cts_bytes: u32,
    /// See `rts_bytes`.
    pub ack_bytes: u32,
    /// After a frame's end, how much longer than SIFS and the response's air time to
    /// wait for a CTS or ACK before counting a failure, ns.
    pub cts_timeout_extra_ns: i64,
    /// See `cts_timeout_extra_ns`.
    pub ack_timeout_extra_ns: i64,
    /// EIFS, ns (§10.3.2.3.7: SIFS + DIFS + an ACK at the lowest rate).
    pub eifs_ns: i64,
    /// Interface queue length, packets.
    pub queue_packets: usize,
    /// ns-2's departures from the standard (see the module documentation).
    pub ns2: bool,
}

impl DcfConfig {
    /// DIFS = SIFS + 2 slots (§10.3.2.3.5).
    pub fn difs_ns(&self) -> i64 {
        self.sifs_ns + 2 * self.slot_ns
    }

    /// Air time of a control frame of `bytes`.
    fn control_airtime(&self, bytes: u32) -> i64 {
        self.plcp.airtime_ns(bytes, self.basic_rate_bps)
    }

    /// Air time of an ACK.
    pub fn ack_airtime_ns(&self) -> i64 {
        self.control_airtime(self.ack_bytes)
    }

    /// 802.11b DSSS/CCK (IEEE 802.11-2020 §16, §17): slot 20 µs, SIFS 10 µs, CW
    /// 31–1023, long preamble (192 µs), 7 and 4 attempts, data at `rate_bps`, control
    /// frames at 1 Mbit/s, RTS/CTS off, a 50-packet interface queue.
    pub fn dsss(rate_bps: u64) -> Self {
        let plcp = Plcp {
            overhead_ns: 192_000,
            whole_microseconds: true,
        };
        let sifs = 10_000;
        let ack_at_1m = plcp.airtime_ns(14, 1_000_000);
        DcfConfig {
            slot_ns: 20_000,
            sifs_ns: sifs,
            cw_min: 31,
            cw_max: 1023,
            short_attempts: 7,
            long_attempts: 4,
            rts_threshold: u32::MAX,
            data_rate_bps: rate_bps,
            rate_control: None,
            basic_rate_bps: 1_000_000,
            plcp,
            data_overhead: 24 + 4 + 8,
            rts_bytes: 20,
            cts_bytes: 14,
            ack_bytes: 14,
            cts_timeout_extra_ns: 20_000 + 1_000,
            ack_timeout_extra_ns: 20_000 + 1_000,
            eifs_ns: sifs + (sifs + 40_000) + ack_at_1m,
            queue_packets: 50,
            ns2: false,
        }
    }

    /// ns-2's `Mac/802_11` of the CMU extensions (ns-2.1b5–b8, as Holland & Vaidya ran
    /// it; see docs/ns2-chain-model.md for the source lines): everything at 2 Mbit/s, its
    /// 24-byte PHY header included (96 µs), data frames 52 bytes over the packet, RTS
    /// 44, CTS and ACK 38 bytes, RTS/CTS before every unicast frame, 7 RTS and 5 data
    /// attempts, EIFS 308 µs, timeouts as ns-2 times them, and its departures from the
    /// standard (`ns2`).
    pub fn ns2_wavelan() -> Self {
        let rate = 2_000_000;
        let plcp = Plcp {
            overhead_ns: 96_000,
            whole_microseconds: false,
        };
        let sifs = 10_000;
        let difs = sifs + 40_000;
        DcfConfig {
            slot_ns: 20_000,
            sifs_ns: sifs,
            cw_min: 31,
            cw_max: 1023,
            short_attempts: 7,
            long_attempts: 5,
            rts_threshold: 0,
            data_rate_bps: rate,
            rate_control: None,
            basic_rate_bps: rate,
            plcp,
            data_overhead: 28,
            rts_bytes: 20,
            cts_bytes: 14,
            ack_bytes: 14,
            // CTSTimeout = RTS + CTS + 2 SIFS from the RTS's start; ACKTimeout = DATA +
            // ACK + SIFS + DIFS from the data's start.
            cts_timeout_extra_ns: sifs,
            ack_timeout_extra_ns: difs,
            // sifs + difs + the ACK with its PHY header counted twice: 8·(38+24)/2e6.
            eifs_ns: sifs + difs + 248_000,
            queue_packets: 50,
            ns2: true,
        }
    }
}

/// A packet handed to the MAC for one hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sdu {
    /// The packet.
    pub payload: Payload,
    /// The next hop, or [`BROADCAST`].
    pub next_hop: NodeId,
    /// Served before the packets already queued (ns-2's priority queue puts routing
    /// packets first).
    pub priority: bool,
}

/// What the station asks of the network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MacOut {
    /// Put this frame on the air now.
    Transmit(Frame),
    /// A data frame for this station (or broadcast) arrived: hand its packet up.
    Deliver {
        /// The neighbour it came from.
        from: NodeId,
        /// The packet.
        payload: Payload,
    },
    /// A data frame for another station was decoded (promiscuous mode only).
    Overheard {
        /// The station that sent it.
        from: NodeId,
        /// The packet.
        payload: Payload,
    },
    /// The packet was sent (acknowledged, or broadcast).
    Sent(Sdu),
    /// The packet was given up after its last attempt (the link to `next_hop` may be
    /// broken: routing hears of it).
    Failed(Sdu),
    /// The interface queue was full: the packet is dropped.
    QueueFull(Sdu),
    /// Rate adaptation changed the rate of data frames to `neighbour`.
    RateChanged {
        /// The neighbour.
        neighbour: NodeId,
        /// The old rate, bit/s.
        from_bps: u64,
        /// The new rate, bit/s.
        to_bps: u64,
    },
}

/// The frame being sent and its retry counters.
#[derive(Debug, Clone, Copy)]
struct Current {
    sdu: Sdu,
    seq: u16,
    short_tries: u32,
    long_tries: u32,
    /// A data frame of this SDU went out already (the next one has the Retry bit).
    data_sent: bool,
    rts_sent: bool,
}

/// What the station waits for after its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaiting {
    Nothing,
    Cts {
        deadline: i64,
    },
    Ack {
        deadline: i64,
    },
    /// ns-2: a CTS went out; until the data frame comes (or the CTS's Duration and
    /// air time have gone by) the station is in `MAC_CTS`: it refuses RTS frames and
    /// does not contend.
    Data {
        deadline: i64,
    },
}

/// One station's DCF (see the [module documentation](self)).
#[derive(Debug)]
pub struct Dcf {
    id: NodeId,
    cfg: DcfConfig,
    rng: ChaCha8Rng,
    queue: VecDeque<Sdu>,
    current: Option<Current>,
    /// Backoff slots left; `None` when no backoff is pending.
    backoff: Option<u32>,
    /// ns-2: the first access waits DIFS and a random backoff without watching the
    /// medium, until this time.
    defer_until: Option<i64>,
    cw: u32,
    /// ns-2: the pending backoff's slots run from this time, the medium being idle
    /// (a retry's backoff starts at the timeout, with no DIFS); `None`: from DIFS
    /// (or EIFS) after the medium fell idle.
    counting_since: Option<i64>,
    /// When the medium (CCA, own transmission) fell idle; `None` while busy.
    idle_since: Option<i64>,
    nav_until: i64,
    /// The inter-frame space before counting resumes: DIFS, or EIFS after an error.
    use_eifs: bool,
    transmitting: bool,
    awaiting: Awaiting,
    /// A response (CTS, ACK, or data after a CTS) due at a time.
    response: Option<(i64, Frame)>,
    next_seq: u16,
    /// Last sequence number received from each neighbour (duplicate detection,
    /// §10.3.2.14).
    last_seq: FxHashMap<NodeId, u16>,
    /// Hand up data frames for other stations too ([`Dcf::set_promiscuous`]).
    promiscuous: bool,
    /// Each neighbour's rate controller (with `cfg.rate_control`).
    rates: FxHashMap<NodeId, RateControl>,
}

impl Dcf {
    /// A station `id` with its own random stream.
    pub fn new(id: NodeId, cfg: DcfConfig, rng: ChaCha8Rng) -> Self {
        let cw = cfg.cw_min;
        Dcf {
            id,
            cfg,
            rng,
            queue: VecDeque::new(),
            current: None,
            backoff: None,
            defer_until: None,
            cw,
            counting_since: None,
            idle_since: Some(0),
            nav_until: 0,
            use_eifs: false,
            transmitting: false,
            awaiting: Awaiting::Nothing,
            response: None,
            next_seq: 0,
            last_seq: FxHashMap::default(),
            promiscuous: false,
            rates: FxHashMap::default(),
        }
    }

    /// Promiscuous mode: data frames decoded for other stations come out as
    /// [`MacOut::Overheard`] (what DSR's promiscuous listening needs).
    pub fn set_promiscuous(&mut self, on: bool) {
        self.promiscuous = on;
    }

    /// The settings.
    pub fn config(&self) -> &DcfConfig {
        &self.cfg
    }

    /// Packets waiting in the interface queue (the one being sent not counted).
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Takes out of the interface queue the packets `pick` chooses (not the one being
    /// sent), in queue order.
    pub fn take_queued(&mut self, mut pick: impl FnMut(&Sdu) -> bool) -> Vec<Sdu> {
        let mut taken = Vec::new();
        self.queue.retain(|sdu| {
            let take = pick(sdu);
            if take {
                taken.push(*sdu);
            }
            !take
        });
        taken
    }

    /// The current contention window.
    pub fn cw(&self) -> u32 {
        self.cw
    }

    /// Whether the medium is idle at `now` for this station: CCA idle, not sending,
    /// no NAV.
    fn medium_idle(&self, now: i64) -> bool {
        self.idle_since.is_some() && !self.transmitting && self.nav_until <= now
    }

    /// When the medium became idle, NAV included; `None` while busy.
    fn idle_from(&self) -> Option<i64> {
        if self.transmitting {
            return None;
        }
        self.idle_since.map(|t| t.max(self.nav_until))
    }

    fn ifs(&self) -> i64 {
        if self.use_eifs {
            self.cfg.eifs_ns
        } else {
            self.cfg.difs_ns()
        }
    }

    fn draw_backoff(&mut self) -> u32 {
        let upper = if self.cfg.ns2 { self.cw } else { self.cw + 1 };
        self.rng.random_range(0..upper)
    }

    /// Offers a packet for one hop.
    pub fn enqueue(&mut self, now: i64, sdu: Sdu, out: &mut Vec<MacOut>) {
        if self.current.is_none() && self.queue.is_empty() {
            self.start(now, sdu);
            self.try_access(now, out);
            return;
        }
        if self.queue.len() >= self.cfg.queue_packets {
            if sdu.priority {
                // ns-2's PriQueue: a routing packet goes first; the tail is dropped.
                if let Some(tail) = self.queue.pop_back() {
                    out.push(MacOut::QueueFull(tail));
                }
            } else {
                out.push(MacOut::QueueFull(sdu));
                return;
            }
        }
        if sdu.priority {
            self.queue.push_front(sdu);
        } else {
            self.queue.push_back(sdu);
        }
    }

    /// Makes `sdu` the frame being sent and arranges its access.
    fn start(&mut self, now: i64, sdu: Sdu) {
        self.current = Some(Current {
            sdu,
            seq: self.next_seq,
            short_tries: 0,
            long_tries: 0,
            data_sent: false,
            rts_sent: false,
        });
        self.next_seq = (self.next_seq + 1) & 0x0fff;
        if self.backoff.is_some() {
            return; // The backoff in progress (post-backoff) gives the access.
        }
        if self.cfg.ns2 {
            if self.medium_idle(now) {
                // ns-2.1b8a `Mac802_11::send` (mac-802_11.cc:984-991): a DIFS, unwatched,
                // and no backoff (ns-2.35 adds one).
                if self.defer_until.is_none() {
                    self.defer_until = Some(now + self.cfg.difs_ns());
                }
            } else {
                self.backoff = Some(self.draw_backoff());
            }
            return;
        }
        // §10.3.4.2: transmit once the medium has been idle for DIFS (or EIFS) if it
        // is idle now; else back off.
        self.backoff = Some(if self.medium_idle(now) {
            0
        } else {
            self.draw_backoff()
        });
    }

    /// The instant the pending backoff ends, if the medium stays idle.
    fn backoff_end(&self) -> Option<i64> {
        let slots = self.backoff?;
        let idle_from = self.idle_from()?;
        let from = self
            .counting_since
            .unwrap_or_else(|| idle_from + self.ifs());
        Some(from + i64::from(slots) * self.cfg.slot_ns)
    }

    /// When the station next needs [`Dcf::on_timer`].
    pub fn next_timer(&self) -> Option<i64> {
        if self.transmitting {
            return None; // on_tx_end comes first
        }
        let mut next: Option<i64> = None;
        let mut take = |t: Option<i64>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n: i64| n.min(t)));
            }
        };
        take(self.response.map(|(t, _)| t));
        match self.awaiting {
            Awaiting::Cts { deadline }
            | Awaiting::Ack { deadline }
            | Awaiting::Data { deadline } => take(Some(deadline)),
            // A response to send comes first: access resumes after it (asking for the
            // access timer now would wake the station over and over at a time it
            // cannot act).
            Awaiting::Nothing if self.response.is_some() => {}
            Awaiting::Nothing => {
                take(self.defer_until);
                if self.defer_until.is_none() && self.idle_from().is_some() {
                    take(self.backoff_end());
                }
            }
        }
        next
    }

    /// Freezes the countdown at `now` (the medium turned busy): the slots that went by
    /// idle are used up (§10.3.4.3).
    fn freeze(&mut self, now: i64) {
        if let (Some(slots), Some(end)) = (self.backoff, self.backoff_end()) {
            let from = end - i64::from(slots) * self.cfg.slot_ns;
            if now > from {
                let used = ((now - from) / self.cfg.slot_ns).min(i64::from(slots)) as u32;
                self.backoff = Some(slots - used);
            }
        }
        self.counting_since = None;
    }

    /// The radio's clear channel assessment changed.
    pub fn on_cca(&mut self, now: i64, busy: bool, out: &mut Vec<MacOut>) {
        if busy {
            if self.idle_since.is_some() {
                self.freeze(now);
                self.idle_since = None;
            }
        } else if self.idle_since.is_none() {
            self.idle_since = Some(now);
            self.try_access(now, out);
        }
    }

    /// Sets the NAV to `until` at least.
    fn set_nav(&mut self, now: i64, until: i64) {
        if until > self.nav_until {
            if self.medium_idle(now) {
                self.freeze(now);
            }
            self.nav_until = until;
        }
    }

    /// The station, back on the channel, senses the medium busy until `until` (frames
    /// already on the air that it starts hearing mid-way): it defers as for its NAV.
    pub fn busy_until(&mut self, now: i64, until: i64, out: &mut Vec<MacOut>) {
        self.set_nav(now, until);
        self.try_access(now, out);
    }

    /// Transmits `frame` now.
    fn transmit(&mut self, now: i64, frame: Frame, out: &mut Vec<MacOut>) {
        if self.medium_idle(now) {
            self.freeze(now);
        }
        self.transmitting = true;
        out.push(MacOut::Transmit(frame));
    }

    fn frame(&self, kind: FrameKind, dst: NodeId, nav_ns: i64, bytes: u32, rate: u64) -> Frame {
        Frame {
            kind,
            src: self.id,
            dst,
            nav_ns,
            seq: 0,
            retry: false,
            payload: None,
            bytes,
            rate_bps: rate,
            airtime_ns: self.cfg.plcp.airtime_ns(bytes, rate),
        }
    }

    /// The rate of data frames to `neighbour` now, bit/s.
    pub fn data_rate_bps(&self, neighbour: NodeId) -> u64 {
        match (self.rates.get(&neighbour), self.cfg.rate_control) {
            (Some(c), _) => c.rate_bps(),
            (None, Some(rc)) => RateControl::new(rc).rate_bps(),
            (None, None) => self.cfg.data_rate_bps,
        }
    }

    /// Tells `neighbour`'s rate controller how its data frame fared (an ACK came, or
    /// not), and reports a change of rate.
    fn rate_outcome(&mut self, neighbour: NodeId, acked: bool, out: &mut Vec<MacOut>) {
        let Some(rc) = self.cfg.rate_control else {
            return;
        };
        let c = self
            .rates
            .entry(neighbour)
            .or_insert_with(|| RateControl::new(rc));
        let from_bps = c.current_bps();
        let change = if acked {
            c.on_success()
        } else {
            c.on_failure()
        };
        if let Some(to_bps) = change {
            out.push(MacOut::RateChanged {
                neighbour,
                from_bps,
                to_bps,
            });
        }
    }

    fn data_frame(&self, cur: &Current) -> Frame {
        let cfg = &self.cfg;
        let bytes = cur.sdu.payload.len + cfg.data_overhead;
        let broadcast = cur.sdu.next_hop == BROADCAST;
        let rate = if broadcast {
            cfg.basic_rate_bps
        } else {
            self.data_rate_bps(cur.sdu.next_hop)
        };
        let nav = if broadcast {
            0
        } else {
            cfg.sifs_ns + cfg.ack_airtime_ns()
        };
        let mut f = self.frame(FrameKind::Data, cur.sdu.next_hop, nav, bytes, rate);
        f.seq = cur.seq;
        f.retry = cur.data_sent;
        f.payload = Some(cur.sdu.payload);
        f
    }

    fn uses_rts(&self, cur: &Current) -> bool {
        cur.sdu.next_hop != BROADCAST
            && cur.sdu.payload.len + self.cfg.data_overhead > self.cfg.rts_threshold
    }

    /// Sends the current frame (or its RTS) if the access is won at `now`.
    fn try_access(&mut self, now: i64, out: &mut Vec<MacOut>) {
        if self.transmitting || self.response.is_some() || self.awaiting != Awaiting::Nothing {
            return;
        }
        if let Some(t) = self.defer_until {
            if now < t {
                return;
            }
            self.defer_until = None;
            if !self.medium_idle(now) {
                // ns-2 `check_pktRTS`/`check_pktTx`: busy when the defer ends.
                self.cw = (2 * self.cw + 1).min(self.cfg.cw_max);
                self.backoff = Some(self.draw_backoff());
                return;
            }
        } else {
            let Some(end) = self.backoff_end() else {
                return;
            };
            if now < end || !self.medium_idle(now) {
                return;
            }
            self.backoff = None;
            self.counting_since = None;
        }
        let Some(cur) = self.current else {
            return; // A post-backoff ended with nothing to send.
        };
        if self.uses_rts(&cur) {
            let cfg = &self.cfg;
            let data = self.data_frame(&cur);
            let nav = 3 * cfg.sifs_ns
                + cfg.control_airtime(cfg.cts_bytes)
                + data.airtime_ns
                + cfg.ack_airtime_ns();
            let mut rts = self.frame(
                FrameKind::Rts,
                cur.sdu.next_hop,
                nav,
                cfg.rts_bytes,
                cfg.basic_rate_bps,
            );
            rts.retry = cur.rts_sent;
            if let Some(c) = self.current.as_mut() {
                c.rts_sent = true;
            }
            self.transmit(now, rts, out);
        } else {
            let data = self.data_frame(&cur);
            if let Some(c) = self.current.as_mut() {
                c.data_sent = true;
            }
            self.transmit(now, data, out);
        }
    }

    /// The station's own transmission of `frame` is over.
    pub fn on_tx_end(&mut self, now: i64, frame: &Frame, out: &mut Vec<MacOut>) {
        self.transmitting = false;
        let cfg = &self.cfg;
        match frame.kind {
            FrameKind::Rts => {
                self.awaiting = Awaiting::Cts {
                    deadline: now
                        + cfg.sifs_ns
                        + cfg.control_airtime(cfg.cts_bytes)
                        + cfg.cts_timeout_extra_ns,
                };
            }
            FrameKind::Data if frame.src == self.id && frame.dst != BROADCAST => {
                self.awaiting = Awaiting::Ack {
                    deadline: now + cfg.sifs_ns + cfg.ack_airtime_ns() + cfg.ack_timeout_extra_ns,
                };
            }
            FrameKind::Data => {
                // A broadcast: done, no acknowledgement.
                if let Some(cur) = self.current.take() {
                    out.push(MacOut::Sent(cur.sdu));
                }
                self.after_exchange(now, out);
                return;
            }
            FrameKind::Cts if cfg.ns2 => {
                // ns-2 `check_pktCTRL` (mac-802_11.cc:572-578): MAC_CTS for the CTS's
                // Duration and air time from its start, i.e. its Duration from its end.
                self.awaiting = Awaiting::Data {
                    deadline: now + frame.nav_ns,
                };
                return;
            }
            FrameKind::Ack if cfg.ns2 => self.resume_after_response(now),
            FrameKind::Cts | FrameKind::Ack => {}
        }
        self.try_access(now, out);
    }

    /// ns-2 `tx_resume` (mac-802_11.cc:412-434) after the station's CTS or ACK
    /// exchange: a frame of its own waiting with no backoff running waits a DIFS
    /// (unwatched) before it goes.
    fn resume_after_response(&mut self, now: i64) {
        if self.current.is_some() && self.backoff.is_none() {
            self.defer_until = Some(now + self.cfg.difs_ns());
        }
    }

    /// The exchange of the current frame ended (sent or given up): post-backoff, and
    /// the next packet from the queue.
    fn after_exchange(&mut self, now: i64, out: &mut Vec<MacOut>) {
        self.backoff = Some(self.draw_backoff());
        self.defer_until = None;
        if let Some(next) = self.queue.pop_front() {
            self.start(now, next);
        }
        self.try_access(now, out);
    }

    /// A frame arrived intact.
    pub fn on_rx(&mut self, now: i64, frame: &Frame, out: &mut Vec<MacOut>) {
        self.use_eifs = false;
        if frame.dst != self.id {
            if frame.dst == BROADCAST {
                if let Some(payload) = frame.payload {
                    out.push(MacOut::Deliver {
                        from: frame.src,
                        payload,
                    });
                }
            } else {
                // §10.3.2.4: a frame for another station sets the NAV.
                self.set_nav(now, now + frame.nav_ns);
                if let (true, FrameKind::Data, Some(payload)) =
                    (self.promiscuous, frame.kind, frame.payload)
                {
                    out.push(MacOut::Overheard {
                        from: frame.src,
                        payload,
                    });
                }
            }
            self.try_access(now, out);
            return;
        }
        let cfg = self.cfg;
        match frame.kind {
            FrameKind::Rts => {
                // §10.3.2.6: answer with a CTS after SIFS unless the NAV says busy (ns-2's
                // `check_pktCTRL` likewise discards the CTS when the medium is not idle,
                // NAV included).
                let refuse = self.nav_until > now
                    || self.transmitting
                    || self.response.is_some()
                    || (cfg.ns2 && self.awaiting != Awaiting::Nothing);
                if !refuse {
                    let cts_time = cfg.control_airtime(cfg.cts_bytes);
                    let nav = (frame.nav_ns - cfg.sifs_ns - cts_time).max(0);
                    let cts = self.frame(
                        FrameKind::Cts,
                        frame.src,
                        nav,
                        cfg.cts_bytes,
                        cfg.basic_rate_bps,
                    );
                    self.response = Some((now + cfg.sifs_ns, cts));
                }
            }
            FrameKind::Cts => {
                if let (Awaiting::Cts { .. }, Some(cur)) = (self.awaiting, self.current) {
                    if cur.sdu.next_hop == frame.src {
                        self.awaiting = Awaiting::Nothing;
                        if let Some(c) = self.current.as_mut() {
                            c.short_tries = 0;
                        }
                        let data = self.data_frame(&cur);
                        // ns-2.1b8a `recvCTS` (mac-802_11.cc:1238-1246) resets the CW, and
                        // its `tx_resume` (:425-427) sends the data a DIFS later (ns-2.35:
                        // a SIFS), if the medium is idle then (`check_pktTx`, :643-649).
                        let gap = if cfg.ns2 {
                            self.cw = cfg.cw_min;
                            cfg.difs_ns()
                        } else {
                            cfg.sifs_ns
                        };
                        self.response = Some((now + gap, data));
                    }
                }
            }
            FrameKind::Data => {
                if cfg.ns2 && frame.bytes > cfg.rts_threshold {
                    // ns-2.1b8a `recvDATA` (mac-802_11.cc:1274-1291): a data frame
                    // that follows our CTS ends MAC_CTS and resets the station's short
                    // retry count and CW ("Our CTS got through"); one that comes
                    // without it is discarded, unacknowledged.
                    if !matches!(self.awaiting, Awaiting::Data { .. }) {
                        self.try_access(now, out);
                        return;
                    }
                    self.awaiting = Awaiting::Nothing;
                    self.cw = cfg.cw_min;
                    if let Some(c) = self.current.as_mut() {
                        c.short_tries = 0;
                    }
                }
                let ack = self.frame(
                    FrameKind::Ack,
                    frame.src,
                    0,
                    cfg.ack_bytes,
                    cfg.basic_rate_bps,
                );
                self.response = Some((now + cfg.sifs_ns, ack));
                let duplicate = frame.retry && self.last_seq.get(&frame.src) == Some(&frame.seq);
                self.last_seq.insert(frame.src, frame.seq);
                if !duplicate {
                    if let Some(payload) = frame.payload {
                        out.push(MacOut::Deliver {
                            from: frame.src,
                            payload,
                        });
                    }
                }
            }
            FrameKind::Ack => {
                if let (Awaiting::Ack { .. }, Some(cur)) = (self.awaiting, self.current) {
                    if cur.sdu.next_hop == frame.src {
                        self.awaiting = Awaiting::Nothing;
                        self.current = None;
                        self.cw = cfg.cw_min;
                        self.rate_outcome(frame.src, true, out);
                        out.push(MacOut::Sent(cur.sdu));
                        self.after_exchange(now, out);
                        return;
                    }
                }
            }
        }
        self.try_access(now, out);
    }

    /// The frame being received was lost (§10.3.2.3.7: EIFS follows).
    pub fn on_rx_error(&mut self, now: i64, out: &mut Vec<MacOut>) {
        if self.cfg.ns2 {
            // ns-2 `recv_timer` (mac-802_11.cc:1082-1106): set_nav(EIFS), unless the
            // station is still transmitting (then it never saw the frame).
            if !self.transmitting {
                self.set_nav(now, now + self.cfg.eifs_ns);
            }
        } else {
            self.use_eifs = true;
        }
        self.try_access(now, out);
    }

    /// A weaker frame ending at `end_ns` was ignored during a reception: ns-2's
    /// `capture` sets the NAV to EIFS past its end; the standard does nothing.
    pub fn on_captured(&mut self, now: i64, end_ns: i64) {
        if self.cfg.ns2 {
            self.set_nav(now, end_ns + self.cfg.eifs_ns);
        }
    }

    /// The timer asked for by [`Dcf::next_timer`] is due.
    pub fn on_timer(&mut self, now: i64, out: &mut Vec<MacOut>) {
        if let Some((t, frame)) = self.response {
            if now >= t {
                self.response = None;
                // ns-2 `check_pktCTRL`: a CTS is dropped while the medium is not idle.
                let refused =
                    self.cfg.ns2 && frame.kind == FrameKind::Cts && !self.medium_idle(now);
                // ns-2.1b8a `check_pktTx` (mac-802_11.cc:643-649): the data a CTS
                // called for finds the medium busy after its DIFS: an RTS again, after
                // a backoff with a doubled CW (no retry counted).
                let busy_data =
                    self.cfg.ns2 && frame.kind == FrameKind::Data && !self.medium_idle(now);
                if busy_data {
                    self.cw = (2 * self.cw + 1).min(self.cfg.cw_max);
                    self.backoff = Some(self.draw_backoff());
                    return;
                }
                if !refused {
                    self.transmit(now, frame, out);
                    return;
                }
            }
        }
        match self.awaiting {
            Awaiting::Data { deadline } if now >= deadline => {
                // ns-2 `send_timer`, MAC_CTS: no data came; `tx_resume`.
                self.awaiting = Awaiting::Nothing;
                self.resume_after_response(now);
                self.try_access(now, out);
            }
            Awaiting::Cts { deadline } if now >= deadline => {
                self.awaiting = Awaiting::Nothing;
                self.failed_attempt(now, true, out);
            }
            Awaiting::Ack { deadline } if now >= deadline => {
                self.awaiting = Awaiting::Nothing;
                self.failed_attempt(now, false, out);
            }
            _ => self.try_access(now, out),
        }
    }

    /// No CTS (`rts`) or no ACK came: count the attempt, give up at the limit, else
    /// back off with a doubled window (§10.3.4.3, §10.3.4.4).
    fn failed_attempt(&mut self, now: i64, rts: bool, out: &mut Vec<MacOut>) {
        let Some(mut cur) = self.current else {
            return;
        };
        if !rts {
            self.rate_outcome(cur.sdu.next_hop, false, out);
        }
        let long = !rts && self.uses_rts(&cur);
        let exhausted = if long {
            cur.long_tries += 1;
            cur.long_tries >= self.cfg.long_attempts
        } else {
            cur.short_tries += 1;
            cur.short_tries >= self.cfg.short_attempts
        };
        if exhausted {
            self.current = None;
            self.cw = self.cfg.cw_min;
            out.push(MacOut::Failed(cur.sdu));
            self.after_exchange(now, out);
            return;
        }
        self.current = Some(cur);
        self.cw = (2 * self.cw + 1).min(self.cfg.cw_max);
        self.backoff = Some(self.draw_backoff());
        if self.cfg.ns2 && self.medium_idle(now) {
            // ns-2 `RetransmitRTS`/`RetransmitDATA` (mac-802_11.cc:874-875, 947-948)
            // start the backoff timer at the timeout: on an idle medium its slots run
            // from then, with no DIFS (mac-timers.cc:215-240).
            self.counting_since = Some(now);
        }
        self.try_access(now, out);
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// ns-2's first access waits out an unwatched DIFS and backoff; an RTS for the
    /// station that arrives just before that ends makes it answer with a CTS one SIFS
    /// later. Until the CTS is sent the station cannot access the medium, so its timer
    /// must be the CTS's time, not the (past) end of the defer: asking for a time it
    /// cannot act at woke it over and over at one instant (a run that never ended).
    /// An RTS reaches a station whose NAV another exchange set: no CTS, in the
    /// standard's profile (§10.3.2.6) and in ns-2's (`check_pktCTRL` discards a CTS
    /// when the medium is not idle, NAV included; its `recvRTS` alone does not look).
    #[test]
    fn no_profile_answers_an_rts_under_a_nav() {
        for cfg in [DcfConfig::ns2_wavelan(), DcfConfig::dsss(2_000_000)] {
            let mut mac = Dcf::new(0, cfg, ChaCha8Rng::seed_from_u64(1));
            let mut out = Vec::new();
            let rts = |src, dst, nav| Frame {
                src,
                ..mac.frame(FrameKind::Rts, dst, nav, cfg.rts_bytes, cfg.basic_rate_bps)
            };
            let other = rts(4, 5, 5_000_000);
            let mine = rts(2, 0, 1_000_000);
            mac.on_rx(1_000_000, &other, &mut out);
            mac.on_rx(2_000_000, &mine, &mut out);
            assert!(mac.response.is_none(), "ns2 profile: {}", cfg.ns2);
            mac.on_rx(7_000_000, &mine, &mut out);
            assert!(
                mac.response.is_some(),
                "after the NAV, ns2 profile: {}",
                cfg.ns2
            );
        }
    }

    // ns-2.1b8a's exchange timing and retry counting (mac-802_11.cc of the CMU code
    // Holland & Vaidya ran; docs/ns2-chain-model.md).

    fn sdu_to(next_hop: NodeId) -> Sdu {
        Sdu {
            payload: Payload {
                token: 1,
                len: 40,
                ethertype: crate::frame::ETHERTYPE_IPV4,
            },
            next_hop,
            priority: false,
        }
    }

    /// Runs the station's timer until it transmits; returns the time and the frame
    /// (its radio is busy from then, as the channel tells it). A frame already in
    /// `out` went at `now`.
    fn transmit_from(mac: &mut Dcf, now: i64, out: &mut Vec<MacOut>) -> (i64, Frame) {
        if let Some(f) = out.iter().find_map(|o| match o {
            MacOut::Transmit(f) => Some(*f),
            _ => None,
        }) {
            out.clear();
            mac.on_cca(now, true, out);
            return (now, f);
        }
        until_transmit(mac, out)
    }

    fn until_transmit(mac: &mut Dcf, out: &mut Vec<MacOut>) -> (i64, Frame) {
        loop {
            let t = mac.next_timer().expect("a timer");
            out.clear();
            mac.on_timer(t, out);
            if let Some(MacOut::Transmit(f)) = out.first() {
                let f = *f;
                out.clear();
                mac.on_cca(t, true, out);
                return (t, f);
            }
        }
    }

    /// The station's frame that went out at `t` ends; its radio falls idle.
    fn tx_done(mac: &mut Dcf, t: i64, frame: &Frame, out: &mut Vec<MacOut>) -> i64 {
        let end = t + frame.airtime_ns;
        out.clear();
        mac.on_tx_end(end, frame, out);
        mac.on_cca(end, false, out);
        end
    }

    /// `frame` reaches the station, ending at `end`.
    fn receive(mac: &mut Dcf, end: i64, frame: &Frame, out: &mut Vec<MacOut>) {
        mac.on_cca(end - frame.airtime_ns, true, out);
        out.clear();
        mac.on_rx(end, frame, out);
        mac.on_cca(end, false, out);
    }

    /// The station sends its RTS (at once if `out` holds it, from `now`) and hears
    /// no CTS: the timeout comes.
    fn rts_unanswered(mac: &mut Dcf, now: i64, out: &mut Vec<MacOut>) -> i64 {
        let (t, rts) = transmit_from(mac, now, out);
        assert_eq!(rts.kind, FrameKind::Rts);
        tx_done(mac, t, &rts, out);
        let deadline = mac.next_timer().expect("the CTS timeout");
        if mac.cfg.ns2 {
            // CTSTimeout = RTS + CTS + 2 SIFS from the RTS's start (mac-802_11.h:159).
            assert_eq!(deadline - t, rts.airtime_ns + 152_000 + 20_000);
        }
        out.clear();
        mac.on_timer(deadline, out);
        deadline
    }

    /// A packet offered on an idle medium goes a DIFS later, with no backoff
    /// (`Mac802_11::send`, mac-802_11.cc:984-991); after a CTS timeout the backoff's
    /// slots run from the timeout, with no DIFS (`RetransmitRTS` :874-875 starts the
    /// backoff timer, mac-timers.cc:215-240).
    #[test]
    fn ns2_first_access_is_a_difs_and_a_retry_backs_off_from_the_timeout() {
        let cfg = DcfConfig::ns2_wavelan();
        let mut mac = Dcf::new(0, cfg, ChaCha8Rng::seed_from_u64(5));
        let mut out = Vec::new();
        mac.enqueue(1_000_000, sdu_to(1), &mut out);
        let (t, _) = until_transmit(&mut mac, &mut out);
        assert_eq!(t, 1_000_000 + cfg.difs_ns());
        let mut mac = Dcf::new(0, cfg, ChaCha8Rng::seed_from_u64(5));
        mac.enqueue(1_000_000, sdu_to(1), &mut out);
        let timeout = rts_unanswered(&mut mac, 0, &mut out);
        let slots = mac.backoff.expect("a backoff");
        assert_eq!(mac.cw(), 63);
        let (t, rts) = transmit_from(&mut mac, timeout, &mut out);
        assert!(rts.retry);
        assert_eq!(t, timeout + i64::from(slots) * cfg.slot_ns);
    }

    /// The TCP receiver at a chain's end: its RTS for an ACK fails six times (a hidden
    /// node's data keeps its neighbour busy); then the neighbour's RTS comes, it
    /// answers with a CTS, and the data follows. ns-2.1b8a's `recvDATA`
    /// (mac-802_11.cc:1276-1285) resets the station's short retry count and CW when a
    /// data frame follows its CTS, so its own RTS gets seven more attempts; the
    /// standard's count is per frame and the seventh failure gives the packet up.
    #[test]
    fn ns2_a_data_frame_after_our_cts_restarts_our_rts_retry_count() {
        for cfg in [DcfConfig::ns2_wavelan(), DcfConfig::dsss(2_000_000)] {
            let cfg = DcfConfig {
                rts_threshold: 0,
                ..cfg
            };
            let mut mac = Dcf::new(3, cfg, ChaCha8Rng::seed_from_u64(9));
            let mut out = Vec::new();
            mac.enqueue(0, sdu_to(2), &mut out);
            let mut now = 0;
            for _ in 0..6 {
                now = rts_unanswered(&mut mac, now, &mut out);
            }
            out.clear();
            assert!(!mac.transmitting, "this seed's seventh RTS waits a backoff");
            assert_eq!(mac.current.unwrap().short_tries, 6);
            // Node 2's RTS, our CTS a SIFS later, its data.
            let rts = Frame {
                src: 2,
                ..mac.frame(
                    FrameKind::Rts,
                    3,
                    7_000_000,
                    cfg.rts_bytes,
                    cfg.basic_rate_bps,
                )
            };
            now += 1_000_000;
            receive(&mut mac, now, &rts, &mut out);
            let (t, cts) = until_transmit(&mut mac, &mut out);
            assert_eq!((cts.kind, t), (FrameKind::Cts, now + cfg.sifs_ns));
            now = tx_done(&mut mac, t, &cts, &mut out);
            let data = Frame {
                src: 2,
                seq: 7,
                payload: Some(sdu_to(3).payload),
                ..mac.frame(FrameKind::Data, 3, 162_000, 1500, cfg.data_rate_bps)
            };
            now += cfg.difs_ns() + data.airtime_ns;
            receive(&mut mac, now, &data, &mut out);
            assert!(out.iter().any(|o| matches!(o, MacOut::Deliver { .. })));
            let (t, ack) = until_transmit(&mut mac, &mut out);
            assert_eq!(ack.kind, FrameKind::Ack);
            tx_done(&mut mac, t, &ack, &mut out);
            // The seventh failure of our RTS.
            rts_unanswered(&mut mac, 0, &mut out);
            let gave_up = out.iter().any(|o| matches!(o, MacOut::Failed(_)));
            assert_eq!(gave_up, !cfg.ns2, "ns2 profile: {}", cfg.ns2);
            if cfg.ns2 {
                assert_eq!(mac.current.unwrap().short_tries, 1);
                assert_eq!(mac.cw(), 63);
            }
        }
    }

    /// ns-2.1b8a sends the data a DIFS after the CTS (`recvCTS` calls `tx_resume`,
    /// which starts the defer timer with DIFS for a data frame, mac-802_11.cc:425-427;
    /// ns-2.35 made it a SIFS), and only if the medium is idle then (`check_pktTx`,
    /// :643-649): busy, it backs off with a doubled CW and sends the RTS again.
    #[test]
    fn ns2_data_goes_a_difs_after_the_cts_and_not_into_a_busy_medium() {
        for (cfg, gap) in [
            (DcfConfig::ns2_wavelan(), 50_000),
            (
                DcfConfig {
                    rts_threshold: 0,
                    ..DcfConfig::dsss(2_000_000)
                },
                10_000,
            ),
        ] {
            let mut mac = Dcf::new(0, cfg, ChaCha8Rng::seed_from_u64(2));
            let mut out = Vec::new();
            mac.enqueue(0, sdu_to(1), &mut out);
            let (t, rts) = until_transmit(&mut mac, &mut out);
            let end = tx_done(&mut mac, t, &rts, &mut out);
            let cts = Frame {
                src: 1,
                ..mac.frame(
                    FrameKind::Cts,
                    0,
                    1_000_000,
                    cfg.cts_bytes,
                    cfg.basic_rate_bps,
                )
            };
            let at = end + cfg.sifs_ns + cts.airtime_ns;
            receive(&mut mac, at, &cts, &mut out);
            let (t, data) = until_transmit(&mut mac, &mut out);
            assert_eq!((data.kind, t - at), (FrameKind::Data, gap));
        }
        let cfg = DcfConfig::ns2_wavelan();
        let mut mac = Dcf::new(0, cfg, ChaCha8Rng::seed_from_u64(2));
        let mut out = Vec::new();
        mac.enqueue(0, sdu_to(1), &mut out);
        let (t, rts) = until_transmit(&mut mac, &mut out);
        let end = tx_done(&mut mac, t, &rts, &mut out);
        let cts = Frame {
            src: 1,
            ..mac.frame(
                FrameKind::Cts,
                0,
                1_000_000,
                cfg.cts_bytes,
                cfg.basic_rate_bps,
            )
        };
        let at = end + cfg.sifs_ns + cts.airtime_ns;
        receive(&mut mac, at, &cts, &mut out);
        // A hidden node's frame reaches us inside the DIFS.
        mac.on_cca(at + 20_000, true, &mut out);
        out.clear();
        mac.on_timer(at + 50_000, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(mac.cw(), 63);
        mac.on_cca(at + 400_000, false, &mut out);
        let (_, again) = until_transmit(&mut mac, &mut out);
        assert_eq!(again.kind, FrameKind::Rts);
    }

    #[test]
    fn a_pending_response_holds_back_the_access_timer() {
        let cfg = DcfConfig::ns2_wavelan();
        let mut mac = Dcf::new(0, cfg, ChaCha8Rng::seed_from_u64(3));
        let mut out = Vec::new();
        let sdu = Sdu {
            payload: Payload {
                token: 1,
                len: 1000,
                ethertype: crate::frame::ETHERTYPE_IPV4,
            },
            next_hop: 1,
            priority: false,
        };
        mac.enqueue(0, sdu, &mut out);
        let defer_end = mac.next_timer().expect("a deferred first access");
        // An RTS from node 2 ends 5 µs before the defer does.
        let rts = mac.frame(
            FrameKind::Rts,
            0,
            1_000_000,
            cfg.rts_bytes,
            cfg.basic_rate_bps,
        );
        let rts = Frame { src: 2, ..rts };
        let now = defer_end - 5_000;
        mac.on_cca(now - rts.airtime_ns, true, &mut out);
        mac.on_cca(now, false, &mut out);
        mac.on_rx(now, &rts, &mut out);
        let cts_at = now + cfg.sifs_ns;
        assert_eq!(mac.next_timer(), Some(cts_at));
        mac.on_timer(cts_at, &mut out);
        assert!(
            matches!(out.last(), Some(MacOut::Transmit(f)) if f.kind == FrameKind::Cts),
            "{out:?}"
        );
    }
}
