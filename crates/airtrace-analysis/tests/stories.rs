//! Packet exchanges with known causes, and what the analyzer makes of them.
//!
//! Each test builds decoded packets directly (no bytes: the decoder has its own
//! tests) with the `Exchange` helper, which reads like the exchange it describes.

use std::net::IpAddr;

use airtrace_analysis::{
    Analyzer, Annotation, ConnSummary, Flags, PacketIn, RetransKind, NONE_I64,
};
use airtrace_wire::{tcp_flags::*, Decoded, Ip, Tcp, Transport};

const MSS: u32 = 1000;

/// A client (198.18.0.1:40000) and a server (198.18.0.2:80) exchanging segments.
struct Exchange {
    analyzer: Analyzer,
    frame: u64,
    ip_id: u32,
    /// The window field of the next segment (then back to 65535).
    window: u16,
}

impl Exchange {
    fn new() -> Self {
        Exchange {
            analyzer: Analyzer::new(),
            frame: 0,
            ip_id: 0,
            window: 65535,
        }
    }

    /// Sends one segment at `ms` milliseconds; `from_client` picks the direction.
    fn send(
        &mut self,
        ms: f64,
        from_client: bool,
        seq: u32,
        ack: u32,
        flags: u16,
        len: u32,
    ) -> Annotation {
        self.ip_id += 1;
        self.send_with_id(ms, from_client, seq, ack, flags, len, self.ip_id)
    }

    #[allow(clippy::too_many_arguments)]
    fn send_with_id(
        &mut self,
        ms: f64,
        from_client: bool,
        seq: u32,
        ack: u32,
        flags: u16,
        len: u32,
        id: u32,
    ) -> Annotation {
        let (c, s): (IpAddr, IpAddr) =
            ("198.18.0.1".parse().unwrap(), "198.18.0.2".parse().unwrap());
        let (src, dst, sport, dport) = if from_client {
            (c, s, 40000, 80)
        } else {
            (s, c, 80, 40000)
        };
        let decoded = Decoded {
            ip: Some(Ip {
                src,
                dst,
                id,
                protocol: 6,
                ..Default::default()
            }),
            transport: Transport::Tcp(Tcp {
                src_port: sport,
                dst_port: dport,
                seq,
                ack,
                flags,
                window: std::mem::replace(&mut self.window, 65535),
                payload_len: len,
                ..Default::default()
            }),
            ..Default::default()
        };
        self.frame += 1;
        let mut ann = Annotation::default();
        let p = PacketIn {
            frame: self.frame,
            ts_ns: (ms * 1e6) as i64,
            wire_len: 54 + len,
            decoded: &decoded,
            payload: &[],
        };
        self.analyzer.process(&p, &mut ann);
        ann
    }

    /// SYN, SYN/ACK, ACK with a 100 ms round trip: client ISN 0, server ISN 0.
    fn handshake(&mut self) {
        self.send(0.0, true, 0, 0, SYN, 0);
        self.send(100.0, false, 0, 1, SYN | ACK, 0);
        self.send(200.0, true, 1, 1, ACK, 0);
    }

    /// The server's data segment number `k` (0-based).
    fn data(&mut self, ms: f64, k: u32) -> Annotation {
        self.send(ms, false, 1 + k * MSS, 1, ACK, MSS)
    }

    /// The client acknowledges everything before segment `k`.
    fn ack(&mut self, ms: f64, k: u32) -> Annotation {
        self.send(ms, true, 1, 1 + k * MSS, ACK, 0)
    }

    fn finish(self) -> Vec<ConnSummary> {
        self.analyzer.finish()
    }
}

