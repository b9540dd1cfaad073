//! Gathering, in the analyzer's single pass, what the detectors need.
//!
//! [`Diagnoser`] is a [`PacketSink`]: the analyzer hands it every packet with its
//! annotation. It keeps, per connection and per direction of data, only compact state:
//! the timeout episodes, a histogram of RTT samples, the sizes of loss runs, periods of
//! zero window and of idleness, and a few evidence frames. Memory grows with the number
//! of connections and loss events, never with the packets.
//!
//! It knows nothing of the detectors: [`Diagnoser::finish`] (in the crate root) hands
//! what it gathered to [`detect`](crate::detect).

use airtrace_analysis::{Annotation, Flags, PacketSink, RetransKind, NONE_I64};
use airtrace_pcap::Record;
use airtrace_wire::Decoded;

use crate::air::AirState;
use crate::finding::MAX_EVIDENCE;
use crate::gaps::CaptureGaps;
use crate::histogram::LogHistogram;

/// A retransmission sent by the retransmission timer (the first segment after the
/// silence): one step of a backoff episode.
#[derive(Debug, Clone, Copy)]
pub struct Timeout {
    /// Its frame number.
    pub frame: u64,
    /// When it was sent (capture time, ns).
    pub t_ns: i64,
    /// 1 for the first timeout of the data, 2 for the second in a row, ...
    pub backoff: u8,
    /// Silence before it, ns.
    pub idle_gap_ns: i64,
    /// Bytes in flight after the last data segment sent before the silence.
    pub flight_before: i64,
    /// A SYN or SYN/ACK sent again: the connection was not yet open.
    pub handshake: bool,
    /// A bare FIN sent again: all data was through, the connection could not close.
    pub closing: bool,
    /// A SYN sent again after the peer answered the last one with a RST: the
    /// connection was refused, nothing was lost.
    pub refused: bool,
}

/// A loss recovery that started with a timeout, followed until the ACKs pass what was
/// sent before it (RFC 6582 `recover`).
#[derive(Debug, Clone, Copy)]
pub struct TimeoutRecovery {
    /// Highest sequence number sent before the timeout (relative), one past the end.
    pub recover: u32,
    /// When the timeout retransmission was sent, ns.
    pub t_ns: i64,
    /// Its frame.
    pub frame: u64,
    /// Duplicate ACKs seen during the recovery.
    pub dupacks: u32,
    /// The first duplicate ACK's frame.
    pub first_dupack_frame: u64,
    /// A fast retransmission was sent during the recovery.
    pub fast_retransmitted: bool,
}

/// A timeout retransmission awaiting the ACK that tells whether it was needed.
#[derive(Debug, Clone, Copy)]
struct SpuriousCheck {
    seq: u32,
    t_ns: i64,
    frame: u64,
    backoff: u8,
}

/// How a timeout retransmission was shown not to be needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpuriousProof {
    /// The capture had already seen the data (or the SYN/ACK: `handshake`)
    /// acknowledged: the ACK was lost or late between the capture point and the sender.
    AlreadyAcked {
        /// A repeated SYN/ACK, not data.
        handshake: bool,
    },
    /// The ACK past it came sooner after the retransmission than the smallest round
    /// trip seen until then: it answered the original (or, after the second timeout
    /// of the same data, possibly an earlier retransmission: Karn's ambiguity).
    AckTooSoon {
        /// The smallest RTT sample before the ACK, ns.
        min_rtt_ns: i64,
        /// 1 for the first timeout of the data, 2 for the second in a row, ...
        backoff: u8,
    },
    /// The receiver reported getting the data twice (D-SACK, RFC 2883).
    Dsack,
}

/// A timeout retransmission that was not needed.
#[derive(Debug, Clone, Copy)]
pub struct SpuriousTimeout {
    /// Frame and time (ns) of the retransmission.
    pub retx_frame: u64,
    /// See `retx_frame`.
    pub retx_ns: i64,
    /// Frame and time (ns) of the packet that shows it was not needed (the
    /// retransmission itself when the capture had seen the data acknowledged).
    pub proof_frame: u64,
    /// See `proof_frame`.
    pub proof_ns: i64,
    /// How.
    pub proof: SpuriousProof,
    /// It was an expiry of the timer (`backoff` 1, 2, ...), which `airtrace analyze`
    /// counts as an RTO (`timeouts`), not a go-back-N segment sent after one.
    pub expiry: bool,
}

impl SpuriousTimeout {
    fn already_acked(frame: u64, t_ns: i64, handshake: bool, expiry: bool) -> Self {
        SpuriousTimeout {
            retx_frame: frame,
            retx_ns: t_ns,
            proof_frame: frame,
            proof_ns: t_ns,
            proof: SpuriousProof::AlreadyAcked { handshake },
            expiry,
        }
    }
}

/// A retransmitted segment, in absolute sequence numbers.
#[derive(Debug, Clone, Copy)]
struct RecentRetx {
    start: u32,
    end: u32,
    frame: u64,
    t_ns: i64,
    /// What sent it, as the analyzer classified it.
    kind: RetransKind,
    /// An expiry of the timer (the analyzer's `backoff` 1, 2, ...).
    expiry: bool,
    /// `end`, relative to the ISN (as `pending_retx` holds it).
    end_rel: u32,
}

/// Retransmissions kept for D-SACK matching.
const RECENT_RETX: usize = 64;

/// The block a D-SACK reports, if the segment carries one (RFC 2883 §4: a first SACK
/// block below the cumulative ACK, or inside the second block).
fn dsack_block(tcp: &airtrace_wire::Tcp) -> Option<(u32, u32)> {
    let blocks = tcp.sack_blocks();
    let &first = blocks.first()?;
    let below_ack = !seq_after(first.1, tcp.ack);
    let inside_second = blocks
        .get(1)
        .is_some_and(|&(s, e)| !seq_after(s, first.0) && !seq_after(first.1, e));
    (below_ack || inside_second).then_some(first)
}

/// A time span with the frame that opened it.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Start, ns (capture time).
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// The frame at the start.
    pub frame: u64,
}

