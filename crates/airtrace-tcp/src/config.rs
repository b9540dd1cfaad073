//! Endpoint configuration: congestion-control [`Variant`], retransmission timer
//! ([`RtoConfig`]), [`DelayedAck`], buffers and options. Two presets:
//! [`Config::linux`] and [`Config::bsd`].
//!
//! Sizes are bytes, times are nanoseconds.

use serde::{Deserialize, Serialize};

pub use crate::cc::CcAlgorithm;
pub use crate::linux_rto::RtoRule;
pub use crate::spurious_rto::{SpuriousRtoDetection, UndoRule};

/// Loss recovery / congestion-control variant of the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// 4.3BSD-Tahoe as ns-2 models it: fast retransmit after the dupack threshold,
    /// then cwnd = 1 SMSS, slow start and go-back-N from the first unacknowledged byte.
    Tahoe,
    /// 4.4BSD-Reno, RFC 5681 §3.2: fast retransmit and fast recovery, left on the first
    /// ACK of new data.
    Reno,
    /// RFC 6582: Reno whose fast recovery lasts until everything sent before it is
    /// acknowledged, retransmitting one hole per partial ACK.
    NewReno,
    /// RFC 6675 SACK-based loss recovery (with RFC 2018 SACK).
    Sack,
}

/// Retransmission timer (RFC 6298).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtoConfig {
    /// RTO before the first RTT sample (RFC 6298 (2.1)).
    pub initial_ns: i64,
    /// Lower bound of the computed RTO (RFC 6298 (2.4)).
    pub min_ns: i64,
    /// Upper bound of the RTO, backoff included (RFC 6298 (2.5)).
    pub max_ns: i64,
    /// Clock granularity G. 0: exact timers and RTT samples. G > 0 emulates BSD's coarse
    /// timers: RTT samples count whole ticks and the retransmission timer only expires
    /// on tick boundaries (multiples of G from time 0). See the crate documentation.
    pub granularity_ns: i64,
    /// Most doublings of the RTO by exponential backoff (BSD: 6, that is 64×).
    pub max_backoff_shift: u32,
}

/// Delayed acknowledgments (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayedAck {
    /// false: every data segment is acknowledged at once.
    pub enabled: bool,
    /// Acknowledge at once when this many full-sized segments' worth of bytes (N × SMSS)
    /// is unacknowledged (2: "every second full-sized segment").
    pub every: u32,
    /// An ACK held back is sent this long after the first unacknowledged segment
    /// arrived.
    pub timeout_ns: i64,
}

