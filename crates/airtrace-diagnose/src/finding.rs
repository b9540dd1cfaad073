//! What a finding is, and how the detectors build one.
//!
//! [`Finding`] is what every consumer sees (serialised as JSON by `airtrace diagnose
//! --json`, `airtrace analyze --json` and `airtrace._core.diagnose`, and read into
//! Python's `airtrace.finding.Finding`, whose fields are these). `Builder` fills the
//! fields every finding of one connection shares. This module uses no other module of
//! the crate: the gathering ([`collect`](crate::collect)), the detectors
//! ([`detect`](crate::detect), [`air`](crate::air), `unseen`) and the
//! [`selfcheck`](crate::selfcheck) all build on it.

use std::collections::BTreeMap;

use serde::Serialize;

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
    /// [`Diagnoser::time_base`](crate::Diagnoser::time_base)).
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

/// The direction name of annotation direction `d`.
fn direction(d: usize) -> &'static str {
    if d == 0 {
        "a_to_b"
    } else {
        "b_to_a"
    }
}

/// Builds findings for one connection, with shared fields filled.
pub(crate) struct Builder {
    /// The connection's index.
    pub(crate) conn: u32,
    /// Where its spans count from, ns (see [`Diagnoser::time_base`](crate::Diagnoser::time_base)).
    pub(crate) start_ns: i64,
    /// Its duration, ns: what `throughput_share` is a share of.
    pub(crate) duration_ns: i64,
    /// The findings so far.
    pub(crate) out: Vec<Finding>,
}

impl Builder {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push(
        &mut self,
        kind: &'static str,
        d: usize,
        (from_ns, to_ns): (i64, i64),
        cost_ns: i64,
        mut evidence: Vec<u64>,
        explanation: String,
        fix: &str,
        details: BTreeMap<&'static str, f64>,
    ) {
        evidence.sort_unstable();
        evidence.dedup();
        evidence.truncate(MAX_EVIDENCE);
        let s = |ns: i64| (ns - self.start_ns) as f64 / 1e9;
        let cost_ns = cost_ns.max(0);
        self.out.push(Finding {
            kind,
            connection: self.conn,
            direction: direction(d),
            start_s: s(from_ns),
            end_s: s(to_ns.max(from_ns)),
            cost_s: cost_ns as f64 / 1e9,
            throughput_share: if self.duration_ns > 0 {
                (cost_ns as f64 / self.duration_ns as f64).min(1.0)
            } else {
                0.0
            },
            evidence,
            explanation,
            fix: fix.to_string(),
            details,
        });
    }
}