/// What was gathered about one direction of data of one connection.
#[derive(Debug, Clone, Default)]
pub struct DirState {
    /// Packets of this direction the capture holds (copies and MAC retries aside).
    pub packets: u64,
    /// Data segments sent (first transmissions).
    pub data_packets: u64,
    /// Payload bytes sent, retransmissions included.
    pub data_bytes: u64,
    /// Largest segment seen: the MSS in use.
    pub mss: u32,
    /// First and last data segment times, ns.
    pub first_data_ns: Option<i64>,
    /// See `first_data_ns`.
    pub last_data_ns: Option<i64>,
    max_sent_end: Option<u32>,
    /// Since when everything sent has been acknowledged (nothing in flight).
    all_acked_at: Option<i64>,
    /// Since when (and from which frame) nothing has been in flight while the
    /// receiver's window was below one segment.
    window_wait_from: Option<(i64, u64)>,
    /// Waits with nothing in flight and less than a segment of window: the sender
    /// waits for the window (sender-side silly-window avoidance, RFC 9293
    /// §3.8.6.2.1), not for its application.
    pub window_waits: Vec<Span>,
    /// Over twice the advertised window as read was in flight: without the handshake,
    /// a sign that the window is scaled (RFC 7323 §2.2) and its raw value too small.
    pub flight_above_window: bool,
    /// Rates at which the peer's ACKs returned this direction's data, bits/s: bytes
    /// newly acknowledged over the time since the previous advance (ACK dispersion:
    /// back-to-back segments leave the bottleneck one serialisation time apart).
    pub ack_rate: LogHistogram,
    last_advance_ns: Option<i64>,
    last_flight: i64,
    last_was_retx: bool,
    /// Retransmitted segments, all kinds.
    pub retransmissions: u64,
    /// Fast (and SACK) retransmissions.
    pub fast_retransmissions: u64,
    /// Timer-driven retransmissions (the first after each silence).
    pub timeouts: Vec<Timeout>,
    /// Segments lost in each loss event (see [`DirState::on_ack_advance`]).
    pub loss_runs: Vec<u32>,
    current_run: u32,
    /// Ends of retransmitted segments not yet acknowledged in the current loss event.
    pending_retx: std::collections::VecDeque<u32>,
    max_retx_end: Option<u32>,
    /// The peer's cumulative ACK of this direction's data.
    acked: Option<u32>,
    /// After a spurious timeout, data below this was not lost: its go-back-N
    /// retransmissions are not loss events.
    not_lost_below: Option<u32>,
    /// RTT samples of this direction's data (from the peer's ACKs, Karn's rule).
    pub rtt: LogHistogram,
    recovery: Option<TimeoutRecovery>,
    /// Timeout recoveries in which three or more duplicate ACKs came and no fast
    /// retransmission followed.
    pub suppressed: Vec<TimeoutRecovery>,
    spurious_check: Option<SpuriousCheck>,
    /// Timeout retransmissions whose data had arrived.
    pub spurious: Vec<SpuriousTimeout>,
    /// Recent retransmissions, to match the receiver's D-SACK blocks against.
    recent_retx: std::collections::VecDeque<RecentRetx>,
    /// Fast or SACK retransmissions the receiver reported receiving twice (D-SACK):
    /// (frame of the retransmission, frame of the D-SACK, its time ns).
    pub dsack_spurious: Vec<(u64, u64, i64)>,
    /// Data the receiver acknowledged that the capture never saw (see [`crate::gaps`]).
    pub capture_gaps: CaptureGaps,
    zero_window_open: Option<(i64, u64)>,
    /// Periods when the receiver advertised a zero window to this sender.
    pub zero_window: Vec<Span>,
    /// Segments that filled the receiver's window (Wireshark's window_full).
    pub window_full: u64,
    /// Data segments sent with less than one MSS of the advertised window left: the
    /// receiver's window, not cwnd or the application, was the limit.
    pub rwnd_limited: u64,
    /// The receive window the peer advertised last, bytes (scaled).
    pub advertised: Option<u32>,
    /// The largest receive window the peer advertised, bytes (scaled).
    pub max_advertised: u32,
    /// Their first frames.
    pub window_full_frames: Vec<u64>,
    /// Silences of the sender with nothing in flight (it had nothing to send).
    pub app_idle: Vec<Span>,
    /// The segment sent alone (nothing else in flight), awaiting its ACK: (time, end,
    /// frame).
    lone: Option<(i64, u32, u64)>,
    /// The last lone segment's wait for its ACK (a pure ACK): (the wait, its frame, the
    /// ACK's time), counted only if the next data follows the ACK as if released by
    /// it (see `LONE_RELEASE_NS`).
    lone_answered: Option<(i64, u64, i64)>,
    /// How long segments sent alone waited for their ACK while the sender had more to
    /// send: a receiver that delays its ACK for a second segment that never comes
    /// stalls such a sender.
    pub lone_ack_delay: LogHistogram,
    /// Lone segments whose ACK took [`LONE_SLOW_NS`] or more: (the wait, ns; the
    /// segment's frame), the first [`LONE_SLOW_KEPT`].
    pub lone_slow: Vec<(i64, u64)>,
    /// Recent data segments: (end sequence number, time sent), to know when the data an
    /// ACK covers left.
    sent_ring: std::collections::VecDeque<(u32, i64)>,
    /// The previous ACK advance: (time it arrived, time the data it covered was sent).
    last_advance: Option<(i64, i64)>,
    /// ACK advances timed against the data they cover.
    pub ack_pairs: u64,
    /// Those that arrived at least [`ACK_COMPRESSION_FACTOR`] times closer together than
    /// the data they acknowledge had left: the ACK clock squeezed on the way back.
    pub compressed_acks: u64,
    /// Their first frames.
    pub compressed_ack_frames: Vec<u64>,
    /// SYNs sent again (handshake timeouts), and when the last SYN went out.
    pub syn_retries: u32,
    last_syn_ns: Option<i64>,
    /// SYN (or SYN/ACK) segments sent, the first included.
    syns_sent: u32,
    /// The peer answered this direction's last SYN with a RST.
    refused_since_syn: bool,
    /// Repairs the peer's duplicate ACKs asked for: from the first duplicate ACK of a run
    /// of three or more (a hole fast retransmit answers, RFC 5681 §3.2) to the ACK that
    /// passed it; what a capture that lacks this direction's data knows of its losses
    /// (see [`crate::unseen`]).
    pub dupack_repairs: Vec<Span>,
    /// The run of duplicate ACKs in progress: (its first one's time and frame, count).
    dupack_run: Option<(i64, u64, u32)>,
    /// Retransmissions the analyzer timed as timeouts that came sooner than any RTO can
    /// (see [`DirState::sooner_than_any_rto`]) in the current chain of timeouts of the
    /// same data.
    too_soon_in_chain: u8,
    /// When this direction last sent a FIN: a FIN can be resent only after one was sent.
    last_fin_ns: Option<i64>,
    /// The ACK field of this direction's last segment (with ACK set).
    last_ack_field: Option<u32>,
}