/// Everything an [`Endpoint`](crate::Endpoint) needs to know besides its ISN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Sender's loss recovery. Also decides whether SACK is offered on the SYN:
    /// SACK-permitted is sent (and accepted) only by `Variant::Sack` endpoints, so a
    /// SACK receiver needs `Variant::Sack` too.
    pub variant: Variant,
    /// Congestion control (Linux's `TCP_CONGESTION`): how cwnd grows and what
    /// ssthresh a congestion event sets; [`variant`](Config::variant) is the loss
    /// recovery around it. [`CcAlgorithm::Reno`] (the default, and both presets'):
    /// RFC 5681 AIMD, ssthresh = max(FlightSize/2, 2·SMSS), exactly what every
    /// endpoint did before this field existed. [`CcAlgorithm::Cubic`]: RFC 9438 (see
    /// [`cc::cubic`](crate::cc::cubic)).
    #[serde(default)]
    pub cc: CcAlgorithm,
    /// The MSS option value this endpoint announces (1460 on Ethernet). The payload
    /// per segment (SMSS) is min(own, peer's) minus 12 when timestamps are in use, as
    /// in Linux: 1460 becomes 1448.
    pub mss: u16,
    /// Initial window in segments (RFC 5681 §3.1, RFC 6928 IW10). A lost SYN or
    /// SYN-ACK makes it one segment (RFC 5681 §3.1).
    pub initial_cwnd_segments: u32,
    /// Send buffer: bytes written and not yet acknowledged (sent or not).
    pub sndbuf: u32,
    /// Receive buffer: the window advertised is rcvbuf minus the out-of-order bytes
    /// held (the application reads in-order data at once).
    pub rcvbuf: u32,
    /// Offer the timestamps option (RFC 7323); used when both ends offer it.
    pub timestamps: bool,
    /// Offer window scaling (RFC 7323 §2); used when both ends offer it.
    pub window_scaling: bool,
    /// Receiver's delayed ACK.
    pub delayed_ack: DelayedAck,
    /// Retransmission timer.
    pub rto: RtoConfig,
    /// Duplicate ACKs that trigger fast retransmit (DupThresh, 3).
    pub dupack_threshold: u32,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    /// Grow cwnd by the bytes each ACK covers (RFC 3465, L = 2·SMSS; Linux counts
    /// packets the same way) instead of per ACK (4.4BSD, ns-2, ns-3: SMSS per ACK in
    /// slow start, SMSS²/cwnd per ACK in congestion avoidance). Per-ACK growth is
    /// slower with delayed ACKs.
    pub byte_counting: bool,
    /// On fast retransmit, halve the bytes still in the network rather than RFC 5681's
    /// FlightSize, as ns-3 does (`GetSsThresh(tcb, BytesInFlight())` in
    /// `TcpSocketBase::EnterRecovery`): with SACK, FlightSize less the SACKed bytes and
    /// the lost head (RFC 6675's pipe); without, less one segment per duplicate ACK (ns-3
    /// keeps the lost head counted as in flight). It gives a smaller ssthresh and so a
    /// lower throughput under random loss. Off in both presets (RFC 5681).
    pub ssthresh_from_pipe: bool,
    /// On every congestion event (fast retransmit, timeout, ECN, a loss a tail loss
    /// probe repaired), halve cwnd rather than RFC 5681's FlightSize, as Linux's
    /// `tcp_reno_ssthresh` does (`max(cwnd/2, 2)`). The two differ when less than cwnd
    /// is in flight as the loss is found: a receive-window- or application-limited
    /// sender, or one whose ACKs a burst of losses on the reverse path held back
    /// (where FlightSize/2 shrinks the window burst after burst). Cubic reduces cwnd
    /// in either case (RFC 9438 §4.6). Off in both presets (RFC 5681); exclusive with
    /// [`ssthresh_from_pipe`](Config::ssthresh_from_pipe).
    #[serde(default)]
    pub ssthresh_from_cwnd: bool,
    /// Explicit Congestion Notification, RFC 3168. False in both presets, which then
    /// neither ask for ECN nor answer it (a real Linux host answers but does not ask,
    /// `net.ipv4.tcp_ecn = 2`: set `ecn` on a Linux server to model that). The client asks
    /// on its SYN (ECE and CWR set), a server with `ecn` answers an ECN-setup SYN with
    /// an ECN-setup SYN-ACK (ECE set), and the connection uses ECN when both did
    /// (§6.1.1). Then new data segments are ECN-capable ([`Segment::ect`]; never
    /// retransmissions, pure ACKs, SYNs or bare FINs, §6.1.5), the receiver echoes a
    /// CE mark ([`Endpoint::on_segment_ce`]) with ECE on every ACK until a segment
    /// with CWR arrives (§6.1.3), and the sender halves its window once per window of
    /// data without retransmitting, then sets CWR on its next new data segment
    /// (§6.1.2).
    ///
    /// [`Segment::ect`]: crate::Segment::ect
    /// [`Endpoint::on_segment_ce`]: crate::Endpoint::on_segment_ce
    #[serde(default)]
    pub ecn: bool,
    /// Explicit Link Failure Notification (Holland & Vaidya, MobiCom '99): when the
    /// network reports that a route of this connection broke, the sender stands by
    /// (retransmission timer off, window and RTO kept), sends its first unacknowledged
    /// segment as a probe every this many ns, and resumes with its timer restarted at
    /// the first ACK. `None` (both presets): off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elfn_probe_ns: Option<i64>,
    /// Proportional Rate Reduction (RFC 6937) in SACK loss recovery
    /// ([`Variant::Sack`]; ignored by the others): during a recovery cwnd is set on
    /// each ACK to pipe + sndcnt, so that the sender sends about one segment per two
    /// delivered while the pipe is above ssthresh (instead of RFC 6675's nothing, then
    /// one per ACK), and at most the data delivered plus one SMSS below it (PRR-SSRB).
    /// False in both presets (RFC 6675's cwnd = ssthresh, as before this field
    /// existed); Linux has used PRR since 3.2.
    #[serde(default)]
    pub prr: bool,
    /// HyStart++ (RFC 9406) in the initial slow start, whatever [`cc`](Config::cc):
    /// a rise of the minimum RTT from one round to the next moves the sender to
    /// Conservative Slow Start (growth divided by 4), and five rounds of it to
    /// congestion avoidance (ssthresh = cwnd), before a loss ends slow start. See
    /// [`cc::hystart`](crate::cc::hystart). False in both presets.
    #[serde(default)]
    pub hystart: bool,
    /// RACK-TLP (RFC 8985) on SACK connections ([`Variant::Sack`] at both ends;
    /// ignored otherwise): losses are marked by time (a segment sent before one that
    /// was delivered, more than RACK.rtt + the reordering window ago; the window is
    /// min_RTT/4 once reordering was seen) instead of by RFC 6675's DupThresh rules,
    /// and a Tail Loss Probe (2·SRTT after the last send or ACK, capped by the RTO)
    /// asks for the SACKs that repair a tail loss without a timeout. See
    /// [`rack`](crate::rack). False in both presets; Linux has used it since 4.18.
    #[serde(default)]
    pub rack_tlp: bool,
    /// Detection of spurious retransmission timeouts, with the Eifel response (RFC
    /// 4015: the window reduction undone, new data instead of go-back-N):
    /// [`SpuriousRtoDetection::Frto`] (RFC 5682: after the timeout, two new segments
    /// instead of retransmissions, and the timeout is spurious if the ACKs that follow
    /// acknowledge data sent before it), [`SpuriousRtoDetection::Eifel`] (RFC 3522:
    /// the first ACK after the retransmission echoes the original's timestamp; needs
    /// timestamps), or `Off` (both presets; Linux uses F-RTO, `tcp_frto = 2`). See
    /// [`spurious_rto`](crate::spurious_rto).
    #[serde(default)]
    pub spurious_rto: SpuriousRtoDetection,
    /// How a timeout during a fast recovery sets ssthresh and how a spurious timeout
    /// is undone: [`UndoRule::Rfc4015`] (both presets, as before this field existed)
    /// or [`UndoRule::Linux`] (the window before the episode restored). See
    /// [`spurious_rto`](crate::spurious_rto).
    #[serde(default)]
    pub undo: UndoRule,
    /// How the RTO follows the RTT samples: [`RtoRule::Rfc6298`] (both presets, as
    /// before this field existed) or [`RtoRule::Linux`] (RTO ≥ SRTT + min RTO). See
    /// [`linux_rto`](crate::linux_rto).
    #[serde(default)]
    pub rto_rule: RtoRule,
    /// Linux's HyStart (the kernel's cubic: ACK-train and delay-increase detection)
    /// in slow start, with [`cc`](Config::cc) cubic (ignored by reno, which has none
    /// in Linux); see [`cc::hystart_linux`](crate::cc::hystart_linux). Excludes
    /// [`hystart`](Config::hystart). False in both presets.
    #[serde(default)]
    pub hystart_linux: bool,
    /// Buffer autotuning as Linux does it: the receive window grows by dynamic
    /// right-sizing (about twice the bytes delivered per RTT, `tcp_rcv_space_adjust`)
    /// up to half of `tcp_rmem[2]` (6 MiB), the send buffer with the congestion window
    /// (2 × cwnd, `tcp_sndbuf_expand`) up to `tcp_wmem[2]` (4 MiB); [`rcvbuf`] and
    /// [`sndbuf`] are where they start. See [`autotune`](crate::autotune). False in
    /// both presets (fixed buffers, as before this field existed).
    ///
    /// [`rcvbuf`]: Config::rcvbuf
    /// [`sndbuf`]: Config::sndbuf
    #[serde(default)]
    pub autotune: bool,
}

