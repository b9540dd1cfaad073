//! Congestion control: how the sender's window grows on ACKs and how far it comes
//! down after a congestion signal, separated from loss recovery.
//!
//! [`Endpoint`](crate::Endpoint) keeps the state machine and loss recovery (Tahoe,
//! Reno, NewReno, SACK: [`Variant`](crate::Variant) — when to retransmit what, how the
//! window is inflated and deflated during a recovery), and asks the algorithm here for
//! two numbers, as Linux's `struct tcp_congestion_ops` does:
//!
//! - [`CongestionOps::ssthresh`] on a congestion event (fast retransmit, ECN-Echo, a
//!   timeout): the new slow-start threshold, returned, never written by the algorithm;
//! - [`CongestionOps::cong_avoid`] on an ACK that may grow cwnd (outside a fast
//!   recovery, while cwnd limits the sender): slow start below ssthresh, congestion
//!   avoidance above;
//!
//! and tells it of the window reductions it made with [`CongestionOps::cwnd_event`]
//! (Linux's `set_state` and `cwnd_event`), so that the algorithm can restart its
//! counters or its epoch. With [`Config::hystart`](crate::Config::hystart) it also
//! shows the algorithm every ACK of new data and its RTT sample
//! ([`CongestionOps::pkts_acked`]), whose answer may end slow start ([`hystart`],
//! RFC 9406, shared by the algorithms; with
//! [`Config::hystart_linux`](crate::Config::hystart_linux), cubic's
//! [`hystart_linux`], the kernel's HyStart).
//!
//! The algorithms, one file each: [`reno`] (RFC 5681 AIMD, the default and what every
//! scenario used before congestion control was selectable), [`cubic`] (RFC 9438) and
//! [`bbr`] (BBR v1 as Linux ships it). BBR is of the other kind Linux knows, one
//! that sets cwnd itself on every ACK from a delivery-rate sample
//! ([`CongestionOps::cong_control`], [`crate::rate`]) and paces
//! ([`CongestionOps::pacing_rate`], [`crate::pacing`]): the endpoint then leaves
//! cwnd alone in its loss recovery ([`CongestionOps::controls_cwnd`]).
//! [`CcAlgorithm`] names one in a [`Config`](crate::Config); [`CongestionControl`] is
//! an enum over their states, so an endpoint stays `Clone` and `Debug` and the
//! dispatch needs no `Box<dyn>`.

pub mod bbr;
pub mod cubic;
pub mod hystart;
pub mod hystart_linux;
pub mod reno;

use serde::{Deserialize, Serialize};

use crate::endpoint::Phase;
use crate::rate::RateSample;

pub use bbr::Bbr;
pub use cubic::Cubic;
pub use hystart::HyStart;
pub use hystart_linux::LinuxHyStart;
pub use reno::Reno;

/// The congestion-control algorithm of a sender (Linux's `TCP_CONGESTION` name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcAlgorithm {
    /// RFC 5681 slow start and AIMD congestion avoidance, ssthresh = max(FlightSize/2,
    /// 2·SMSS). The default.
    #[default]
    Reno,
    /// CUBIC, RFC 9438 (β = 0.7, C = 0.4, Reno-friendly region, fast convergence), with
    /// Reno's slow start (HyStart++ with [`Config::hystart`](crate::Config::hystart)).
    Cubic,
    /// BBR v1 as Linux ships it ([`bbr`]): pacing and cwnd from a model of the
    /// path's bandwidth and RTT, no multiplicative decrease on loss. Needs SACK.
    Bbr,
}

impl CcAlgorithm {
    /// The names [`CcAlgorithm::from_name`] accepts, for error messages.
    pub const NAMES: &'static str = "reno, cubic, bbr";