/// What was gathered about one connection.
#[derive(Debug, Clone, Default)]
pub struct ConnState {
    /// First and last packet times, ns.
    pub first_ns: i64,
    /// See `first_ns`.
    pub last_ns: i64,
    /// Per direction of data: 0 is `a_to_b`.
    pub dirs: [DirState; 2],
    /// Frames captured twice, per direction (0 is `a_to_b`).
    pub capture_duplicates: [u64; 2],
    /// Their first frames.
    pub capture_duplicate_frames: [Vec<u64>; 2],
    /// Its 802.11 frames: collisions, corrupted frames.
    pub air: AirState,
    /// 802.11 MAC retries, per direction (0 is `a_to_b`).
    pub mac_retries: [u64; 2],
    /// Their first frames.
    pub mac_retry_frames: [Vec<u64>; 2],
    /// Packets the capture file says it dropped (its interface statistics), set on the
    /// connections whose `capture_drops` finding should mention them.
    pub file_drops: Option<u64>,
    /// The part of the capture it began in (see [`Diagnoser::time_base`]).
    pub part: usize,
    /// The last SYN (without ACK) and whether a SYN/ACK followed it.
    syn_ns: Option<i64>,
    syn_ack_seen: bool,
    /// From the SYN to the ACK of the SYN/ACK: a full round trip, wherever the capture sat.
    pub handshake_rtt_ns: Option<i64>,
}

/// The sink that gathers what the detectors need (see the [module documentation](self)).
#[derive(Debug, Default)]
pub struct Diagnoser {
    /// Time of the first packet of the capture, ns.
    pub start_ns: Option<i64>,
    /// Packets the capture itself dropped, as the file says (pcapng interface
    /// statistics); `None` when it does not say.
    pub file_drops: Option<u64>,
    /// Per connection, by index.
    pub conns: Vec<ConnState>,
    /// Parts of the capture, split at silences (or clock jumps) longer than
    /// [`CAPTURE_PART_GAP_NS`]: (time of the first packet, packets).
    pub parts: Vec<(i64, u64)>,
    last_t: i64,
}

/// A silence (or a jump of the clock) longer than a day between two packets starts a
/// new part of the capture: captures joined together, or a clock that was reset.
pub const CAPTURE_PART_GAP_NS: i64 = 86_400_000_000_000;

fn push_evidence(frames: &mut Vec<u64>, frame: u64) {
    if frames.len() < MAX_EVIDENCE {
        frames.push(frame);
    }
}

/// The path's round trip, as well as the capture shows it: the handshake's (SYN to ACK, a
/// full round trip from anywhere, but long when the server is slow to answer), or the
/// larger of the two directions' smallest RTT samples (at a capture beside one end, that
/// end's data sees the full round trip and the other's only the turnaround), whichever is
/// shorter.
fn round_trip(handshake_rtt: Option<i64>, me: &DirState, peer: &DirState) -> Option<i64> {
    match (handshake_rtt, me.rtt.min().max(peer.rtt.min())) {
        (Some(h), Some(r)) => Some(h.min(r)),
        (h, r) => h.or(r),
    }
}

/// The silence before a retransmission the analyzer timed (0 when it timed none), ns.
fn idle_gap_ns(a: &Annotation) -> i64 {
    if a.idle_gap_ns == NONE_I64 {
        0
    } else {
        a.idle_gap_ns
    }
}

/// `a` is after `b` in sequence space (RFC 1982 arithmetic).
fn seq_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// A lone segment whose ACK took this long may have met a delayed ACK: kept as
/// evidence for `delayed_ack_stall`, which decides against the path's round trip.
pub const LONE_SLOW_NS: i64 = 30_000_000;
/// Such segments kept per direction.
const LONE_SLOW_KEPT: usize = 256;
/// Data that follows the ACK of a lone segment within this (plus, at a capture away
/// from the sender, the round trip back to it) was waiting for that ACK.
const LONE_RELEASE_NS: i64 = 10_000_000;

/// Jitter allowed on the round trip when telling data an ACK released from a timer's
/// retransmission (at most a quarter of the round trip).
const ACK_RELEASE_JITTER_NS: i64 = 10_000_000;
/// No stack's timer resends a SYN or SYN/ACK this soon: the initial RTO is 1 s (RFC 6298
/// §2.1; 3 s in older stacks), and no common stack's RTO is below Linux's 200 ms
/// `TCP_RTO_MIN`. A handshake segment repeated sooner is a copy (a router's at its second
/// interface, a tunnel's) or an application's retry, not a handshake timeout.
const MIN_HANDSHAKE_RTO_NS: i64 = 200_000_000;

/// Segments remembered for timing ACKs against the data they cover.
const SENT_RING: usize = 4096;
/// An ACK is compressed when it follows the previous one this many times faster than
/// the data it covers followed the previous data.
pub const ACK_COMPRESSION_FACTOR: i64 = 4;

/// Silences of a sender with nothing outstanding longer than this count as the
/// application having nothing to send.
pub const APP_IDLE_NS: i64 = 200_000_000;

