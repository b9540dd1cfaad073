//! One TCP connection: its two directions, the per-packet annotation and the metrics.
//!
//! Each packet goes through three steps, in [`Conn::process`]:
//! 1. [`wireshark`](crate::wireshark): the `tcp.analysis.*` flags with Wireshark's
//!    meaning, from the sequence state of both directions.
//! 2. airtrace's own reading of retransmissions: timeout, fast retransmit or
//!    SACK-driven, the backoff index and the idle gap before it.
//! 3. RTT samples under Karn's rule (RFC 6298 section 3), bytes in flight, metrics.
//!
//! Duplicates of the capture and 802.11 MAC retries never reach these steps: they
//! are recognised before (see [`crate::dups`]) and leave the state untouched.

use std::collections::{HashMap, VecDeque};

use airtrace_wire::{tcp_flags, Tcp};

use crate::annotation::{Annotation, Flags, RetransKind, NONE_I64};
use crate::dups::RecentPackets;
use crate::flow::Endpoint;
use crate::holes::Holes;
use crate::metrics::{ConnState, ConnSummary, DirMetrics};
use crate::seq;
use crate::wireshark::{self, ConvState, FlowState};

/// At most this many unacknowledged segments are remembered per direction. A
/// capture that misses the ACKs (one-sided capture) would otherwise grow without bound.
const MAX_OUTSTANDING: usize = 8192;

/// A segment sent and not yet acknowledged, kept for RTT samples and the
/// first-transmission time of retransmissions. 16 bytes: a bulk sender keeps
/// thousands of them, and they stream through the cache.
#[derive(Clone, Copy, Debug)]
struct Segment {
    seq: u32,
    /// Length in sequence space; the top bit marks a segment sent more than once.
    len_retransmitted: u32,
    ts: i64,
}

impl Segment {
    const RETRANSMITTED: u32 = 1 << 31;

    fn new(seq: u32, end: u32, ts: i64) -> Self {
        Segment {
            seq,
            len_retransmitted: end.wrapping_sub(seq) & !Self::RETRANSMITTED,
            ts,
        }
    }
    #[inline]
    fn end(&self) -> u32 {
        self.seq
            .wrapping_add(self.len_retransmitted & !Self::RETRANSMITTED)
    }
    #[inline]
    fn retransmitted(&self) -> bool {
        self.len_retransmitted & Self::RETRANSMITTED != 0
    }
}

/// RFC 6298 section 2 smoothed RTT and variance, from the samples airtrace takes.
#[derive(Clone, Copy, Debug, Default)]
struct RttEstimator {
    srtt_ns: i64,
    rttvar_ns: i64,
}

impl RttEstimator {
    /// Takes one sample (ns, positive: see [`crate::analyzer`] for the time range).
    fn sample(&mut self, r: i64) {
        if self.srtt_ns == 0 {
            // RFC 6298 (2.2)
            self.srtt_ns = r.max(1);
            self.rttvar_ns = r / 2;
        } else {
            // RFC 6298 (2.3), alpha = 1/8, beta = 1/4, in 128 bits: a capture's clock
            // may jump by years.
            let (srtt, rttvar, r) = (self.srtt_ns as i128, self.rttvar_ns as i128, r as i128);
            self.rttvar_ns = ((3 * rttvar + (srtt - r).abs()) / 4) as i64;
            self.srtt_ns = ((7 * srtt + r) / 8).max(1) as i64;
        }
    }

    /// How long both directions must have been silent before a retransmission
    /// that otherwise looks ACK-driven is read as a timeout.
    fn timeout_silence_ns(&self) -> Option<i64> {
        (self.srtt_ns > 0).then(|| {
            (self.srtt_ns / 2).saturating_add(self.srtt_ns).max(
                self.srtt_ns
                    .saturating_add(self.rttvar_ns.saturating_mul(4)),
            )
        })
    }
}