#[test]
fn a_lost_segment_repaired_by_three_timeouts_backs_off() {
    let mut x = Exchange::new();
    x.handshake();
    x.data(300.0, 0);
    x.ack(400.0, 1);
    x.data(410.0, 1); // lost: no ACK comes back
    let first = x.data(1410.0, 1); // RTO 1 s
    let second = x.data(3410.0, 1); // doubled
    let third = x.data(7410.0, 1); // doubled again
    let ack = x.ack(7510.0, 2);
    for (a, backoff, gap_ms) in [(first, 1, 1000), (second, 2, 2000), (third, 3, 4000)] {
        assert!(a.flags.contains(Flags::RETRANSMISSION));
        assert_eq!((a.retrans_kind, a.backoff), (RetransKind::Timeout, backoff));
        assert_eq!(a.idle_gap_ns, gap_ms * 1_000_000);
    }
    assert_eq!(
        third.since_first_tx_ns, 7_000_000_000,
        "from the first transmission"
    );
    assert_eq!(
        ack.ack_rtt_ns, NONE_I64,
        "Karn's rule: the ACK of retransmitted data gives no sample"
    );
    let conns = x.finish();
    let server = &conns[0].b_to_a;
    assert_eq!(
        (
            server.timeouts,
            server.max_backoff,
            server.retransmitted_packets
        ),
        (3, 3, 3)
    );
    assert_eq!(
        server.rtt.samples, 2,
        "the SYN/ACK and segment 0 gave samples, not segment 1"
    );
    assert!((server.rtt.avg_s.unwrap() - 0.1).abs() < 1e-9);
}

/// docs/diagnosis-corpus.md problem 5 (tcptrace_long_rtt): the ACK that fills a hole
/// also covers a segment sent long before and never retransmitted. Timing that segment
/// measured the repair (seconds), which inflated the RTO estimate past the next
/// silences, so that the next timeouts were taken for go-back-N segments.
#[test]
fn an_ack_filling_a_hole_gives_no_rtt_sample_and_later_timeouts_still_count() {
    let mut x = Exchange::new();
    x.handshake();
    for k in 0..3 {
        x.data(300.0 + k as f64, k);
        x.ack(400.0 + k as f64, k + 1);
    }
    // Segments 3, 4 and 6 are lost, 5, 7 and 8 arrive; each hole needs its own timeouts.
    for k in 3..9 {
        x.data(500.0 + k as f64, k);
    }
    x.ack(600.0, 3); // a duplicate ACK
    x.data(1500.0, 3); // timeout
    x.ack(1600.0, 4);
    x.data(2600.0, 4); // timeout
    x.data(4600.0, 4); // doubled
    x.data(8600.0, 4); // doubled again
    let fill = x.ack(8700.0, 6); // covers 4 (retransmitted) and 5 (sent at 505 ms)
    assert_eq!(
        fill.ack_rtt_ns, NONE_I64,
        "an ACK held back by a hole times the repair, not the path"
    );
    // Still recovering from the first timeout: a 3 s silence before segment 6 is sent
    // again is a timeout on a 100 ms path, not one more go-back-N segment.
    let later = x.data(11700.0, 6);
    assert_eq!(
        (later.retrans_kind, later.backoff),
        (RetransKind::Timeout, 1)
    );
    x.ack(11800.0, 9);
    let conns = x.finish();
    let server = &conns[0].b_to_a;
    assert_eq!(server.timeouts, 5);
    assert!((server.rtt.avg_s.unwrap() - 0.1).abs() < 1e-9);
}

#[test]
fn three_duplicate_acks_then_fast_retransmit_and_sack_recovery() {
    let mut x = Exchange::new();
    x.handshake();
    for k in 0..8 {
        x.data(300.0 + k as f64, k);
    }
    // Segments 2 and 5 are lost; the client acknowledges 0-1, then duplicates.
    x.ack(400.0, 2);
    x.ack(401.0, 2);
    x.ack(402.0, 2);
    let dup3 = x.ack(403.0, 2);
    assert_eq!(
        (dup3.flags.contains(Flags::DUPLICATE_ACK), dup3.dupack_num),
        (true, 3)
    );
    let fast = x.data(403.5, 2);
    assert!(fast.flags.contains(Flags::FAST_RETRANSMISSION));
    assert_eq!(fast.retrans_kind, RetransKind::FastRetransmit);
    // A partial ACK (NewReno, RFC 6582): everything up to segment 5, which is next.
    x.ack(504.0, 5);
    let partial = x.data(504.5, 5);
    assert_eq!(partial.retrans_kind, RetransKind::FastRetransmit);
    x.ack(605.0, 8);
    let conns = x.finish();
    let server = &conns[0].b_to_a;
    assert_eq!((server.fast_retransmissions, server.timeouts), (2, 0));
    assert_eq!(conns[0].a_to_b.triple_dupacks, 1);
}