impl DirState {
    /// The receiver reported receiving `start..end` twice (D-SACK, RFC 2883): the
    /// retransmission of it was not needed (RFC 3708 §3). A fast or SACK
    /// retransmission's counts as spurious, a timeout's as a spurious timeout (unless
    /// already found so); a probe's is no loss; a copy of no kind's says nothing more.
    fn on_dsack(&mut self, start: u32, end: u32, frame: u64, t_ns: i64) {
        let covered = |r: &RecentRetx| {
            !seq_after(start, r.start) && !seq_after(r.end, end) && r.end != r.start
        };
        let Some(i) = self.recent_retx.iter().rposition(covered) else {
            return;
        };
        let Some(r) = self.recent_retx.remove(i) else {
            return;
        };
        if r.kind == RetransKind::TailLossProbe {
            // The probe found its original delivered: no loss, and a sender that
            // probes does not reduce its window for it (RFC 8985 section 7.4).
            if let Some(i) = self.pending_retx.iter().position(|&e| e == r.end_rel) {
                self.pending_retx.remove(i);
            } else if self.current_run > 0 {
                self.current_run -= 1;
            } else if let Some(last) = self.loss_runs.last_mut() {
                // The run it ended was counted already (the D-SACK follows the ACK
                // that resolved it): the latest run.
                *last -= 1;
                if *last == 0 {
                    self.loss_runs.pop();
                }
            }
        } else if matches!(r.kind, RetransKind::FastRetransmit | RetransKind::Sack) {
            self.dsack_spurious.push((r.frame, frame, t_ns));
        } else if r.kind == RetransKind::Timeout
            && !self.spurious.iter().any(|s| s.retx_frame == r.frame)
        {
            self.spurious.push(SpuriousTimeout {
                retx_frame: r.frame,
                retx_ns: r.t_ns,
                proof_frame: frame,
                proof_ns: t_ns,
                proof: SpuriousProof::Dsack,
                expiry: r.expiry,
            });
        }
    }

    /// A retransmission at `t_ns` that the analyzer timed as the `a.backoff`-th timeout
    /// came sooner than any RTO could. RFC 6298 keeps the RTO above the smoothed RTT
    /// (§2) and restarts the timer whenever an ACK acknowledges new data (§5.3), so a
    /// retransmission less than half the `round_trip` after the direction's last data or
    /// its last ACK advance, or seen within one round trip of that ACK advance (what the
    /// ACK released, seen beside the receiver: suri_tls-subjectaltname conns 4 and 57,
    /// 18 ms after the ACK on an 18 ms path), was no retransmission timer: a repacketised copy (alexa conn 31
    /// frame 647, 49 µs after its bytes went), a tail-loss probe, RACK, or a partial ACK's
    /// retransmission in fast recovery (an emulated Linux run: 55 µs after the ACK that
    /// advanced to the hole). The later timeouts of the same chain number from it.
    fn sooner_than_any_rto(
        &mut self,
        a: &Annotation,
        t_ns: i64,
        round_trip: Option<i64>,
        handshake_rtt: Option<i64>,
    ) -> bool {
        if a.backoff == 1 {
            self.too_soon_in_chain = 0;
        }
        let gap = idle_gap_ns(a);
        let quiet = self.last_advance_ns.map_or(gap, |at| gap.min(t_ns - at));
        // Beside the receiver, data an ACK released passes the capture point one round
        // trip after the ACK did (the ACK's way to the sender and the data's way back),
        // where a timer restarted by that ACK (RFC 6298 §5.3) would add its RTO, at
        // least 200 ms in every common stack. Elsewhere the ACK's way to the sender is
        // unknown (and Linux re-arms the timer from the head segment's send time after a
        // probe), so only the half round trip decides.
        let at_receiver = airtrace_analysis::capture_point(self.rtt.min(), handshake_rtt)
            == Some(airtrace_analysis::CapturePoint::Receiver);
        // (An ACK that already covers the segment released nothing: the resend crossed
        // it, as a timer's does: ndpi_alexa-app conn 9's FIN, 0.97 s after the first.)
        let after_advance = self.last_advance_ns.map(|at| t_ns - at);
        let covered = self.acked.is_some_and(|ack| seq_after(ack, a.seq_rel));
        let released_by_ack = |r: i64| {
            at_receiver
                && !covered
                && after_advance.is_some_and(|w| w < r + (r / 4).min(ACK_RELEASE_JITTER_NS))
        };
        let too_soon = round_trip.is_some_and(|r| quiet * 2 < r || released_by_ack(r));
        if too_soon {
            self.too_soon_in_chain = self.too_soon_in_chain.saturating_add(1);
        }
        too_soon
    }

    /// The receiver's window may have changed at `t_ns` (`frame`): opens or closes a
    /// wait for the window (see `window_waits`).
    fn note_small_window(&mut self, t_ns: i64, frame: u64) {
        let Some(window) = self.advertised else {
            return;
        };
        if window < self.mss && self.all_acked_at.is_some() {
            self.window_wait_from.get_or_insert((t_ns, frame));
        } else {
            self.end_window_wait(t_ns);
        }
    }

    fn end_window_wait(&mut self, t_ns: i64) {
        if let Some((start_ns, frame)) = self.window_wait_from.take() {
            self.window_waits.push(Span {
                start_ns,
                end_ns: t_ns,
                frame,
            });
        }
    }

    /// An ACK advancing to `ack` arrived at `t_ns`: compares its spacing from the
    /// previous advance with the spacing at which the data it covers was sent.
    fn time_ack(&mut self, ack: u32, t_ns: i64, frame: u64) {
        let i = self
            .sent_ring
            .partition_point(|&(end, _)| seq_after(ack, end));
        let Some(&(end, sent)) = self.sent_ring.get(i) else {
            return;
        };
        if end != ack {
            return;
        }
        if let Some((prev_ack_t, prev_sent)) = self.last_advance {
            let (ack_gap, data_gap) = (t_ns - prev_ack_t, sent - prev_sent);
            if data_gap > 0 {
                self.ack_pairs += 1;
                if ack_gap * ACK_COMPRESSION_FACTOR <= data_gap {
                    self.compressed_acks += 1;
                    push_evidence(&mut self.compressed_ack_frames, frame);
                }
            }
        }
        self.last_advance = Some((t_ns, sent));
    }

