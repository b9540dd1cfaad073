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
//! scenario used before congestion control was selectable) and [`cubic`] (RFC 9438).
//! [`CcAlgorithm`] names one in a [`Config`](crate::Config); [`CongestionControl`] is
//! an enum over their states, so an endpoint stays `Clone` and `Debug` and the
//! dispatch needs no `Box<dyn>`.

pub mod cubic;
pub mod hystart;
pub mod hystart_linux;
pub mod reno;

use serde::{Deserialize, Serialize};

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
}

impl CcAlgorithm {
    /// The names [`CcAlgorithm::from_name`] accepts, for error messages.
    pub const NAMES: &'static str = "reno, cubic";

    /// The algorithm a Linux `TCP_CONGESTION` name selects, if modelled.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "reno" => Some(CcAlgorithm::Reno),
            "cubic" => Some(CcAlgorithm::Cubic),
            _ => None,
        }
    }

    /// The name, as Linux spells it.
    pub fn name(self) -> &'static str {
        match self {
            CcAlgorithm::Reno => "reno",
            CcAlgorithm::Cubic => "cubic",
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
}

/// The state of one sender's algorithm: an enum over the algorithms.
#[derive(Clone, Debug, PartialEq)]
pub enum CongestionControl {
    /// [`Reno`].
    Reno(Reno),
    /// [`Cubic`].
    Cubic(Cubic),
}

impl CongestionControl {
    /// A fresh state of `algorithm`.
    pub fn new(algorithm: CcAlgorithm) -> Self {
        match algorithm {
            CcAlgorithm::Reno => CongestionControl::Reno(Reno::default()),
            CcAlgorithm::Cubic => CongestionControl::Cubic(Cubic::default()),
        }
    }

    /// Which algorithm this is.
    pub fn algorithm(&self) -> CcAlgorithm {
        match self {
            CongestionControl::Reno(_) => CcAlgorithm::Reno,
            CongestionControl::Cubic(_) => CcAlgorithm::Cubic,
        }
    }

    /// The HyStart++ state (RFC 9406), whatever the algorithm.
    pub fn hystart(&self) -> &HyStart {
        match self {
            CongestionControl::Reno(a) => a.hystart(),
            CongestionControl::Cubic(a) => a.hystart(),
        }
    }

    /// The CUBIC state, when the algorithm is CUBIC.
    pub fn as_cubic(&self) -> Option<&Cubic> {
        match self {
            CongestionControl::Cubic(c) => Some(c),
            CongestionControl::Reno(_) => None,
        }
    }
}

impl CongestionOps for CongestionControl {
    fn ssthresh(&mut self, ctx: &CcContext) -> u32 {
        match self {
            CongestionControl::Reno(a) => a.ssthresh(ctx),
            CongestionControl::Cubic(a) => a.ssthresh(ctx),
        }
    }

    fn cong_avoid(&mut self, ctx: &CcContext, acked: u32) -> u32 {
        match self {
            CongestionControl::Reno(a) => a.cong_avoid(ctx, acked),
            CongestionControl::Cubic(a) => a.cong_avoid(ctx, acked),
        }
    }

    fn cwnd_event(&mut self, ctx: &CcContext, ev: CaEvent) {
        match self {
            CongestionControl::Reno(a) => a.cwnd_event(ctx, ev),
            CongestionControl::Cubic(a) => a.cwnd_event(ctx, ev),
        }
    }

    fn pkts_acked(&mut self, ctx: &CcContext, rtt_ns: Option<i64>) -> Option<u32> {
        match self {
            CongestionControl::Reno(a) => a.pkts_acked(ctx, rtt_ns),
            CongestionControl::Cubic(a) => a.pkts_acked(ctx, rtt_ns),
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
