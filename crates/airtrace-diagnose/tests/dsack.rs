//! Retransmissions the receiver reports it did not need: a D-SACK (RFC 2883) makes a
//! fast retransmission spurious (RFC 3708).

mod wire;

use wire::{diagnose, pcap, Segment, ACK, CLIENT_ISN, MSS, SERVER_ISN, SYN};

/// The server's capture of ten segments, segment 2 of which is delayed behind 3, 4
/// and 5: three duplicate ACKs with SACK blocks, a fast retransmission, then the ACK
/// of everything (the original arrived) and a D-SACK for the retransmission's copy.
fn reordered() -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN, SERVER_ISN);
    let seq = |k: u32| s + 1 + k * MSS;
    let mut out = vec![
        Segment::new(0.0, true, c, 0, SYN, 0),
        Segment::new(0.1, false, s, c + 1, SYN | ACK, 0),
        Segment::new(50.1, true, c + 1, s + 1, ACK, 0),
    ];
    for k in 0..10 {
        out.push(Segment::new(
            100.0 + f64::from(k) * 0.1,
            false,
            seq(k),
            c + 1,
            ACK,
            MSS,
        ));
    }
    // The client's first ACK (segments 0 and 1), then three duplicates.
    out.push(Segment::new(150.15, true, c + 1, seq(2), ACK, 0));
    for (i, upto) in [4u32, 5, 6].into_iter().enumerate() {
        let mut dup = Segment::new(150.3 + 0.1 * i as f64, true, c + 1, seq(2), ACK, 0);
        dup.sack = vec![(seq(3), seq(upto))];
        out.push(dup);
    }
    out.push(Segment::new(150.65, false, seq(2), c + 1, ACK, MSS));
    out.push(Segment::new(150.8, true, c + 1, seq(10), ACK, 0));
    let mut dsack = Segment::new(200.7, true, c + 1, seq(10), ACK, 0);
    dsack.sack = vec![(seq(2), seq(3))];
    out.push(dsack);
    out
}

#[test]
fn a_fast_retransmission_the_receiver_reports_twice_is_spurious() {
    let (report, findings) = diagnose("dsack-fast", &pcap(reordered()));
    assert_eq!(
        report.connections[0].b_to_a.fast_retransmissions, 1,
        "{:?}",
        report.connections[0].b_to_a
    );
    let spurious: Vec<_> = findings
        .iter()
        .filter(|f| f.kind == "spurious_retransmission")
        .collect();
    assert_eq!(spurious.len(), 1, "{findings:#?}");
    let f = spurious[0];
    assert_eq!(f.direction, "b_to_a");
    assert_eq!(f.details["spurious_retransmissions"], 1.0);
    assert!(f.explanation.contains("D-SACK"));
    // Evidence: the retransmission (frame 18) and the D-SACK (frame 20).
    assert_eq!(f.evidence, [18, 20]);
}

#[test]
fn without_a_dsack_the_retransmission_is_not_called_spurious() {
    let mut segments = reordered();
    segments.last_mut().unwrap().sack.clear();
    let (_, findings) = diagnose("dsack-none", &pcap(segments));
    assert!(
        findings.iter().all(|f| f.kind != "spurious_retransmission"),
        "{findings:#?}"
    );
}
