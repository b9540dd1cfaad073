//! Regression tests for the detector problems the corpus review found
//! (docs/diagnosis-corpus.md, "Detector problems seen"), each built as the smallest
//! exchange that shows it.

mod wire;

use wire::{diagnose, pcap, Segment, Transfer, ACK, CLIENT_ISN, MSS, SERVER_ISN, SYN};

/// Problem 6: a loss pattern read from a handful of events. Four isolated losses still
/// make a `random_loss` finding, but it says that four are too few to be sure, and
/// twelve are enough.
#[test]
fn few_loss_events_give_a_low_confidence_classification() {
    let few = Transfer {
        lost_in_network: vec![3, 14, 25, 36],
        ..Transfer::default()
    };
    let (_, findings) = diagnose("few-losses", &few.pcap());
    let loss: Vec<_> = findings
        .iter()
        .filter(|f| f.kind == "random_loss" || f.kind == "burst_loss")
        .collect();
    assert_eq!(loss.len(), 1, "{findings:#?}");
    assert_eq!(loss[0].kind, "random_loss");
    assert_eq!(loss[0].details["loss_events"], 4.0);
    assert_eq!(loss[0].details.get("low_confidence"), Some(&1.0));
    assert!(loss[0].explanation.contains("too few to be sure"));

    let many = Transfer {
        segments: 130,
        lost_in_network: (0..12).map(|i| 3 + 10 * i).collect(),
        ..Transfer::default()
    };
    let (_, findings) = diagnose("many-losses", &many.pcap());
    let loss = findings.iter().find(|f| f.kind == "random_loss").unwrap();
    assert_eq!(loss.details["loss_events"], 12.0);
    assert!(!loss.details.contains_key("low_confidence"));
    assert!(!loss.explanation.contains("too few"));
}

/// Problem 9: `ack_compression` after zero-window stalls. The receiver's window closes
/// after each burst; the sender probes it (persist timer) at 250 and 650 ms, the third
/// probe is accepted at 990 ms and the window opens, and the next burst follows at
/// once. The ACK that reopens the window and the first ACK of the next burst are not
/// a squeezed ACK clock: the probes were sent by a timer, and the burst when the window
/// opened.
#[test]
fn the_ack_clock_restarting_after_a_zero_window_is_not_ack_compression() {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = vec![
        Segment::new(0.0, true, c - 1, 0, SYN, 0),
        Segment::new(50.0, false, s - 1, c, SYN | ACK, 0),
        Segment::new(50.1, true, c, s, ACK, 0),
    ];
    let mut next = s;
    for cycle in 0..30 {
        let t = 100.0 + 1000.0 * f64::from(cycle);
        for k in 0..4 {
            segs.push(Segment::new(
                t + 0.1 * f64::from(k),
                false,
                next + k * MSS,
                c,
                ACK,
                MSS,
            ));
        }
        let mut half = Segment::new(t + 50.1, true, c, next + 2 * MSS, ACK, 0);
        half.window = 4000;
        segs.push(half);
        next += 4 * MSS;
        let mut closed = Segment::new(t + 50.3, true, c, next, ACK, 0);
        closed.window = 0;
        segs.push(closed);
        for probe in [250.0, 650.0] {
            segs.push(Segment::new(t + probe, false, next, c, ACK, 1));
            let mut still = Segment::new(t + probe + 50.0, true, c, next, ACK, 0);
            still.window = 0;
            segs.push(still);
        }
        segs.push(Segment::new(t + 940.0, false, next, c, ACK, 1));
        next += 1;
        segs.push(Segment::new(t + 990.0, true, c, next, ACK, 0));
    }
    let (report, findings) = diagnose("zero-window-cycles", &pcap(segs));
    assert!(
        report.connections[0].b_to_a.zero_window_probes >= 60,
        "the probes are there: {}",
        report.connections[0].b_to_a.zero_window_probes
    );
    assert!(
        findings.iter().any(|f| f.kind == "receiver_limited"),
        "{findings:#?}"
    );
    assert!(
        findings.iter().all(|f| f.kind != "ack_compression"),
        "{findings:#?}"
    );
}

/// A connection with one timeout, its client on `port`, starting `at_s` seconds into
/// the capture: data at 0.1 s, a lost segment at 0.2 s, resent at 1.2 s.
fn one_timeout(port: u16, at_s: f64) -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = vec![
        Segment::new(0.0, true, c - 1, 0, SYN, 0),
        Segment::new(50.0, false, s - 1, c, SYN | ACK, 0),
        Segment::new(50.1, true, c, s, ACK, 0),
        Segment::new(100.0, false, s, c, ACK, MSS),
        Segment::new(150.0, true, c, s + MSS, ACK, 0),
        Segment::new(200.0, false, s + MSS, c, ACK, MSS),
        Segment::new(1200.0, false, s + MSS, c, ACK, MSS),
        Segment::new(1250.0, true, c, s + 2 * MSS, ACK, 0),
    ];
    for seg in &mut segs {
        seg.client_port = port;
        seg.t_ns += (at_s * 1e9) as i64;
    }
    segs
}

/// "Time base from the first frame" (docs/diagnosis-corpus.md, other problems):
/// tcptrace_http holds two captures four years apart, so every span of the second
/// read ~128,910,994 s. A silence of more than a day starts a new part of the capture,
/// and each connection's spans count from the start of the part it began in.
#[test]
fn spans_count_from_the_part_of_the_capture_a_connection_began_in() {
    const YEARS_4: f64 = 4.0 * 365.25 * 86400.0;
    let mut segs = one_timeout(40000, 0.0);
    segs.extend(one_timeout(40001, YEARS_4 + 10.0));
    segs.extend(one_timeout(40002, YEARS_4 + 20.0));
    let (_, findings) = diagnose("two-captures", &pcap(segs));
    let spans: Vec<(u32, f64, f64)> = findings
        .iter()
        .filter(|f| f.kind == "timeout_backoff")
        .map(|f| (f.connection, f.start_s, f.end_s))
        .collect();
    let near = |a: f64, b: f64| (a - b).abs() < 1e-6;
    assert_eq!(spans.len(), 3, "{findings:#?}");
    for (conn, start, end) in spans {
        // From its part's start: the first connection of each part at 0.2-1.2 s,
        // the next one 10 s later.
        let offset = if conn == 2 { 10.0 } else { 0.0 };
        assert!(
            near(start, offset + 0.2) && near(end, offset + 1.2),
            "conn {conn}: {start}-{end}"
        );
    }
}

/// A lone first frame dated far before the rest is not the start of anything: the
/// spans count from the frame after it.
#[test]
fn a_lone_first_frame_years_early_is_not_the_time_base() {
    let mut stray = Segment::new(0.0, true, 1, 1, ACK, 0);
    stray.client_port = 9;
    let mut segs = vec![stray];
    segs.extend(one_timeout(40000, 3.0 * 365.25 * 86400.0));
    let (_, findings) = diagnose("stray-first-frame", &pcap(segs));
    let f = findings
        .iter()
        .find(|f| f.kind == "timeout_backoff")
        .unwrap();
    assert!(
        (f.start_s - 0.2).abs() < 1e-6 && (f.end_s - 1.2).abs() < 1e-6,
        "{f:#?}"
    );
}