#[test]
fn after_a_timeout_the_go_back_n_segments_are_not_new_timeouts() {
    let mut x = Exchange::new();
    x.handshake();
    for k in 0..4 {
        x.data(300.0 + k as f64, k);
    }
    // The whole flight is lost; the timer fires and the sender goes back N.
    let rto = x.data(1303.0, 0);
    x.ack(1403.0, 1);
    let next = x.data(1403.5, 1);
    let after = x.data(1403.6, 2);
    assert_eq!((rto.retrans_kind, rto.backoff), (RetransKind::Timeout, 1));
    for a in [next, after] {
        assert_eq!((a.retrans_kind, a.backoff), (RetransKind::Timeout, 0));
    }
    let conns = x.finish();
    assert_eq!(
        (
            conns[0].b_to_a.timeouts,
            conns[0].b_to_a.timeout_retransmissions
        ),
        (1, 3)
    );
}

#[test]
fn a_frame_captured_twice_is_a_capture_duplicate_not_a_retransmission() {
    let mut x = Exchange::new();
    x.handshake();
    x.send_with_id(300.0, false, 1, 1, ACK, MSS, 77);
    let copy = x.send_with_id(300.002, false, 1, 1, ACK, MSS, 77);
    assert_eq!(copy.flags, Flags::CAPTURE_DUPLICATE);
    let resent = x.send_with_id(1300.0, false, 1, 1, ACK, MSS, 78);
    assert!(
        resent.flags.contains(Flags::RETRANSMISSION),
        "a new IP ID: the sender really sent it again"
    );
    let conns = x.finish();
    assert_eq!(
        (
            conns[0].b_to_a.capture_duplicates,
            conns[0].b_to_a.retransmitted_packets
        ),
        (1, 1)
    );
}

#[test]
fn a_new_syn_on_the_same_ports_starts_a_new_connection() {
    let mut x = Exchange::new();
    x.handshake();
    x.send(300.0, true, 1, 1, FIN | ACK, 0);
    x.send(310.0, false, 1, 2, FIN | ACK, 0);
    x.send(320.0, true, 2, 2, ACK, 0);
    let syn = x.send(5000.0, true, 9000, 0, SYN, 0);
    assert!(syn.flags.contains(Flags::REUSED_PORTS));
    assert_eq!(syn.conn, 1);
    let conns = x.finish();
    assert_eq!(conns.len(), 2);
    assert!(conns[1].reused_ports && !conns[0].reused_ports);
    assert_eq!(conns[0].handshake_rtt_s, Some(0.2));
}

#[test]
fn a_zero_window_stall_is_counted_and_probed() {
    let mut x = Exchange::new();
    x.handshake();
    x.data(300.0, 0);
    x.window = 0;
    let zero = x.ack(400.0, 1);
    assert!(zero.flags.contains(Flags::ZERO_WINDOW));
    let probe = x.send(600.0, false, 1 + MSS, 1, ACK, 1);
    assert!(probe.flags.contains(Flags::ZERO_WINDOW_PROBE));
    x.window = 0;
    let probe_ack = x.ack(700.0, 1);
    assert!(probe_ack.flags.contains(Flags::ZERO_WINDOW_PROBE_ACK));
    let update = x.ack(900.0, 1);
    assert!(update.flags.contains(Flags::WINDOW_UPDATE));
    let conns = x.finish();
    assert_eq!(
        (
            conns[0].a_to_b.zero_window_advertisements,
            conns[0].b_to_a.zero_window_probes
        ),
        (2, 1)
    );
}

/// Found by the `analyze_capture` fuzz target: an ACK dated a century after its
/// segment overflowed the RTT estimator. Times are clamped and the arithmetic widened.
#[test]
fn a_clock_that_jumps_by_a_century_does_not_overflow() {
    let mut x = Exchange::new();
    x.handshake();
    x.data(300.0, 0);
    x.ack(400.0, 1);
    x.data(500.0, 1);
    let century_ms = 100.0 * 365.25 * 86_400e3;
    let late = x.ack(century_ms, 2);
    assert!(late.ack_rtt_ns > 0);
    x.data(century_ms + 1.0, 2);
    let back = x.ack(-century_ms, 3);
    assert_eq!(
        back.ack_rtt_ns, NONE_I64,
        "a clock that went backwards gives no sample"
    );
    let conns = x.finish();
    assert_eq!(
        conns[0].b_to_a.rtt.samples, 3,
        "SYN/ACK, segment 0 and segment 1"
    );
}

