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
    let mut segs = handshake(50.0, 50.1);
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
    let mut segs = handshake(50.0, 50.1);
    segs.extend([
        Segment::new(100.0, false, s, c, ACK, MSS),
        Segment::new(150.0, true, c, s + MSS, ACK, 0),
        Segment::new(200.0, false, s + MSS, c, ACK, MSS),
        Segment::new(1200.0, false, s + MSS, c, ACK, MSS),
        Segment::new(1250.0, true, c, s + 2 * MSS, ACK, 0),
    ]);
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

const RST: u8 = 0x04;

/// The client's SYN at 0, the server's SYN/ACK at `syn_ack_ms` and the client's ACK at
/// `ack_ms` (where the capture sits decides the gaps).
fn handshake(syn_ack_ms: f64, ack_ms: f64) -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    vec![
        Segment::new(0.0, true, c - 1, 0, SYN, 0),
        Segment::new(syn_ack_ms, false, s - 1, c, SYN | ACK, 0),
        Segment::new(ack_ms, true, c, s, ACK, 0),
    ]
}

/// Problem 1a (`ndpi_wechat`): a SYN/ACK resent after the capture saw the client
/// acknowledge it. From the capture point the handshake was done: the server's timer
/// fired because the ACK was lost beyond it. A spurious timeout, not a backoff pause.
#[test]
fn a_syn_ack_resent_after_its_ack_was_seen_is_a_spurious_timeout() {
    let (c, s) = (CLIENT_ISN, SERVER_ISN);
    let segs = vec![
        Segment::new(0.0, true, c, 0, SYN, 0),
        Segment::new(50.0, false, s, c + 1, SYN | ACK, 0),
        Segment::new(50.06, true, c + 1, s + 1, ACK, 0),
        Segment::new(1050.0, false, s, c + 1, SYN | ACK, 0),
        Segment::new(1050.06, true, c + 1, s + 1, ACK, 0),
        Segment::new(1100.0, true, c + 1, s + 1, ACK, 200),
        Segment::new(1150.0, false, s + 1, c + 201, ACK, 0),
    ];
    let (_, findings) = diagnose("syn-ack-acked", &pcap(segs));
    assert!(
        findings.iter().all(|f| f.kind != "timeout_backoff"),
        "{findings:#?}"
    );
    let spurious = findings
        .iter()
        .find(|f| f.kind == "spurious_timeout")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(spurious.direction, "b_to_a");
    assert_eq!(spurious.details["already_acknowledged"], 1.0);
    assert_eq!(spurious.evidence, [4]);
    assert!(
        spurious
            .explanation
            .contains("SYN/ACK the capture had already seen acknowledged"),
        "{}",
        spurious.explanation
    );
}

/// Problem 1b (`zeek_206_example_a` frames 8/9/47/48, captured beside the server): the
/// SYN/ACK is lost beyond the capture point, the client sends its SYN again 3 s later
/// (its timeout: it waited, whatever the capture saw), and the server's SYN/ACK half a
/// millisecond later answers it. One stall, the client's; the SYN/ACK is not a second
/// timeout.
#[test]
fn a_syn_ack_answering_a_repeated_syn_is_not_a_timeout_of_its_own() {
    let (c, s) = (CLIENT_ISN, SERVER_ISN);
    let segs = vec![
        Segment::new(0.0, true, c, 0, SYN, 0),
        Segment::new(0.4, false, s, c + 1, SYN | ACK, 0),
        Segment::new(3000.0, true, c, 0, SYN, 0),
        Segment::new(3000.5, false, s, c + 1, SYN | ACK, 0),
        Segment::new(3050.0, true, c + 1, s + 1, ACK, 0),
    ];
    let (_, findings) = diagnose("syn-ack-answer", &pcap(segs));
    let timeouts: Vec<_> = findings
        .iter()
        .filter(|f| f.kind == "timeout_backoff")
        .collect();
    assert_eq!(timeouts.len(), 1, "{findings:#?}");
    assert_eq!(timeouts[0].direction, "a_to_b");
    // Problem 1c: said as a connection that could not open, not as data waiting.
    assert_eq!(
        timeouts[0].explanation,
        "The connection could not open for 3.00 s: its SYN went unanswered and was sent again."
    );
}