const MS: i64 = 1_000_000;
const S: i64 = 1_000 * MS;

impl Config {
    /// A current Linux host: SACK, MSS option 1460 with timestamps (so 1448 payload
    /// bytes a segment), IW10, RTO initial 1 s / min 200 ms / max 120 s (RFC 6298,
    /// `TCP_RTO_MIN`, `TCP_RTO_MAX`), window scaling, delayed ACK 40 ms (Linux's
    /// `TCP_DELACK_MIN`) or every 2 segments, limited transmit. Buffers are 128 KiB
    /// each (Linux's default `tcp_rmem`; Linux advertises about half of it and
    /// autotunes, this model advertises all of it and does not autotune).
    pub fn linux() -> Self {
        Config {
            variant: Variant::Sack,
            cc: CcAlgorithm::Reno,
            mss: 1460,
            initial_cwnd_segments: 10,
            sndbuf: 128 * 1024,
            rcvbuf: 128 * 1024,
            timestamps: true,
            window_scaling: true,
            delayed_ack: DelayedAck {
                enabled: true,
                every: 2,
                timeout_ns: 40 * MS,
            },
            rto: RtoConfig {
                initial_ns: S,
                min_ns: 200 * MS,
                max_ns: 120 * S,
                granularity_ns: 0,
                max_backoff_shift: 15,
            },
            dupack_threshold: 3,
            limited_transmit: true,
            byte_counting: true,
            ssthresh_from_pipe: false,
            ssthresh_from_cwnd: false,
            ecn: false,
            elfn_probe_ns: None,
            prr: false,
            hystart: false,
            rack_tlp: false,
            spurious_rto: SpuriousRtoDetection::Off,
            undo: UndoRule::Rfc4015,
            rto_rule: RtoRule::Rfc6298,
            hystart_linux: false,
            autotune: false,
        }
    }