/// Issue 17 item 9, what tcptrace users look for: the first flight (the data sent
/// before the peer acknowledged any), pushed and urgent data packets, the longest wait
/// of a segment before it was sent again, and a complete connection (a SYN and a FIN
/// from each side).
#[test]
fn the_first_flight_pushed_and_urgent_data_and_the_longest_retransmission_wait() {
    let mut x = Exchange::new();
    x.handshake();
    x.data(300.0, 0);
    x.send(300.0, false, 1 + MSS, 1, ACK | URG, MSS);
    x.send(300.0, false, 1 + 2 * MSS, 1, ACK | PSH, MSS);
    x.ack(400.0, 3); // the first flight was three segments
    x.data(410.0, 3);
    x.data(410.0, 4); // lost twice
    x.ack(510.0, 4);
    x.data(1410.0, 4); // 1 s after its first transmission
    x.data(3410.0, 4); // 2 s after the previous one: the longest wait
    x.ack(3510.0, 5);
    x.send(3600.0, false, 1 + 5 * MSS, 1, ACK | FIN | PSH, 0);
    x.send(3700.0, true, 1, 2 + 5 * MSS, ACK | FIN, 0);
    let conns = x.finish();
    let (c, server) = (&conns[0], &conns[0].b_to_a);
    assert_eq!(
        (server.initial_window_bytes, server.initial_window_packets),
        (Some(3 * MSS as u64), Some(3))
    );
    assert_eq!(
        c.a_to_b.initial_window_bytes,
        Some(0),
        "the client sent no data"
    );
    assert_eq!(
        (server.pushed_data_packets, server.urgent_data_packets),
        (1, 1),
        "a FIN without data is no pushed data packet"
    );
    assert_eq!(server.max_retransmit_wait_s, Some(2.0));
    assert_eq!(c.a_to_b.max_retransmit_wait_s, None);
    assert!(c.complete);
}

#[test]
fn without_a_syn_the_first_flight_is_unknown_and_the_connection_incomplete() {
    let mut x = Exchange::new();
    x.data(0.0, 0);
    x.ack(100.0, 1);
    let conns = x.finish();
    assert_eq!(conns[0].a_to_b.initial_window_bytes, None);
    assert_eq!(conns[0].a_to_b.initial_window_packets, None);
    assert!(!conns[0].complete);
}

#[test]
fn without_sack_a_lost_fast_retransmission_is_repaired_by_the_timer() {
    // Sender-side capture, 100 ms round trip, no SACK. Segment 0 is lost; three
    // dupACKs bring its fast retransmission, which is lost too. New data keeps the
    // dupACKs coming, and 300 ms later the timer resends segment 0 once more.
    let mut x = Exchange::new();
    x.handshake();
    for k in 0..8 {
        x.data(300.0 + k as f64, k);
    }
    x.ack(400.0, 0); // the ACK of the SYN's byte: the hole is at segment 0
    for i in 0..3 {
        x.ack(401.0 + i as f64, 0);
    }
    let fast = x.data(403.1, 0);
    let mut t = 404.0;
    for k in 8..20 {
        x.ack(t, 0);
        x.data(t + 0.1, k);
        t += 25.0;
    }
    let timer = x.data(703.1, 0);
    assert_eq!(fast.retrans_kind, RetransKind::FastRetransmit);
    assert_eq!((timer.retrans_kind, timer.backoff), (RetransKind::Timeout, 1));
    let conns = x.finish();
    assert_eq!(
        (conns[0].b_to_a.timeouts, conns[0].b_to_a.fast_retransmissions),
        (1, 1)
    );
}

#[test]
fn two_dupacks_and_then_a_timer_is_a_timeout_not_a_fast_retransmit() {
    // Captured at the sender (the server), 100 ms round trip: segment 1 is lost, two
    // dupACKs come (too few for fast retransmit) and 250 ms later the timer resends it,
    // while the silence is still shorter than the analyzer's RTO estimate.
    let mut x = Exchange::new();
    x.send(0.0, true, 0, 0, SYN, 0);
    x.send(0.1, false, 0, 1, SYN | ACK, 0);
    x.send(100.1, true, 1, 1, ACK, 0);
    for k in 0..4 {
        x.data(101.0 + k as f64, k);
    }
    x.ack(201.0, 1);
    x.ack(202.0, 1);
    x.ack(203.0, 1);
    let resent = x.data(451.0, 1);
    assert_eq!(
        (resent.retrans_kind, resent.backoff),
        (RetransKind::Timeout, 1)
    );
}
