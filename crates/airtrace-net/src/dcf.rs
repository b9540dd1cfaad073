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
//! contention window doubled when the medium is busy at the end of the first DIFS.

use std::collections::VecDeque;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use crate::frame::{Frame, FrameKind, NodeId, Payload, Plcp, BROADCAST};

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
    /// Rate of data frames, bit/s.
    pub data_rate_bps: u64,
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
    /// The packet was sent (acknowledged, or broadcast).
    Sent(Sdu),
    /// The packet was given up after its last attempt (the link to `next_hop` may be
    /// broken: routing hears of it).
    Failed(Sdu),
    /// The interface queue was full: the packet is dropped.
    QueueFull(Sdu),
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
    Cts { deadline: i64 },
    Ack { deadline: i64 },
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
            idle_since: Some(0),
            nav_until: 0,
            use_eifs: false,
            transmitting: false,
            awaiting: Awaiting::Nothing,
            response: None,
            next_seq: 0,
            last_seq: FxHashMap::default(),
        }
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
                // ns-2 `Mac802_11::send`: DIFS plus a random backoff, unwatched.
                let slots = self.draw_backoff();
                self.defer_until =
                    Some(now + self.cfg.difs_ns() + i64::from(slots) * self.cfg.slot_ns);
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
        let from = self.idle_from()? + self.ifs();
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
            Awaiting::Cts { deadline } | Awaiting::Ack { deadline } => take(Some(deadline)),
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

    fn data_frame(&self, cur: &Current) -> Frame {
        let cfg = &self.cfg;
        let bytes = cur.sdu.payload.len + cfg.data_overhead;
        let broadcast = cur.sdu.next_hop == BROADCAST;
        let rate = if broadcast {
            cfg.basic_rate_bps
        } else {
            cfg.data_rate_bps
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
            FrameKind::Cts | FrameKind::Ack => {}
        }
        self.try_access(now, out);
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
                        if let Some(c) = self.current.as_mut() {
                            c.data_sent = true;
                        }
                        self.response = Some((now + cfg.sifs_ns, data));
                    }
                }
            }
            FrameKind::Data => {
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
            // ns-2 `recv_timer`: set_nav(EIFS).
            self.set_nav(now, now + self.cfg.eifs_ns);
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
                if !refused {
                    self.transmit(now, frame, out);
                    return;
                }
            }
        }
        match self.awaiting {
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
