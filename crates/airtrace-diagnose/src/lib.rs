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
//! - [`finding`]: [`Finding`], what a finding holds (a stable `kind` users script
//!   against, the connection and direction, the time span in seconds from the start of
//!   the capture, the cost, evidence frames, an explanation and a fix), and the builder
//!   the detectors fill it with. Start here.
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
//! [`diagnose_file`] runs the analysis and the diagnosis over one capture;
//! [`Diagnoser::finish`], here, runs the detectors over what `collect` gathered.
//!
//! The modules use each other in one direction (tests/test_import_graph.py checks it):
//! `finding` uses none; `histogram`, `gaps`, `air` and `selfcheck` at most `finding`;
//! `collect` feeds on `air`, `gaps` and `histogram`; `unseen` and `detect` read what
//! `collect` gathered; this root puts them together. No module uses the root's own
//! items: they come from `finding` and `collect`.
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
pub mod finding;
pub mod gaps;
pub mod histogram;
pub mod selfcheck;
mod unseen;

use std::path::Path;

use airtrace_analysis::{analyze_file, FileReport};

pub use collect::Diagnoser;
pub use finding::{Finding, MAX_EVIDENCE};

/// Analyzes the capture at `path` and diagnoses every connection in it; the
/// diagnosis self-check's warnings come last in the report's.
pub fn diagnose_file(path: &Path) -> Result<(FileReport, Vec<Finding>), String> {
    let mut diagnoser = Diagnoser::default();
    let mut report = analyze_file(path, &mut diagnoser, &mut |_, _| {})?;
    let (findings, warnings) = diagnoser.finish(&report);
    report.warnings.extend(warnings);
    Ok((report, findings))
}

impl Diagnoser {
    /// Closes what is still open and runs every detector; findings come in order of
    /// connection, then start time; with them, a warning for each finding the
    /// self-check dropped (see [`selfcheck`]).
    pub fn finish(mut self, report: &FileReport) -> (Vec<Finding>, Vec<String>) {
        self.close();
        let bases: Vec<i64> = self.conns.iter().map(|c| self.time_base(c)).collect();
        // No connection seen both ways: the capture holds one direction of the traffic
        // (an uplink tap, an asymmetric route), not peers that fell silent.
        let one_way = self
            .conns
            .iter()
            .all(|c| c.dirs[0].packets == 0 || c.dirs[1].packets == 0);
        let mut findings = Vec::new();
        for (i, c) in self.conns.iter().enumerate() {
            let summary = report.connections.iter().find(|s| s.id as usize == i);
            findings.extend(detect::connection(i as u32, c, summary, bases[i], one_way));
        }
        findings.sort_by(|a, b| {
            (a.connection, a.start_s, a.kind)
                .partial_cmp(&(b.connection, b.start_s, b.kind))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let warnings = selfcheck::check(&mut findings, report);
        (findings, warnings)
    }
}
