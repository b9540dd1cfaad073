//! A sans-IO TCP endpoint model for the airtrace discrete-event simulator.
//!
//! An [`Endpoint`] is one end of one TCP connection. It has no clock, no sockets and no
//! payload bytes: the simulator passes the time in (`now_ns`, integer nanoseconds),
//! hands it the segments that arrive ([`Endpoint::on_segment`]), asks for the segments
//! to send ([`Endpoint::poll_transmit`], until `None`) and wakes it at
//! [`Endpoint::poll_at`]. Payloads are lengths; the application is a byte counter
//! ([`Endpoint::write`], [`Endpoint::take_delivered`]). The simulator owns links, IP
//! headers and pcap writing; [`Options::encode`] gives it the option bytes.
//!
//! ```
//! use airtrace_tcp::{Config, Endpoint};
//!
//! let mut a = Endpoint::client(Config::linux(), 1000, 7);
//! let mut b = Endpoint::server(Config::linux(), 5000, 9);
//! a.write(10_000);
//! a.close();
//! // A zero-delay loop: deliver everything each side sends until both are quiet.
//! let mut now = 0;
//! for _ in 0..100 {
//!     let mut quiet = true;
//!     while let Some(s) = a.poll_transmit(now) { b.on_segment(now, &s); quiet = false; }
//!     while let Some(s) = b.poll_transmit(now) { a.on_segment(now, &s); quiet = false; }
//!     if quiet {
//!         match [a.poll_at(), b.poll_at()].into_iter().flatten().min() {
//!             Some(t) => now = t,
//!             None => break,
//!         }
//!     }
//! }
//! assert_eq!(b.take_delivered(), 10_000);
//! assert!(a.is_closed() && b.is_closed());
//! assert_eq!(a.stats().retransmitted_segments, 0);
//! ```
//!
//! # Map of the code
//!
//! - [`segment`]: [`Segment`] (header fields + payload length), [`Flags`], [`Options`]
//!   with Linux's option layout ([`Options::encode`]), [`SackBlocks`].
//! - [`config`]: [`Config`] with the [`Config::linux`] and [`Config::bsd`] presets,
//!   [`Variant`] (Tahoe, Reno, NewReno, SACK), [`RtoConfig`], [`DelayedAck`].
//! - [`cc`]: congestion control as a small trait ([`cc::CongestionOps`]: `ssthresh`,
//!   `cong_avoid`, `cwnd_event`, as Linux names them), one file per algorithm:
//!   [`cc::reno`] (the default), [`cc::cubic`] (RFC 9438) and [`cc::bbr`] (BBR v1 as
//!   Linux ships it), selected by [`Config::cc`] ([`CcAlgorithm`]).
//! - [`rate`]: delivery-rate estimation (Linux's tcp_rate.c), BBR's samples.
//! - [`pacing`]: the sender's pacing (Linux's internal pacing), for BBR.
//! - [`rack`]: RACK-TLP (RFC 8985) state and rules, [`Config::rack_tlp`].
//! - [`linux_rto`]: Linux's RTO, [`Config::rto_rule`].
//! - [`spurious_rto`]: F-RTO (RFC 5682) and Eifel (RFC 3522) detection of spurious
//!   timeouts with the Eifel response (RFC 4015), [`Config::spurious_rto`].
//! - [`autotune`]: Linux's receive- and send-buffer autotuning, [`Config::autotune`].
//! - [`endpoint`]: [`Endpoint`] (start here: handshake, sender, receiver, timers),
//!   [`SenderState`] (what the bundle's `tcpstate` samples), [`Phase`] (Linux's
//!   `tcp_ca_state`), [`Stats`].
//!
//! # What is modelled
//!
//! - Three-way handshake with option negotiation (MSS, window scale, SACK-permitted,
//!   timestamps: each used only when both ends offer it); SYN and SYN-ACK
//!   retransmission with backoff; FIN in both directions. The application at either
//!   end closes its side as soon as it reads the peer's FIN (a bulk sink), so a bulk
//!   transfer ends with both ends [`closed`](Endpoint::is_closed).
//! - Congestion control, RFC 5681 (`cc = reno`, the default): slow start with RFC 3465
//!   byte counting (L = 2·SMSS), congestion avoidance by byte counting (cwnd grows by
//!   one SMSS per cwnd of bytes acknowledged); cwnd grows only while it limits the
//!   sender. Or CUBIC, RFC 9438 (`cc = cubic`): β = 0.7, C = 0.4, the Reno-friendly
//!   region, fast convergence, the epoch restarted after a timeout; Reno's slow start.
//!   Either with HyStart++ (RFC 9406, [`Config::hystart`], off by default), or CUBIC
//!   with the kernel's own HyStart ([`Config::hystart_linux`], off by default). The
//!   algorithm sets ssthresh on a congestion event and grows cwnd; the loss recovery
//!   ([`Variant`]) around it is the same for both. Or BBR v1 as Linux ships it
//!   (`cc = bbr`, SACK only, [`cc::bbr`]): pacing rate and cwnd from a windowed-max
//!   delivery rate ([`rate`]) and a windowed-min RTT, STARTUP, DRAIN, PROBE_BW's
//!   gain cycle and PROBE_RTT, packet conservation in a recovery instead of a
//!   reduction; the sender paced ([`pacing`]). SACK recovery reduces the window
//!   at once (RFC 6675) or with PRR (RFC 6937, [`Config::prr`], off by default).
//! - RACK-TLP, RFC 8985 ([`Config::rack_tlp`], off by default; SACK connections):
//!   losses marked by time (RACK.xmit_ts, RACK.rtt, a reordering window of
//!   min_RTT/4 once reordering was seen, the reordering timer) instead of RFC 6675's
//!   DupThresh rules, lost retransmissions found the same way, and a Tail Loss Probe
//!   (PTO = 2·SRTT, plus 200 ms with one segment in flight, capped by the RTO; new
//!   data if any, else the last segment) with §7.4's detection of a loss it repaired.
//! - Spurious timeouts ([`Config::spurious_rto`], off by default): F-RTO (RFC 5682,
//!   SACK-enhanced as §3 on SACK connections) or Eifel detection with timestamps (RFC
//!   3522), and the Eifel response (RFC 4015): cwnd and ssthresh restored, new data
//!   instead of go-back-N, the RTO adapted; or Linux's undo ([`Config::undo`]): the
//!   window before the episode restored, and a timeout during a fast recovery that
//!   keeps the recovery's ssthresh.
//! - The RTO of RFC 6298, or Linux's ([`Config::rto_rule`], [`linux_rto`]): its
//!   variance term at least the minimum RTO, so RTO ≥ SRTT + min RTO.
//! - Loss recovery by [`Variant`]: Tahoe (ns-2's: fast retransmit, cwnd = 1 SMSS,
//!   go-back-N), Reno (RFC 5681 §3.2), NewReno (RFC 6582, partial ACKs, `recover`,
//!   "Impatient" timer), SACK (RFC 6675 scoreboard, IsLost, pipe, NextSeg rule 1; no
//!   rescue retransmission). RFC 3042 limited transmit. After a timeout or a recovery,
//!   duplicate ACKs start a fast retransmit only when the cumulative ACK is above
//!   `recover` (RFC 6582 §4.1; Tahoe, NewReno and SACK; not Reno, as 4.4BSD).
//! - Retransmission timer, RFC 6298: SRTT/RTTVAR in integer nanoseconds, RTO = SRTT +
//!   max(G, 4·RTTVAR) clamped to [min, max], exponential backoff capped by
//!   `max_backoff_shift` and `max_ns`, kept until a new RTT sample (Karn). On a
//!   timeout: ssthresh from the congestion control (Reno: max(FlightSize/2, 2·SMSS);
//!   held on a second timeout of the same data), cwnd = 1 SMSS, everything outstanding and not SACKed is marked lost and
//!   resent from snd_una (go-back-N) as cwnd allows. The timer also restarts with a
//!   fast retransmission, as in BSD and ns-2 (RFC 6298 (5.1) alone would leave it
//!   running).
//! - RTT samples: with timestamps, from TSecr on every ACK of new data (RFC 7323 §4.1),
//!   at the 1 ms resolution of the timestamp clock (TSval = ts_offset + now/1 ms);
//!   without, one segment timed at a time as BSD does (`t_rtseq`), never a
//!   retransmitted one (Karn), the SYN included.
//! - Coarse BSD timers, `granularity_ns` = G > 0: an RTT sample is G times the number
//!   of tick boundaries (multiples of G since time 0) crossed between the send and the
//!   ACK, as BSD's `t_rtt` counts slow-timeout ticks; a retransmission timer armed at
//!   time t with RTO r expires at the N-th tick boundary after t, N = ceil(r / G) (so
//!   after between (N−1)·G and N·G), as `t_timer[TCPT_REXMT]` counts down.
//! - Receiver: cumulative ACKs; an immediate ACK for an out-of-order segment, for a
//!   segment filling a gap, for a duplicate and for a FIN (RFC 5681 §4.2); otherwise
//!   delayed ACK (every N·SMSS bytes, or `timeout_ns` after the first unacknowledged
//!   segment); SACK blocks with the most recent first (RFC 2018 §4); window = rcvbuf
//!   minus out-of-order bytes, scaled, its right edge never moved left; TS.Recent per
//!   RFC 7323 §4.3.
//! - Sender SWS avoidance and Nagle: a short segment goes only when nothing is
//!   outstanding or it is the last before the FIN.
//! - ECN, RFC 3168, when [`Config::ecn`] is set at both ends: ECN-setup SYN (ECE, CWR)
//!   and SYN-ACK (ECE); new data segments are ECT(0) ([`Segment::ect`], never
//!   retransmissions or pure ACKs); the simulator reports a CE mark with
//!   [`Endpoint::on_segment_ce`]; the receiver sets ECE on every ACK until a segment
//!   with CWR arrives; the sender answers ECE with the congestion control's ssthresh
//!   (Reno: max(FlightSize/2, 2·SMSS)), cwnd = ssthresh, once per window of data (a fast retransmit or a timeout counts as
//!   that window's reduction), no retransmission, and CWR on its next new data segment
//!   ([`Stats::ecn_reductions`]).
//!
//! # What is not modelled
//!
//! RST (ignored), simultaneous open, urgent data, PAWS, D-SACK (so RACK's reordering
//! window is not adapted by it, and a TLP or spurious-timeout detection never learns
//! from one), SACK blocks covering a FIN, congestion controls other than Reno, CUBIC
//! and BBR v1 (and BBR's long-term policer estimate and ACK-aggregation allowance),
//! zero-window probes and the persist timer (the application reads at once, so the
//! window is never zero), keep-alive, TIME-WAIT's 2·MSL timer, path MTU discovery,
//! receive-buffer autotuning, RFC 6298 (5.7) (RTO reset to 3 s after a SYN timeout),
//! BSD's 200 ms delayed-ACK tick (the delayed ACK here fires exactly `timeout_ns` after
//! arming), Linux's quick-ACK mode at the start of a connection (every segment acked at
//! once), Linux's per-ACK (not per-byte) slow start and 4.4BSD's one-SMSS-per-ACK slow
//! start (both are byte counting here); for ECN: the fallback to a non-ECN SYN after a
//! SYN timeout (RFC 3168 §6.1.1.1, a MAY), an immediate ACK on a CE mark (Linux's
//! quick ACK; the ECE waits for the next ACK, delayed or not), ECT on window probes,
//! ECN nonces, AccECN. Sequence numbers wrap correctly; no transfer
//! may have 2^31 bytes or more in flight.
//!
//! # Tests
//!
//! `tests/common/mod.rs` is a two-endpoint network (fixed delay, optional rate, drop
//! rules: "drop data segment k the n-th time it is sent", "drop the n-th ACK", any
//! predicate; CE-mark rules on ECN-capable segments; extra delay for chosen segments,
//! a path that stalls for a while) that logs every segment in tcpdump notation, so tests read as packet
//! exchanges: `tests/exchanges.rs` (handshake, options, delayed ACK, close, SACK
//! blocks, clean transfers), `tests/recovery.rs` (each variant against targeted
//! losses), `tests/rto.rs` (RFC 6298, Karn, BSD ticks, backoff caps),
//! `tests/random_loss.rs` (property test), `tests/ecn.rs` (RFC 3168 negotiation, CE
//! marks by a "mark CE on segment k" rule, ECE until CWR, one reduction per window),
//! `tests/cubic.rs` (CUBIC's window after a loss against RFC 9438's W_cubic, fast
//! convergence, the Reno-friendly region on a short RTT, the epoch after a timeout),
//! `tests/rack_tlp.rs` (a tail loss repaired by a probe 2·SRTT after the last send,
//! reordering within and beyond RACK's window, a lost retransmission found without a
//! timeout), `tests/spurious_rto.rs` (a delay spike that fires the RTO: go-back-N
//! without detection, the window restored by F-RTO on the second ACK and by Eifel on
//! the first),
//! `tests/bbr.rs` (STARTUP doubling each round, DRAIN, PROBE_BW's gain cycle,
//! PROBE_RTT, the pacing rate, a loss that does not halve cwnd),
//! `tests/speed.rs` (ignored; segments per second).

pub mod autotune;
pub mod cc;
pub mod config;
pub mod endpoint;
pub mod linux_rto;
pub mod pacing;
pub mod rack;
pub mod rate;
pub mod segment;
pub mod spurious_rto;

pub use cc::{CcAlgorithm, CongestionControl};
pub use config::{Config, DelayedAck, RtoConfig, RtoRule, UndoRule, Variant};
pub use endpoint::{Endpoint, Phase, SenderState, Stats};
pub use segment::{Flags, Options, SackBlocks, Segment};
pub use spurious_rto::SpuriousRtoDetection;