/// A bulk transfer captured at the sender whose RTT climbs from 20 ms to 200 ms and
/// stays (a standing queue of about 18 segments), ending with `ending`.
fn standing_queue(ending: &[Segment]) -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = handshake(20.0, 20.1);
    for k in 0..60u32 {
        let sent = 100.0 + 10.0 * f64::from(k);
        let rtt = (20.0 + 45.0 * f64::from(k)).min(200.0);
        segs.push(Segment::new(sent, false, s + k * MSS, c, ACK, MSS));
        segs.push(Segment::new(sent + rtt, true, c, s + (k + 1) * MSS, ACK, 0));
    }
    segs.extend_from_slice(ending);
    segs
}

/// Problem 7b (`ppa1e_ftp-uploadfailed` frames 1637–1645): the receiver's RSTs carry
/// window 0, which is no advertisement (the connection is gone). Taken as the last
/// window, it capped the standing queue at 0 bytes and the finding vanished.
#[test]
fn a_rst_with_window_zero_does_not_erase_the_standing_queue() {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut rst = Segment::new(900.0, true, c, s + 60 * MSS, RST | ACK, 0);
    rst.window = 0;
    let mut rst2 = rst.clone();
    rst2.t_ns += 1_000_000;
    for (name, ending) in [("queue", vec![]), ("queue-rst", vec![rst, rst2])] {
        let (_, findings) = diagnose(name, &pcap(standing_queue(&ending)));
        let q = findings
            .iter()
            .find(|f| f.kind == "excessive_queueing")
            .unwrap_or_else(|| panic!("{name}: {findings:#?}"));
        let packets = q.details["standing_queue_packets"];
        assert!((15.0..=22.0).contains(&packets), "{name}: {packets}");
    }
}

/// A sender of 20 full segments, then `cycles` rounds in which the receiver's window
/// falls to `small_window` bytes with everything acknowledged, the sender waits 400 ms
/// and sends what fits, and the window opens again (`tcptrace_urgent` conn 0, frames
/// 1352–1355: windows of 474 and 30 bytes, 0.4 s waits before each small send).
fn small_windows(small_window: u16, cycles: u32) -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = handshake(20.0, 20.1);
    let mut next = s;
    let mut t = 100.0;
    for k in 0..20u32 {
        segs.push(Segment::new(
            t + 0.1 * f64::from(k),
            false,
            next,
            c,
            ACK,
            MSS,
        ));
        next += MSS;
        if k % 2 == 1 {
            segs.push(Segment::new(
                t + 20.0 + 0.1 * f64::from(k),
                true,
                c,
                next,
                ACK,
                0,
            ));
        }
    }
    t += 100.0;
    for _ in 0..cycles {
        // Everything acknowledged, but the window is below a segment...
        let mut low = Segment::new(t, true, c, next, ACK, 0);
        low.window = small_window;
        segs.push(low);
        // ...the sender waits, then sends what fits.
        let len = u32::from(small_window).min(MSS);
        segs.push(Segment::new(t + 400.0, false, next, c, ACK, len));
        next += len;
        // The window opens; the sender goes on at once.
        segs.push(Segment::new(t + 420.0, true, c, next, ACK, 0));
        segs.push(Segment::new(t + 420.1, false, next, c, ACK, MSS));
        next += MSS;
        segs.push(Segment::new(t + 440.1, true, c, next, ACK, 0));
        t += 500.0;
    }
    segs
}

/// Problem 8: waiting with less than a segment of window is the receiver's doing
/// (sender-side silly-window avoidance, RFC 9293 §3.8.6.2.1), not an idle application.
/// The same pauses with a full segment of window are the application's.
#[test]
fn pauses_while_the_window_is_below_a_segment_are_not_the_application() {
    let (_, findings) = diagnose("small-windows", &pcap(small_windows(474, 12)));
    assert!(
        findings.iter().all(|f| f.kind != "sender_limited"),
        "{findings:#?}"
    );
    let (_, findings) = diagnose("open-windows", &pcap(small_windows(8 * MSS as u16, 12)));
    let limited = findings
        .iter()
        .find(|f| f.kind == "sender_limited" && f.direction == "b_to_a")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(limited.details["pauses"], 12.0);
}