    /// The peer's cumulative ACK reached `ack`: count the retransmitted segments it
    /// shows were lost. An ACK that stops at or below the highest retransmitted byte
    /// says every retransmission it covers filled a hole (the receiver had nothing
    /// beyond); one that jumps past it says only the first hole was real (the receiver
    /// already had what followed, and go-back-N resent it needlessly). Counting
    /// retransmissions alone would make one loss followed by go-back-N look like a
    /// burst.
    fn on_ack_advance(&mut self, ack: u32, t_ns: i64, with_data: bool) {
        if self.acked.is_some_and(|a| !seq_after(ack, a)) {
            return;
        }
        if let (Some(prev), Some(at)) = (self.acked, self.last_advance_ns.replace(t_ns)) {
            if t_ns > at {
                // In i128: a bogus ACK can jump 4 GB (3.4e10 bits; times 1e9 is past i64).
                let bits = i128::from(ack.wrapping_sub(prev)) * 8;
                let rate = bits * 1_000_000_000 / i128::from(t_ns - at);
                self.ack_rate.add(i64::try_from(rate).unwrap_or(i64::MAX));
            }
        }
        self.acked = Some(ack);
        if self.max_sent_end.is_some_and(|m| !seq_after(m, ack)) {
            self.all_acked_at.get_or_insert(t_ns);
        }
        if let Some((sent, end, frame)) = self.lone.take() {
            // An answer that carries data is the peer's reply, not a delayed ACK: the
            // wait was the peer's application (a request and its response).
            if !seq_after(end, ack) && !with_data {
                self.lone_answered = Some((t_ns - sent, frame, t_ns));
            }
        }
        let resolved = self
            .pending_retx
            .iter()
            .take_while(|&&end| !seq_after(end, ack))
            .count();
        if resolved == 0 {
            return;
        }
        if self.max_retx_end.is_some_and(|m| seq_after(ack, m)) {
            self.current_run += 1;
            self.pending_retx.clear();
        } else {
            self.current_run += resolved as u32;
            self.pending_retx.drain(..resolved);
        }
    }
}

impl PacketSink for Diagnoser {
    fn capture_end(&mut self, reader: &airtrace_pcap::CaptureReader) {
        self.file_drops = reader.drops();
    }

