//! One TCP endpoint: handshake, sender (congestion control, loss recovery,
//! retransmission timer) and receiver (cumulative and selective ACKs, delayed ACK,
//! window), driven by [`Endpoint::on_segment`] and [`Endpoint::poll_transmit`].
//!
//! RFCs to read first: 793 (state, sequence space), 5681 (congestion control), 6298
//! (RTO), 6582 (NewReno), 6675 and 2018 (SACK), 7323 (timestamps, window scale), 3042
//! (limited transmit), 3465 (byte counting).
//!
//! The retransmission queue holds one entry per segment sent (sequence range and
//! flags), never bytes; its counters (`sacked_bytes`, `lost_bytes`, `retrans_bytes`)
//! make the bytes in flight an O(1) sum, as Linux's `tcp_packets_in_flight`.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::autotune::{self, RcvSpace};
use crate::cc::{AckSample, CaEvent, CcContext, CongestionControl, CongestionOps};
use crate::config::{Config, RtoRule, UndoRule, Variant};
use crate::linux_rto::LinuxRttVar;
use crate::pacing::Pacer;
use crate::rack::{Rack, TlpOutcome, Verdict};
use crate::rate::{DeliveryRate, TxSnapshot};
use crate::segment::{Flags, Options, SackBlocks, Segment};
use crate::spurious_rto::{AckInfo, Decision, Saved, SpuriousRto};

/// Modular sequence-number comparisons (RFC 793 §3.3).
pub(crate) mod seq {
    #[inline]
    pub fn lt(a: u32, b: u32) -> bool {
        (a.wrapping_sub(b) as i32) < 0
    }
    #[inline]
    pub fn le(a: u32, b: u32) -> bool {
        (a.wrapping_sub(b) as i32) <= 0
    }
    #[inline]
    pub fn gt(a: u32, b: u32) -> bool {
        lt(b, a)
    }
    #[inline]
    pub fn ge(a: u32, b: u32) -> bool {
        le(b, a)
    }
}

const NS_PER_MS: i64 = 1_000_000;
/// ssthresh before the first loss: "arbitrarily high" (RFC 5681 §3.1), Linux's
/// `TCP_INFINITE_SSTHRESH`.
pub const INITIAL_SSTHRESH: u32 = 0x7fff_ffff;
/// SMSS assumed until the peer's MSS option is known (RFC 1122 §4.2.2.6 default 536).
const DEFAULT_PEER_MSS: u16 = 536;

/// Sender's loss-recovery state, named after Linux's `tcp_ca_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Nothing unusual.
    #[default]
    Open,
    /// Duplicate ACKs or SACKed data seen, below the fast-retransmit threshold.
    Disorder,
    /// Fast retransmit / fast recovery (Reno, NewReno, SACK).
    Recovery,
    /// After a retransmission timeout (and Tahoe's fast retransmit), until everything
    /// sent before it is acknowledged.
    Loss,
}

/// The sender variables a simulator samples (the bundle's `tcpstate`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SenderState {
    /// Congestion window, bytes.
    pub cwnd: u32,
    /// Slow-start threshold, bytes ([`INITIAL_SSTHRESH`] before the first loss).
    pub ssthresh: u32,
    /// Smoothed RTT; 0 before the first sample.
    pub srtt_ns: i64,
    /// RTT variation.
    pub rttvar_ns: i64,
    /// The retransmission timeout in use now, backoff included.
    pub rto_ns: i64,
    /// Loss-recovery state.
    pub phase: Phase,
    /// Bytes the sender counts as in the network (Linux `tcp_packets_in_flight` in
    /// bytes; RFC 6675 "pipe" for SACK): sent and not acknowledged, minus what is SACKed
    /// or marked lost, plus retransmissions in flight. In Reno/NewReno fast recovery it
    /// equals FlightSize (the inflated cwnd is compared with it, RFC 5681 §3.2).
    pub bytes_in_flight: u32,
    /// Consecutive timeouts not yet cleared by a new RTT sample (Karn, RFC 6298 §5).
    pub backoff: u32,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u32,
    /// Next new sequence number (highest sent + 1; does not go back on timeouts).
    pub snd_nxt: u32,
}

/// Counters of one endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Every segment sent (SYN, data, pure ACK, FIN, retransmissions).
    pub segments_sent: u64,
    /// Segments with payload.
    pub data_segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Retransmitted segments (SYN, SYN-ACK and FIN included).
    pub retransmitted_segments: u64,
    /// Retransmitted payload bytes.
    pub retransmitted_bytes: u64,
    /// Fast retransmit events (the dupack threshold reached; one per recovery episode,
    /// not one per segment retransmitted during it).
    pub fast_retransmits: u64,
    /// Retransmission timer expirations.
    pub timeouts: u64,
    /// Payload bytes newly acknowledged (cumulative ACKs).
    pub bytes_acked: u64,
    /// Duplicate ACKs received (RFC 5681 §2 definition).
    pub dupacks_received: u64,
    /// Receiver: in-order payload bytes handed to the application.
    pub bytes_delivered: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// Sender: window reductions in response to ECN-Echo (RFC 3168 §6.1.2), at most
    /// one per window of data.
    #[serde(default)]
    pub ecn_reductions: u64,
    /// Receiver: segments that arrived with the CE codepoint on an ECN connection.
    #[serde(default)]
    pub ce_received: u64,
    /// Sender: Tail Loss Probes sent (RFC 8985 §7.3, [`Config::rack_tlp`]).
    #[serde(default)]
    pub tlp_probes: u64,
    /// Sender: segments RACK marked lost (RFC 8985 §6.2 step 5), a lost
    /// retransmission again each time.
    #[serde(default)]
    pub rack_marked_lost: u64,
    /// Sender: retransmission timeouts found spurious (F-RTO or Eifel) and undone
    /// (RFC 4015).
    #[serde(default)]
    pub spurious_rtos: u64,
}

// Retransmission-queue entry flags.
const SACKED: u8 = 1;
/// Marked lost (needs a retransmission; with RETRANS: retransmitted since).
const LOST: u8 = 2;
/// Retransmitted since last marked lost, the retransmission still counted in flight.
const RETRANS: u8 = 4;
/// The entry's last sequence number is the FIN.
const FIN_SEQ: u8 = 8;
/// Sent more than once (RACK's `Segment.retransmitted`, RFC 8985 §5.2).
const EVER_RETRANS: u8 = 16;

/// Proportional Rate Reduction state of one SACK recovery (RFC 6937 §3), bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prr {
    /// `prr_delivered`: data delivered to the receiver since recovery began.
    delivered: u32,
    /// `prr_out`: data sent (new or retransmitted) since recovery began.
    out: u32,
    /// `RecoverFS`: snd.nxt − snd.una when recovery began.
    recover_fs: u32,
}

/// One segment sent and not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug)]
struct TxSeg {
    seq: u32,
    /// Sequence space: payload plus 1 for a FIN.
    len: u32,
    flags: u8,
    /// When it was last sent (RACK's `Segment.xmit_ts`), ns.
    sent_ns: i64,
    /// The delivery state at that send, for the rate sample of its delivery.
    rate: TxSnapshot,
}

impl TxSeg {
    fn end(&self) -> u32 {
        self.seq.wrapping_add(self.len)
    }
    fn payload(&self) -> u32 {
        self.len - u32::from(self.flags & FIN_SEQ != 0)
    }
}

/// A sans-IO TCP endpoint. See the crate documentation for how to drive it.
#[derive(Clone, Debug)]
pub struct Endpoint {
    cfg: Config,
    ts_offset: u32,

    // --- connection ---
    is_client: bool,
    /// Server waiting for a SYN.
    listening: bool,
    /// Our SYN (client) or SYN-ACK (server) must be (re)sent.
    syn_pending: bool,
    syn_retransmitted: bool,
    /// Client: the pure ACK completing the handshake is due.
    handshake_ack_pending: bool,
    /// Our SYN is acknowledged.
    syn_acked: bool,
    /// The peer's SYN is received.
    peer_syn: bool,
    fin_requested: bool,
    fin_queued: bool,
    fin_acked: bool,
    peer_fin: bool,
    /// Sequence number of the peer's FIN when it arrived out of order.
    peer_fin_seq: Option<u32>,

    // --- negotiated ---
    smss: u32,
    ts_ok: bool,
    sack_ok: bool,
    ws_ok: bool,
    /// ECN negotiated (RFC 3168 §6.1.1).
    ecn_ok: bool,
    snd_wscale: u8,
    rcv_wscale: u8,

    // --- sender ---
    iss: u32,
    snd_una: u32,
    snd_max: u32,
    snd_wnd: u32,
    snd_wl1: u32,
    snd_wl2: u32,
    last_wnd_raw: u16,
    app_written: u64,
    app_sent: u64,
    app_acked: u64,
    rtx: VecDeque<TxSeg>,
    sacked_bytes: u32,
    lost_bytes: u32,
    retrans_bytes: u32,
    /// No lost-and-not-retransmitted entry lies below this sequence number.
    rtx_hint: u32,
    /// The next retransmission may exceed cwnd (fast retransmit, partial ACK).
    force_rtx: bool,
    cwnd: u32,
    ssthresh: u32,
    /// The congestion-control algorithm's state ([`Config::cc`]): it returns ssthresh
    /// on a congestion event and grows cwnd on ACKs.
    cc: CongestionControl,
    /// Delivery-rate estimation ([`crate::rate`]), sampled on every ACK for an
    /// algorithm that sets cwnd itself ([`CongestionOps::cong_control`]).
    rate: DeliveryRate,
    /// Bytes ever marked lost (Linux's `tp->lost`, in bytes): a rate sample's
    /// losses are its growth over one ACK.
    lost_marked: u64,
    phase: Phase,
    /// The current Loss phase began with a timeout (RFC 5681 §3.1: ssthresh is held on
    /// later timeouts of the same data).
    loss_by_rto: bool,
    dupacks: u32,
    /// RFC 6582 `recover` / RFC 6675 `RecoveryPoint`: snd_max when recovery or the Loss
    /// phase began.
    recover: u32,
    /// `recover` was set by a go-back-N retransmission (a timeout, or Tahoe's fast
    /// retransmit), which resends data the receiver may already hold.
    recover_after_go_back_n: bool,
    partial_acks: u32,
    /// PRR's counters while a SACK recovery is under way with [`Config::prr`].
    prr: Option<Prr>,
    /// RACK-TLP's state on a SACK connection with [`Config::rack_tlp`].
    rack: Option<Rack>,
    /// F-RTO / Eifel detection of spurious timeouts ([`Config::spurious_rto`]).
    spurious: SpuriousRto,
    has_rtt: bool,
    srtt: i64,
    rttvar: i64,
    /// Linux's variance term of the RTO, with [`RtoRule::Linux`] once a sample came.
    linux_rttvar: Option<LinuxRttVar>,
    /// Linux's `prior_ssthresh` (0: nothing to undo) and `prior_cwnd`: the window
    /// before the last reduction, which [`UndoRule::Linux`] restores.
    prior_ssthresh: u32,
    prior_cwnd: u32,
    backoff: u32,
    /// Without timestamps: the segment being timed (seq, send time), BSD `t_rtseq`.
    timing: Option<(u32, i64)>,
    rto_deadline: Option<i64>,
    /// ELFN standby: the time of the next probe (see [`Endpoint::on_route_failure`]).
    standby_probe_at: Option<i64>,
    /// The earliest departure time of the next data segment, when the congestion
    /// control paces ([`CongestionOps::pacing_rate`]).
    pacer: Pacer,
    /// The pacing timer: a data segment was held back until then (Linux's
    /// `pacing_timer`).
    pacing_deadline: Option<i64>,
    /// Probes sent in standby.
    elfn_probes: u64,
    /// ECN: the next new data segment carries CWR (RFC 3168 §6.1.2).
    cwr_pending: bool,
    /// ECN: snd_max at the last window reduction; ECE on ACKs up to it belongs to the
    /// window already reduced for and is ignored.
    ecn_recover: u32,
    /// ECN: snd_max at the last reduction for ECE, while a loss of data sent before it
    /// would fall in the window already reduced for.
    ece_cut: Option<u32>,