/// One direction of a connection. Fields in the order the hot path touches them
/// (`repr(C)` keeps that order): the state every packet reads and writes first, the
/// buffers and metrics after.
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct Dir {
    pub(crate) ws: FlowState,
    /// Highest sequence number sent (airtrace's own; Wireshark's `nextseq` skips probes).
    high: Option<u32>,
    /// Highest cumulative ACK the peer sent for this direction's data.
    acked: Option<u32>,
    /// The sequence number up to which the payload the peer acknowledged is counted in
    /// `acked_bytes`: the first byte of this direction until an ACK covers data.
    acked_counted_to: Option<u32>,
    /// The sequence number of this direction's FIN, which is no payload.
    fin_seq: Option<u32>,
    /// Time of the last packet sent in this direction.
    last_ts: Option<i64>,
    /// Loss recovery in progress until the peer acknowledges this point.
    recover: Option<u32>,
    /// Sequence number of the last timeout retransmission, while no ACK advanced.
    timeout_seq: Option<u32>,
    /// Highest SACK right edge the peer reported since its ACK last advanced.
    peer_sack_high: Option<u32>,
    backoff: u8,
    /// The first and the longest wait of the timeout episode under way (ns): the idle
    /// gaps before its expiries.
    episode_waits_ns: (i64, i64),
    /// That recovery began with a timeout (go-back-N), not with fast retransmit.
    after_timeout: bool,
    /// This direction sent a SYN.
    syn_seen: bool,
    /// The initial sequence number a SYN/ACK with another one replaced, before any
    /// data: the peer's ACK decides which of the two the connection uses (see
    /// [`Conn::follow_acked_isn`]).
    replaced_isn: Option<u32>,
    fin: bool,
    /// The peer has acknowledged data of this direction (the first flight is over).
    data_acked: bool,
    rtt: RttEstimator,
    outstanding: VecDeque<Segment>,
    /// The latest transmission time of each outstanding segment sent more than once,
    /// by its first sequence number (only retransmissions touch it).
    retransmitted_at: HashMap<u32, i64>,
    /// Sequence ranges below `high` that were never captured.
    holes: Holes,
    pub(crate) recent: RecentPackets,
    pub(crate) m: DirMetrics,
}

impl Dir {
    /// Forgets the sequence space sent so far (a SYN/ACK started another).
    fn restart_space(&mut self) {
        self.ws.nextseq = 0;
        self.ws.maxseqtobeacked = 0;
        self.high = None;
        self.acked = None;
        self.acked_counted_to = None;
        self.fin_seq = None;
        self.recover = None;
        self.timeout_seq = None;
        self.peer_sack_high = None;
        self.outstanding.clear();
        self.holes = Holes::default();
    }

    /// An ACK from the peer acknowledges this direction's data.
    #[inline]
    fn on_ack(&mut self, tcp: &Tcp, ts: i64, ann: &mut Annotation) {
        let ack = tcp.ack;
        // Anything but the ACK of the SYN acknowledges data (tcptrace's test).
        self.data_acked |= self
            .ws
            .base_seq
            .is_none_or(|isn| ack != isn.wrapping_add(1));
        if self.acked.is_none_or(|a| seq::gt(ack, a)) {
            self.acked = Some(ack);
            self.count_acked(ack);
            self.timeout_seq = None;
            self.peer_sack_high = self.peer_sack_high.filter(|h| seq::gt(*h, ack));
            if self.recover.is_some_and(|r| seq::ge(ack, r)) {
                self.recover = None;
            }
        }
        // SACK blocks above the cumulative ACK report data past a hole (RFC 2018).
        for &(_, right) in tcp.sack_blocks() {
            if seq::gt(right, ack) {
                self.peer_sack_high =
                    Some(self.peer_sack_high.map_or(right, |h| seq::max(h, right)));
            }
        }
        let mut sample = None;
        let mut fills_hole = false;
        while let Some(front) = self.outstanding.front() {
            if !seq::le(front.end(), ack) {
                break;
            }
            fills_hole |= front.retransmitted();
            if front.end() == ack && !front.retransmitted() {
                sample = Some(ts - front.ts);
            }
            if front.retransmitted() {
                self.retransmitted_at.remove(&front.seq);
            }
            self.outstanding.pop_front();
        }
        // Karn's rule (RFC 6298 section 3): only segments never retransmitted give
        // samples; a capture clock that went backwards gives none. An ACK that also
        // covers a retransmitted segment gives none either: the receiver held it back
        // until the retransmission filled the hole below, so it times the repair, not
        // the path (tcptrace_long_rtt: a 129 s "RTT" that hid two later timeouts).
        if let Some(r) = sample.filter(|&r| r > 0 && !fills_hole) {
            ann.ack_rtt_ns = r;
            self.rtt.sample(r);
            self.m.rtt.add(r);
        }
    }

    /// Counts the captured payload a cumulative ACK up to `ack` newly covers: no further
    /// than the highest byte captured (an ACK beyond it acknowledges nothing seen, or is
    /// bogus), the gaps the capture missed and the FIN's sequence number left out.
    fn count_acked(&mut self, ack: u32) {
        let (Some(from), Some(high)) = (self.acked_counted_to, self.high) else {
            return;
        };
        let to = if seq::lt(ack, high) { ack } else { high };
        if seq::gt(to, from) {
            let fin = self
                .fin_seq
                .is_some_and(|f| seq::ge(f, from) && seq::lt(f, to));
            let span = (to.wrapping_sub(from) - u32::from(fin)) as u64;
            self.m.acked_bytes += span.saturating_sub(self.holes.missing(from, to));
            self.acked_counted_to = Some(to);
        }
    }

