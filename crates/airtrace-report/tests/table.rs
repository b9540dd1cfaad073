//! The summary table and the JSON report say the same thing as the analysis, on real
//! captures of the shared corpus (`shared/corpus/real` beside the repository; its
//! MANIFEST.md says what each holds). Issue 17 item 1: one truth per number.

use std::path::PathBuf;

use airtrace_analysis::{analyze_file, FileReport};

/// The report of corpus capture `name`, or `None` when the corpus is not beside the
/// repository.
fn report(name: &str) -> Option<FileReport> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/real")
        .join(name);
    if !path.exists() {
        eprintln!("skipped: {} is not there", path.display());
        return None;
    }
    Some(analyze_file(&path, &mut (), &mut |_, _| {}).unwrap())
}

/// The table's line of connection `id`'s direction `dir` (`a>b` or `b>a`).
fn row(table: &str, id: u32, dir: &str) -> String {
    let mut current = None;
    for line in table.lines().skip(3) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if let Ok(n) = cells[0].parse::<u32>() {
            current = Some(n);
        }
        if current == Some(id) && cells.contains(&dir) {
            return line.to_string();
        }
    }
    panic!("no row {id} {dir} in\n{table}")
}

#[test]
fn spurious_retransmissions_are_told_from_genuine_ones() {
    // ndpi_weibo connection 10: the server's 12 retransmissions were all of data the
    // client had already acknowledged (the table said "12 (to12)": 12 timeouts).
    let Some(r) = report("ndpi_weibo.pcap") else {
        return;
    };
    let d = &r.connections[10].b_to_a;
    assert_eq!(
        (d.retransmitted_packets, d.spurious_retransmissions),
        (12, 12)
    );
    assert_eq!(d.genuine_retransmissions, 0);
    let line = row(&airtrace_report::connection_table(&r), 10, "b>a");
    assert!(
        line.contains("12 (0 genuine + 12 spurious; to12)"),
        "{line}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&airtrace_report::json(&r).unwrap()).unwrap();
    assert_eq!(
        json["connections"][10]["b_to_a"]["genuine_retransmissions"],
        0
    );
    for c in &r.connections {
        for d in [&c.a_to_b, &c.b_to_a] {
            assert_eq!(
                d.genuine_retransmissions + d.spurious_retransmissions,
                d.retransmitted_packets
            );
        }
    }
}