    /// The algorithm a Linux `TCP_CONGESTION` name selects, if modelled.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "reno" => Some(CcAlgorithm::Reno),
            "cubic" => Some(CcAlgorithm::Cubic),
            "bbr" => Some(CcAlgorithm::Bbr),
            _ => None,
        }
    }

    /// The name, as Linux spells it.
    pub fn name(self) -> &'static str {
        match self {
            CcAlgorithm::Reno => "reno",
            CcAlgorithm::Cubic => "cubic",
            CcAlgorithm::Bbr => "bbr",
        }
    }
}

/// What the endpoint knows that an algorithm may read (Linux passes the socket).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcContext {
    /// Now, ns (the endpoint's clock).
    pub now_ns: i64,
    /// Sender's maximum segment size, bytes.
    pub smss: u32,
    /// Congestion window, bytes.
    pub cwnd: u32,
    /// Slow-start threshold, bytes.
    pub ssthresh: u32,
    /// The flight size a loss response halves, bytes: RFC 5681's FlightSize, or the
    /// pipe with [`Config::ssthresh_from_pipe`](crate::Config::ssthresh_from_pipe).
    /// Only meaningful for [`CongestionOps::ssthresh`].
    pub flight_size: u32,
    /// Smoothed RTT (RFC 6298 SRTT), ns; 0 before the first sample.
    pub srtt_ns: i64,
    /// [`Config::byte_counting`](crate::Config::byte_counting): grow by the bytes an
    /// ACK covers (RFC 3465) rather than once per ACK.
    pub byte_counting: bool,
    /// [`Config::hystart`](crate::Config::hystart): HyStart++ (RFC 9406) in the
    /// initial slow start.
    pub hystart: bool,
    /// [`Config::hystart_linux`](crate::Config::hystart_linux): Linux's HyStart in
    /// cubic's slow start.
    pub hystart_linux: bool,
    /// Oldest unacknowledged sequence number (after the ACK being processed).
    pub snd_una: u32,
    /// Next new sequence number (SND.NXT, the highest sent + 1).
    pub snd_nxt: u32,
}

/// A window reduction the endpoint made (Linux's `tcp_ca_state` transitions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// A fast retransmit started loss recovery (`TCP_CA_Recovery`; Tahoe's too).
    Recovery,
    /// ECN-Echo reduced the window without a loss (`TCP_CA_CWR`).
    Cwr,
    /// A retransmission timeout: cwnd is 1 SMSS, slow start follows (`TCP_CA_Loss`).
    Loss,
}

/// Linux's `TCP_INIT_CWND`: BBR's window before it has an RTT, in segments.
pub const INIT_CWND_SEGMENTS: u32 = 10;

/// What an algorithm that sets cwnd itself sees on every ACK (Linux's
/// `cong_control` reads it from the socket and the rate sample).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckSample {
    /// This ACK's delivery-rate sample ([`crate::rate`]).
    pub rs: RateSample,
    /// Bytes in flight after the ACK (RFC 6675's pipe, Linux's
    /// `tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Bytes in flight before it.
    pub prior_in_flight: u32,
    /// The loss-recovery state after the ACK.
    pub phase: Phase,
    /// Bytes delivered since the connection began, this ACK's included.
    pub delivered: u64,
    /// When `delivered` last grew (Linux's `delivered_mstamp`), ns.
    pub delivered_ns: i64,
    /// When the next paced segment may leave (Linux's `tcp_wstamp_ns`), ns.
    pub edt_ns: i64,
}

/// What [`CongestionOps::cong_control`] decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwndControl {
    /// The congestion window, bytes.
    pub cwnd: u32,
    /// A new slow-start threshold, if the algorithm sets one.
    pub ssthresh: Option<u32>,
    /// Mark the data in flight application-limited (rate samples until it is
    /// delivered do not describe the path).
    pub app_limited: bool,
}

/// The hooks of a congestion-control algorithm, named as Linux's
/// `struct tcp_congestion_ops` names them.
pub trait CongestionOps {
    /// The slow-start threshold after a congestion event (fast retransmit, ECN-Echo or
    /// a timeout that is not a repeat for the same data), bytes. The endpoint stores it
    /// and sets cwnd per its loss recovery.
    fn ssthresh(&mut self, ctx: &CcContext) -> u32;

