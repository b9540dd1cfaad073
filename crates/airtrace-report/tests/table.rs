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

/// The table's line of connection `id`'s direction `dir` (`a_to_b` or `b_to_a`).
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
    let line = row(&airtrace_report::connection_table(&r), 10, "b_to_a");
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

#[test]
fn backoff_states_how_long_the_timer_waited() {
    // zeek_206_example_b connection 0: twelve expiries in a row, the waits growing
    // from 0.27 s to 15.56 s (the RTO reached its maximum); the table printed
    // "backoff x2048", 2^11 from the count, 36 times the real growth.
    let Some(r) = report("zeek_206_example_b.pcap") else {
        return;
    };
    let d = &r.connections[0].b_to_a;
    assert_eq!(d.max_backoff, 12);
    let (first, longest) = (
        d.backoff_first_wait_s.unwrap(),
        d.backoff_longest_wait_s.unwrap(),
    );
    assert!((first - 0.267).abs() < 1e-3, "{first}");
    assert!((longest - 15.560).abs() < 1e-3, "{longest}");
    let line = row(&airtrace_report::connection_table(&r), 0, "b_to_a");
    assert!(line.contains("backoff 0.27 → 15.6 s"), "{line}");
    assert!(!line.contains("x2048"), "{line}");
    // ppa_tcp_retransmissions: the textbook doubling, 0.21, 0.60, 1.20, 2.40, 4.81 s.
    let Some(r) = report("ppa_tcp_retransmissions.pcapng") else {
        return;
    };
    let line = row(&airtrace_report::connection_table(&r), 0, "a_to_b");
    assert!(line.contains("backoff 0.21 → 4.81 s"), "{line}");
}

#[test]
fn goodput_counts_only_acknowledged_bytes() {
    // ppa_tcp_retransmissions: one 648-byte segment sent six times and never
    // acknowledged. The table said "3.89 kB" of data (the diagnosis: 648 B) at a
    // goodput of 563 b/s.
    let Some(r) = report("ppa_tcp_retransmissions.pcapng") else {
        return;
    };
    let d = &r.connections[0].a_to_b;
    assert_eq!(
        (d.unique_bytes, d.data_bytes, d.acked_bytes),
        (648, 3888, 0)
    );
    assert_eq!(d.goodput_bps, 0.0);
    let line = row(&airtrace_report::connection_table(&r), 0, "a_to_b");
    assert!(
        line.contains(" 648 B + 3.24 kB ") && line.contains(" 0 bit/s "),
        "{line}"
    );
    // zeek_206_example_b connection 1: a download acknowledged to its last byte.
    let Some(r) = report("zeek_206_example_b.pcap") else {
        return;
    };
    let c = &r.connections[1];
    let d = &c.b_to_a;
    assert_eq!(d.acked_bytes, d.unique_bytes);
    assert!(d.acked_bytes > 200_000);
    assert_eq!(d.goodput_bps, d.acked_bytes as f64 * 8.0 / c.duration_s);
}

#[test]
fn a_capture_taken_at_the_receiver_is_recognised() {
    // zeek_206_example_b: the client downloading saw its own ACKs leave about 1 ms
    // after the data came, where the handshake took 72 ms: the capture sat at the
    // receiver, and the table and the JSON say so.
    let Some(r) = report("zeek_206_example_b.pcap") else {
        return;
    };
    let c = &r.connections[0];
    assert_eq!(
        c.capture_point,
        Some(airtrace_analysis::CapturePoint::Receiver)
    );
    let line = row(&airtrace_report::connection_table(&r), 0, "b_to_a");
    assert!(line.contains("captured at the receiver"), "{line}");
    let json: serde_json::Value =
        serde_json::from_str(&airtrace_report::json(&r).unwrap()).unwrap();
    assert_eq!(json["connections"][0]["capture_point"], "receiver");
    // The bundled samples, one transfer captured at both ends (testdata/pcaps/README.md).
    for (end, point) in [
        ("sender", airtrace_analysis::CapturePoint::Sender),
        ("receiver", airtrace_analysis::CapturePoint::Receiver),
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../testdata/pcaps/sample-{end}.pcapng"));
        let r = analyze_file(&path, &mut (), &mut |_, _| {}).unwrap();
        assert!(
            r.connections.iter().all(|c| c.capture_point == Some(point)),
            "{end}"
        );
    }
    // ppa_tcp_retransmissions: no handshake, no ACKs: not known.
    let Some(r) = report("ppa_tcp_retransmissions.pcapng") else {
        return;
    };
    assert_eq!(r.connections[0].capture_point, None);
}

#[test]
fn the_table_names_directions_and_units_as_every_text_does() {
    // zeek_206_example_b: the table said "a>b", "192.168.72.14:3254 -> 65.54.95.206:80",
    // "87.4 kb/s" and an "rtt ms" column, where the JSON, the diagnosis and the report
    // say a_to_b, "→" and bit/s (issue 17 item 1: one direction convention, one unit
    // convention).
    let Some(r) = report("zeek_206_example_b.pcap") else {
        return;
    };
    let table = airtrace_report::connection_table(&r);
    let line = row(&table, 0, "a_to_b");
    assert!(
        line.contains("192.168.72.14:3254 → 65.54.95.206:80") && line.contains(" 72.3 ms "),
        "{line}"
    );
    let line = row(&table, 0, "b_to_a");
    assert!(line.contains(" 87.4 kbit/s "), "{line}");
    assert!(line.contains(" 1.05 ms "), "{line}");
    for old in ["a>b", "b>a", "->", "kb/s", " b/s", "rtt ms"] {
        assert!(!table.contains(old), "{old} in\n{table}");
    }
}
