//! ECN, RFC 3168: negotiation on the handshake, ECT on new data only, CE echoed with
//! ECE until CWR, one window reduction per window of data and no retransmission.
//!
//! The path of `tests/recovery.rs`: 20 ms each way, 10 Mbit/s (a 1448-byte segment
//! takes 1.2 ms), receive buffer 20 segments. Segment k is bytes
//! [1 + 1448·k, 1 + 1448·(k+1)).
mod common;

use airtrace_tcp::{Config, Flags};
use common::*;

const SEG: u32 = 1448;

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn ecn(on: bool) -> Config {
    let mut c = Config::linux();
    c.ecn = on;
    c
}

fn path() -> Net {
    let mut c = ecn(true);
    c.rcvbuf = 20 * SEG;
    Net::same(c, 20 * MS)
        .rate(10_000_000)
        .bulk(200 * u64::from(SEG))
}

#[test]
fn presets_do_not_offer_ecn() {
    assert!(!Config::linux().ecn);
    assert!(!Config::bsd().ecn);
}

#[test]
fn negotiated_when_both_offer() {
    let mut net = Net::same(ecn(true), 10 * MS).send_open(2 * 1448);
    net.run();
    assert_eq!(
        net.trace(),
        lines(&[
            // ECN-setup SYN: ECE and CWR; ECN-setup SYN-ACK: ECE alone (§6.1.1).
            "    0.000 A>B SEW 0:0(0) win 65535",
            "   10.000 B>A SE. 0:0(0) ack 1 win 65535",
            // The handshake's ACK is a pure ACK: not ECN-capable; the data is.
            "   20.000 A>B . 1:1(0) ack 1 win 32768",
            "   20.000 A>B . 1:1449(1448) ack 1 win 32768 ect",
            "   20.000 A>B P. 1449:2897(1448) ack 1 win 32768 ect",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768",
        ])
    );
    assert!(net.ep[A].ecn_enabled() && net.ep[B].ecn_enabled());
}

#[test]
fn not_negotiated_when_one_side_does_not_offer() {
    // The server does not offer: a plain SYN-ACK, no ECT anywhere.
    let mut net = Net::new(ecn(true), ecn(false), 10 * MS).send_open(2 * 1448);
    net.run();
    assert_eq!(
        net.trace()[..4],
        lines(&[
            "    0.000 A>B SEW 0:0(0) win 65535",
            "   10.000 B>A S. 0:0(0) ack 1 win 65535",
            "   20.000 A>B . 1:1(0) ack 1 win 32768",
            "   20.000 A>B . 1:1449(1448) ack 1 win 32768",
        ])
    );
    assert!(!net.ep[A].ecn_enabled() && !net.ep[B].ecn_enabled());
    assert!(net.log.iter().all(|s| !s.seg.ect));

    // The client does not offer: the server must not answer with ECE.
    let mut net = Net::new(ecn(false), ecn(true), 10 * MS).send_open(2 * 1448);
    net.run();
    assert_eq!(
        net.trace()[..4],
        lines(&[
            "    0.000 A>B S 0:0(0) win 65535",
            "   10.000 B>A S. 0:0(0) ack 1 win 65535",
            "   20.000 A>B . 1:1(0) ack 1 win 32768",
            "   20.000 A>B . 1:1449(1448) ack 1 win 32768",
        ])
    );
    assert!(!net.ep[A].ecn_enabled() && !net.ep[B].ecn_enabled());
    assert!(net.log.iter().all(|s| !s.seg.ect));
}

#[test]
fn ce_is_ignored_without_ecn() {
    let mut net = Net::new(ecn(true), ecn(false), 10 * MS).send_open(4 * 1448);
    // Nothing is ECN-capable, so the harness marks nothing; mark by hand instead.
    net.run();
    let data = net
        .log
        .iter()
        .find(|s| s.from == A && s.is_data())
        .unwrap()
        .seg;
    let before = net.ep[B].stats().clone();
    net.ep[B].on_segment_ce(net.now, &data, true);
    assert_eq!(net.ep[B].stats().ce_received, before.ce_received);
    let ack = net.ep[B].poll_transmit(net.now).unwrap();
    assert!(!ack.flags.contains(Flags::ECE));
}