/// Bursts of eight segments into a window that closes after each, reopened 300 ms
/// later; the client ACKs every second segment `ack_after_ms` after it arrives (the
/// capture at the receiver when that is tiny, at the sender when it is the path's
/// round trip of 50 ms).
fn zero_window_bursts(ack_after_ms: f64) -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = handshake(50.0, 50.0 + ack_after_ms);
    let mut next = s;
    for cycle in 0..12 {
        let t = 100.0 + 400.0 * f64::from(cycle);
        for k in 0..8u32 {
            segs.push(Segment::new(
                t + 0.2 * f64::from(k),
                false,
                next,
                c,
                ACK,
                MSS,
            ));
            next += MSS;
            if k % 2 == 1 {
                let mut ack =
                    Segment::new(t + 0.2 * f64::from(k) + ack_after_ms, true, c, next, ACK, 0);
                if k == 7 {
                    ack.window = 0;
                }
                segs.push(ack);
            }
        }
        segs.push(Segment::new(t + 300.0, true, c, next, ACK, 0));
    }
    segs
}

/// Problem 12 (`zeek_206_example_b`): at a capture beside the receiver the ACKs' spacing
/// is the receiver's, not the bottleneck's. No rate is claimed there, and the finding
/// says why; beside the sender the same exchange gives one.
#[test]
fn no_bottleneck_rate_from_acks_captured_at_the_receiver() {
    let (_, findings) = diagnose("zw-receiver-side", &pcap(zero_window_bursts(0.05)));
    let f = findings
        .iter()
        .find(|f| f.kind == "receiver_limited")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert!(!f.details.contains_key("capacity_estimate_bps"), "{f:#?}");
    assert!(
        f.explanation.contains("sat at the receiver"),
        "{}",
        f.explanation
    );

    let (_, findings) = diagnose("zw-sender-side", &pcap(zero_window_bursts(50.0)));
    let f = findings
        .iter()
        .find(|f| f.kind == "receiver_limited")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    // Two segments of 1000 bytes every 0.4 ms at the bottleneck: 40 Mbit/s.
    let rate = f.details["capacity_estimate_bps"];
    assert!((36e6..44e6).contains(&rate), "{rate}");
}

/// Lone segments whose ACK comes `ack_after_ms` later, each next one sent 1 ms after
/// that ACK (a sender waiting for it), captured beside the sender on a 20 ms path.
fn lone_segments(ack_after_ms: f64) -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = handshake(0.1, 20.1);
    for k in 0..12u32 {
        let t = 100.0 + (ack_after_ms + 1.0) * f64::from(k);
        segs.push(Segment::new(t, false, s + k * MSS, c, ACK, MSS));
        segs.push(Segment::new(
            t + ack_after_ms,
            true,
            c,
            s + (k + 1) * MSS,
            ACK,
            0,
        ));
    }
    segs
}

/// Problem 10 (`ndpi_alexa-app` conn 111): an ACK 2.3 s after a lone segment is not a
/// delayed ACK (no delayed-ACK timer runs past 500 ms, RFC 9293 §3.8.6.3); one 80 ms
/// after it is.
#[test]
fn acks_later_than_any_delayed_ack_timer_are_no_delayed_ack_stall() {
    let (_, findings) = diagnose("lone-2300ms", &pcap(lone_segments(2300.0)));
    assert!(
        findings.iter().all(|f| f.kind != "delayed_ack_stall"),
        "{findings:#?}"
    );
    let (_, findings) = diagnose("lone-80ms", &pcap(lone_segments(80.0)));
    let f = findings
        .iter()
        .find(|f| f.kind == "delayed_ack_stall")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    // The twelfth had nothing after it: the sender was not waiting for its ACK.
    assert_eq!(f.details["stalls"], 11.0);
    // Problem 10: the stalled segments are the evidence (frames 4, 6, 8, ...).
    assert_eq!(f.evidence[..3], [4, 6, 8]);
    assert!(
        f.explanation
            .contains("the quickest round trip seen took 20 ms"),
        "{}",
        f.explanation
    );
}