    // --- receiver ---
    irs: u32,
    rcv_nxt: u32,
    /// Right edge of the window last advertised (never moved left, RFC 7323 §2.4).
    rcv_adv: u32,
    /// Out-of-order ranges held, sorted, disjoint, not touching.
    ooo: VecDeque<(u32, u32)>,
    ooo_bytes: u32,
    /// Left edges of the ranges last reported in SACK blocks, most recent first.
    sack_recent: SackBlocks,
    ts_recent: u32,
    last_ack_sent: u32,
    /// The receive window's limit: [`Config::rcvbuf`], grown by autotuning.
    rcv_buf: u32,
    /// The send buffer's size: [`Config::sndbuf`], grown by autotuning.
    snd_buf: u32,
    /// Dynamic right-sizing state; `Some` when [`Config::autotune`] is on.
    rcv_space: Option<RcvSpace>,
    pending_ack: bool,
    delack_deadline: Option<i64>,
    unacked_rcv_bytes: u32,
    delivered_pending: u64,
    /// ECN: a CE mark arrived and no CWR since; every ACK carries ECE (§6.1.3).
    ece_pending: bool,

    stats: Stats,
    last_state: Option<SenderState>,
}

impl Endpoint {
    /// Active open: the first [`poll_transmit`](Endpoint::poll_transmit) sends the SYN.
    pub fn client(cfg: Config, isn: u32, ts_offset: u32) -> Self {
        let mut e = Self::new(cfg, isn, ts_offset, true);
        e.syn_pending = true;
        e
    }

    /// Passive open (LISTEN): answers a SYN with a SYN-ACK.
    pub fn server(cfg: Config, isn: u32, ts_offset: u32) -> Self {
        let mut e = Self::new(cfg, isn, ts_offset, false);
        e.listening = true;
        e
    }

    fn new(cfg: Config, isn: u32, ts_offset: u32, is_client: bool) -> Self {
        let smss = u32::from(cfg.mss);
        let cwnd = cfg.initial_cwnd_segments * smss;
        Endpoint {
            ts_offset,
            is_client,
            listening: false,
            syn_pending: false,
            syn_retransmitted: false,
            handshake_ack_pending: false,
            syn_acked: false,
            peer_syn: false,
            fin_requested: false,
            fin_queued: false,
            fin_acked: false,
            peer_fin: false,
            peer_fin_seq: None,
            smss,
            ts_ok: false,
            sack_ok: false,
            ws_ok: false,
            ecn_ok: false,
            snd_wscale: 0,
            rcv_wscale: 0,
            iss: isn,
            snd_una: isn,
            snd_max: isn,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            last_wnd_raw: 0,
            app_written: 0,
            app_sent: 0,
            app_acked: 0,
            rtx: VecDeque::new(),
            sacked_bytes: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            rtx_hint: isn,
            force_rtx: false,
            cwnd,
            ssthresh: INITIAL_SSTHRESH,
            cc: CongestionControl::new(cfg.cc),
            rate: DeliveryRate::default(),
            lost_marked: 0,
            phase: Phase::Open,
            loss_by_rto: false,
            dupacks: 0,
            recover: isn,
            recover_after_go_back_n: false,
            partial_acks: 0,
            prr: None,
            rack: None,
            spurious: SpuriousRto::new(cfg.spurious_rto),
            has_rtt: false,
            srtt: 0,
            rttvar: 0,
            linux_rttvar: None,
            prior_ssthresh: 0,
            prior_cwnd: 0,
            backoff: 0,
            timing: None,
            rto_deadline: None,
            standby_probe_at: None,
            pacer: Pacer::default(),
            pacing_deadline: None,
            elfn_probes: 0,
            cwr_pending: false,
            ecn_recover: isn,
            ece_cut: None,
            irs: 0,
            rcv_nxt: 0,
            rcv_adv: 0,
            ooo: VecDeque::new(),
            ooo_bytes: 0,
            sack_recent: SackBlocks::new(),
            ts_recent: 0,
            last_ack_sent: 0,
            rcv_buf: cfg.rcvbuf,
            snd_buf: cfg.sndbuf,
            rcv_space: None,
            pending_ack: false,
            delack_deadline: None,
            unacked_rcv_bytes: 0,
            delivered_pending: 0,
            ece_pending: false,
            stats: Stats::default(),
            last_state: None,
            cfg,
        }
    }

    // ------------------------------------------------------------------
    // Application side
    // ------------------------------------------------------------------

    /// The application offers `bytes`; returns how many fit in the send buffer (which
    /// counts bytes written and not yet acknowledged). Nothing fits after
    /// [`close`](Endpoint::close).
    pub fn write(&mut self, bytes: u64) -> u64 {
        if self.fin_requested {
            return 0;
        }
        let n = bytes.min(self.send_buffer_space());
        if n > 0 && self.syn_acked {
            // tcp_sendmsg → tcp_rate_check_app_limited, before the data is queued.
            let unsent = self.app_written - self.app_sent;
            let in_flight = self.in_flight();
            self.rate.check_app_limited(
                unsent < u64::from(self.smss),
                in_flight < self.cwnd,
                self.lost_bytes > self.retrans_bytes,
                in_flight,
            );
        }
        self.app_written += n;
        n
    }

    /// Free room in the send buffer.
    pub fn send_buffer_space(&self) -> u64 {
        if self.fin_requested {
            return 0;
        }
        u64::from(self.snd_buf).saturating_sub(self.app_written - self.app_acked)
    }

    /// The application closes its side: a FIN follows the data written.
    pub fn close(&mut self) {
        self.fin_requested = true;
    }

    /// In-order payload bytes delivered to the application since the last call.
    pub fn take_delivered(&mut self) -> u64 {
        std::mem::take(&mut self.delivered_pending)
    }

    /// Seeds the congestion control's random choices (BBR's first PROBE_BW gain
    /// phase), from the simulation's named stream for this flow.
    pub fn with_cc_seed(mut self, seed: u64) -> Self {
        self.cc.seed(seed);
        self
    }

    /// Both SYNs sent and acknowledged.
    pub fn is_established(&self) -> bool {
        self.syn_acked && self.peer_syn
    }

    /// Both FINs exchanged and ours acknowledged (TIME-WAIT counts as closed; the
    /// endpoint still acknowledges a retransmitted FIN).
    pub fn is_closed(&self) -> bool {
        self.fin_acked && self.peer_fin
    }