    fn packet(&mut self, record: &Record<'_>, decoded: &Decoded, a: &Annotation) {
        let t = a.ts_ns;
        self.start_ns.get_or_insert(t);
        self.note_part(t);
        if a.conn == u32::MAX {
            return;
        }
        let i = a.conn as usize;
        if self.conns.len() <= i {
            let part = self.parts.len() - 1;
            self.conns.resize_with(i + 1, || ConnState {
                first_ns: t,
                part,
                ..ConnState::default()
            });
        }
        let c = &mut self.conns[i];
        c.last_ns = t;
        let frame = record.frame;
        let d = usize::from(a.dir & 1);
        c.air.frame(t, frame, record.orig_len, d, decoded);
        if a.flags.contains(Flags::CAPTURE_DUPLICATE) {
            c.capture_duplicates[d] += 1;
            push_evidence(&mut c.capture_duplicate_frames[d], frame);
            return;
        }
        if a.flags.contains(Flags::MAC_RETRY) {
            c.mac_retries[d] += 1;
            push_evidence(&mut c.mac_retry_frames[d], frame);
            return;
        }
        let tcp = decoded.tcp();
        if let Some(h) = tcp {
            c.note_handshake(h.flags, t);
        }
        let handshake_rtt = c.handshake_rtt_ns;
        let (me, peer) = {
            let [x, y] = &mut c.dirs;
            if d == 0 {
                (x, y)
            } else {
                (y, x)
            }
        };
        me.packets += 1;

        // This packet as an ACK of the peer's data. Samples from the ACK of a segment
        // sent alone are left out of the RTT: a receiver delays that ACK (up to 200 ms
        // or more), which says nothing about the path; they count as ACK delays.
        let lone_acked = peer.lone.is_some_and(|(_, end, _)| end == a.ack_rel);
        if a.ack_rtt_ns != NONE_I64 && a.ack_rtt_ns >= 0 && !lone_acked {
            peer.rtt.add(a.ack_rtt_ns);
        }
        if a.flags.contains(Flags::DUPLICATE_ACK) {
            let run = peer.dupack_run.get_or_insert((t, frame, 0));
            run.2 += 1;
            if let Some(r) = peer.recovery.as_mut() {
                if r.dupacks == 0 {
                    r.first_dupack_frame = frame;
                }
                r.dupacks += 1;
            }
        }
        let is_ack = tcp.is_some_and(|h| h.flags & 0x10 != 0);
        if let Some((start, end)) = tcp.and_then(dsack_block) {
            peer.on_dsack(start, end, frame, t);
        }
        if is_ack {
            let ack = a.ack_rel;
            if let Some(sc) = peer.spurious_check {
                if seq_after(ack, sc.seq) {
                    // The first ACK past the retransmitted data: did it answer the
                    // retransmission or the original? An ACK that comes sooner after
                    // the retransmission than any round trip seen cannot be its own:
                    // the original had arrived. (Timestamp echoes would be sharper,
                    // RFC 3522, but Linux receivers echo the latest out-of-order
                    // segment's timestamp when a hole fills, which fools that test.)
                    // Beside the receiver every ACK leaves at once, the retransmission's
                    // own as the original's: there its timing proves nothing
                    // (libtrace_vlan frame 267, suri_syn_retransmit_with_ts frame 240,
                    // zeek_reassembly frame 40: each "answered 0 ms later").
                    // (The quickest data-to-ACK time: RTT samples, or lone segments'
                    // ACK delays, which are kept apart from them.)
                    let quickest = match (peer.rtt.min(), peer.lone_ack_delay.min()) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    let beside_receiver = airtrace_analysis::capture_point(quickest, handshake_rtt)
                        == Some(airtrace_analysis::CapturePoint::Receiver);
                    let too_soon = peer
                        .rtt
                        .min()
                        .filter(|&min| !beside_receiver && (t - sc.t_ns) * 10 < min * 8);
                    if let Some(min_rtt_ns) = too_soon {
                        peer.spurious.push(SpuriousTimeout {
                            retx_frame: sc.frame,
                            retx_ns: sc.t_ns,
                            proof_frame: frame,
                            proof_ns: t,
                            proof: SpuriousProof::AckTooSoon {
                                min_rtt_ns,
                                backoff: sc.backoff,
                            },
                            expiry: true,
                        });
                        // Nothing was lost: the retransmissions of this episode are
                        // not loss events.
                        peer.pending_retx.clear();
                        peer.current_run = 0;
                        peer.max_retx_end = None;
                        peer.not_lost_below = peer.max_sent_end;
                    }
                    peer.spurious_check = None;
                }
            }
            if peer.acked.is_none_or(|prev| seq_after(ack, prev)) {
                peer.time_ack(ack, t, frame);
                if let Some((start_ns, first, count)) = peer.dupack_run.take() {
                    if count >= 3 {
                        peer.dupack_repairs.push(Span {
                            start_ns,
                            end_ns: t,
                            frame: first,
                        });
                    }
                }
            }
            peer.on_ack_advance(ack, t, a.seglen > 0);
            if let Some(r) = peer.recovery {
                if !seq_after(r.recover, ack) {
                    if r.dupacks >= 3 && !r.fast_retransmitted {
                        peer.suppressed.push(r);
                    }
                    peer.recovery = None;
                }
            }
        }
        // A RST's window field means nothing (RFC 9293 §3.10.7: the connection is
        // gone); neither does that of a segment without ACK.
        let rst = tcp.is_some_and(|h| h.flags & 0x04 != 0);
        if is_ack && !rst {
            peer.advertised = Some(a.window);
            peer.max_advertised = peer.max_advertised.max(a.window);
        }
        peer.note_small_window(t, frame);
        if a.flags.contains(Flags::ZERO_WINDOW) {
            // The sender stops: ACKs on either side of the stall are not one ACK clock.
            peer.last_advance = None;
            peer.zero_window_open.get_or_insert((t, frame));
        } else if a.window > 0 {
            if let Some((start_ns, open_frame)) = peer.zero_window_open.take() {
                peer.zero_window.push(Span {
                    start_ns,
                    end_ns: t,
                    frame: open_frame,
                });
            }
        }

        // A repeated SYN (a handshake timeout): the connection could not even start,
        // even when the capture saw the SYN/ACK (lost beyond it, the client still
        // waited). A repeated SYN/ACK is one too, unless it answers one of the peer's
        // repeated SYNs (fewer SYN/ACKs than SYNs so far: the peer's timeout, already
        // counted), or the capture saw it acknowledged (the client went on; only the
        // server's timer fired).
        let syn = tcp.is_some_and(|h| h.flags & 0x02 != 0);
        let answers_a_syn = is_ack && me.syns_sent < peer.syns_sent;
        let syn_acked = is_ack && me.acked.is_some_and(|ack| seq_after(ack, a.seq_rel));
        let since_last_syn = me.last_syn_ns.map(|l| t - l);
        let timer_could_send = a.retrans_kind == RetransKind::Timeout
            && since_last_syn.is_none_or(|w| w >= MIN_HANDSHAKE_RTO_NS);
        let repeated_syn =
            syn && a.flags.contains(Flags::RETRANSMISSION) && !answers_a_syn && timer_could_send;
        if repeated_syn && syn_acked {
            me.spurious.push(SpuriousTimeout::already_acked(
                frame,
                t,
                true,
                a.backoff >= 1,
            ));
        } else if repeated_syn {
            me.syn_retries += 1;
            let gap = since_last_syn.unwrap_or(0);
            me.timeouts.push(Timeout {
                frame,
                t_ns: t,
                backoff: me.syn_retries.min(u32::from(u8::MAX)) as u8,
                idle_gap_ns: gap,
                flight_before: 0,
                handshake: true,
                closing: false,
                refused: me.refused_since_syn,
            });
        }
        if syn {
            me.last_syn_ns = Some(t);
            me.syns_sent += 1;
            me.refused_since_syn = false;
        }
        // A RST answering the peer's SYN (before any SYN/ACK of ours): refused.
        if tcp.is_some_and(|h| h.flags & 0x04 != 0) && peer.syns_sent > 0 && me.syns_sent == 0 {
            peer.refused_since_syn = true;
        }

        // What the capture saw of the sequence space (capture drops, see gaps.rs).
        if is_ack {
            // A sender sends at most a window per round trip: an ACK further beyond what
            // was captured than that allows since the last data seen is a bogus one (a
            // RST's, a middlebox's), not data the capture missed (issue 18 class 6: "872
            // MB not captured" of a 30 kB file). Twice the largest window advertised (for
            // the window updates a capture may have missed too) per round trip, plus
            // two; without a round trip known, no bound.
            let window = u64::from(peer.max_advertised.max(u32::from(u16::MAX)));
            let since_data = peer.last_data_ns.map_or(0, |d| (t - d).max(0));
            let reach = round_trip(handshake_rtt, me, peer)
                .filter(|&r| r > 0)
                .map_or(u32::MAX, |r| {
                    let rounds = (since_data / r) as u64 + 2;
                    (2 * window).saturating_mul(rounds).min(u64::from(u32::MAX)) as u32
                });
            peer.capture_gaps.ack(a.ack_rel, frame, t, peer.mss, reach);
        }
        let syn_fin = tcp.map_or(0, |h| {
            u32::from(h.flags & 0x02 != 0) + u32::from(h.flags & 0x01 != 0)
        });
        // Bytes the capture sees for the first time although later ones went by: their
        // original was lost (or missed) before the capture point.
        let first_seen_late = me
            .capture_gaps
            .never_seen(a.seq_rel, a.seq_rel.wrapping_add(a.seglen));
        if a.seglen > 0 || syn_fin > 0 {
            let end = a.seq_rel.wrapping_add(a.seglen + syn_fin);
            me.capture_gaps.segment(a.seq_rel, end, frame, t);
        }

        // A bare FIN the timer sent again: the close waited (issue 18 class 8: a FIN
        // resent five times with backoff went unreported). Only after a FIN was sent
        // (the first FIN is no resend, whatever sequence number it reuses: ndpi_webex,
        // zeek_fin_retransmission), and not when its ACK field moved since this side's
        // last segment: then it acknowledges the peer's new data, with the FIN set again
        // as BSD stacks do on every segment while their FIN is unacknowledged
        // (zeek_reassembly), or the SYN/ACK it waited for; the timer has no part in it.
        let fin = tcp.is_some_and(|h| h.flags & 0x01 != 0);
        let ack_field = is_ack.then_some(a.ack_rel);
        let ack_moved = ack_field.is_some_and(|ack| me.last_ack_field.is_none_or(|l| l != ack));
        let fin_sent_before = me.last_fin_ns.is_some();
        if fin {
            me.last_fin_ns = Some(t);
        }
        if ack_field.is_some() {
            me.last_ack_field = ack_field;
        }
        if fin
            && fin_sent_before
            && !ack_moved
            && a.seglen == 0
            && a.retrans_kind == RetransKind::Timeout
            && a.backoff >= 1
            && !a.flags.contains(Flags::SPURIOUS_RETRANSMISSION)
            && !me.sooner_than_any_rto(a, t, round_trip(handshake_rtt, me, peer), handshake_rtt)
        {
            me.timeouts.push(Timeout {
                frame,
                t_ns: t,
                backoff: a.backoff,
                idle_gap_ns: idle_gap_ns(a),
                flight_before: 0,
                handshake: false,
                closing: true,
                refused: false,
            });
        }

        // This packet as data.
        if a.seglen == 0 {
            // A pure ACK's sequence number is the sender's next byte: past the data
            // captured, it shows segments sent that the capture never saw, which were in
            // flight all the same (suri_tls-subjectaltname conn 4 frame 92: sequence
            // 12001, four segments past the last one captured).
            if let (Some(high), Some(acked)) = (me.max_sent_end, me.acked) {
                if syn_fin == 0 && seq_after(a.seq_rel, high) {
                    let flight = i64::from(a.seq_rel.wrapping_sub(acked));
                    me.last_flight = me.last_flight.max(flight);
                }
            }
            return;
        }
        // The peer's next data answers this, not the ACK of its lone segment: a
        // request and its response, not a sender released by a late ACK (ndpi_reddit
        // conn 21: each lone segment's pure ACK, then the server's data, then the
        // client's next segment 10 ms later).
        peer.lone_answered = None;
        if a.flags.contains(Flags::WINDOW_FULL) {
            me.window_full += 1;
            push_evidence(&mut me.window_full_frames, frame);
        }
        if let Some(w) = me.advertised {
            // (Twice the window: a receiver may shrink its window below what was
            // already sent; a scale of 2 or more is the usual case.)
            me.flight_above_window |= w > 0 && a.bytes_in_flight > 2 * i64::from(w);
            if a.bytes_in_flight >= 0
                && a.bytes_in_flight + i64::from(me.mss.max(a.seglen)) > i64::from(w)
            {
                me.rwnd_limited += 1;
                if me.window_full_frames.len() < MAX_EVIDENCE
                    && !a.flags.contains(Flags::WINDOW_FULL)
                {
                    me.window_full_frames.push(frame);
                }
            }
        }
        let retx = a.flags.contains(Flags::RETRANSMISSION);
        if let (true, Some(h)) = (retx, tcp) {
            if me.recent_retx.len() == RECENT_RETX {
                me.recent_retx.pop_front();
            }
            me.recent_retx.push_back(RecentRetx {
                start: h.seq,
                end: h.seq.wrapping_add(a.seglen),
                frame,
                t_ns: t,
                kind: a.retrans_kind,
                expiry: a.backoff >= 1,
                end_rel: a.seq_rel.wrapping_add(a.seglen),
            });
        }
        if retx {
            me.retransmissions += 1;
            let already_acked = a.flags.contains(Flags::SPURIOUS_RETRANSMISSION);
            match a.retrans_kind {
                // Data the capture had already seen acknowledged: the timer fired for
                // nothing (the ACK was lost or late on its way to the sender).
                RetransKind::Timeout if a.backoff >= 1 && already_acked => {
                    me.spurious
                        .push(SpuriousTimeout::already_acked(frame, t, false, true));
                }
                RetransKind::Timeout
                    if a.backoff >= 1
                        && !me.sooner_than_any_rto(
                            a,
                            t,
                            round_trip(handshake_rtt, me, peer),
                            handshake_rtt,
                        ) =>
                {
                    me.timeouts.push(Timeout {
                        frame,
                        t_ns: t,
                        backoff: (a.backoff - me.too_soon_in_chain.min(a.backoff - 1)),
                        idle_gap_ns: idle_gap_ns(a),
                        flight_before: me.last_flight,
                        handshake: false,
                        closing: false,
                        refused: false,
                    });
                    if me.recovery.is_none() {
                        me.recovery = Some(TimeoutRecovery {
                            recover: me.max_sent_end.unwrap_or(a.seq_rel),
                            t_ns: t,
                            frame,
                            dupacks: 0,
                            first_dupack_frame: 0,
                            fast_retransmitted: false,
                        });
                    }
                    // Whether its ACK answers the original can be asked only if the
                    // original passed the capture point: filling a hole, it was needed
                    // (and the receiver ACKs a filled hole at once, RFC 5681 §4.2,
                    // sooner than its usual, perhaps delayed, ACKs).
                    me.spurious_check = (!first_seen_late).then_some(SpuriousCheck {
                        seq: a.seq_rel,
                        t_ns: t,
                        frame,
                        backoff: a.backoff,
                    });
                }
                RetransKind::FastRetransmit | RetransKind::Sack => {
                    me.fast_retransmissions += 1;
                    if let Some(r) = me.recovery.as_mut() {
                        r.fast_retransmitted = true;
                    }
                }
                _ => {}
            }
            let end = a.seq_rel.wrapping_add(a.seglen);
            let known_delivered = me.not_lost_below.is_some_and(|m| !seq_after(end, m));
            if !a.flags.contains(Flags::SPURIOUS_RETRANSMISSION)
                && !known_delivered
                && !me.pending_retx.contains(&end)
            {
                me.pending_retx.push_back(end);
                if me.max_retx_end.is_none_or(|m| seq_after(end, m)) {
                    me.max_retx_end = Some(end);
                }
            }
        } else {
            me.data_packets += 1;
            if me.pending_retx.is_empty() && me.current_run > 0 {
                me.loss_runs.push(me.current_run);
                me.current_run = 0;
                me.max_retx_end = None;
            }
            me.end_window_wait(t);
            if let Some(idle_from) = me.all_acked_at.take() {
                if t - idle_from >= APP_IDLE_NS {
                    me.app_idle.push(Span {
                        start_ns: idle_from,
                        end_ns: t,
                        frame,
                    });
                }
            }
            let end = a.seq_rel.wrapping_add(a.seglen);
            if me.max_sent_end.is_none_or(|m| seq_after(end, m)) {
                me.max_sent_end = Some(end);
            }
            if let Some((wait, lone_frame, ack_ns)) = me.lone_answered.take() {
                // The sender waited for that ACK only if this data followed it as if
                // released by it (issue 18 class 7: request/response and
                // application-paced senders were said to stall on delayed ACKs).
                let back = round_trip(handshake_rtt, me, peer).unwrap_or(0);
                if t - ack_ns <= back + LONE_RELEASE_NS {
                    me.lone_ack_delay.add(wait);
                    if wait >= LONE_SLOW_NS && me.lone_slow.len() < LONE_SLOW_KEPT {
                        me.lone_slow.push((wait, lone_frame));
                    }
                }
            }
            me.lone = (a.bytes_in_flight == i64::from(a.seglen)).then_some((t, end, frame));
            // A zero-window probe leaves when the persist timer fires, not when an ACK
            // lets it: its time says nothing of the ACK clock.
            if !a.flags.contains(Flags::ZERO_WINDOW_PROBE) {
                if me.sent_ring.len() == SENT_RING {
                    me.sent_ring.pop_front();
                }
                me.sent_ring.push_back((end, t));
            }
        }
        me.last_was_retx = retx;
        me.last_flight = a.bytes_in_flight.max(0);
        me.first_data_ns.get_or_insert(t);
        me.last_data_ns = Some(t);
        me.data_bytes += u64::from(a.seglen);
        me.mss = me.mss.max(a.seglen);
    }
}