/// B's segments after the handshake: (time sent, ECE set).
fn b_acks(net: &Net) -> Vec<(i64, bool)> {
    net.log
        .iter()
        .filter(|s| s.from == B && s.is_pure_ack())
        .map(|s| (s.t, s.seg.flags.contains(Flags::ECE)))
        .collect()
}

#[test]
fn one_ce_mark_one_reduction_ece_until_cwr_no_retransmission() {
    let mut net = path();
    net.mark_ce_seg(30, 1);
    net.run();
    let a = net.ep[A].stats();
    assert_eq!(a.ecn_reductions, 1);
    assert_eq!(a.retransmitted_segments, 0);
    assert_eq!(a.fast_retransmits + a.timeouts, 0);
    assert_eq!(net.ep[B].stats().ce_received, 1);
    assert_eq!(net.delivered, 200 * u64::from(SEG));
    assert!(net.ep[A].is_closed() && net.ep[B].is_closed());

    // Segment 30 left at 125.021 ms, marked; it arrives 1.2 ms + 20 ms later.
    let marked = net.log.iter().find(|s| s.ce).unwrap();
    assert_eq!(marked.rel_seq(), 1 + 30 * SEG);
    let marked_arrival = marked.t + 1_200_000 + 20 * MS;
    // Exactly one CWR, on a new (ECN-capable) data segment.
    let cwr: Vec<_> = net
        .log
        .iter()
        .filter(|s| s.seg.flags.contains(Flags::CWR))
        .collect();
    assert_eq!(cwr.len(), 2, "the SYN and one data segment");
    let cwr = cwr[1];
    assert!(cwr.from == A && cwr.is_data() && cwr.seg.ect);
    let cwr_arrival = cwr.t + 1_200_000 + 20 * MS;
    // B sets ECE on every ACK from the first after the CE mark until the CWR arrives,
    // and on no other.
    let acks = b_acks(&net);
    let ece: Vec<_> = acks.iter().filter(|a| a.1).collect();
    assert_eq!(ece.len(), 10);
    for (t, e) in &acks {
        assert_eq!(*e, *t >= marked_arrival && *t < cwr_arrival, "ACK at {t}");
    }
    // The first ECE reaches A 20 ms (+ 41.6 µs for the 52-byte ACK) after it was sent: A halves
    // its window then (18 segments in flight: ssthresh 9 segments), sends nothing more
    // until the flight drops below it, and the first segment it sends carries CWR.
    let first_ece = ece[0].0;
    let (t, st) = net.first_state(|s| s.ssthresh < 1 << 30);
    assert_eq!(t, first_ece + 20 * MS + 41_600);
    assert_eq!(st.ssthresh, 9 * SEG);
    assert_eq!(st.cwnd, 9 * SEG);
    let next_data = net
        .log
        .iter()
        .find(|s| s.from == A && s.is_data() && s.t >= t)
        .unwrap();
    assert!(std::ptr::eq(next_data, cwr));
    assert_eq!(
        net.trace_between(167, 180),
        lines(&[
            "  169.021 B>A E. 1:1(0) ack 72401 win 28960",
            "  179.462 A>B W. 72401:73849(1448) ack 1 win 28960 ect",
            "  179.462 A>B . 73849:75297(1448) ack 1 win 28960 ect",
        ])
    );
}

#[test]
fn two_ce_marks_in_one_window_one_reduction() {
    let mut net = path();
    net.mark_ce_seg(30, 1);
    net.mark_ce_seg(36, 1);
    net.run();
    assert_eq!(net.ep[B].stats().ce_received, 2);
    assert_eq!(net.ep[A].stats().ecn_reductions, 1);
    assert_eq!(net.ep[A].stats().retransmitted_segments, 0);
    let cwr = net
        .log
        .iter()
        .filter(|s| s.from == A && s.is_data() && s.seg.flags.contains(Flags::CWR))
        .count();
    assert_eq!(cwr, 1);
}