    /// Data (or SYN/FIN) beyond the highest sequence number sent so far.
    #[inline]
    fn new_data(&mut self, tcp: &Tcp, end: u32, ts: i64, remember: bool) {
        let f = tcp.flags;
        let start = match self.high {
            Some(h) if seq::gt(tcp.seq, h) => {
                self.m.missed_bytes += tcp.seq.wrapping_sub(h) as u64;
                self.holes.add(h, tcp.seq);
                tcp.seq
            }
            Some(h) => h,
            None => tcp.seq,
        };
        let syn_fin = u32::from(f & tcp_flags::SYN != 0) + u32::from(f & tcp_flags::FIN != 0);
        if self.high.is_none() {
            // The first byte of payload: after the SYN's sequence number.
            self.acked_counted_to = Some(tcp.seq.wrapping_add(u32::from(f & tcp_flags::SYN != 0)));
        }
        if f & tcp_flags::FIN != 0 {
            self.fin_seq = Some(end.wrapping_sub(1));
        }
        self.m.unique_bytes += (end.wrapping_sub(start)).saturating_sub(syn_fin) as u64;
        self.high = Some(end);
        if remember {
            if self.outstanding.len() == MAX_OUTSTANDING {
                if let Some(old) = self.outstanding.pop_front() {
                    if old.retransmitted() {
                        self.retransmitted_at.remove(&old.seq);
                    }
                }
            }
            self.outstanding.push_back(Segment::new(tcp.seq, end, ts));
        }
    }

    /// A retransmission: its kind, backoff and timing, and Karn's mark on the
    /// segments it repeats.
    #[cold]
    fn retransmission(
        &mut self,
        rev: &Dir,
        tcp: &Tcp,
        ts: i64,
        ws: &wireshark::Verdict,
        handshake_rtt_ns: Option<i64>,
        ann: &mut Annotation,
    ) {
        let end = seq_end(tcp);
        ann.idle_gap_ns = self.last_ts.map_or(NONE_I64, |t| ts - t);
        let repeated = self
            .outstanding
            .iter()
            .find(|g| seq::le(g.seq, tcp.seq) && seq::lt(tcp.seq, g.end()))
            .copied();
        ann.since_first_tx_ns = repeated.map_or(NONE_I64, |g| ts - g.ts);
        let mut since_last_retransmission = None;
        if let Some(g) = repeated {
            // tcptrace's "retr time": since this segment's previous transmission.
            let earlier = self.retransmitted_at.insert(g.seq, ts);
            let wait = ts - earlier.unwrap_or(g.ts);
            since_last_retransmission = earlier.map(|_| wait);
            self.m.max_retransmit_wait_ns =
                Some(self.m.max_retransmit_wait_ns.map_or(wait, |w| w.max(wait)));
        }
        let timing = RetransTiming {
            since_first_tx_ns: ann.since_first_tx_ns,
            since_last_retransmission,
            handshake_rtt_ns,
        };
        let (kind, expiry) = classify_retransmission(self, rev, tcp, ts, ws, timing);
        ann.retrans_kind = kind;
        match kind {
            RetransKind::Timeout if expiry => {
                self.backoff = if self.timeout_seq == Some(tcp.seq) {
                    self.backoff.saturating_add(1)
                } else {
                    1
                };
                self.timeout_seq = Some(tcp.seq);
                ann.backoff = self.backoff;
                let wait = ann.idle_gap_ns.max(0);
                self.episode_waits_ns = if self.backoff == 1 {
                    (wait, wait)
                } else {
                    (self.episode_waits_ns.0, self.episode_waits_ns.1.max(wait))
                };
                if self.backoff as u32 > self.m.max_backoff {
                    self.m.max_backoff_waits_ns = Some(self.episode_waits_ns);
                }
                // After a timeout, data sent before it gets no fast retransmit
                // (RFC 6582 section 3.2 step 1, "recover").
                self.recover = Some(self.high.unwrap_or(end));
                self.after_timeout = true;
                self.m.timeouts += 1;
                self.m.timeout_retransmissions += 1;
                self.m.max_backoff = self.m.max_backoff.max(self.backoff as u32);
            }
            RetransKind::Timeout => self.m.timeout_retransmissions += 1,
            RetransKind::FastRetransmit | RetransKind::Sack => {
                if self.recover.is_none() {
                    self.recover = Some(self.high.unwrap_or(end));
                    self.after_timeout = false;
                }
                if kind == RetransKind::Sack {
                    self.m.sack_retransmissions += 1;
                } else {
                    self.m.fast_retransmissions += 1;
                }
            }
            RetransKind::TailLossProbe => self.m.tail_loss_probes += 1,
            RetransKind::None => {}
        }
        for g in self.outstanding.iter_mut() {
            if seq::lt(g.seq, end) && seq::lt(tcp.seq, g.end()) {
                g.len_retransmitted |= Segment::RETRANSMITTED;
            }
        }
    }
}