impl ConnState {
    /// Follows the handshake (TCP `flags` of a packet at `t_ns`) to time its round trip.
    fn note_handshake(&mut self, flags: u16, t_ns: i64) {
        let (syn, ack) = (flags & 0x02 != 0, flags & 0x10 != 0);
        match (syn, ack) {
            (true, false) => {
                self.syn_ns = Some(t_ns);
                self.syn_ack_seen = false;
            }
            (true, true) => self.syn_ack_seen = self.syn_ns.is_some(),
            (false, true) if self.syn_ack_seen && self.handshake_rtt_ns.is_none() => {
                self.handshake_rtt_ns = self.syn_ns.map(|s| t_ns - s);
            }
            _ => {}
        }
    }
}

impl Diagnoser {
    /// Counts a packet at `t` into the current part of the capture, or starts a new one.
    fn note_part(&mut self, t: i64) {
        if self.parts.is_empty() || t.abs_diff(self.last_t) > CAPTURE_PART_GAP_NS as u64 {
            self.parts.push((t, 0));
        }
        if let Some(p) = self.parts.last_mut() {
            p.1 += 1;
        }
        self.last_t = t;
    }

    /// Where the spans of connection `c` count from: the first packet of the part of
    /// the capture it began in (the capture's first packet, unless the capture has
    /// silences of more than a day: tcptrace_http is two captures four years apart). A
    /// part of a single packet (a lone frame dated far from the rest) is no start: the
    /// next part's is used.
    pub fn time_base(&self, c: &ConnState) -> i64 {
        match (self.parts.get(c.part), self.parts.get(c.part + 1)) {
            (Some(&(_, 1)), Some(&(next, _))) => next,
            (Some(&(start, _)), _) => start,
            _ => self.start_ns.unwrap_or(0),
        }
    }