    /// An ACK newly acknowledged `acked` bytes while cwnd limits the sender and no fast
    /// recovery is under way: returns the new cwnd (slow start below ssthresh,
    /// congestion avoidance above).
    fn cong_avoid(&mut self, ctx: &CcContext, acked: u32) -> u32;

    /// The endpoint reduced the window for `ev` (after calling
    /// [`ssthresh`](CongestionOps::ssthresh), when it did).
    fn cwnd_event(&mut self, ctx: &CcContext, ev: CaEvent);

    /// An ACK newly acknowledged data, with the RTT sample it gave, if any (Linux's
    /// `pkts_acked`); called before [`cong_avoid`](CongestionOps::cong_avoid), only
    /// with [`Config::hystart`](crate::Config::hystart). Returns a new ssthresh when
    /// the algorithm ends slow start on its own (HyStart++ after its Conservative Slow
    /// Start), else `None`.
    fn pkts_acked(&mut self, _ctx: &CcContext, _rtt_ns: Option<i64>) -> Option<u32> {
        None
    }

    /// The rate to pace data segments at, bytes per second, when the algorithm
    /// paces (Linux's `sk_pacing_rate` with `SK_PACING_NEEDED`); `None` (the
    /// default): segments leave as soon as the window allows, unpaced. See
    /// [`pacing`](crate::pacing).
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// The handshake completed (Linux's `init`, which runs then); `min_rtt_ns`: its
    /// RTT, if measured.
    fn init(&mut self, _ctx: &CcContext, _min_rtt_ns: Option<i64>) {}

    /// A window reduction was undone (a spurious timeout; Linux's `undo_cwnd`).
    fn undo_cwnd(&mut self, _ctx: &CcContext) {}

    /// True when the algorithm sets cwnd itself on every ACK
    /// ([`cong_control`](CongestionOps::cong_control)): the endpoint's loss
    /// recovery then neither sets nor inflates cwnd (Linux: a `cong_control`
    /// algorithm bypasses `tcp_cwnd_reduction` and `tcp_cong_avoid`).
    fn controls_cwnd(&self) -> bool {
        false
    }

    /// Linux's `cong_control`: on every ACK, after loss recovery processed it, the
    /// new cwnd from the rate sample. `None` for the algorithms that use
    /// [`cong_avoid`](CongestionOps::cong_avoid) instead.
    fn cong_control(&mut self, _ctx: &CcContext, _ack: &AckSample) -> Option<CwndControl> {
        None
    }
}

/// The state of one sender's algorithm: an enum over the algorithms.
#[derive(Clone, Debug, PartialEq)]
pub enum CongestionControl {
    /// [`Reno`].
    Reno(Reno),
    /// [`Cubic`].
    Cubic(Cubic),
    /// [`Bbr`].
    Bbr(Box<Bbr>),
}

impl CongestionControl {
    /// A fresh state of `algorithm`.
    pub fn new(algorithm: CcAlgorithm) -> Self {
        match algorithm {
            CcAlgorithm::Reno => CongestionControl::Reno(Reno::default()),
            CcAlgorithm::Cubic => CongestionControl::Cubic(Cubic::default()),
            CcAlgorithm::Bbr => CongestionControl::Bbr(Box::default()),
        }
    }

    /// Seeds the algorithm's random choices (BBR's first PROBE_BW phase); the
    /// others have none.
    pub fn seed(&mut self, seed: u64) {
        if let CongestionControl::Bbr(b) = self {
            b.seed(seed);
        }
    }

    /// The BBR state, when the algorithm is BBR.
    pub fn as_bbr(&self) -> Option<&Bbr> {
        match self {
            CongestionControl::Bbr(b) => Some(b),
            _ => None,
        }
    }

