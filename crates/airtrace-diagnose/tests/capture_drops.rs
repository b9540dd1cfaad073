//! Packets the capture missed although the network delivered them: the receiver
//! acknowledges data that never appears in the capture, and nothing is retransmitted.
//! Such gaps are the capture's, not the network's loss (issue 6, "packets acknowledged
//! but never captured, capture drops").
//!
//! The captures are built byte by byte (Ethernet, IPv4, TCP) with a tiny receiver
//! model, so that each test reads like the exchange it describes.

mod wire;

use wire::{diagnose, Transfer};

/// The receiver acknowledged segments 3, 14, 25 and 36 (and the last of the second
/// flight, 19, whose gap only the ACK shows), but the capture never saw them: a
/// `capture_drops` finding with the count and the frames, and no loss finding,
/// although the analyzer flags each gap as a lost segment as Wireshark does.
#[test]
fn segments_acknowledged_but_never_captured_are_capture_drops_not_loss() {
    let t = Transfer {
        not_captured: vec![3, 14, 19, 25, 36],
        ..Transfer::default()
    };
    let (report, findings) = diagnose("capture-missed", &t.pcap());
    let server = &report.connections[0].b_to_a;
    assert!(
        server.lost_segments >= 4,
        "the trap: each gap reads as a lost segment ({})",
        server.lost_segments
    );
    assert_eq!(server.retransmitted_packets, 0);
    let kinds: Vec<&str> = findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, ["capture_drops"], "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.direction, "b_to_a");
    assert_eq!(f.details["segments_not_captured"], 5.0);
    assert_eq!(f.details["bytes_not_captured"], 5000.0);
    assert!(f
        .explanation
        .contains("the capture, not the network, lost them"));
    assert!(f.explanation.contains("with that in mind"));
    // Evidence: the ACK that covered each gap, and the segment after the gap when the
    // capture saw it before that ACK (14 and 36; the ACKs of 3, 19 and 25 came first).
    assert_eq!(f.evidence.len(), 7, "{:?}", f.evidence);
    let frame_of = |seg: u32| t.frame_of_segment(seg).unwrap();
    assert!(f.evidence.contains(&frame_of(15)) && f.evidence.contains(&frame_of(37)));
    assert!(!f.evidence.contains(&frame_of(4)));
    assert!(f.start_s > 0.0 && f.end_s > f.start_s);
}

/// The same gaps seen by a capture near the receiver, where the segments were lost on
/// the way: duplicate ACKs, then each is retransmitted and fills its gap. That is the
/// network's loss, and no `capture_drops` is reported.
#[test]
fn gaps_filled_by_retransmissions_are_network_loss_not_capture_drops() {
    let t = Transfer {
        lost_in_network: vec![3, 14, 25, 36],
        ..Transfer::default()
    };
    let (report, findings) = diagnose("network-lost", &t.pcap());
    assert_eq!(report.connections[0].b_to_a.retransmitted_packets, 4);
    assert!(
        findings.iter().all(|f| f.kind != "capture_drops"),
        "{findings:#?}"
    );
}

/// A pcapng file whose interface statistics count drops: the finding says so, also
/// when no gap in the data shows them.
#[test]
fn the_capture_files_own_drop_count_is_reported() {
    let with_gaps = Transfer {
        not_captured: vec![3],
        ..Transfer::default()
    };
    let (_, findings) = diagnose("isb-gaps.pcapng", &with_gaps.pcapng(Some(7)));
    let f = findings.iter().find(|f| f.kind == "capture_drops").unwrap();
    assert_eq!(f.details["file_drops"], 7.0);
    assert_eq!(f.details["segments_not_captured"], 1.0);
    assert!(f.explanation.contains("reports 7 packet(s) dropped"));

    let (_, findings) = diagnose("isb-only.pcapng", &Transfer::default().pcapng(Some(2)));
    let drops: Vec<_> = findings
        .iter()
        .filter(|f| f.kind == "capture_drops")
        .collect();
    assert_eq!(drops.len(), 1, "{findings:#?}");
    assert_eq!(drops[0].details["file_drops"], 2.0);
    assert!(!drops[0].details.contains_key("segments_not_captured"));

    let (_, findings) = diagnose("isb-zero.pcapng", &Transfer::default().pcapng(Some(0)));
    assert!(findings.is_empty(), "{findings:#?}");
}
