//! The diagnosis' self-check: findings that cannot be true are dropped and named.
//!
//! A finding's span lies inside the capture and runs forwards, its cost fits in its
//! connection's duration, its share of the throughput is a share, its evidence frames
//! exist in the file, and no episode is reported twice (issue 18: negative finding
//! times, one episode reported twice with two explanations). [`check`] runs last, over
//! the findings of a whole file.

use airtrace_analysis::FileReport;

use crate::finding::Finding;

/// Slack for comparing seconds computed along different paths.
const EPS_S: f64 = 1e-6;

/// Drops every finding that breaks a rule, and every repeat of an earlier finding
/// (same kind, connection, direction and span); returns one warning per finding
/// dropped, naming the file, the finding and its evidence frames.
pub fn check(findings: &mut Vec<Finding>, report: &FileReport) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings.drain(..) {
        let duration = report
            .connections
            .iter()
            .find(|c| c.id == f.connection)
            .map(|c| c.duration_s);
        let repeat = kept.iter().any(|k| {
            (k.kind, k.connection, k.direction) == (f.kind, f.connection, f.direction)
                && k.start_s == f.start_s
                && k.end_s == f.end_s
        });
        let broken = if repeat {
            Some("it repeats an earlier finding of the same episode".to_string())
        } else {
            broken_rule(&f, duration, report.frames)
        };
        match broken {
            Some(why) => warnings.push(format!(
                "{}: diagnosis self-check: {} finding of connection {} ({}) left out: {why} (evidence frames {:?})",
                report.path, f.kind, f.connection, f.direction, f.evidence
            )),
            None => kept.push(f),
        }
    }
    *findings = kept;
    warnings
}

/// The first rule `f` breaks, if any; `duration` is its connection's, `frames` the
/// file's.
fn broken_rule(f: &Finding, duration: Option<f64>, frames: u64) -> Option<String> {
    if !(f.start_s.is_finite() && f.end_s.is_finite() && f.cost_s.is_finite()) {
        return Some("a time that is not a number".into());
    }
    if f.start_s < 0.0 || f.end_s + EPS_S < f.start_s {
        return Some(format!(
            "its span {:.6}–{:.6} s runs backwards or before the capture",
            f.start_s, f.end_s
        ));
    }
    if f.cost_s < 0.0 || duration.is_some_and(|d| f.cost_s > d + EPS_S) {
        return Some(format!(
            "its cost {:.6} s does not fit in the connection's {:.6} s",
            f.cost_s,
            duration.unwrap_or(f64::NAN)
        ));
    }
    if !(0.0..=1.0 + EPS_S).contains(&f.throughput_share) {
        return Some(format!(
            "its throughput share {} is no share",
            f.throughput_share
        ));
    }
    if let Some(bad) = f.evidence.iter().find(|&&e| e == 0 || e > frames) {
        return Some(format!(
            "evidence frame {bad} is not in the file's {frames} frames"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn finding(kind: &'static str, start_s: f64, end_s: f64, cost_s: f64) -> Finding {
        Finding {
            kind,
            connection: 0,
            direction: "a_to_b",
            start_s,
            end_s,
            cost_s,
            throughput_share: cost_s / 10.0,
            evidence: vec![4, 9],
            explanation: String::new(),
            fix: String::new(),
            details: BTreeMap::new(),
        }
    }

    fn report() -> FileReport {
        FileReport {
            path: "f.pcap".into(),
            frames: 20,
            tcp_frames: 20,
            warnings: vec![],
            error: None,
            connections: vec![],
        }
    }

    #[test]
    fn sound_findings_are_kept_in_order() {
        let mut f = vec![
            finding("timeout_backoff", 1.0, 2.0, 1.0),
            finding("random_loss", 0.5, 9.0, 0.0),
        ];
        assert!(check(&mut f, &report()).is_empty());
        assert_eq!(f.len(), 2);
    }

    #[test]
    fn impossible_and_repeated_findings_are_dropped_and_named() {
        let mut f = vec![
            finding("timeout_backoff", 1.0, 2.0, 1.0),
            finding("timeout_backoff", 1.0, 2.0, 1.0),
            finding("burst_loss", -3.0, 2.0, 1.0),
            finding("link_outage", 4.0, 3.0, 0.5),
            finding("sender_limited", 1.0, 2.0, 30.0),
        ];
        f[4].evidence = vec![21];
        f[4].throughput_share = 0.1;
        let warnings = check(&mut f, &report());
        assert_eq!(f.len(), 1);
        assert_eq!(
            warnings,
            [
                "f.pcap: diagnosis self-check: timeout_backoff finding of connection 0 (a_to_b) left out: it repeats \
                 an earlier finding of the same episode (evidence frames [4, 9])",
                "f.pcap: diagnosis self-check: burst_loss finding of connection 0 (a_to_b) left out: its span \
                 -3.000000–2.000000 s runs backwards or before the capture (evidence frames [4, 9])",
                "f.pcap: diagnosis self-check: link_outage finding of connection 0 (a_to_b) left out: its span \
                 4.000000–3.000000 s runs backwards or before the capture (evidence frames [4, 9])",
                "f.pcap: diagnosis self-check: sender_limited finding of connection 0 (a_to_b) left out: evidence \
                 frame 21 is not in the file's 20 frames (evidence frames [21])",
            ]
        );
    }
}