#[test]
fn marks_in_two_windows_two_reductions() {
    let mut net = path();
    net.mark_ce_seg(30, 1);
    net.mark_ce_seg(120, 1);
    net.run();
    assert_eq!(net.ep[B].stats().ce_received, 2);
    assert_eq!(net.ep[A].stats().ecn_reductions, 2);
    assert_eq!(net.ep[A].stats().retransmitted_segments, 0);
}

#[test]
fn retransmissions_and_pure_acks_are_not_ect() {
    let mut net = path();
    net.drop_seg(10, 1);
    net.run();
    assert_eq!(net.ep[A].stats().retransmitted_segments, 1);
    let rtx = net.retransmissions();
    assert_eq!(rtx.len(), 1);
    assert!(!rtx[0].seg.ect);
    assert!(net
        .log
        .iter()
        .filter(|s| s.is_pure_ack())
        .all(|s| !s.seg.ect));
    assert!(net
        .log
        .iter()
        .filter(|s| s.from == A && s.is_data() && s.rel_seq() != rtx[0].rel_seq())
        .all(|s| s.seg.ect));
}

/// A loss and a CE mark in one window halve ssthresh once, whichever the sender learns
/// of first (RFC 3168 §6.1.2: at most once per window), with one CWR; B stops
/// echoing once the CWR arrives.
fn loss_and_mark(drop: u32, mark: u32) -> Net {
    let mut net = path();
    net.drop_seg(drop, 1);
    net.mark_ce_seg(mark, 1);
    net.run();
    assert_eq!(net.delivered, 200 * u64::from(SEG));
    let a = net.ep[A].stats();
    assert_eq!(net.ep[B].stats().ce_received, 1);
    assert_eq!(
        (a.fast_retransmits, a.retransmitted_segments, a.timeouts),
        (1, 1, 0)
    );
    let mut cuts: Vec<u32> = net.states.iter().map(|(_, s)| s.ssthresh).collect();
    cuts.dedup();
    assert_eq!(cuts.len(), 2, "ssthresh set once: {cuts:?}");
    let cwr: Vec<_> = net
        .log
        .iter()
        .filter(|s| s.from == A && s.is_data() && s.seg.flags.contains(Flags::CWR))
        .collect();
    assert_eq!(cwr.len(), 1);
    assert!(
        cwr[0].seg.ect,
        "CWR rides on new data, not on the retransmission"
    );
    let cwr_arrival = cwr[0].t + 1_200_000 + 20 * MS;
    let acks = b_acks(&net);
    assert!(acks.iter().any(|a| a.1));
    assert!(acks.iter().filter(|a| a.0 >= cwr_arrival).all(|a| !a.1));
    net
}

#[test]
fn ce_then_loss_in_one_window_one_reduction() {
    // ECE (for segment 30) arrives first and halves: 18 segments in flight, ssthresh
    // 9 segments. The fast retransmit of segment 34 then keeps it (halving the 16
    // segments still in flight would give 8).
    let net = loss_and_mark(34, 30);
    assert_eq!(net.ep[A].stats().ecn_reductions, 1);
    assert_eq!(net.ep[A].sender_state().ssthresh, 9 * SEG);
}

#[test]
fn loss_then_ce_in_one_window_one_reduction() {
    // Segment 30 lost, 40 marked: the fast retransmit comes first; ECE during the
    // recovery is ignored and the recovery's CWR ends the echo.
    let net = loss_and_mark(30, 40);
    assert_eq!(net.ep[A].stats().ecn_reductions, 0);
    // Segment 30 lost, 32 marked: the ECE on the first duplicate ACK halves the window
    // (Disorder, below the threshold); the fast retransmit two ACKs later keeps it.
    let net = loss_and_mark(30, 32);
    assert_eq!(net.ep[A].stats().ecn_reductions, 1);
}
