//! A finding that says "pauses" gives numbers that match its evidence (issue 17 item 1):
//! the count in its text is of every pause, and when the evidence cannot list them all
//! it lists the longest and says so; one pause is "1 pause".

mod wire;

use wire::{diagnose, pcap, Segment, ACK, CLIENT_ISN, MSS, SERVER_ISN, SYN};

/// A server that sends one segment, has it acknowledged 1 ms later, then has nothing
/// to send for `gaps_ms[k]`, and sends its next segment; returns the segments and the
/// frame that ended each gap (the next data segment).
fn paced_sender(gaps_ms: &[f64]) -> (Vec<Segment>, Vec<u64>) {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = vec![
        Segment::new(0.0, true, c - 1, 0, SYN, 0),
        Segment::new(20.0, false, s - 1, c, SYN | ACK, 0),
        Segment::new(20.1, true, c, s, ACK, 0),
    ];
    let mut ended = Vec::new();
    let mut t = 100.0;
    for k in 0..=gaps_ms.len() {
        let next = s + k as u32 * MSS;
        segs.push(Segment::new(t, false, next, c, ACK, MSS));
        if k > 0 {
            ended.push(segs.len() as u64); // frames count from 1, in time order
        }
        segs.push(Segment::new(t + 1.0, true, c, next + MSS, ACK, 0));
        t += 1.0 + gaps_ms.get(k).copied().unwrap_or(0.0);
    }
    (segs, ended)
}

/// The sender_limited finding of the server's direction.
fn sender_limited(name: &str, segs: Vec<Segment>) -> airtrace_diagnose::Finding {
    let (_, findings) = diagnose(name, &pcap(segs));
    findings
        .into_iter()
        .find(|f| f.kind == "sender_limited" && f.direction == "b_to_a")
        .unwrap_or_else(|| panic!("{name}: no sender_limited finding"))
}

#[test]
fn the_evidence_of_many_pauses_is_the_longest_and_says_so() {
    // Thirty pauses of 300, 310, ... 590 ms: the last twenty are the longest.
    let gaps: Vec<f64> = (0..30).map(|k| 300.0 + 10.0 * f64::from(k)).collect();
    let (segs, ended) = paced_sender(&gaps);
    let f = sender_limited("thirty-pauses", segs);
    assert_eq!(f.details["pauses"], 30.0);
    assert!(
        f.explanation.contains(": 30 pauses with no data in flight"),
        "{}",
        f.explanation
    );
    assert!(
        f.explanation
            .contains("The evidence lists the frame that ended each of the 20 longest."),
        "{}",
        f.explanation
    );
    // Before: the first twenty, the shortest, under a text about all thirty.
    assert_eq!(f.evidence, ended[10..].to_vec());
}

#[test]
fn one_pause_is_one_pause() {
    // Ten segments 1 ms apart, then one pause of 2 s.
    let mut gaps = vec![1.0; 10];
    gaps.push(2000.0);
    let (segs, ended) = paced_sender(&gaps);
    let f = sender_limited("one-pause", segs);
    assert_eq!(f.details["pauses"], 1.0);
    assert!(
        f.explanation.contains(": 1 pause with no data in flight"),
        "{}",
        f.explanation
    );
    assert!(
        !f.explanation.contains("The evidence lists"),
        "{}",
        f.explanation
    );
    assert_eq!(f.evidence, vec![ended[10]]);
}
