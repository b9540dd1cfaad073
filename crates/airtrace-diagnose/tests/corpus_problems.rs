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