    /// Every byte written has been acknowledged (the FIN is not counted).
    pub fn all_data_acked(&self) -> bool {
        self.app_acked == self.app_written
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Payload bytes per full-sized segment (SMSS) in use.
    pub fn smss(&self) -> u32 {
        self.smss
    }

    /// The sender's variables now.
    pub fn sender_state(&self) -> SenderState {
        SenderState {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt_ns: self.srtt,
            rttvar_ns: self.rttvar,
            rto_ns: self.rto(),
            phase: self.phase,
            bytes_in_flight: self.in_flight(),
            backoff: self.backoff,
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
        }
    }

    /// True when a [`SenderState`] field other than `snd_nxt` and `bytes_in_flight`
    /// changed since the last call (true on the first call).
    pub fn take_state_changed(&mut self) -> bool {
        let mut now = self.sender_state();
        now.snd_nxt = 0;
        now.bytes_in_flight = 0;
        let changed = self.last_state != Some(now);
        self.last_state = Some(now);
        changed
    }

    /// Earliest pending timer (retransmission, delayed ACK, ELFN probe, RACK-TLP,
    /// pacing), if any.
    pub fn poll_at(&self) -> Option<i64> {
        [
            self.rto_deadline,
            self.delack_deadline,
            self.standby_probe_at,
            self.rack.as_ref().and_then(Rack::deadline),
            self.pacing_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The network says a route this connection's data took broke (a DSR route error
    /// carrying this connection's header, Holland & Vaidya's Explicit Link Failure
    /// Notification). With [`Config::elfn_probe_ns`] set and data outstanding, the
    /// sender stands by: its retransmission timer stops (the RTO, its back-off and the
    /// window are kept), it sends nothing but a probe, its first unacknowledged
    /// segment, every `elfn_probe_ns`, and the first ACK that arrives ends the standby
    /// and restarts the timer (RACK-TLP's timers stop too). Without, nothing changes.
    pub fn on_route_failure(&mut self, now_ns: i64) {
        let Some(interval) = self.cfg.elfn_probe_ns else {
            return;
        };
        if !self.syn_acked || self.snd_una == self.snd_max || self.standby_probe_at.is_some() {
            return;
        }
        self.rto_deadline = None;
        if let Some(rack) = self.rack.as_mut() {
            // RACK's timers stop with the retransmission timer; ACKs re-arm them.
            rack.pto_deadline = None;
            rack.reo_deadline = None;
        }
        self.timing = None;
        self.standby_probe_at = Some(now_ns + interval);
    }

    /// True while the sender stands by for a route (ELFN).
    pub fn in_standby(&self) -> bool {
        self.standby_probe_at.is_some()
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Probes sent while standing by (ELFN).
    pub fn elfn_probes(&self) -> u64 {
        self.elfn_probes
    }

    /// The standby's probe: the first unacknowledged segment, sent again.
    fn probe(&mut self, now: i64) -> Option<Segment> {
        let s = *self.rtx.front()?;
        self.rtx[0].flags |= EVER_RETRANS;
        self.rtx[0].sent_ns = now;
        self.rtx[0].rate = self.rate.on_send(now, false);
        self.elfn_probes += 1;
        Some(self.resend(now, s))
    }

    // ------------------------------------------------------------------
    // RTT and RTO (RFC 6298)
    // ------------------------------------------------------------------

    /// RTO before backoff: RFC 6298 (2.1) initial value, (2.2)/(2.3)
    /// SRTT + max(G, K·RTTVAR), (2.4)/(2.5) clamped to [min, max]; with
    /// [`RtoRule::Linux`] SRTT + max(G, Linux's rttvar), which is at least min_rto
    /// (see [`crate::linux_rto`]).
    fn base_rto(&self) -> i64 {
        let r = &self.cfg.rto;
        if !self.has_rtt {
            return r.initial_ns;
        }
        let var = match self.linux_rttvar {
            Some(v) => v.rttvar(),
            None => 4 * self.rttvar,
        };
        let v = self.srtt + r.granularity_ns.max(var);
        v.clamp(r.min_ns, r.max_ns)
    }

    /// RTO with backoff (RFC 6298 (5.5)): doubled per timeout, at most
    /// `max_backoff_shift` times, never above `max_ns`.
    fn rto(&self) -> i64 {
        let shift = self.backoff.min(self.cfg.rto.max_backoff_shift);
        let v = self.base_rto().saturating_mul(1i64 << shift);
        v.min(self.cfg.rto.max_ns)
    }

    /// When a timer of the current RTO armed `now` expires. With G > 0 it expires on
    /// the N-th tick boundary after `now` (N = ceil(RTO / G), at least 1), as BSD's
    /// `t_timer[TCPT_REXMT]` counts down in `tcp_slowtimo`.
    fn rto_deadline_from(&self, now: i64) -> i64 {
        let rto = self.rto();
        let g = self.cfg.rto.granularity_ns;
        if g > 0 {
            let ticks = ((rto + g - 1) / g).max(1);
            (now.div_euclid(g) + ticks) * g
        } else {
            now + rto
        }
    }

    fn arm_rto(&mut self, now: i64) {
        self.rto_deadline = Some(self.rto_deadline_from(now));
    }

    /// RFC 6298 (5.1): start the timer when a segment is sent and it is not running.
    fn arm_rto_if_idle(&mut self, now: i64) {
        if self.rto_deadline.is_none() {
            self.arm_rto(now);
        }
    }

    /// An RTT sample measured from a send at `sent` (no timestamps). With G > 0 it is
    /// measured in whole ticks: the tick boundaries crossed between send and ACK, times
    /// G (BSD's `t_rtt`, incremented by the slow timeout).
    fn measured_rtt(&self, sent: i64, now: i64) -> i64 {
        let g = self.cfg.rto.granularity_ns;
        if g > 0 {
            (now.div_euclid(g) - sent.div_euclid(g)) * g
        } else {
            now - sent
        }
    }

    /// RFC 6298 (2.2), (2.3) with α = 1/8, β = 1/4, in integer nanoseconds (truncated).
    /// A sample clears the backoff (Karn's algorithm keeps it until then). With
    /// [`RtoRule::Linux`], RTTVAR is Linux's mean deviation and the RTO's variance
    /// term Linux's ([`LinuxRttVar`]); `snd_una` is after the ACK that gave the
    /// sample.
    fn rtt_sample(&mut self, r: i64, snd_una: u32) {
        let r = r.max(0);
        self.stats.rtt_samples += 1;
        if let Some(rack) = self.rack.as_mut() {
            rack.on_rtt_sample(r);
        }
        let linux = self.cfg.rto_rule == RtoRule::Linux;
        let min_rto = self.cfg.rto.min_ns;
        if !self.has_rtt {
            self.has_rtt = true;
            self.srtt = r;
            self.rttvar = r / 2;
            if linux {
                self.linux_rttvar = Some(LinuxRttVar::first(r, min_rto, self.snd_max));
            }
        } else {
            self.rttvar = (3 * self.rttvar + (self.srtt - r).abs()) / 4;
            if let Some(v) = self.linux_rttvar.as_mut() {
                v.update(self.srtt, r, min_rto, snd_una, self.snd_max);
                self.rttvar = v.mean_deviation();
            }
            self.srtt = (7 * self.srtt + r) / 8;
        }
        self.backoff = 0;
    }

    fn ts_now(&self, now: i64) -> u32 {
        self.ts_offset
            .wrapping_add((now.div_euclid(NS_PER_MS)) as u32)
    }

    // ------------------------------------------------------------------
    // Receiving
    // ------------------------------------------------------------------

    /// Processes a segment from the peer that arrived without a CE mark (the same as
    /// [`on_segment_ce`](Endpoint::on_segment_ce) with `ce = false`).
    pub fn on_segment(&mut self, now_ns: i64, seg: &Segment) {
        self.on_segment_ce(now_ns, seg, false);
    }

    /// True when the connection negotiated ECN (RFC 3168 §6.1.1): both ends set
    /// [`Config::ecn`] and the handshake carried the ECN-setup SYN and SYN-ACK.
    pub fn ecn_enabled(&self) -> bool {
        self.ecn_ok
    }

    /// Processes a segment from the peer; `ce`: its IP header arrived with the CE
    /// codepoint (a router or link marked it, RFC 3168 §5). On an ECN connection a CE
    /// mark makes every ACK carry ECE until a segment with CWR arrives (§6.1.3); without
    /// ECN the mark is ignored.
    pub fn on_segment_ce(&mut self, now_ns: i64, seg: &Segment, ce: bool) {
        let now = now_ns;
        if seg.flags.contains(Flags::RST) {
            return;
        }
        if self.standby_probe_at.is_some() && seg.flags.contains(Flags::ACK) {
            // ELFN: the route is back; the timer runs again, with the RTO kept.
            self.standby_probe_at = None;
            self.arm_rto(now);
        }
        if self.listening {
            if seg.flags.contains(Flags::SYN) && !seg.flags.contains(Flags::ACK) {
                self.accept_syn(seg);
                self.listening = false;
                self.syn_pending = true;
            }
            return;
        }
        if !self.peer_syn {
            // Client in SYN-SENT: RFC 793 §3.9, a SYN-ACK acknowledging our SYN.
            if seg.flags.contains(Flags::SYN | Flags::ACK) && seg.ack == self.iss.wrapping_add(1) {
                self.accept_syn(seg);
                self.complete_handshake(now, seg);
                self.handshake_ack_pending = true;
            }
            return;
        }
        if seg.flags.contains(Flags::SYN) {
            if !self.is_client && !self.syn_acked {
                // The client retransmitted its SYN: our SYN-ACK was lost.
                self.syn_pending = true;
            } else {
                // A retransmitted SYN-ACK: our ACK was lost.
                self.pending_ack = true;
            }
            return;
        }
        // RFC 3168 §6.1.3: CWR ends the echo; a CE mark (on this very segment too)
        // starts it.
        if self.ecn_ok {
            if seg.flags.contains(Flags::CWR) {
                self.ece_pending = false;
            }
            if ce {
                self.stats.ce_received += 1;
                self.ece_pending = true;
            }
        }
        // RFC 7323 §4.3 (2): TS.Recent from a segment covering Last.ACK.sent.
        if self.ts_ok {
            if let Some((tsval, _)) = seg.options.timestamps {
                if seq::ge(tsval, self.ts_recent) && seq::le(seg.seq, self.last_ack_sent) {
                    self.ts_recent = tsval;
                }
            }
        }
        if seg.flags.contains(Flags::ACK) {
            self.on_ack(now, seg);
        }
        if seg.len > 0 || seg.flags.contains(Flags::FIN) {
            self.on_data(now, seg);
        }
    }

    /// Records the peer's SYN and negotiates options (RFC 7323 §2.2 / §3.2, RFC 2018 §2).
    fn accept_syn(&mut self, seg: &Segment) {
        let o = &seg.options;
        self.peer_syn = true;
        self.irs = seg.seq;
        self.rcv_nxt = seg.seq.wrapping_add(1);
        self.last_ack_sent = self.rcv_nxt;
        self.rcv_adv = self.rcv_nxt;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        self.sack_ok = self.cfg.variant == Variant::Sack && o.sack_permitted;
        self.rack = (self.sack_ok && self.cfg.rack_tlp).then(Rack::new);
        self.ws_ok = self.cfg.window_scaling && o.window_scale.is_some();
        // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR, an ECN-setup SYN-ACK ECE
        // and not CWR. (The client only gets here when it sent an ECN-setup SYN or
        // not: `cfg.ecn` says which.)
        self.ecn_ok = self.cfg.ecn
            && if seg.flags.contains(Flags::ACK) {
                seg.flags.contains(Flags::ECE) && !seg.flags.contains(Flags::CWR)
            } else {
                seg.flags.contains(Flags::ECE | Flags::CWR)
            };
        if self.ws_ok {
            self.snd_wscale = o.window_scale.unwrap_or(0).min(14);
            self.rcv_wscale = Self::wscale_for(self.wscale_space());
        } else {
            self.snd_wscale = 0;
            self.rcv_wscale = 0;
        }
        if let (true, Some((tsval, _))) = (self.ts_ok, o.timestamps) {
            self.ts_recent = tsval;
        }
        let peer_mss = o.mss.unwrap_or(DEFAULT_PEER_MSS);
        let mss = u32::from(self.cfg.mss.min(peer_mss));
        self.smss = mss.saturating_sub(if self.ts_ok { 12 } else { 0 }).max(1);
        // The window of a SYN is never scaled (RFC 7323 §2.2).
        self.snd_wnd = u32::from(seg.window);
        self.last_wnd_raw = seg.window;
        self.snd_wl1 = seg.seq;
        self.snd_wl2 = seg.ack;
    }

    /// The buffer the window scale must cover: the largest autotuning may give
    /// (`tcp_select_initial_window` scales for `tcp_rmem[2]`), else `rcvbuf`.
    fn wscale_space(&self) -> u32 {
        if self.cfg.autotune {
            self.cfg.rcvbuf.max(autotune::RMEM_MAX)
        } else {
            self.cfg.rcvbuf
        }
    }

    /// Smallest shift that lets the 16-bit field carry the whole buffer.
    fn wscale_for(rcvbuf: u32) -> u8 {
        let mut s = 0u8;
        while s < 14 && (rcvbuf >> s) > 65535 {
            s += 1;
        }
        s
    }

    /// Our SYN is acknowledged (client on SYN-ACK, server on the third segment).
    fn complete_handshake(&mut self, now: i64, seg: &Segment) {
        self.syn_acked = true;
        self.snd_una = self.iss.wrapping_add(1);
        self.snd_max = self.snd_una;
        self.rtx_hint = self.snd_una;
        // One below snd_una, so that a loss of the very first segment can be fast
        // retransmitted (see `may_fast_retransmit`).
        self.recover = self.iss;
        // RTT of the handshake: from the TS echo, else from the SYN's send time when it
        // was not retransmitted (Karn). The delivery-rate estimator's minimum RTT takes
        // the send time in either case (Linux times the SYN with its skb's stamp).
        if let Some((_, sent)) = self.timing {
            self.rate.on_rtt_sample(now - sent);
        }
        if self.ts_ok {
            if let Some((_, tsecr)) = seg.options.timestamps {
                if tsecr != 0 {
                    let r = i64::from(self.ts_now(now).wrapping_sub(tsecr) as i32) * NS_PER_MS;
                    self.rtt_sample(r, self.snd_una);
                }
            }
        } else if let Some((_, sent)) = self.timing.take() {
            let r = self.measured_rtt(sent, now);
            self.rtt_sample(r, self.snd_una);
        }
        self.timing = None;
        self.rto_deadline = None;
        // RFC 5681 §3.1: a lost SYN or SYN-ACK leaves an initial window of 1 segment.
        self.cwnd = if self.syn_retransmitted {
            self.smss
        } else {
            self.cfg.initial_cwnd_segments * self.smss
        };
        let ctx = self.cc_context(now, 0);
        self.cc.init(&ctx, self.rate.min_rtt_ns());
    }

    fn on_ack(&mut self, now: i64, seg: &Segment) {
        let ack = seg.ack;
        if !self.syn_acked {
            if ack != self.iss.wrapping_add(1) {
                return;
            }
            self.complete_handshake(now, seg);
        }
        if seq::gt(ack, self.snd_max) {
            // Acknowledges something never sent (RFC 793 §3.9): answer with an ACK.
            self.pending_ack = true;
            return;
        }
        let (una_before, sacked_before) = (self.snd_una, self.sacked_bytes);
        let (prior_in_flight, lost_before) = (self.in_flight(), self.lost_marked);
        self.rate.begin_ack(now);
        let window_changed = seg.window != self.last_wnd_raw;
        // RFC 793 §3.9 window update, guarded by SND.WL1 / SND.WL2.
        if seq::lt(self.snd_wl1, seg.seq) || (self.snd_wl1 == seg.seq && seq::le(self.snd_wl2, ack))
        {
            self.snd_wnd = u32::from(seg.window) << self.snd_wscale;
            self.last_wnd_raw = seg.window;
            self.snd_wl1 = seg.seq;
            self.snd_wl2 = ack;
        }
        let new_sack = if self.sack_ok && !seg.options.sack.is_empty() {
            self.process_sack(&seg.options.sack)
        } else {
            false
        };
        if seq::gt(ack, self.snd_una) {
            self.on_new_ack(now, seg, new_sack);
            self.on_ece(now, seg);
        } else if ack == self.snd_una
            && seg.len == 0
            && !seg.flags.contains(Flags::FIN)
            && !window_changed
            && self.snd_max != self.snd_una
        {
            // RFC 5681 §2: DUPLICATE ACKNOWLEDGMENT (a)–(e).
            self.on_dupack(now, new_sack);
            self.on_ece(now, seg);
        } else {
            if new_sack && self.phase == Phase::Recovery {
                self.mark_lost_by_sack();
            }
            self.on_ece(now, seg);
        }
        if self.spurious.active() {
            self.spurious_on_ack(now, seg, una_before, new_sack);
        }
        if self.rack.is_some() {
            let una_advanced = self.snd_una != una_before;
            let dupack_without_sack = !una_advanced && seg.options.sack.is_empty();
            self.rack_on_ack(now, ack, una_advanced, dupack_without_sack);
        }
        // RFC 6937 §3: DeliveredData = change in snd.una + change in SACKed bytes
        // (SACKed bytes a cumulative ACK covers leave the second term as they enter
        // the first); Linux's `acked_sacked` for the rate sample too.
        let delivered = (i64::from(self.snd_una.wrapping_sub(una_before))
            + i64::from(self.sacked_bytes)
            - i64::from(sacked_before))
        .max(0) as u32;
        if self.prr.is_some() && self.phase == Phase::Recovery {
            self.prr_on_ack(delivered);
        }
        if self.cc.controls_cwnd() {
            let lost = (self.lost_marked - lost_before).min(u64::from(u32::MAX)) as u32;
            self.cong_control(now, delivered, lost, prior_in_flight);
        }
    }

    /// Linux's `tcp_cong_control` for an algorithm that sets cwnd itself: the ACK's
    /// rate sample (`tcp_rate_gen`) and the algorithm's cwnd, ssthresh and pacing
    /// rate from it, after loss recovery processed the ACK.
    fn cong_control(&mut self, now: i64, delivered: u32, lost: u32, prior_in_flight: u32) {
        let rs = self.rate.sample(now, delivered, lost);
        let in_flight = self.in_flight();
        let ack = AckSample {
            rs,
            in_flight,
            prior_in_flight,
            phase: self.phase,
            delivered: self.rate.delivered(),
            delivered_ns: self.rate.delivered_ns(),
            edt_ns: self.pacer.departure_ns(),
        };
        let ctx = self.cc_context(now, 0);
        let Some(out) = self.cc.cong_control(&ctx, &ack) else {
            return;
        };
        self.cwnd = out.cwnd;
        if let Some(ssthresh) = out.ssthresh {
            self.ssthresh = ssthresh;
        }
        if out.app_limited {
            self.rate.mark_app_limited(in_flight);
        }
    }

    /// RFC 6937 §3, "on every ACK during recovery": sets cwnd = pipe + sndcnt, where
    /// pipe is RFC 6675's (`in_flight`, after this ACK's SACK blocks marked the
    /// holes). While pipe > ssthresh, the proportional part: sndcnt =
    /// CEIL(prr_delivered × ssthresh / RecoverFS) − prr_out, so that the sender sends
    /// ssthresh/RecoverFS of what is delivered (about one segment per two ACKs after a
    /// halving). At or below ssthresh, the slow-start reduction bound (PRR-SSRB, the
    /// RFC's recommended bound, §3 and §5): sndcnt = MIN(ssthresh − pipe,
    /// MAX(prr_delivered − prr_out, DeliveredData) + MSS), which rebuilds the pipe
    /// to ssthresh no faster than slow start would. A negative sndcnt sends nothing
    /// (cwnd = pipe), as Linux's `tcp_cwnd_reduction` clamps it.
    fn prr_on_ack(&mut self, delivered_data: u32) {
        let pipe = u64::from(self.in_flight());
        let ssthresh = u64::from(self.ssthresh);
        let smss = u64::from(self.smss);
        let Some(p) = self.prr.as_mut() else { return };
        p.delivered = p.delivered.saturating_add(delivered_data);
        let (delivered, out) = (u64::from(p.delivered), u64::from(p.out));
        let sndcnt = if pipe > ssthresh {
            let fs = u64::from(p.recover_fs.max(1));
            (delivered * ssthresh).div_ceil(fs).saturating_sub(out)
        } else {
            let limit = delivered.saturating_sub(out).max(u64::from(delivered_data)) + smss;
            (ssthresh - pipe).min(limit)
        };
        self.cwnd = u32::try_from(pipe + sndcnt).unwrap_or(u32::MAX);
    }

    /// RFC 6937 §3, "on any data transmission or retransmission": prr_out counts
    /// what is sent during a recovery.
    fn prr_count_sent(&mut self, len: u32) {
        if self.phase == Phase::Recovery {
            if let Some(p) = self.prr.as_mut() {
                p.out = p.out.saturating_add(len);
            }
        }
    }

    /// RFC 3168 §6.1.2: on ECN-Echo, reduce the window as for a loss (ssthresh from
    /// the congestion control, Reno's max(FlightSize/2, 2·SMSS) of RFC 5681 eq. (4) or
    /// CUBIC's cwnd·β; cwnd = ssthresh) without
    /// retransmitting, at most once per window of data: ECE on ACKs that do not cover
    /// more than `ecn_recover` (snd_max at the last reduction, or at the start of a
    /// loss recovery, which reduced the window already) is ignored, and so is ECE
    /// during a recovery or the Loss phase. Called after the ACK is processed, so the
    /// ACK that carries ECE never grows cwnd. The next new data segment carries CWR.
    fn on_ece(&mut self, now: i64, seg: &Segment) {
        if !self.ecn_ok || !seg.flags.contains(Flags::ECE) {
            return;
        }
        if matches!(self.phase, Phase::Recovery | Phase::Loss)
            || !seq::gt(seg.ack, self.ecn_recover)
        {
            return;
        }
        let fs = self.flight_size();
        // Linux's tcp_enter_cwr: congestion proven by ECN, nothing to undo.
        self.prior_ssthresh = 0;
        self.ssthresh = self.cc_ssthresh(now, fs);
        if !self.cc.controls_cwnd() {
            self.cwnd = self.ssthresh;
        }
        self.cc_event(now, CaEvent::Cwr);
        self.ecn_recover = self.snd_max;
        self.ece_cut = Some(self.snd_max);
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
    }

    /// A loss response reduced the window: on an ECN connection it counts as this
    /// window's reduction (ECE for the same data is ignored) and CWR tells the receiver
    /// (RFC 3168 §6.1.2; Linux queues CWR on entering recovery too).
    fn ecn_window_reduced(&mut self) {
        if self.ecn_ok {
            self.ecn_recover = self.snd_max;
            self.cwr_pending = true;
        }
    }

    /// Marks the queued segments a SACK block covers; true when anything new.
    fn process_sack(&mut self, blocks: &SackBlocks) -> bool {
        let mut new = false;
        for (left, right) in blocks.iter() {
            // Ignore D-SACKs and blocks outside what is outstanding.
            if seq::le(right, self.snd_una) || seq::gt(right, self.snd_max) || seq::ge(left, right)
            {
                continue;
            }
            let start = self.rtx.partition_point(|s| seq::lt(s.seq, left));
            for i in start..self.rtx.len() {
                let s = self.rtx[i];
                if seq::gt(s.end(), right) {
                    break;
                }
                if s.flags & SACKED == 0 {
                    if s.flags & LOST != 0 {
                        self.lost_bytes -= s.len;
                    }
                    if s.flags & RETRANS != 0 {
                        self.retrans_bytes -= s.len;
                    }
                    self.sacked_bytes += s.len;
                    self.rtx[i].flags = (s.flags & (FIN_SEQ | EVER_RETRANS)) | SACKED;
                    self.rate
                        .on_delivered(&s.rate, s.sent_ns, s.flags & EVER_RETRANS != 0);
                    // Counted now; the cumulative ACK that covers it later is not.
                    self.rtx[i].rate.delivered_ns = None;
                    if let Some(rack) = self.rack.as_mut() {
                        rack.delivered(s.sent_ns, s.end(), s.flags & EVER_RETRANS != 0);
                    }
                    new = true;
                }
            }
        }
        new
    }

    /// RFC 6675 §4 IsLost for every hole: an un-SACKed segment is lost when DupThresh
    /// SACKed segments, or more than (DupThresh − 1)·SMSS SACKed bytes, lie above it.
    fn mark_lost_by_sack(&mut self) {
        if self.rack.is_some() {
            // RACK marks losses by time instead, after the ACK (`rack_on_ack`).
            return;
        }
        let thresh = self.cfg.dupack_threshold;
        let byte_limit = (thresh - 1) * self.smss;
        let mut count = 0u32;
        let mut bytes = 0u32;
        for i in (0..self.rtx.len()).rev() {
            let s = self.rtx[i];
            if s.flags & SACKED != 0 {
                count += 1;
                bytes += s.len;
            } else if count >= thresh || bytes > byte_limit {
                if s.flags & LOST != 0 {
                    // Everything below was judged when this one was.
                    break;
                }
                self.set_lost(i);
            }
        }
    }

    fn set_lost(&mut self, i: usize) {
        let s = &mut self.rtx[i];
        if s.flags & (LOST | SACKED) == 0 {
            s.flags |= LOST;
            self.lost_bytes += s.len;
            self.lost_marked += u64::from(s.len);
            let seq = s.seq;
            if seq::lt(seq, self.rtx_hint) {
                self.rtx_hint = seq;
            }
        }
    }

    /// Marks the first unacknowledged segment for an immediate retransmission, even if
    /// it was retransmitted already (BSD sets `snd_nxt = th_ack` and sends it again).
    fn retransmit_head(&mut self) {
        if let Some(s) = self.rtx.front_mut() {
            if s.flags & SACKED != 0 {
                return;
            }
            if s.flags & RETRANS != 0 {
                s.flags &= !RETRANS;
                self.retrans_bytes -= s.len;
            }
            self.set_lost(0);
            self.rtx_hint = self.snd_una;
            self.force_rtx = true;
        }
    }

    /// Go-back-N: every un-SACKed segment is lost, earlier retransmissions too.
    fn mark_all_lost(&mut self) {
        for s in self.rtx.iter_mut() {
            if s.flags & SACKED != 0 {
                continue;
            }
            if s.flags & RETRANS != 0 {
                s.flags &= !RETRANS;
                self.retrans_bytes -= s.len;
            }
            if s.flags & LOST == 0 {
                s.flags |= LOST;
                self.lost_bytes += s.len;
                self.lost_marked += u64::from(s.len);
            }
        }
        self.rtx_hint = self.snd_una;
    }

    /// FlightSize (RFC 5681 §2): sent and not cumulatively acknowledged.
    fn flight_size(&self) -> u32 {
        self.snd_max.wrapping_sub(self.snd_una)
    }

    fn in_flight(&self) -> u32 {
        if !self.syn_acked {
            return 0;
        }
        let sacked = if self.phase == Phase::Disorder && !self.cfg.limited_transmit {
            0
        } else {
            self.sacked_bytes
        };
        (self.flight_size() + self.retrans_bytes).saturating_sub(sacked + self.lost_bytes)
    }

    /// cwnd plus RFC 3042 limited transmit's allowance (non-SACK senders; a SACK
    /// sender gets it from the SACKed bytes leaving the pipe).
    fn cwnd_allowance(&self) -> u32 {
        if self.phase == Phase::Disorder && self.cfg.limited_transmit && !self.sack_ok {
            let n = self
                .dupacks
                .min(self.cfg.dupack_threshold.saturating_sub(1));
            self.cwnd + n * self.smss
        } else {
            self.cwnd
        }
    }

    fn on_new_ack(&mut self, now: i64, seg: &Segment, new_sack: bool) {
        let ack = seg.ack;
        let acked = ack.wrapping_sub(self.snd_una);
        let flight_before = self.flight_size();
        // RTT sample: RFC 7323 §4.1 from TSecr on an ACK of new data; otherwise the
        // timed segment, never a retransmitted one (RFC 6298 §3, Karn).
        let mut sample = None;
        if self.ts_ok {
            if let Some((_, tsecr)) = seg.options.timestamps {
                if tsecr != 0 {
                    let r = i64::from(self.ts_now(now).wrapping_sub(tsecr) as i32) * NS_PER_MS;
                    self.rtt_sample(r, ack);
                    sample = Some(r.max(0));
                }
            }
        } else if let Some((tseq, sent)) = self.timing {
            if seq::gt(ack, tseq) {
                self.timing = None;
                let r = self.measured_rtt(sent, now);
                self.rtt_sample(r, ack);
                sample = Some(r.max(0));
            }
        }
        // Drop what is acknowledged from the queue; `ca_rtt`: Linux's `ca_rtt_us`,
        // from the newest segment acknowledged now that was never retransmitted.
        let mut data_acked = acked;
        let mut ca_rtt = None;
        while let Some(front) = self.rtx.front_mut() {
            if seq::le(front.end(), ack) {
                let s = *front;
                self.rtx.pop_front();
                self.forget(s.flags, s.len);
                if s.flags & (SACKED | EVER_RETRANS) == 0 {
                    ca_rtt = Some(now - s.sent_ns);
                }
                if let (Some(rack), 0) = (self.rack.as_mut(), s.flags & SACKED) {
                    rack.delivered(s.sent_ns, s.end(), s.flags & EVER_RETRANS != 0);
                }
                if s.flags & SACKED == 0 {
                    self.rate
                        .on_delivered(&s.rate, s.sent_ns, s.flags & EVER_RETRANS != 0);
                }
                if s.flags & FIN_SEQ != 0 {
                    self.fin_acked = true;
                    data_acked -= 1;
                }
            } else if seq::lt(front.seq, ack) {
                let n = ack.wrapping_sub(front.seq);
                let flags = front.flags;
                front.seq = ack;
                front.len -= n;
                self.forget(flags, n);
                break;
            } else {
                break;
            }
        }
        self.snd_una = ack;
        if seq::lt(self.rtx_hint, ack) {
            self.rtx_hint = ack;
        }
        self.app_acked += u64::from(data_acked);
        self.stats.bytes_acked += u64::from(data_acked);
        self.dupacks = 0;
        if self.cfg.autotune && self.in_flight() < self.cwnd {
            // tcp_new_space → tcp_sndbuf_expand, while the window is not full
            // (tcp_should_expand_sndbuf); see [`autotune`].
            let per_segment = if self.cc.controls_cwnd() { 3 } else { 2 };
            self.snd_buf =
                self.snd_buf
                    .max(autotune::sndbuf_for(self.cwnd, self.smss, per_segment));
        }
        if self.cfg.hystart || self.cfg.hystart_linux {
            // RFC 9406: the congestion control sees every ACK of new data and its RTT
            // sample; HyStart++ may end slow start (ssthresh = cwnd) after its CSS.
            // Linux's HyStart takes the sample from the segments' send times.
            let rtt = if self.cfg.hystart_linux {
                ca_rtt
            } else {
                sample
            };
            let ctx = self.cc_context(now, 0);
            if let Some(ssthresh) = self.cc.pkts_acked(&ctx, rtt) {
                self.ssthresh = ssthresh;
            }
        }
        let mut restart_timer = true;
        match self.phase {
            Phase::Recovery => match self.cfg.variant {
                // RFC 5681 §3.2 step 6: deflate and leave on the first new ACK.
                Variant::Reno | Variant::Tahoe => {
                    self.cwnd = self.ssthresh;
                    self.leave_recovery();
                }
                Variant::NewReno => {
                    if seq::ge(ack, self.recover) {
                        // RFC 6582 §3.2 step 3 full ACK, option (1).
                        let fs = self.flight_size();
                        self.cwnd = self.ssthresh.min(fs.max(self.smss) + self.smss);
                        self.leave_recovery();
                    } else {
                        // RFC 6582 §3.2 step 3 partial ACK: retransmit the next hole,
                        // deflate by the amount acked, add back one SMSS if at least
                        // one SMSS was acked; reset the timer on the first partial ACK
                        // only ("Impatient", RFC 6582 §4).
                        self.retransmit_head();
                        self.cwnd = self.cwnd.saturating_sub(acked);
                        if acked >= self.smss {
                            self.cwnd += self.smss;
                        }
                        self.cwnd = self.cwnd.max(self.smss);
                        self.partial_acks += 1;
                        restart_timer = self.partial_acks == 1;
                    }
                }
                Variant::Sack => {
                    if seq::ge(ack, self.recover) {
                        // RFC 6675 §5: recovery ends at RecoveryPoint; cwnd stays
                        // ssthresh.
                        self.leave_recovery();
                    } else if new_sack {
                        self.mark_lost_by_sack();
                    }
                }
            },
            Phase::Loss => {
                self.grow_cwnd(now, acked, flight_before);
                if seq::ge(ack, self.recover) {
                    self.loss_by_rto = false;
                    self.phase = self.calm_phase();
                }
            }
            Phase::Open | Phase::Disorder => {
                self.grow_cwnd(now, acked, flight_before);
                self.phase = self.calm_phase();
                if new_sack && self.sack_ok {
                    self.maybe_enter_sack_recovery(now);
                }
            }
        }
        // RFC 6298 (5.2), (5.3).
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.arm_rto(now);
        }
    }

    /// Removes `len` bytes with entry `flags` from the counters.
    fn forget(&mut self, flags: u8, len: u32) {
        if flags & SACKED != 0 {
            self.sacked_bytes -= len;
        } else {
            if flags & LOST != 0 {
                self.lost_bytes -= len;
            }
            if flags & RETRANS != 0 {
                self.retrans_bytes -= len;
            }
        }
    }

    fn calm_phase(&self) -> Phase {
        if self.lost_bytes > 0 {
            Phase::Loss
        } else if self.sacked_bytes > 0 || self.dupacks > 0 {
            Phase::Disorder
        } else {
            Phase::Open
        }
    }

    fn leave_recovery(&mut self) {
        if self.prr.take().is_some() {
            // RFC 6937 §3: on leaving recovery, cwnd = ssthresh (RFC 6675 §5 left it
            // there all along).
            self.cwnd = self.ssthresh;
        }
        self.partial_acks = 0;
        self.force_rtx = false;
        self.phase = self.calm_phase();
    }

    /// Slow start and congestion avoidance, by the congestion control
    /// ([`CongestionOps::cong_avoid`]; Reno's: RFC 5681 §3.1, with
    /// [`Config::byte_counting`] as RFC 3465, or per ACK as 4.4BSD and ns-3 do). cwnd
    /// only grows while it limits the sender (flight + SMSS > cwnd before the ACK), as
    /// Linux's `tcp_is_cwnd_limited`, so an rwnd- or application-limited sender does
    /// not inflate it without bound.
    fn grow_cwnd(&mut self, now: i64, acked: u32, flight_before: u32) {
        if flight_before + self.smss <= self.cwnd || self.cc.controls_cwnd() {
            return;
        }
        let ctx = self.cc_context(now, 0);
        self.cwnd = self.cc.cong_avoid(&ctx, acked);
    }

    /// What the congestion control may read now; `flight_size` for a loss response.
    fn cc_context(&self, now: i64, flight_size: u32) -> CcContext {
        // During a Reno or NewReno fast recovery cwnd is inflated by the duplicate
        // ACKs (RFC 5681 §3.2 step 4): the window the algorithm sees is ssthresh.
        let cwnd = if self.phase == Phase::Recovery && !self.cc.controls_cwnd() {
            self.cwnd.min(self.ssthresh)
        } else {
            self.cwnd
        };
        CcContext {
            now_ns: now,
            smss: self.smss,
            cwnd,
            ssthresh: self.ssthresh,
            flight_size,
            srtt_ns: self.srtt,
            byte_counting: self.cfg.byte_counting,
            hystart: self.cfg.hystart,
            hystart_linux: self.cfg.hystart_linux,
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
        }
    }

    /// The algorithm's ssthresh after a congestion event, `fs` the flight size to
    /// halve (RFC 5681 eq. (4) for Reno).
    fn cc_ssthresh(&mut self, now: i64, fs: u32) -> u32 {
        let mut ctx = self.cc_context(now, fs);
        if self.cfg.ssthresh_from_cwnd {
            // Linux's tcp_reno_ssthresh halves cwnd, whatever is in flight.
            ctx.flight_size = ctx.cwnd;
        }
        self.cc.ssthresh(&ctx)
    }

    /// Tells the algorithm the window was reduced.
    fn cc_event(&mut self, now: i64, ev: CaEvent) {
        let ctx = self.cc_context(now, 0);
        self.cc.cwnd_event(&ctx, ev);
    }

    /// The congestion control's state (see [`Config::cc`]).
    pub fn congestion_control(&self) -> &CongestionControl {
        &self.cc
    }

    /// RFC 6582 §3.2 step 1 and §4.1 (also used by Tahoe, as ns-2's `bug_fix_`, and by
    /// SACK, RFC 6675 §5): fast retransmit only if the cumulative ACK covers more than
    /// `recover`, so duplicate ACKs for data sent before a timeout (or a recovery) do
    /// not start another. The RFCs' `recover` (RecoveryPoint = HighData) is the
    /// highest sequence number sent, the last byte; ours is snd_max, one past it, so
    /// "covers more than" is `ack >= recover` (as ns-3's `m_highRxAckMark >=
    /// m_recover`). FreeBSD's and ns-2's stricter `ack > snd_max` forbade a fast
    /// retransmit of the first segment sent after recovery began, when the ACK ending
    /// the episode equals `recover`: the sender then sat out a timeout while duplicate
    /// ACKs came in. Reno (4.4BSD) has no such rule.
    ///
    /// After a go-back-N retransmission the strict test stays, as RFC 6582 §4.1 argues
    /// for timeouts: the copies of data the receiver already held draw duplicate ACKs
    /// at exactly `recover`, and a fast retransmit on them would be spurious (and then
    /// cascade: each spurious one goes back N again).
    fn may_fast_retransmit(&self) -> bool {
        match self.cfg.variant {
            Variant::Reno => true,
            _ if self.recover_after_go_back_n => seq::gt(self.snd_una, self.recover),
            _ => seq::ge(self.snd_una, self.recover),
        }
    }

    fn on_dupack(&mut self, now: i64, new_sack: bool) {
        self.stats.dupacks_received += 1;
        self.dupacks += 1;
        match self.phase {
            Phase::Recovery => {
                match self.cfg.variant {
                    // RFC 5681 §3.2 step 4 / RFC 6582 step 4: inflate.
                    Variant::Reno | Variant::NewReno | Variant::Tahoe => {
                        self.cwnd += self.smss;
                    }
                    Variant::Sack => {
                        if new_sack {
                            self.mark_lost_by_sack();
                        }
                    }
                }
                return;
            }
            Phase::Open => self.phase = Phase::Disorder,
            Phase::Disorder | Phase::Loss => {}
        }
        let thresh = self.cfg.dupack_threshold;
        let lost_by_sack = self.sack_ok && self.sacked_bytes > (thresh - 1) * self.smss;
        if self.rack.is_none()
            && (self.dupacks >= thresh || lost_by_sack)
            && self.may_fast_retransmit()
        {
            self.enter_fast_retransmit(now);
        }
    }

    /// RFC 6675 §5 (4): IsLost(HighACK + 1) can start recovery on a new ACK too.
    fn maybe_enter_sack_recovery(&mut self, now: i64) {
        let thresh = self.cfg.dupack_threshold;
        if self.rack.is_none()
            && self.sacked_bytes > (thresh - 1) * self.smss
            && self.rtx.front().is_some_and(|s| s.flags & SACKED == 0)
            && self.may_fast_retransmit()
        {
            self.enter_fast_retransmit(now);
        }
    }

    fn enter_fast_retransmit(&mut self, now: i64) {
        self.stats.fast_retransmits += 1;
        let mut fs = self.flight_size();
        if self.cfg.ssthresh_from_pipe {
            // ns-3's BytesInFlight: less what the receiver holds (SACKed, or one segment
            // per duplicate ACK) and, with SACK, the lost head; without SACK ns-3 counts
            // the head as in flight (`EnterRecovery` adds it back).
            let out_of_pipe = if self.sack_ok {
                self.sacked_bytes + self.smss
            } else {
                self.dupacks * self.smss
            };
            fs = fs.saturating_sub(out_of_pipe);
        }
        // RFC 5681 §3.2 step 2, eq. (4); not again when ECE halved the window for the
        // same window of data (RFC 3168 §6.1.2: ssthresh is decreased at most once per
        // round trip; Linux keeps it on entering recovery from CWR).
        let halved_for_ece = self
            .ece_cut
            .take()
            .is_some_and(|c| seq::lt(self.snd_una, c));
        if !halved_for_ece {
            self.remember_prior_window();
            self.ssthresh = self.cc_ssthresh(now, fs);
        } else {
            self.prior_ssthresh = 0;
        }
        self.cc_event(now, CaEvent::Recovery);
        self.recover = self.snd_max;
        self.recover_after_go_back_n = self.cfg.variant == Variant::Tahoe;
        self.partial_acks = 0;
        self.timing = None; // Karn: the timed segment may be retransmitted.
        match self.cfg.variant {
            Variant::Tahoe => {
                self.cwnd = self.smss;
                self.mark_all_lost();
                self.force_rtx = true;
                self.phase = Phase::Loss;
                self.loss_by_rto = false;
            }
            Variant::Reno | Variant::NewReno => {
                // RFC 5681 §3.2 step 3: cwnd = ssthresh + 3·SMSS.
                self.cwnd = self.ssthresh + self.cfg.dupack_threshold * self.smss;
                self.retransmit_head();
                self.phase = Phase::Recovery;
            }
            Variant::Sack => {
                // RFC 6675 §5 (4.1)–(4.3); an algorithm that sets cwnd itself does
                // so on this ACK (BBR: packet conservation), without PRR.
                let controls_cwnd = self.cc.controls_cwnd();
                if !controls_cwnd {
                    self.cwnd = self.ssthresh;
                }
                if self.cfg.prr && !controls_cwnd {
                    // RFC 6937 §3, at the beginning of recovery (the ACK that started
                    // it is then counted by `prr_on_ack`, as Linux does).
                    self.prr = Some(Prr {
                        delivered: 0,
                        out: 0,
                        recover_fs: self.flight_size(),
                    });
                }
                if let Some(rack) = self.rack.as_mut() {
                    // RFC 8985: RACK marked the losses that started the recovery;
                    // the first retransmission goes regardless of cwnd (RFC 6675
                    // (4.3)). The probe's episode ends with this window reduction.
                    rack.tlp_end();
                    rack.pto_deadline = None;
                    self.force_rtx = true;
                } else {
                    self.mark_lost_by_sack();
                    self.retransmit_head();
                }
                self.phase = Phase::Recovery;
            }
        }
        if !halved_for_ece {
            self.ecn_window_reduced();
        }
        // As BSD: the timer restarts with the fast retransmission.
        self.rto_deadline = None;
    }

    /// RFC 6298 (5.4)–(5.6) and RFC 5681 §3.1 eq. (4)/(5).
    fn on_rto(&mut self, now: i64) {
        self.stats.timeouts += 1;
        if !self.syn_acked || !self.peer_syn {
            if self.is_client || self.peer_syn {
                self.backoff = self.backoff.saturating_add(1);
                self.syn_pending = true;
                self.syn_retransmitted = true;
                self.timing = None;
                self.arm_rto(now);
            }
            return;
        }
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
            return;
        }
        let first = !(self.phase == Phase::Loss && self.loss_by_rto);
        // Linux's tcp_enter_loss: a timeout during a fast recovery neither reduces the
        // window again (it was reduced in this window already) nor starts F-RTO.
        let (reduce, may_detect) = match self.cfg.undo {
            UndoRule::Rfc4015 => (first, first),
            UndoRule::Linux => {
                let fresh = first && self.phase != Phase::Recovery;
                (fresh, fresh)
            }
        };
        // RFC 4015 §4 steps (1)–(3): what a spurious timeout's response restores.
        let saved = Saved {
            pipe_prev: self.flight_size().max(self.ssthresh),
            srtt_prev: self.srtt + 2 * self.cfg.rto.granularity_ns,
            rttvar_prev: self.rttvar,
        };
        let retransmit_ts = self.ts_ok.then(|| self.ts_now(now));
        self.spurious
            .on_timeout(may_detect, self.snd_max, saved, retransmit_ts);
        self.backoff = self.backoff.saturating_add(1);
        if reduce {
            self.remember_prior_window();
            let fs = self.flight_size();
            self.ssthresh = self.cc_ssthresh(now, fs);
        }
        self.cc_event(now, CaEvent::Loss);
        self.cwnd = self.smss;
        self.prr = None;
        self.recover = self.snd_max;
        self.recover_after_go_back_n = true;
        self.phase = Phase::Loss;
        self.loss_by_rto = true;
        self.dupacks = 0;
        self.partial_acks = 0;
        self.force_rtx = false;
        self.timing = None;
        if self.spurious.holds_go_back_n() {
            // RFC 5682 step 1: only the first unacknowledged segment goes again.
            self.retransmit_head();
        } else {
            self.mark_all_lost();
        }
        self.ecn_window_reduced();
        self.arm_rto(now);
        if let Some(rack) = self.rack.as_mut() {
            rack.tlp_end();
            rack.pto_deadline = None;
            rack.reo_deadline = None;
        }
    }

    // ------------------------------------------------------------------
    // Spurious timeouts (RFC 5682, RFC 3522, RFC 4015): the endpoint's side of
    // [`crate::spurious_rto`]
    // ------------------------------------------------------------------

    /// An ACK during an F-RTO or Eifel episode (after it was processed as usual).
    fn spurious_on_ack(&mut self, now: i64, seg: &Segment, una_before: u32, new_sack: bool) {
        let info = AckInfo {
            advanced: self.snd_una != una_before,
            ack: seg.ack,
            new_sack,
            highest_sack: if self.sack_ok {
                seg.options
                    .sack
                    .iter()
                    .map(|(_, r)| r)
                    .reduce(|a, b| if seq::gt(b, a) { b } else { a })
            } else {
                None
            },
            tsecr: if self.ts_ok {
                seg.options.timestamps.map(|(_, e)| e)
            } else {
                None
            },
        };
        let window_end = self.snd_una.wrapping_add(self.snd_wnd);
        let can_send_new = self.app_written > self.app_sent && seq::gt(window_end, self.snd_max);
        let held_go_back_n = self.spurious.holds_go_back_n();
        match self.spurious.on_ack(&info, can_send_new) {
            Decision::Wait => {}
            // RFC 5682 step 2b: two new segments, whatever cwnd says.
            Decision::SendTwoNew => self.cwnd = self.in_flight() + 2 * self.smss,
            Decision::Conventional(cap) => {
                if let Some(k) = cap {
                    self.cwnd = self.cwnd.min(k * self.smss);
                }
                if held_go_back_n {
                    // RFC 5682 steps 2a, 2b, 3a: the conventional recovery, which
                    // retransmits what is not acknowledged.
                    self.mark_all_lost();
                    self.phase = self.calm_phase();
                }
            }
            Decision::Spurious(saved) => {
                let acked = self.snd_una.wrapping_sub(una_before);
                self.undo_spurious_rto(now, seg, acked, saved);
            }
        }
    }

    /// Linux's `prior_ssthresh` and `prior_cwnd` before a window reduction (a fast
    /// recovery or a timeout): `tcp_current_ssthresh`, max(ssthresh, ¾·cwnd), or
    /// ssthresh alone during a recovery (the reduction under way).
    fn remember_prior_window(&mut self) {
        self.prior_ssthresh = if self.phase == Phase::Recovery {
            self.ssthresh
        } else {
            self.ssthresh.max(self.cwnd / 2 + self.cwnd / 4)
        };
        self.prior_cwnd = self.cwnd;
    }

    /// The response to a spurious timeout: retransmissions not yet sent are cancelled
    /// (RFC 4015 step (6), SND.NXT ← SND.MAX; Linux unmarks the losses too) and the
    /// backoff cleared. Then, by [`Config::undo`]: RFC 4015 §4, cwnd = FlightSize +
    /// min(bytes_acked, IW), ssthresh = pipe_prev (step (7)) and, with a timestamp
    /// echo, SRTT = max(SRTT_prev, sample), RTTVAR = max(RTTVAR_prev, sample/2) (step
    /// (8)); or Linux's `tcp_undo_cwnd_reduction`: cwnd = max(cwnd, prior_cwnd) and
    /// ssthresh = max(ssthresh, prior_ssthresh), the window before the episode.
    fn undo_spurious_rto(&mut self, now: i64, seg: &Segment, bytes_acked: u32, saved: Saved) {
        for s in self.rtx.iter_mut() {
            if s.flags & (LOST | RETRANS | SACKED) == LOST {
                s.flags &= !LOST;
                self.lost_bytes -= s.len;
            }
        }
        self.backoff = 0;
        let cwnd_before = self.cwnd;
        match self.cfg.undo {
            UndoRule::Rfc4015 => {
                let iw = self.cfg.initial_cwnd_segments * self.smss;
                self.cwnd = self.flight_size() + bytes_acked.min(iw);
                self.ssthresh = saved.pipe_prev;
                if let (true, Some((_, tsecr))) = (self.ts_ok, seg.options.timestamps) {
                    let r = i64::from(self.ts_now(now).wrapping_sub(tsecr) as i32) * NS_PER_MS;
                    self.srtt = saved.srtt_prev.max(r);
                    self.rttvar = saved.rttvar_prev.max(r / 2);
                }
            }
            UndoRule::Linux => {
                if self.prior_ssthresh != 0 {
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    self.ssthresh = self.ssthresh.max(self.prior_ssthresh);
                }
            }
        }
        if self.cc.controls_cwnd() {
            // Linux's undo_cwnd: BBR keeps its cwnd (and restarts full-pipe detection).
            self.cwnd = cwnd_before;
            let ctx = self.cc_context(now, 0);
            self.cc.undo_cwnd(&ctx);
        }
        self.loss_by_rto = false;
        self.force_rtx = false;
        self.phase = self.calm_phase();
        self.stats.spurious_rtos += 1;
        if self.snd_una != self.snd_max {
            self.arm_rto(now);
        }
    }

    // ------------------------------------------------------------------
    // RACK-TLP (RFC 8985): the endpoint's side of [`crate::rack`]
    // ------------------------------------------------------------------

    /// After an ACK was processed (its deliveries given to RACK): RACK's update, the
    /// probe's outcome (§7.4), loss detection (§6.2), recovery if something is lost
    /// (RFC 6675 §5 with RACK's marks), and the PTO (§7.2).
    fn rack_on_ack(&mut self, now: i64, ack: u32, una_advanced: bool, dupack_without_sack: bool) {
        let Some(rack) = self.rack.as_mut() else {
            return;
        };
        rack.update(now);
        if rack.tlp_on_ack(ack, dupack_without_sack) == TlpOutcome::RepairedLoss {
            self.tlp_repaired_loss(now);
        }
        self.rack_detect_and_recover(now);
        self.tlp_schedule(now, una_advanced);
    }

    /// RACK_detect_loss_and_arm_timer (RFC 8985 §6.2 step 5, §6.3), then RFC 6675 §5's
    /// recovery when it marked a loss outside one.
    fn rack_detect_and_recover(&mut self, now: i64) {
        if self.rack_detect_loss(now)
            && matches!(self.phase, Phase::Open | Phase::Disorder)
            && self.may_fast_retransmit()
        {
            self.enter_fast_retransmit(now);
        }
    }

    /// Marks lost every segment RACK judges lost (a retransmission in flight too: it
    /// goes again) and arms the reordering timer for the latest of those that will be
    /// lost unless acknowledged; true when anything was marked.
    fn rack_detect_loss(&mut self, now: i64) -> bool {
        let Some(rack) = self.rack.as_mut() else {
            return false;
        };
        let in_recovery = matches!(self.phase, Phase::Recovery | Phase::Loss);
        let sacked_segments = self.sacked_bytes / self.smss.max(1);
        let reo_wnd = rack.reo_wnd(
            in_recovery,
            sacked_segments,
            self.cfg.dupack_threshold,
            self.srtt,
        );
        let mut timeout = 0;
        let mut marked = false;
        let scan_end = rack.scan_end();
        for s in self.rtx.iter_mut() {
            if scan_end.is_some_and(|e| seq::ge(s.seq, e)) {
                break;
            }
            // Acknowledged, or lost and waiting for its retransmission.
            if s.flags & SACKED != 0 || s.flags & (LOST | RETRANS) == LOST {
                continue;
            }
            match rack.verdict(now, reo_wnd, s.sent_ns, s.end()) {
                Verdict::NotJudged => {}
                Verdict::LostIn(t) => timeout = timeout.max(t),
                Verdict::Lost => {
                    if s.flags & RETRANS != 0 {
                        s.flags &= !RETRANS;
                        self.retrans_bytes -= s.len;
                    } else {
                        s.flags |= LOST;
                        self.lost_bytes += s.len;
                    }
                    self.lost_marked += u64::from(s.len);
                    if seq::lt(s.seq, self.rtx_hint) {
                        self.rtx_hint = s.seq;
                    }
                    self.stats.rack_marked_lost += 1;
                    marked = true;
                }
            }
        }
        rack.reo_deadline = (timeout > 0).then_some(now + timeout);
        marked
    }

    /// RFC 8985 §7.2: (re)arms the PTO when a probe may go: SACK-based, nothing
    /// SACKed or lost, no recovery, data outstanding and no probe outstanding;
    /// otherwise cancels it. `restart`: new data was sent or cumulatively
    /// acknowledged (else an armed PTO keeps its time).
    fn tlp_schedule(&mut self, now: i64, restart: bool) {
        if self.rack.is_none() {
            return;
        }
        let eligible = self.phase == Phase::Open && self.snd_una != self.snd_max;
        let srtt = self.has_rtt.then_some(self.srtt);
        let one_segment = self.flight_size() <= self.smss;
        let rto_deadline = self.rto_deadline;
        let Some(rack) = self.rack.as_mut() else {
            return;
        };
        if !eligible || rack.tlp_outstanding() {
            rack.pto_deadline = None;
        } else if restart || rack.pto_deadline.is_none() {
            let pto = rack.pto(now, srtt, one_segment, rto_deadline);
            rack.pto_deadline = Some(now + pto);
        }
    }

    /// RACK's timers due at `now`: the reordering timer (§6.3) marks losses and may
    /// start a recovery; the PTO (§7.3) sends the probe returned.
    fn rack_timers(&mut self, now: i64) -> Option<Segment> {
        let rack = self.rack.as_mut()?;
        if rack.reo_deadline.is_some_and(|d| now >= d) {
            rack.reo_deadline = None;
            self.rack_detect_and_recover(now);
        }
        let rack = self.rack.as_mut()?;
        if rack.pto_deadline.is_none_or(|d| now < d) {
            return None;
        }
        rack.pto_deadline = None;
        self.tlp_send_probe(now)
    }

    /// TLP_send_probe (RFC 8985 §7.3): a new segment if the receive window allows
    /// one (cwnd does not hold it back), else the highest-sequence segment again;
    /// then TLP.end_seq = SND.NXT and the RTO restarts (the probe takes the
    /// timer's place, as in Linux: a PTO capped by the RTO fires instead of it).
    fn tlp_send_probe(&mut self, now: i64) -> Option<Segment> {
        if self.phase != Phase::Open || self.snd_una == self.snd_max {
            return None;
        }
        let (seg, is_retrans) = match self.next_new_segment(now, true) {
            Some(seg) => (seg, false),
            None => {
                let i = self.rtx.len().checked_sub(1)?;
                self.rtx[i].flags |= EVER_RETRANS;
                self.rtx[i].sent_ns = now;
                self.rtx[i].rate = self.rate.on_send(now, false);
                let s = self.rtx[i];
                self.timing = None; // Karn
                (self.resend(now, s), true)
            }
        };
        self.stats.tlp_probes += 1;
        let snd_nxt = self.snd_max;
        if let Some(rack) = self.rack.as_mut() {
            rack.tlp_sent(snd_nxt, is_retrans);
        }
        self.arm_rto(now);
        Some(seg)
    }

    /// RFC 8985 §7.4.2: the probe's retransmission repaired a loss nothing else saw;
    /// the congestion control responds as to a loss, without a retransmission (as
    /// Linux's CWR: ssthresh from the algorithm, cwnd down to it).
    fn tlp_repaired_loss(&mut self, now: i64) {
        let fs = self.flight_size();
        self.ssthresh = self.cc_ssthresh(now, fs);
        if !self.cc.controls_cwnd() {
            self.cwnd = self.cwnd.min(self.ssthresh);
        }
        self.cc_event(now, CaEvent::Cwr);
        self.ecn_window_reduced();
    }

    /// Receiver: payload and FIN (RFC 793 §3.9, RFC 5681 §4.2, RFC 1122 §4.2.3.2).
    fn on_data(&mut self, now: i64, seg: &Segment) {
        if !self.peer_syn {
            return;
        }
        let mut start = seg.seq;
        let mut len = seg.len;
        let fin = seg.flags.contains(Flags::FIN);
        let end = start.wrapping_add(len);
        if seq::le(end, self.rcv_nxt) && !(fin && end == self.rcv_nxt && !self.peer_fin) {
            // Entirely old: a duplicate. ACK at once (it may be a lost ACK's fault).
            self.pending_ack = true;
            return;
        }
        if seq::lt(start, self.rcv_nxt) {
            let d = self.rcv_nxt.wrapping_sub(start);
            start = self.rcv_nxt;
            len -= d;
        }
        // Trim to the window we advertised.
        let edge = if seq::gt(self.rcv_adv, self.rcv_nxt) {
            self.rcv_adv
        } else {
            self.rcv_nxt
                .wrapping_add(self.rcv_buf.saturating_sub(self.ooo_bytes))
        };
        let mut fin_here = fin;
        if seq::gt(start.wrapping_add(len), edge) {
            len = edge.wrapping_sub(start).min(len);
            fin_here = false;
            if len == 0 {
                self.pending_ack = true;
                return;
            }
        }
        if fin_here {
            self.peer_fin_seq = Some(start.wrapping_add(len));
        }
        if start == self.rcv_nxt {
            self.rcv_autotune_sample(now, seg, len);
            let filled_gap = !self.ooo.is_empty();
            self.deliver(len);
            while let Some(&(a, b)) = self.ooo.front() {
                if seq::gt(a, self.rcv_nxt) {
                    break;
                }
                self.ooo.pop_front();
                self.ooo_bytes -= b.wrapping_sub(a);
                if seq::gt(b, self.rcv_nxt) {
                    self.deliver(b.wrapping_sub(self.rcv_nxt));
                }
            }
            self.rcv_autotune_read(now);
            self.unacked_rcv_bytes += len;
            if filled_gap {
                // RFC 5681 §4.2: ACK at once a segment that fills (part of) a gap.
                self.pending_ack = true;
            } else if !self.cfg.delayed_ack.enabled
                || self.unacked_rcv_bytes >= self.cfg.delayed_ack.every * self.smss
            {
                self.pending_ack = true;
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.cfg.delayed_ack.timeout_ns);
            }
        } else {
            if len > 0 {
                self.insert_ooo(start, start.wrapping_add(len));
            }
            // RFC 5681 §4.2: an out-of-order segment is acknowledged at once.
            self.pending_ack = true;
        }
        if let Some(f) = self.peer_fin_seq {
            if f == self.rcv_nxt && !self.peer_fin {
                self.peer_fin = true;
                self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
                self.pending_ack = true;
                // The application reads end-of-stream and closes its side.
                self.fin_requested = true;
            }
        }
    }

    /// Autotuning's receiver RTT sample from an in-order segment of `len` bytes:
    /// by its TSecr if it is full-sized and timestamps are in use, else by the
    /// window method (see [`autotune`]).
    fn rcv_autotune_sample(&mut self, now: i64, seg: &Segment, len: u32) {
        if !self.cfg.autotune {
            return;
        }
        let smss = self.smss;
        let now_ts = self.ts_now(now);
        let (ts_ok, rcv_nxt, window) = (self.ts_ok, self.rcv_nxt, self.rcv_buf);
        let space = self.rcv_space.get_or_insert_with(|| RcvSpace::new(smss));
        match seg.options.timestamps {
            Some((_, tsecr)) if ts_ok => {
                if len >= smss {
                    space.on_tsecr(now_ts, tsecr);
                }
            }
            _ => space.on_in_order(now, rcv_nxt, window),
        }
    }

    /// Autotuning after in-order data was read: the receive window may grow
    /// (`tcp_rcv_space_adjust`, see [`autotune`]).
    fn rcv_autotune_read(&mut self, now: i64) {
        let read = self.stats.bytes_delivered;
        let smss = self.smss;
        if let Some(space) = self.rcv_space.as_mut() {
            if let Some(w) = space.on_read(now, read, smss) {
                self.rcv_buf = self.rcv_buf.max(w);
            }
        }
    }

    fn deliver(&mut self, n: u32) {
        self.rcv_nxt = self.rcv_nxt.wrapping_add(n);
        self.delivered_pending += u64::from(n);
        self.stats.bytes_delivered += u64::from(n);
    }

    /// Adds [start, end) to the out-of-order ranges (merging) and records the range as
    /// the most recent for SACK (RFC 2018 §4: the first block reports the segment
    /// received last).
    fn insert_ooo(&mut self, start: u32, end: u32) {
        let mut s = start;
        let mut e = end;
        let i = self.ooo.partition_point(|&(_, b)| seq::lt(b, s));
        while i < self.ooo.len() {
            let (a, b) = self.ooo[i];
            if seq::gt(a, e) {
                break;
            }
            // Overlapping or touching: merge.
            if seq::lt(a, s) {
                s = a;
            }
            if seq::gt(b, e) {
                e = b;
            }
            self.ooo_bytes -= b.wrapping_sub(a);
            self.ooo.remove(i);
        }
        self.ooo.insert(i, (s, e));
        self.ooo_bytes += e.wrapping_sub(s);
        let mut recent = SackBlocks::new();
        recent.push(s, e);
        for (a, _) in self.sack_recent.iter() {
            if recent.len() == SackBlocks::MAX {
                break;
            }
            if let Some(r) = self.ooo_range_containing(a) {
                if !recent.iter().any(|(x, _)| x == r.0) {
                    recent.push(r.0, r.1);
                }
            }
        }
        self.sack_recent = recent;
    }

    fn ooo_range_containing(&self, x: u32) -> Option<(u32, u32)> {
        let i = self.ooo.partition_point(|&(_, b)| seq::le(b, x));
        self.ooo
            .get(i)
            .copied()
            .filter(|&(a, b)| seq::le(a, x) && seq::lt(x, b))
    }

    /// SACK blocks for an outgoing ACK: the recorded order, each block refreshed to the
    /// range holding it now, those below rcv_nxt dropped.
    fn sack_blocks(&self) -> SackBlocks {
        let mut out = SackBlocks::new();
        for (a, _) in self.sack_recent.iter() {
            if seq::lt(a, self.rcv_nxt) {
                continue;
            }
            if let Some(r) = self.ooo_range_containing(a) {
                if !out.iter().any(|(x, _)| x == r.0) {
                    out.push(r.0, r.1);
                }
            }
        }
        out
    }

    // ------------------------------------------------------------------
    // Sending
    // ------------------------------------------------------------------

    /// Fires any timer due at `now_ns`, then returns the next segment to send now, if
    /// any. Call until it returns `None` (after every `on_segment`, `write`, `close`,
    /// and at [`poll_at`](Endpoint::poll_at)).
    pub fn poll_transmit(&mut self, now_ns: i64) -> Option<Segment> {
        let now = now_ns;
        if let Some(at) = self.standby_probe_at {
            if self.pending_ack {
                let seq = self.snd_max;
                return Some(self.emit(now, seq, Flags::ACK, 0));
            }
            if now < at {
                return None;
            }
            self.standby_probe_at = Some(now + self.cfg.elfn_probe_ns.unwrap_or(0).max(1));
            return self.probe(now);
        }
        if let Some(probe) = self.rack_timers(now) {
            return Some(probe);
        }
        if self.rto_deadline.is_some_and(|d| now >= d) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
        if self.delack_deadline.is_some_and(|d| now >= d) {
            self.delack_deadline = None;
            self.pending_ack = true;
        }
        if self.pacing_deadline.is_some_and(|d| now >= d) {
            self.pacing_deadline = None;
        }
        if self.syn_pending {
            self.syn_pending = false;
            return Some(self.emit_syn(now));
        }
        if !self.peer_syn {
            return None;
        }
        if self.handshake_ack_pending {
            self.handshake_ack_pending = false;
            let seq = self.snd_max;
            return Some(self.emit(now, seq, Flags::ACK, 0));
        }
        if self.syn_acked && !self.paced_back(now) {
            if let Some(s) = self
                .next_retransmission(now)
                .or_else(|| self.next_new_segment(now, false))
            {
                self.paced(now, &s);
                return Some(s);
            }
        }
        if self.pending_ack {
            let seq = self.snd_max;
            return Some(self.emit(now, seq, Flags::ACK, 0));
        }
        None
    }

    /// `tcp_pacing_check`: true when the congestion control paces and the next data
    /// segment may not leave yet; the pacing timer is then armed for its departure.
    fn paced_back(&mut self, now: i64) -> bool {
        if self.cc.pacing_rate().is_none() {
            return false;
        }
        self.pacing_deadline = self.pacer.release_at(now);
        self.pacing_deadline.is_some()
    }

    /// A segment is leaving: a data segment sets the next one's departure time
    /// (`tcp_update_skb_after_send`).
    fn paced(&mut self, now: i64, seg: &Segment) {
        if let (Some(rate), true) = (self.cc.pacing_rate(), seg.len > 0) {
            self.pacer.on_send(now, seg.len, rate);
        }
    }

    fn emit_syn(&mut self, now: i64) -> Segment {
        let retransmission = self.snd_max != self.iss;
        self.snd_max = self.iss.wrapping_add(1);
        if retransmission {
            self.stats.retransmitted_segments += 1;
        } else {
            // Time the SYN (BSD does) for the first RTT sample.
            self.timing = Some((self.iss, now));
        }
        self.arm_rto_if_idle(now);
        let mut o = Options {
            mss: Some(self.cfg.mss),
            ..Options::default()
        };
        self.stats.segments_sent += 1;
        let window = self.cfg.rcvbuf.min(65535) as u16;
        if self.is_client {
            if self.cfg.window_scaling {
                o.window_scale = Some(Self::wscale_for(self.wscale_space()));
            }
            o.sack_permitted = self.cfg.variant == Variant::Sack;
            if self.cfg.timestamps {
                o.timestamps = Some((self.ts_now(now), 0));
            }
            let mut flags = Flags::SYN;
            if self.cfg.ecn {
                // RFC 3168 §6.1.1: an ECN-setup SYN.
                flags |= Flags::ECE | Flags::CWR;
            }
            Segment {
                seq: self.iss,
                ack: 0,
                flags,
                window,
                len: 0,
                options: o,
                ect: false,
            }
        } else {
            if self.ws_ok {
                o.window_scale = Some(self.rcv_wscale);
            }
            o.sack_permitted = self.sack_ok;
            if self.ts_ok {
                o.timestamps = Some((self.ts_now(now), self.ts_recent));
            }
            self.rcv_adv = self.rcv_nxt.wrapping_add(u32::from(window));
            self.last_ack_sent = self.rcv_nxt;
            let mut flags = Flags::SYN | Flags::ACK;
            if self.ecn_ok {
                // RFC 3168 §6.1.1: an ECN-setup SYN-ACK.
                flags |= Flags::ECE;
            }
            Segment {
                seq: self.iss,
                ack: self.rcv_nxt,
                flags,
                window,
                len: 0,
                options: o,
                ect: false,
            }
        }
    }

    /// The window field to advertise: rcvbuf minus the out-of-order bytes, never moving
    /// the right edge left (RFC 7323 §2.4, RFC 1122 §4.2.2.16), scaled down.
    fn window_field(&mut self) -> u16 {
        let scale = self.rcv_wscale;
        let free = self.rcv_buf.saturating_sub(self.ooo_bytes);
        let mut win = free;
        let kept = self.rcv_adv.wrapping_sub(self.rcv_nxt);
        if seq::gt(self.rcv_adv, self.rcv_nxt) && kept > win {
            win = kept;
        }
        win = win.min(65535u32 << scale);
        let mut raw = win >> scale;
        if seq::gt(self.rcv_adv, self.rcv_nxt) && (raw << scale) < kept {
            raw += 1; // round up rather than shrink the window
        }
        let raw = raw.min(65535);
        let adv = self.rcv_nxt.wrapping_add(raw << scale);
        if seq::gt(adv, self.rcv_adv) {
            self.rcv_adv = adv;
        }
        raw as u16
    }

    /// Builds a segment carrying an ACK and does the receiver's bookkeeping.
    fn emit(&mut self, now: i64, seq: u32, flags: Flags, len: u32) -> Segment {
        let mut o = Options::default();
        if self.ts_ok {
            o.timestamps = Some((self.ts_now(now), self.ts_recent));
        }
        if self.sack_ok && !self.ooo.is_empty() {
            o.sack = self.sack_blocks();
            let fit = o.sack_blocks_that_fit();
            o.sack.truncate(fit);
        }
        let window = self.window_field();
        self.pending_ack = false;
        self.delack_deadline = None;
        self.unacked_rcv_bytes = 0;
        self.last_ack_sent = self.rcv_nxt;
        self.stats.segments_sent += 1;
        let mut flags = flags | Flags::ACK;
        if self.ece_pending {
            flags |= Flags::ECE;
        }
        Segment {
            seq,
            ack: self.rcv_nxt,
            flags,
            window,
            len,
            options: o,
            ect: false,
        }
    }

    /// RFC 6675 §4 NextSeg rule (1) / go-back-N: the lowest segment marked lost and not
    /// retransmitted, if cwnd allows (or a fast retransmit forces it).
    fn next_retransmission(&mut self, now: i64) -> Option<Segment> {
        if self.lost_bytes <= self.retrans_bytes {
            return None;
        }
        let start = self.rtx.partition_point(|s| seq::lt(s.seq, self.rtx_hint));
        let mut found = None;
        for i in start..self.rtx.len() {
            let s = self.rtx[i];
            if s.flags & (LOST | RETRANS | SACKED) == LOST {
                found = Some(i);
                break;
            }
        }
        let i = found?;
        let s = self.rtx[i];
        self.rtx_hint = s.seq;
        if !self.force_rtx && self.in_flight() + s.len > self.cwnd_allowance() {
            return None;
        }
        self.force_rtx = false;
        self.rtx[i].flags |= RETRANS | EVER_RETRANS;
        self.rtx[i].sent_ns = now;
        self.rtx[i].rate = self.rate.on_send(now, false);
        self.retrans_bytes += s.len;
        self.prr_count_sent(s.len);
        self.timing = None; // Karn (BSD cancels the timing on any retransmission).
        self.arm_rto_if_idle(now);
        Some(self.resend(now, s))
    }

    /// Sends segment `s` of the retransmission queue again, counted as a retransmission.
    fn resend(&mut self, now: i64, s: TxSeg) -> Segment {
        let payload = s.payload();
        self.stats.retransmitted_segments += 1;
        self.stats.retransmitted_bytes += u64::from(payload);
        self.count_data(payload);
        let mut flags = Flags::ACK;
        if s.flags & FIN_SEQ != 0 {
            flags |= Flags::FIN;
        }
        if payload > 0 {
            flags |= Flags::PSH;
        }
        self.emit(now, s.seq, flags, payload)
    }

    fn count_data(&mut self, payload: u32) {
        if payload > 0 {
            self.stats.data_segments_sent += 1;
            self.stats.bytes_sent += u64::from(payload);
        }
    }

    /// New data (RFC 5681 §3.1: within min(cwnd, rwnd) beyond snd_una), then the FIN.
    /// `probe`: a Tail Loss Probe, which cwnd does not hold back (RFC 8985 §7.3).
    fn next_new_segment(&mut self, now: i64, probe: bool) -> Option<Segment> {
        if self.fin_queued {
            return None;
        }
        let unsent = self.app_written - self.app_sent;
        if unsent == 0 && !self.fin_requested {
            return None;
        }
        let mut len = (self.smss as u64).min(unsent) as u32;
        let outstanding = self.snd_max != self.snd_una;
        // Nagle (RFC 1122 §4.2.3.4): a short segment waits while data is outstanding,
        // unless it is the last one before the FIN.
        if len > 0 && len < self.smss && outstanding && !self.fin_requested {
            return None;
        }
        // Receiver window.
        let wnd_end = self.snd_una.wrapping_add(self.snd_wnd);
        let room = if seq::gt(wnd_end, self.snd_max) {
            wnd_end.wrapping_sub(self.snd_max)
        } else {
            0
        };
        if len > room {
            // Sender SWS avoidance: wait for a full segment unless nothing is out.
            if outstanding || room == 0 {
                return None;
            }
            len = room;
        }
        let fin = self.fin_requested && u64::from(len) == unsent;
        if len > 0 && !probe && self.in_flight() + len > self.cwnd_allowance() {
            return None;
        }
        let seq = self.snd_max;
        let seq_len = len + u32::from(fin);
        self.prr_count_sent(seq_len);
        let rate = self.rate.on_send(now, self.rtx.is_empty());
        self.rtx.push_back(TxSeg {
            seq,
            len: seq_len,
            flags: if fin { FIN_SEQ } else { 0 },
            sent_ns: now,
            rate,
        });
        self.snd_max = seq.wrapping_add(seq_len);
        self.app_sent += u64::from(len);
        if fin {
            self.fin_queued = true;
        }
        if !self.ts_ok && self.timing.is_none() && len > 0 {
            self.timing = Some((seq, now));
        }
        self.count_data(len);
        self.arm_rto_if_idle(now);
        if !probe {
            // RFC 8985 §7.2: (re)start the PTO after sending new data.
            self.tlp_schedule(now, true);
        }
        let mut flags = Flags::ACK;
        if fin {
            flags |= Flags::FIN;
        }
        if len > 0 && u64::from(len) == unsent {
            flags |= Flags::PSH;
        }
        if len > 0 && self.cwr_pending {
            flags |= Flags::CWR;
            self.cwr_pending = false;
        }
        let mut seg = self.emit(now, seq, flags, len);
        // RFC 3168 §6.1.5: only new data is ECN-capable.
        seg.ect = self.ecn_ok && len > 0;
        Some(seg)
    }
}