/// The per-packet input the connection needs.
pub(crate) struct Seg<'a> {
    pub frame: u64,
    pub ts_ns: i64,
    pub tcp: &'a Tcp,
    pub wire_len: u32,
    pub truncated: bool,
}

/// One TCP connection (`repr(C)`: the endpoints, which every packet compares, first).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Conn {
    pub(crate) a: Endpoint,
    pub(crate) b: Endpoint,
    pub(crate) last_ts: i64,
    /// Wireshark's per-connection state (its iRTT is the out-of-order threshold).
    conv: ConvState,
    handshake_rtt_ns: Option<i64>,
    pub(crate) id: u32,
    /// The frame that opened it (see `ConnSummary::first_frame`).
    first_frame: u64,
    pub(crate) state: ConnState,
    pub(crate) reused_ports: bool,
    /// SYN/ACKs with another initial sequence number that came after data had
    /// flowed, left out of the analysis: how many, and the first one's frame.
    stray_syn_acks: Option<(u32, u64)>,
    first_ts: i64,
    syn_ts: Option<i64>,
    synack_ts: Option<i64>,
    pub(crate) dirs: [Dir; 2],
}

impl Conn {
    pub(crate) fn new(id: u32, a: Endpoint, b: Endpoint, ts: i64, first_frame: u64) -> Self {
        Conn {
            id,
            first_frame,
            a,
            b,
            dirs: Default::default(),
            first_ts: ts,
            last_ts: ts,
            syn_ts: None,
            synack_ts: None,
            handshake_rtt_ns: None,
            conv: ConvState::default(),
            state: ConnState::Open,
            reused_ports: false,
            stray_syn_acks: None,
        }
    }

    /// The direction of a packet from `src` to `dst` (0: from `a`), if it belongs
    /// to this connection.
    #[inline]
    pub(crate) fn direction_of(&self, src: &Endpoint, dst: &Endpoint) -> Option<usize> {
        if self.a == *src && self.b == *dst {
            Some(0)
        } else if self.a == *dst && self.b == *src {
            Some(1)
        } else {
            None
        }
    }

    /// Whether a segment sent in direction `d` could be a copy of an earlier one: it
    /// brings no new data and no new acknowledgment. Only such segments need to be
    /// compared with the recent ones (see [`crate::dups`]).
    #[inline]
    pub(crate) fn may_repeat(&self, d: usize, tcp: &Tcp) -> bool {
        let (fwd, rev) = (&self.dirs[d], &self.dirs[1 - d]);
        if tcp.flags & (tcp_flags::SYN | tcp_flags::FIN | tcp_flags::RST) != 0 {
            return true;
        }
        if tcp.payload_len > 0 {
            fwd.high.is_some_and(|h| seq::le(seq_end(tcp), h))
        } else {
            rev.acked.is_some_and(|a| seq::le(tcp.ack, a))
        }
    }

    /// The handshake's round-trip time, ns, once seen: the whole path's at any capture
    /// point (SYN to the ACK of the SYN/ACK).
    pub(crate) fn handshake_rtt_ns(&self) -> Option<i64> {
        self.handshake_rtt_ns
    }

    /// Frees the memory of a finished connection kept only as a slot to reuse.
    pub(crate) fn release(&mut self) {
        for d in &mut self.dirs {
            d.outstanding = VecDeque::new();
            d.retransmitted_at = HashMap::new();
        }
    }

    /// The base of direction `d`'s relative sequence numbers, if set. A SYN with
    /// another initial sequence number starts a new connection.
    pub(crate) fn base_seq(&self, d: usize) -> Option<u32> {
        self.dirs[d].ws.base_seq
    }