    /// A 4.4BSD-like Reno host of the RFC 1122 era: IW 1 segment, MSS 1460 (an Ethernet
    /// neighbour; 4.4BSD used 512 off the local net), 500 ms timer tick, RTO initial 3 s
    /// (RFC 1122 §4.2.3.1; 4.4BSD's own first SYN timeout works out to 6 s), min 1 s
    /// (`TCPTV_MIN`, two ticks), max 64 s (`TCPTV_REXMTMAX`), backoff capped at 64×
    /// (`tcp_backoff[]`), no timestamps, no window scaling, no SACK, delayed ACK
    /// 200 ms or every 2 segments, no limited transmit. Buffers 16 KiB (4.4BSD shipped
    /// 8 KiB, later BSDs 16–32 KiB).
    pub fn bsd() -> Self {
        Config {
            variant: Variant::Reno,
            cc: CcAlgorithm::Reno,
            mss: 1460,
            initial_cwnd_segments: 1,
            sndbuf: 16 * 1024,
            rcvbuf: 16 * 1024,
            timestamps: false,
            window_scaling: false,
            delayed_ack: DelayedAck {
                enabled: true,
                every: 2,
                timeout_ns: 200 * MS,
            },
            rto: RtoConfig {
                initial_ns: 3 * S,
                min_ns: S,
                max_ns: 64 * S,
                granularity_ns: 500 * MS,
                max_backoff_shift: 6,
            },
            dupack_threshold: 3,
            limited_transmit: false,
            byte_counting: false,
            ssthresh_from_pipe: false,
            ssthresh_from_cwnd: false,
            ecn: false,
            elfn_probe_ns: None,
            prr: false,
            hystart: false,
            rack_tlp: false,
            spurious_rto: SpuriousRtoDetection::Off,
            undo: UndoRule::Rfc4015,
            rto_rule: RtoRule::Rfc6298,
            hystart_linux: false,
            autotune: false,
        }
    }