/// Problem 1b (`ndpi_alexa-app` conns 62–64 at 67.5 s): two SYNs, then two SYN/ACKs,
/// the second after the capture saw the client's ACK. The second answers the second
/// SYN: neither a timeout of the server's nor a spurious one.
#[test]
fn each_syn_ack_answering_a_syn_is_not_the_servers_timeout() {
    let (c, s) = (CLIENT_ISN, SERVER_ISN);
    let segs = vec![
        Segment::new(0.0, true, c, 0, SYN, 0),
        Segment::new(1000.0, true, c, 0, SYN, 0),
        Segment::new(1075.0, false, s, c + 1, SYN | ACK, 0),
        Segment::new(1210.0, true, c + 1, s + 1, ACK, 0),
        Segment::new(1245.0, false, s, c + 1, SYN | ACK, 0),
        Segment::new(1248.0, true, c + 1, s + 1, ACK, 0),
    ];
    let (_, findings) = diagnose("two-syns-two-syn-acks", &pcap(segs));
    let server: Vec<_> = findings
        .iter()
        .filter(|f| f.direction == "b_to_a")
        .collect();
    assert!(server.is_empty(), "{server:#?}");
    assert!(
        findings
            .iter()
            .any(|f| f.kind == "timeout_backoff" && f.direction == "a_to_b"),
        "{findings:#?}"
    );
}

/// Without the handshake the window scale is unknown (`ndpi_wechat` conn 5): a raw
/// window below one segment, with more than that in flight, is a scaled one, and the
/// application's pauses still count. (When the flight never exceeds the raw window, the
/// window is taken as it reads: tcptrace_urgent's 1990s capture has no SYN.)
#[test]
fn a_scaled_window_without_the_handshake_does_not_hide_application_pauses() {
    let scaled: Vec<Segment> = small_windows(474, 12)
        .into_iter()
        .skip(3)
        .map(|mut s| {
            if s.from_client {
                s.window = 200; // × 256, say: 51 kB
            }
            s
        })
        .collect();
    let (_, findings) = diagnose("small-windows-scaled", &pcap(scaled));
    // (The server's data comes first: it is `a` now.)
    let limited = findings
        .iter()
        .find(|f| f.kind == "sender_limited" && f.direction == "a_to_b")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(limited.details["pauses"], 12.0);

    let unscaled: Vec<Segment> = small_windows(474, 12).into_iter().skip(3).collect();
    let (_, findings) = diagnose("small-windows-unscaled", &pcap(unscaled));
    assert!(
        findings.iter().all(|f| f.kind != "sender_limited"),
        "{findings:#?}"
    );
}

/// Problem 4 (`tcptrace_single_byte_rexmit` frame 9): a timeout retransmission of bytes
/// the capture never saw (their original was lost before it) fills a hole; the receiver
/// ACKs a filled hole at once (RFC 5681 §4.2), sooner than its delayed ACKs made any
/// round trip look. That is no sign the original arrived: the retransmission was needed.
#[test]
fn a_quick_ack_of_a_retransmission_that_fills_a_hole_is_not_spurious() {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = handshake(0.1, 400.0);
    // Pairs of segments, each pair ACKed 400 ms later (the smallest round trip seen)...
    for k in 0..4u32 {
        let t = 500.0 + 1000.0 * f64::from(k);
        segs.push(Segment::new(t, false, s + 2 * k * MSS, c, ACK, MSS));
        segs.push(Segment::new(
            t + 0.1,
            false,
            s + (2 * k + 1) * MSS,
            c,
            ACK,
            MSS,
        ));
        segs.push(Segment::new(
            t + 400.1,
            true,
            c,
            s + (2 * k + 2) * MSS,
            ACK,
            0,
        ));
    }
    // ...then segment 8 is lost before the capture, 9 arrives (a duplicate ACK), the
    // timer resends 8 and the receiver ACKs both 210 ms later.
    segs.push(Segment::new(4500.0, false, s + 9 * MSS, c, ACK, MSS));
    segs.push(Segment::new(4900.0, true, c, s + 8 * MSS, ACK, 0));
    segs.push(Segment::new(5700.0, false, s + 8 * MSS, c, ACK, MSS));
    segs.push(Segment::new(5910.0, true, c, s + 10 * MSS, ACK, 0));
    let (_, findings) = diagnose("hole-filled", &pcap(segs));
    assert!(
        findings.iter().any(|f| f.kind == "timeout_backoff"),
        "{findings:#?}"
    );
    assert!(
        findings.iter().all(|f| f.kind != "spurious_timeout"),
        "{findings:#?}"
    );
}

