//! One loss of time is counted once (issue 17 item 1): the findings of a connection's
//! direction never add up to more time than the connection lasted, and a finding that
//! explains timeout_backoff's waits (a loss pattern, an outage, a flight too small for
//! fast retransmit) says how many of its seconds it explains instead of costing them
//! again. On the real captures beside the repository (both corpora, the samples) and on
//! the simulated bursts of docs/diagnosis.md (burst_loss and timeout_backoff each read
//! 60 % of the transfer).

mod common;

use std::collections::HashMap;

use airtrace_diagnose::{diagnose_file, Finding};
use common::{diagnose_simulated, of, real_captures};

/// Kinds whose time is timeout_backoff's.
const EXPLAINERS: [&str; 4] = [
    "burst_loss",
    "random_loss",
    "link_outage",
    "fast_retransmit_impossible",
];

/// Each direction's summed cost against its connection's duration.
fn assert_counted_once(name: &str, findings: &[Finding], durations: &HashMap<u32, f64>) {
    let mut sums: HashMap<(u32, &str), f64> = HashMap::new();
    for f in findings {
        *sums.entry((f.connection, f.direction)).or_default() += f.cost_s;
        if EXPLAINERS.contains(&f.kind) {
            assert_eq!(f.cost_s, 0.0, "{name}: {f:#?}");
            assert!(
                f.details.contains_key("explains_timeout_s"),
                "{name}: {f:#?}"
            );
        }
    }
    for ((conn, dir), sum) in sums {
        let duration = durations[&conn];
        assert!(
            sum <= duration + 1e-6,
            "{name}: connection {conn} {dir}: findings cost {sum} s of {duration} s"
        );
    }
}

#[test]
fn no_time_is_counted_twice_on_real_captures() {
    let files = real_captures();
    let mut checked = 0;
    for path in &files {
        let Ok((report, findings)) = diagnose_file(path) else {
            continue;
        };
        let durations = report
            .connections
            .iter()
            .map(|c| (c.id, c.duration_s))
            .collect();
        assert_counted_once(&path.display().to_string(), &findings, &durations);
        checked += findings.len();
    }
    eprintln!("{checked} findings in {} files", files.len());
}

#[test]
fn burst_loss_explains_the_timeouts_time_without_costing_it_again() {
    let f = diagnose_simulated("rais_burst_fixed", None);
    let burst = of(&f, "burst_loss");
    assert_eq!(burst.len(), 1);
    let waits: f64 = of(&f, "timeout_backoff").iter().map(|t| t.cost_s).sum();
    assert!(
        waits > 50.0,
        "the bursts' timeouts cost most of the transfer"
    );
    assert_eq!(burst[0].cost_s, 0.0);
    assert!((burst[0].details["explains_timeout_s"] - waits).abs() < 1e-6);
}