    /// Analyses one segment sent in direction `d` (0: from `a`). Always inlined into
    /// `Analyzer::process`, its one caller: as a call it costs about 15 instructions a
    /// packet more.
    #[inline(always)]
    pub(crate) fn process(&mut self, d: usize, s: &Seg<'_>, ann: &mut Annotation) {
        let tcp = s.tcp;
        let ts = s.ts_ns;
        let seglen = tcp.payload_len;
        let f = tcp.flags;
        self.last_ts = ts;
        if f & (tcp_flags::SYN | tcp_flags::FIN | tcp_flags::RST) != 0 {
            if self.is_stray_syn_ack(d, tcp) {
                // Counted as a packet, kept out of the sequence space (issue 18, class 3).
                let count = self.stray_syn_acks.map_or(0, |(n, _)| n);
                let first = self.stray_syn_acks.map_or(s.frame, |(_, f)| f);
                self.stray_syn_acks = Some((count + 1, first));
                let m = &mut self.dirs[d].m;
                m.packets += 1;
                m.wire_bytes += s.wire_len as u64;
                return;
            }
            self.control_segment(d, tcp, ts, ann);
        } else if self.handshake_rtt_ns.is_none() && f & tcp_flags::ACK != 0 {
            // SYN, SYN/ACK, then this ACK: one round trip.
            if let (Some(syn_ts), Some(_)) = (self.syn_ts, self.synack_ts) {
                self.handshake_rtt_ns = Some(ts - syn_ts);
            }
        }

        if self.dirs[1 - d].replaced_isn.is_some() && f & tcp_flags::ACK != 0 {
            self.follow_acked_isn(1 - d, tcp.ack);
        }
        let (fwd, rev) = split(&mut self.dirs, d);
        wireshark::set_bases(&mut fwd.ws, &mut rev.ws, tcp);

        // Step 1: Wireshark's flags.
        let end = seq_end(tcp);
        // Bytes captured before: a repeat, never out of order (see docs/analysis.md).
        let seen_before = seglen > 0
            && fwd.high.is_some_and(|h| seq::le(end, h))
            && !fwd.holes.overlaps(tcp.seq, end);
        let ws = wireshark::analyze(&mut fwd.ws, &mut rev.ws, &self.conv, tcp, ts, seen_before);
        wireshark::after(&mut fwd.ws, &mut rev.ws, &mut self.conv, tcp, ts);
        ann.flags.insert(ws.flags);
        ann.dupack_num = ws.dupack_num;

        // Step 2: what kind of retransmission.
        if ws.flags.contains(Flags::RETRANSMISSION) {
            fwd.retransmission(rev, tcp, ts, &ws, self.handshake_rtt_ns, ann);
        }

        // Step 3: sequence space, RTT, in-flight, metrics. Data before the peer's first
        // ACK of data, unless sent again, is the first flight (initial window).
        let first_flight =
            seglen > 0 && !fwd.data_acked && !ws.flags.contains(Flags::RETRANSMISSION);
        let new_data = seglen > 0 || f & (tcp_flags::SYN | tcp_flags::FIN) != 0;
        if new_data && fwd.high.is_none_or(|h| seq::gt(end, h)) {
            fwd.new_data(tcp, end, ts, !ws.flags.contains(Flags::ZERO_WINDOW_PROBE));
        } else if seglen > 0 && !seen_before {
            // A segment filling a gap: its bytes were missed, now they are captured.
            let filled = fwd.holes.fill(tcp.seq, end);
            fwd.m.missed_bytes -= filled.min(fwd.m.missed_bytes);
            fwd.m.unique_bytes += filled;
        }
        if f & tcp_flags::ACK != 0 {
            rev.on_ack(tcp, ts, ann);
        }
        if seglen > 0 {
            // Sent and not yet acknowledged: from the peer's highest ACK (or the first
            // byte of this direction) to the highest byte sent.
            if let (Some(h), Some(una)) = (
                fwd.high,
                fwd.acked.or(fwd.ws.base_seq.map(|b| b.wrapping_add(1))),
            ) {
                let in_flight = h.wrapping_sub(una) as i32;
                ann.bytes_in_flight = if in_flight >= 0 { in_flight as i64 } else { -1 };
            }
        }
        ann.seq_rel = tcp.seq.wrapping_sub(fwd.ws.base_seq.unwrap_or(tcp.seq));
        ann.ack_rel = match rev.ws.base_seq {
            Some(b) if f & tcp_flags::ACK != 0 => tcp.ack.wrapping_sub(b),
            _ => 0,
        };
        ann.seglen = seglen;
        ann.window = fwd.ws.scaled_window(tcp);

        let m = &mut fwd.m;
        m.packets += 1;
        m.wire_bytes += s.wire_len as u64;
        m.truncated_packets += u64::from(s.truncated);
        if seglen > 0 {
            m.data_packets += 1;
            m.data_bytes += seglen as u64;
            m.add_segment_size(seglen);
            m.pushed_data_packets += u64::from(f & tcp_flags::PSH != 0);
            m.urgent_data_packets += u64::from(f & tcp_flags::URG != 0);
            if first_flight {
                m.first_flight_bytes += seglen as u64;
                m.first_flight_packets += 1;
            }
        } else if f & (tcp_flags::SYN | tcp_flags::FIN | tcp_flags::RST) == 0
            && f & tcp_flags::ACK != 0
        {
            m.pure_acks += 1;
        }
        if !ws.flags.is_empty() {
            m.count_flags(ws.flags, seglen, ws.dupack_num);
        }
        if tcp.sack_count > 0 {
            count_sack(m, tcp);
        }
        if f & tcp_flags::SYN == 0 {
            m.add_window(ann.window);
        }
        m.timestamps |= tcp.timestamps.is_some();
        if let Some(last) = fwd.last_ts {
            m.longest_idle_ns = m.longest_idle_ns.max(ts - last);
        }
        fwd.last_ts = Some(ts);
    }