    /// Which algorithm this is.
    pub fn algorithm(&self) -> CcAlgorithm {
        match self {
            CongestionControl::Reno(_) => CcAlgorithm::Reno,
            CongestionControl::Cubic(_) => CcAlgorithm::Cubic,
            CongestionControl::Bbr(_) => CcAlgorithm::Bbr,
        }
    }

    /// The HyStart++ state (RFC 9406) of a window-growing algorithm (BBR has none).
    pub fn hystart(&self) -> Option<&HyStart> {
        match self {
            CongestionControl::Reno(a) => Some(a.hystart()),
            CongestionControl::Cubic(a) => Some(a.hystart()),
            CongestionControl::Bbr(_) => None,
        }
    }

    /// The CUBIC state, when the algorithm is CUBIC.
    pub fn as_cubic(&self) -> Option<&Cubic> {
        match self {
            CongestionControl::Cubic(c) => Some(c),
            CongestionControl::Reno(_) | CongestionControl::Bbr(_) => None,
        }
    }
}

impl CongestionOps for CongestionControl {
    fn ssthresh(&mut self, ctx: &CcContext) -> u32 {
        match self {
            CongestionControl::Reno(a) => a.ssthresh(ctx),
            CongestionControl::Cubic(a) => a.ssthresh(ctx),
            CongestionControl::Bbr(a) => a.ssthresh(ctx),
        }
    }

    fn cong_avoid(&mut self, ctx: &CcContext, acked: u32) -> u32 {
        match self {
            CongestionControl::Reno(a) => a.cong_avoid(ctx, acked),
            CongestionControl::Cubic(a) => a.cong_avoid(ctx, acked),
            CongestionControl::Bbr(a) => a.cong_avoid(ctx, acked),
        }
    }

    fn cwnd_event(&mut self, ctx: &CcContext, ev: CaEvent) {
        match self {
            CongestionControl::Reno(a) => a.cwnd_event(ctx, ev),
            CongestionControl::Cubic(a) => a.cwnd_event(ctx, ev),
            CongestionControl::Bbr(a) => a.cwnd_event(ctx, ev),
        }
    }

    fn pkts_acked(&mut self, ctx: &CcContext, rtt_ns: Option<i64>) -> Option<u32> {
        match self {
            CongestionControl::Reno(a) => a.pkts_acked(ctx, rtt_ns),
            CongestionControl::Cubic(a) => a.pkts_acked(ctx, rtt_ns),
            CongestionControl::Bbr(a) => a.pkts_acked(ctx, rtt_ns),
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.as_bbr().and_then(Bbr::pacing_rate)
    }

    fn init(&mut self, ctx: &CcContext, min_rtt_ns: Option<i64>) {
        if let CongestionControl::Bbr(a) = self {
            a.init(ctx, min_rtt_ns);
        }
    }

    fn undo_cwnd(&mut self, ctx: &CcContext) {
        if let CongestionControl::Bbr(a) = self {
            a.undo_cwnd(ctx);
        }
    }

    fn controls_cwnd(&self) -> bool {
        matches!(self, CongestionControl::Bbr(_))
    }

    fn cong_control(&mut self, ctx: &CcContext, ack: &AckSample) -> Option<CwndControl> {
        match self {
            CongestionControl::Bbr(a) => a.cong_control(ctx, ack),
            _ => None,
        }
    }
}

/// RFC 5681 §3.1 slow start, shared by the algorithms (RFC 9438 §4.10: CUBIC's is
/// Reno's unless HyStart++ is used, [`HyStart::slow_start`]): with byte counting (RFC 3465, L = 2·SMSS)
/// cwnd + min(acked, 2·SMSS); per ACK, cwnd + SMSS.
pub fn slow_start(ctx: &CcContext, acked: u32) -> u32 {
    if ctx.byte_counting {
        ctx.cwnd + acked.min(2 * ctx.smss)
    } else {
        ctx.cwnd + ctx.smss
    }
}