    /// Which connections' findings mention the drops the capture file reports: those
    /// where data is missing from the capture, or, when none is, the busiest.
    fn note_file_drops(&mut self) {
        let Some(drops) = self.file_drops.filter(|&d| d > 0) else {
            return;
        };
        let gapped = |c: &ConnState| c.dirs.iter().any(|d| d.capture_gaps.gaps > 0);
        if self.conns.iter().any(gapped) {
            for c in self.conns.iter_mut().filter(|c| gapped(c)) {
                c.file_drops = Some(drops);
            }
        } else if let Some(c) = self
            .conns
            .iter_mut()
            .max_by_key(|c| c.dirs[0].data_packets + c.dirs[1].data_packets)
        {
            c.file_drops = Some(drops);
        }
    }

    /// Closes what is still open at the end of the capture (a loss run, a zero-window
    /// period) and settles which connections mention the capture file's drops: what was
    /// gathered is then complete, for the detectors ([`Diagnoser::finish`]).
    pub(crate) fn close(&mut self) {
        self.note_file_drops();
        for c in &mut self.conns {
            for dir in &mut c.dirs {
                if dir.current_run > 0 {
                    dir.loss_runs.push(dir.current_run);
                    dir.current_run = 0;
                }
                if let Some((start_ns, frame)) = dir.zero_window_open.take() {
                    dir.zero_window.push(Span {
                        start_ns,
                        end_ns: c.last_ns,
                        frame,
                    });
                }
            }
        }
    }
}
