//! Diagnosis: from airtrace's per-packet annotations to findings that name the cause
//! of a slow transfer, show the evidence, and say what would fix it.
//!
//! The seed studies ended with lists of causes found by people staring at plots:
//! retransmission timers that back off far longer than a loss burst, fast retransmit
//! that cannot fire with a window of two packets, fast retransmit suppressed after a
//! timeout by design, an overbuffered link inflating the RTT, bursts of loss mistaken
//! for congestion. This crate writes such findings out for any capture.
//!
//! # Map of the code
//!
//! - [`Finding`]: what a finding holds (a stable `kind` users script against, the
//!   connection and direction, the time span in seconds from the start of the
//!   capture, the cost, evidence frames, an explanation and a fix). Start here.
//! - [`collect`]: [`Diagnoser`](collect::Diagnoser), a
//!   [`PacketSink`](airtrace_analysis::PacketSink) that gathers, in the analyzer's one
//!   streaming pass, what the detectors need per connection and direction (timeout
//!   episodes, RTT histogram, loss runs, zero-window periods, idle periods).
//! - [`detect`]: the detectors, each a function from the gathered state to findings.
//! - [`air`]: the 802.11 layer from radiotap captures (data/ACK collisions, frames
//!   with a bad FCS).
//! - [`gaps`]: data acknowledged that the capture never saw (the capture's drops).
//! - [`histogram`]: the log-scale RTT histogram that keeps memory bounded.
//! - [`selfcheck`]: findings that cannot be true, dropped and named in a warning.
//! - `unseen`: losses of a direction the capture does not hold, from its receiver's
//!   duplicate ACKs.
//!
//! [`diagnose_file`] runs the analysis and the diagnosis over one capture.
//!
//! # Kinds
//!
//! `timeout_backoff`, `fast_retransmit_impossible`, `fast_retransmit_suppressed`,
//! `spurious_timeout`, `spurious_retransmission`, `excessive_queueing`, `burst_loss`, `random_loss`,
//! `link_outage`, `receiver_limited`, `sender_limited`, `delayed_ack_stall`,
//! `ack_compression`, `rate_adaptation_thrash`, `mac_retries`, `data_ack_collisions`,
//! `bad_fcs`, `capture_artifact`, `capture_drops`, `connection_refused`, `unseen_losses`. Names are stable: kinds may be added, never renamed.

pub mod air;
pub mod collect;
pub mod detect;
pub mod gaps;
pub mod histogram;
pub mod selfcheck;
mod unseen;

use std::collections::BTreeMap;
use std::path::Path;

use airtrace_analysis::{analyze_file, FileReport};
use serde::Serialize;

pub use collect::Diagnoser;

/// One finding (see the [crate documentation](crate)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What was found: one of the stable kind names.
    pub kind: &'static str,
    /// The connection (its index, as in the analysis report).
    pub connection: u32,
    /// The direction of the data concerned: `a_to_b` or `b_to_a`.
    pub direction: &'static str,
    /// Start of the span, seconds from the first packet of the capture (of the part of
    /// it the connection began in, when silences of more than a day split it: see
    /// [`Diagnoser::time_base`]).
    pub start_s: f64,
    /// End of the span, seconds from the first packet of the capture.
    pub end_s: f64,
    /// Transfer time this cost, in seconds (0 when the cause costs no time by itself).
    pub cost_s: f64,
    /// `cost_s` as a share of the connection's duration: the share of throughput lost.
    pub throughput_share: f64,
    /// Frame numbers of the packets that show it (at most [`MAX_EVIDENCE`]).
    pub evidence: Vec<u64>,
    /// What happened, in a sentence or two.
    pub explanation: String,
    /// What would fix it.
    pub fix: String,
    /// The numbers behind it (e.g. `max_backoff`, `rtt_min_s`, `mean_burst_segments`).
    pub details: BTreeMap<&'static str, f64>,
}

/// Most evidence frames kept per finding.
pub const MAX_EVIDENCE: usize = 20;

/// Analyzes the capture at `path` and diagnoses every connection in it; the
/// diagnosis self-check's warnings come last in the report's.
pub fn diagnose_file(path: &Path) -> Result<(FileReport, Vec<Finding>), String> {
    let mut diagnoser = Diagnoser::default();
    let mut report = analyze_file(path, &mut diagnoser, &mut |_, _| {})?;
    let (findings, warnings) = diagnoser.finish(&report);
    report.warnings.extend(warnings);
    Ok((report, findings))
}