    /// Direction `d` sent two SYN/ACKs with different initial sequence numbers and no
    /// data yet: the peer's ACK of `ack` says which one it accepted (it acknowledges
    /// that ISN + 1, RFC 9293 §3.5). If the earlier one, the space goes back to it
    /// (issue 18 class 3: `ndpi_KakaoTalk_talk`, two SYN/ACKs 0.7 ms apart, the data
    /// in the first one's space). Either way the question is settled.
    #[cold]
    fn follow_acked_isn(&mut self, d: usize, ack: u32) {
        let dir = &mut self.dirs[d];
        let (Some(replaced), Some(base)) = (dir.replaced_isn, dir.ws.base_seq) else {
            return;
        };
        if ack == replaced.wrapping_add(1) && ack != base.wrapping_add(1) {
            dir.ws.base_seq = Some(replaced);
            dir.restart_space();
            dir.ws.nextseq = ack;
            dir.ws.maxseqtobeacked = ack;
            dir.high = Some(ack);
        }
        if ack == replaced.wrapping_add(1) || ack == base.wrapping_add(1) {
            dir.replaced_isn = None;
        }
    }

    /// A SYN/ACK from direction `d` whose initial sequence number is not the one its
    /// sequence space started from, after that space carried data: a bogus or stray
    /// copy (a middlebox's, another connection's). Rebasing on it would make every
    /// later segment a "retransmission" in a space nobody uses. (A new connection on
    /// the same ports starts with a SYN, which `Analyzer` splits off first.)
    fn is_stray_syn_ack(&self, d: usize, tcp: &Tcp) -> bool {
        let dir = &self.dirs[d];
        tcp.flags & (tcp_flags::SYN | tcp_flags::ACK) == tcp_flags::SYN | tcp_flags::ACK
            && dir.ws.base_seq.is_some_and(|isn| {
                isn != tcp.seq && dir.high.is_some_and(|h| seq::gt(h, isn.wrapping_add(1)))
            })
    }

    /// The rare part of [`Conn::process`]: SYN, FIN and RST.
    #[cold]
    fn control_segment(&mut self, d: usize, tcp: &Tcp, ts: i64, ann: &mut Annotation) {
        let f = tcp.flags;
        let (fwd, rev) = split(&mut self.dirs, d);
        let syn_ack = f & (tcp_flags::SYN | tcp_flags::ACK);
        if syn_ack == tcp_flags::SYN && fwd.ws.base_seq == Some(tcp.seq) {
            // The SYN again: Wireshark forgets the SYN's own sequence step first.
            fwd.ws.nextseq = fwd.ws.maxseqtobeacked;
        }
        if syn_ack == tcp_flags::SYN | tcp_flags::ACK
            && fwd.ws.base_seq.is_some_and(|b| b != tcp.seq)
        {
            // A SYN/ACK with a new initial sequence number on a known connection,
            // before any data (`is_stray_syn_ack` keeps out the ones after): the
            // space starts again from it, and nothing of the old one is outstanding.
            // Which of the two the connection uses, the peer's ACK will say.
            fwd.replaced_isn = fwd.ws.base_seq;
            fwd.ws.base_seq = Some(tcp.seq);
            fwd.restart_space();
            ann.flags.insert(Flags::REUSED_PORTS);
        }
        let m = &mut fwd.m;
        if f & tcp_flags::SYN != 0 {
            fwd.syn_seen = true;
            if f & tcp_flags::ACK != 0 {
                self.synack_ts = Some(ts);
            } else {
                self.syn_ts = Some(ts);
            }
            m.syn += 1;
            m.mss = tcp.mss.or(m.mss);
            m.window_scale = tcp.window_scale.or(m.window_scale);
            m.sack_permitted |= tcp.sack_permitted;
        }
        if f & tcp_flags::FIN != 0 {
            m.fin += 1;
            fwd.fin = true;
        }
        if f & tcp_flags::RST != 0 {
            m.rst += 1;
            self.state = ConnState::Reset;
        } else if fwd.fin && rev.fin && self.state == ConnState::Open {
            self.state = ConnState::Closed;
        }
    }