/// A segment sent again `after_ms` after the original, on a 50 ms path, nothing
/// acknowledged in between.
fn repeated_after(after_ms: f64) -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let mut segs = handshake(0.1, 50.1);
    segs.extend([
        Segment::new(100.0, false, s, c, ACK, MSS),
        Segment::new(100.0 + after_ms, false, s, c, ACK, MSS),
        Segment::new(150.0 + after_ms, true, c, s + MSS, ACK, 0),
    ]);
    segs
}

/// Problem 3 (`ndpi_alexa-app` conn 31 frame 647, conn 100 frame 2486): bytes sent again
/// 49 µs after they went are no retransmission timeout, which RFC 6298 §2 keeps above
/// the round trip; after 1.2 s they are.
#[test]
fn a_copy_sooner_than_any_rto_is_no_timeout() {
    let (_, findings) = diagnose("copy-after-49us", &pcap(repeated_after(0.049)));
    assert!(
        findings.iter().all(|f| f.kind != "timeout_backoff"),
        "{findings:#?}"
    );
    let (_, findings) = diagnose("copy-after-1200ms", &pcap(repeated_after(1200.0)));
    assert!(
        findings.iter().any(|f| f.kind == "timeout_backoff"),
        "{findings:#?}"
    );
}

/// Captured at the sender on a 40 ms path: nine segments, the third lost; duplicate ACKs
/// bring it back by fast retransmit, and a tenth segment, sent during the recovery, is
/// lost too. The ACK of the retransmission stops at the tenth (nothing beyond it to SACK)
/// and the sender resends it 50 µs later, 40 ms after its last transmission: what an
/// emulated Linux sender did under 1 % loss (the diagnosis suite, frames 4975-4976).
fn ack_driven_retransmission() -> Vec<Segment> {
    let (c, s) = (CLIENT_ISN + 1, SERVER_ISN + 1);
    let seq = |k: u32| s + k * MSS;
    let mut segs = handshake(0.1, 40.1);
    for k in 0..9 {
        segs.push(Segment::new(
            100.0 + 0.1 * f64::from(k),
            false,
            seq(k),
            c,
            ACK,
            MSS,
        ));
    }
    // The client: an ACK for 0-1, then a duplicate for each of 3 to 8.
    segs.push(Segment::new(140.15, true, c, seq(2), ACK, 0));
    for k in 3..9u32 {
        let mut dup = Segment::new(140.05 + 0.1 * f64::from(k), true, c, seq(2), ACK, 0);
        dup.sack = vec![(seq(3), seq(k + 1))];
        segs.push(dup);
    }
    segs.push(Segment::new(140.6, false, seq(2), c, ACK, MSS)); // fast retransmit
    segs.push(Segment::new(140.65, false, seq(9), c, ACK, MSS)); // new data, lost
    segs.push(Segment::new(180.7, true, c, seq(9), ACK, 0)); // stops at the tenth
    segs.push(Segment::new(180.75, false, seq(9), c, ACK, MSS)); // resent on that ACK
    segs.push(Segment::new(220.8, true, c, seq(10), ACK, 0));
    segs
}

/// A retransmission 50 µs after an ACK of new data is no timeout, however long the
/// sender was silent before (RFC 6298 §5.3: every ACK of new data restarts the timer, so
/// no RTO expires that soon after one).
#[test]
fn a_retransmission_right_after_an_ack_is_no_timeout() {
    let (report, findings) = diagnose("ack-driven", &pcap(ack_driven_retransmission()));
    assert_eq!(report.connections[0].b_to_a.retransmitted_packets, 2);
    assert!(
        findings
            .iter()
            .all(|f| f.kind != "timeout_backoff" && f.kind != "fast_retransmit_suppressed"),
        "{findings:#?}"
    );
}
