//! The diagnosis counts RTOs as `airtrace analyze` does: expiries of the timer, apart
//! from the go-back-N segments sent after them (issue 17 item 1: ndpi_weibo connection
//! 10 read "12 retransmission timeouts were spurious" where analyze counts 6 RTOs).

mod common;

use std::path::PathBuf;

use airtrace_diagnose::diagnose_file;
use common::real_captures;

#[test]
fn spurious_timeouts_count_expiries_as_analyze_does() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/real/ndpi_weibo.pcap");
    if !path.exists() {
        eprintln!("skipped: {} is not there", path.display());
        return;
    }
    let (report, findings) = diagnose_file(&path).unwrap();
    let rtos = report.connections[10].b_to_a.timeouts;
    assert_eq!(rtos, 6);
    let f = findings
        .iter()
        .find(|f| f.kind == "spurious_timeout" && f.connection == 10)
        .unwrap();
    assert_eq!(f.details["expiries"], rtos as f64);
    assert!(
        f.explanation.starts_with(
            "12 retransmissions the timer sent were spurious (6 RTO expiries, 6 go-back-N"
        ),
        "{}",
        f.explanation
    );
}

#[test]
fn no_capture_has_more_spurious_expiries_than_analyze_counts_rtos() {
    for path in real_captures() {
        let Ok((report, findings)) = diagnose_file(&path) else {
            continue;
        };
        for f in findings.iter().filter(|f| f.kind == "spurious_timeout") {
            let c = report
                .connections
                .iter()
                .find(|c| c.id == f.connection)
                .unwrap();
            let d = if f.direction == "a_to_b" {
                &c.a_to_b
            } else {
                &c.b_to_a
            };
            assert!(
                f.details["expiries"] <= d.timeouts as f64,
                "{}: {f:#?}",
                path.display()
            );
        }
    }
}