    /// The summary of this connection; `t0` is the time of the file's first frame.
    pub(crate) fn summary(&self, t0: i64) -> ConnSummary {
        let duration_s = (self.last_ts - self.first_ts) as f64 * 1e-9;
        let mut a_to_b = self.dirs[0].m.clone();
        let mut b_to_a = self.dirs[1].m.clone();
        a_to_b.finish(duration_s);
        b_to_a.finish(duration_s);
        let data = if b_to_a.unique_bytes > a_to_b.unique_bytes {
            &b_to_a
        } else {
            &a_to_b
        };
        let min_data_rtt_ns = (data.unique_bytes > 0)
            .then(|| data.rtt.min_s.map(|s| (s * 1e9) as i64))
            .flatten();
        let capture_point = crate::vantage::capture_point(min_data_rtt_ns, self.handshake_rtt_ns);
        ConnSummary {
            id: self.id,
            first_frame: self.first_frame,
            a: self.a.to_string(),
            b: self.b.to_string(),
            start_s: (self.first_ts - t0) as f64 * 1e-9,
            end_s: (self.last_ts - t0) as f64 * 1e-9,
            duration_s,
            handshake_rtt_s: self.handshake_rtt_ns.map(|r| r as f64 * 1e-9),
            capture_point,
            syn_seen: self.dirs.iter().any(|d| d.syn_seen),
            complete: self.dirs.iter().all(|d| d.syn_seen && d.fin),
            state: self.state,
            reused_ports: self.reused_ports,
            stray_syn_acks: self.stray_syn_acks,
            a_to_b,
            b_to_a,
        }
    }
}

/// The sequence number just after this segment (SYN and FIN count one each).
fn seq_end(tcp: &Tcp) -> u32 {
    let mut end = tcp.seq.wrapping_add(tcp.payload_len);
    if tcp.flags & tcp_flags::SYN != 0 {
        end = end.wrapping_add(1);
    }
    if tcp.flags & tcp_flags::FIN != 0 {
        end = end.wrapping_add(1);
    }
    end
}

/// A retransmission that follows a silence of both directions this long is taken
/// for a timeout even when duplicate ACKs or SACKs came before it: no stack's
/// minimum RTO is shorter (FreeBSD's 30 ms is the shortest in common use).
const MIN_TIMEOUT_SILENCE_NS: i64 = 30_000_000;

/// The shortest tail-loss-probe timeout a stack arms (Linux's `TCP_TIMEOUT_MIN`, two
/// jiffies: 2 ms at HZ=1000).
const MIN_PROBE_TIMEOUT_NS: i64 = 2_000_000;

/// Counts a segment's SACK blocks, and whether it reports a D-SACK.
fn count_sack(m: &mut DirMetrics, tcp: &Tcp) {
    m.sack_packets += 1;
    m.max_sack_blocks = m.max_sack_blocks.max(tcp.sack_count);
    let first = tcp.sack[0];
    // RFC 2883 section 4: a first block below the cumulative ACK, or inside the
    // second block, reports a duplicate (D-SACK).
    let dsack = seq::le(first.1, tcp.ack)
        || (tcp.sack_count > 1
            && seq::ge(first.0, tcp.sack[1].0)
            && seq::le(first.1, tcp.sack[1].1));
    m.dsack_packets += u64::from(dsack);
}