    /// Checks the rules the endpoint relies on; the message names the rule broken.
    pub fn validate(&self) -> Result<(), String> {
        let smss = u32::from(self.mss).saturating_sub(if self.timestamps { 12 } else { 0 });
        if self.mss < 64 {
            return Err(format!("mss must be at least 64 bytes, got {}", self.mss));
        }
        if self.initial_cwnd_segments == 0 {
            return Err("initial_cwnd_segments must be at least 1".into());
        }
        if self
            .elfn_probe_ns
            .is_some_and(|p| !(1_000_000..=3_600_000_000_000).contains(&p))
        {
            return Err("elfn_probe must be between 1 ms and 1 hour".into());
        }
        if self.sndbuf < smss {
            return Err(format!(
                "sndbuf ({}) must hold at least one segment ({smss} bytes)",
                self.sndbuf
            ));
        }
        if self.rcvbuf < 2 * smss {
            return Err(format!(
                "rcvbuf ({}) must hold at least two segments ({} bytes)",
                self.rcvbuf,
                2 * smss
            ));
        }
        if self.rcvbuf > (1 << 30) {
            return Err(format!(
                "rcvbuf ({}) must be at most 1 GiB (window scale 14, RFC 7323 §2.3)",
                self.rcvbuf
            ));
        }
        if !self.window_scaling && self.rcvbuf > 65535 {
            // Not an error in TCP, but the model would never use the extra buffer.
            return Err(format!(
                "rcvbuf ({}) above 65535 needs window_scaling",
                self.rcvbuf
            ));
        }
        let r = &self.rto;
        if r.min_ns <= 0 {
            return Err(format!("rto.min_ns must be positive, got {}", r.min_ns));
        }
        if r.initial_ns < r.min_ns || r.initial_ns > r.max_ns {
            return Err(format!(
                "rto.initial_ns ({}) must lie in [rto.min_ns, rto.max_ns] = [{}, {}]",
                r.initial_ns, r.min_ns, r.max_ns
            ));
        }
        if r.granularity_ns < 0 {
            return Err(format!(
                "rto.granularity_ns must be 0 or positive, got {}",
                r.granularity_ns
            ));
        }
        if r.max_backoff_shift > 30 {
            return Err(format!(
                "rto.max_backoff_shift must be at most 30, got {}",
                r.max_backoff_shift
            ));
        }
        if self.delayed_ack.enabled {
            if self.delayed_ack.every == 0 {
                return Err("delayed_ack.every must be at least 1".into());
            }
            if self.delayed_ack.timeout_ns <= 0 {
                return Err(format!(
                    "delayed_ack.timeout_ns must be positive, got {}",
                    self.delayed_ack.timeout_ns
                ));
            }
        }
        if self.ssthresh_from_pipe && self.ssthresh_from_cwnd {
            return Err("ssthresh_from_pipe and ssthresh_from_cwnd exclude each other".into());
        }
        if self.hystart && self.hystart_linux {
            return Err("hystart (RFC 9406) and hystart_linux exclude each other".into());
        }
        if self.cc == CcAlgorithm::Bbr && self.variant != Variant::Sack {
            // The Reno and NewReno recoveries inflate cwnd themselves; Linux's BBR
            // counts duplicate ACKs as SACKed segments, which is not modelled.
            return Err("cc = bbr needs variant = sack".into());
        }
        if self.dupack_threshold == 0 {
            return Err("dupack_threshold must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid() {
        assert_eq!(Config::linux().validate(), Ok(()));
        assert_eq!(Config::bsd().validate(), Ok(()));
    }

    #[test]
    fn validate_names_the_rule() {
        let mut c = Config::linux();
        c.rto.initial_ns = 1;
        assert!(c.validate().unwrap_err().contains("rto.initial_ns"));
        let mut c = Config::bsd();
        c.rcvbuf = 100_000;
        assert!(c.validate().unwrap_err().contains("window_scaling"));
        let mut c = Config::linux();
        c.ssthresh_from_pipe = true;
        c.ssthresh_from_cwnd = true;
        assert!(c.validate().unwrap_err().contains("exclude"));
        let mut c = Config::linux();
        c.hystart = true;
        c.hystart_linux = true;
        assert!(c.validate().unwrap_err().contains("hystart_linux"));
        let mut c = Config::bsd();
        c.cc = CcAlgorithm::Bbr;
        assert_eq!(c.validate().unwrap_err(), "cc = bbr needs variant = sack");
        c.variant = Variant::Sack;
        assert_eq!(c.validate(), Ok(()));
    }
}