/// Timeout, fast retransmit, SACK recovery or tail loss probe: what sent this
/// retransmission, and whether it is the retransmission timer's expiry itself (the
/// first segment sent after the silence, as opposed to the go-back-N segments that
/// follow it).
///
/// Fast retransmit (RFC 5681 section 3.2) follows duplicate ACKs for this very
/// sequence number; SACK recovery (RFC 6675) fills a hole below data the receiver
/// has SACKed; a NewReno partial-ACK retransmission (RFC 6582) continues a fast
/// recovery. A tail loss probe (RFC 8985 section 7.3) resends the highest segment sent
/// with nothing ACK-driven behind it, above the cumulative ACK, where a timeout would
/// have resent the first unacknowledged segment (RFC 6298 section 5.4), and at least
/// one smoothed RTT and 2 ms after it was first sent (`since_first_tx_ns`; the probe
/// timeout is two RTTs, RFC 8985 section 7.2). A copy of a segment first sent less
/// than the shortest minimum RTO before, with nothing ACK-driven behind it, is of no
/// kind (`RetransKind::None`): no timer sent it. A SYN, anything after a silence of
/// both directions longer than the RTO estimate, a segment resent again without SACK,
/// and anything else with no sign of ACK-driven recovery is a timeout (RFC 6298
/// section 5).
fn classify_retransmission(
    fwd: &Dir,
    rev: &Dir,
    tcp: &Tcp,
    ts: i64,
    ws: &wireshark::Verdict,
    timing: RetransTiming,
) -> (RetransKind, bool) {
    let since_first_tx_ns = timing.since_first_tx_ns;
    let last_seen = match (fwd.last_ts, rev.last_ts) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => ts,
    };
    let silence = ts - last_seen;
    let threshold = fwd
        .rtt
        .timeout_silence_ns()
        .unwrap_or(0)
        .max(MIN_TIMEOUT_SILENCE_NS);
    let in_recovery = fwd.recover.is_some_and(|r| seq::lt(tcp.seq, r));
    // Fast retransmit answers the duplicate ACK that completes the threshold (RFC 5681
    // section 3.2 step 2): a copy sent more than one and a half round trips after the
    // peer's last ACK (seen from the sender, or from the receiver, where the copy is a
    // round trip late) answers nothing but the timer, however many dupACKs came.
    let round_trip = timing.handshake_rtt_ns.unwrap_or(0).max(fwd.rtt.srtt_ns);
    let answers_last_ack = round_trip == 0
        || rev.last_ts.is_none_or(|t| ts - t <= round_trip.saturating_add(round_trip / 2));
    let dupack_driven = answers_last_ack
        && (ws.flags.contains(Flags::FAST_RETRANSMISSION)
            || (rev.ws.dupacknum >= 2 && rev.ws.lastack == tcp.seq));
    let sacked_above = fwd.peer_sack_high.is_some_and(|h| seq::gt(h, tcp.seq));
    let syn = tcp.flags & tcp_flags::SYN != 0;
    let ack_driven = dupack_driven || in_recovery || sacked_above;
    let tail = fwd.high.is_some_and(|h| seq::ge(seq_end(tcp), h));
    let above_head = fwd.acked.is_some_and(|a| seq::gt(tcp.seq, a));
    let waited = (since_first_tx_ns != NONE_I64).then_some(since_first_tx_ns);
    // The probe timeout is two smoothed RTTs (RFC 8985 section 7.2), and no stack
    // arms it for less than a couple of milliseconds (Linux: two jiffies): a copy sent
    // sooner, or within one RTT of the original, is no probe (a repacketisation, a FIN
    // repeated with a new ACK). Without the original captured, nothing is known.
    let probe_timing = waited.is_some_and(|w| w >= fwd.rtt.srtt_ns.max(MIN_PROBE_TIMEOUT_NS));
    // No retransmission timer runs out this soon after the original: a copy with
    // nothing ACK-driven behind it (a FIN repeated with a new ACK, a router's copy at a
    // second interface, a frame captured again shortened) is no timeout.
    let too_soon_for_a_timer = waited.is_some_and(|w| w < MIN_TIMEOUT_SILENCE_NS);
    // Without SACK, nothing but the timer resends a segment already resent whose hole
    // is still open: fast retransmit resends it once per recovery and a partial ACK
    // moves past it (RFC 6582 section 3.2 steps 3 and 5), so dupACKs that keep coming
    // say only that data above it arrived. After a timeout, go-back-N resends again what
    // fast recovery had resent; only the timed-out segment itself marks another expiry.
    let lost_retransmission = !syn
        && rev.m.sack_packets == 0
        && timing
            .since_last_retransmission
            .is_some_and(|w| w >= fwd.rtt.srtt_ns.max(MIN_TIMEOUT_SILENCE_NS))
        && (!(in_recovery && fwd.after_timeout) || fwd.timeout_seq == Some(tcp.seq));
    if !syn && !ack_driven && tail && above_head && probe_timing {
        (RetransKind::TailLossProbe, false)
    } else if too_soon_for_a_timer && (syn || !ack_driven) {
        (RetransKind::None, false)
    } else if syn || silence >= threshold || lost_retransmission {
        (RetransKind::Timeout, true)
    } else if dupack_driven && !in_recovery {
        (RetransKind::FastRetransmit, false)
    } else if in_recovery && fwd.after_timeout {
        (RetransKind::Timeout, false)
    } else if sacked_above {
        (RetransKind::Sack, false)
    } else if in_recovery {
        (RetransKind::FastRetransmit, false)
    } else {
        (RetransKind::Timeout, true)
    }
}

/// How long ago the segment a retransmission repeats was sent: first (`NONE_I64` when
/// the original was not captured), and last, when it had been resent before.
#[derive(Clone, Copy)]
struct RetransTiming {
    since_first_tx_ns: i64,
    since_last_retransmission: Option<i64>,
    /// The round trip of the handshake, at whatever point the capture was taken.
    handshake_rtt_ns: Option<i64>,
}

/// Mutable references to direction `d` and its reverse.
fn split(dirs: &mut [Dir; 2], d: usize) -> (&mut Dir, &mut Dir) {
    let (x, y) = dirs.split_at_mut(1);
    if d == 0 {
        (&mut x[0], &mut y[0])
    } else {
        (&mut y[0], &mut x[0])
    }
}
