//! The retransmission timer: RFC 6298 arithmetic, Karn's rule, BSD's coarse ticks and
//! the backoff cap.
mod common;

use airtrace_tcp::{Config, Endpoint};
use common::*;

const SEG: u32 = 1448;

/// A's ISN is 0 and its timestamp clock reads 1000 + ms.
#[test]
fn rto_follows_rfc6298_from_samples() {
    let mut a = Endpoint::client(Config::linux(), 0, 1_000);
    let syn = a.poll_transmit(0).unwrap();
    assert_eq!(syn.options.timestamps, Some((1_000, 0)));
    assert_eq!(a.sender_state().rto_ns, S); // (2.1) initial RTO
    assert_eq!(a.poll_at(), Some(S));

    // SYN-ACK after 100 ms: first sample R = 100 ms. (2.2): SRTT = R, RTTVAR = R/2,
    // RTO = SRTT + 4·RTTVAR = 300 ms.
    a.on_segment(100 * MS, &from_b(1, 1_000, 100, true));
    let s = a.sender_state();
    assert_eq!(
        (s.srtt_ns, s.rttvar_ns, s.rto_ns),
        (100 * MS, 50 * MS, 300 * MS)
    );

    a.write(u64::from(10 * SEG));
    let mut sent = Vec::new();
    while let Some(seg) = a.poll_transmit(100 * MS) {
        sent.push(seg);
    }
    assert_eq!(sent.len(), 11); // the handshake's ACK, then IW10
    let tsval = sent[1].options.timestamps.unwrap().0;
    assert_eq!(tsval, 1_100);
    assert_eq!(a.poll_at(), Some(400 * MS)); // (5.1) armed with 300 ms

    // (2.3) with R' = 100 ms each time: RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R'|,
    // SRTT = 7/8·SRTT + 1/8·R' (integer nanoseconds, truncated).
    let mut expect = vec![
        (100 * MS, 37_500_000, 250 * MS),
        (100 * MS, 28_125_000, 212_500_000),
        // 100 + 4 × 21.09375 = 184.375 ms: raised to the 200 ms minimum (2.4).
        (100 * MS, 21_093_750, 200 * MS),
    ];
    for (i, want) in expect.drain(..).enumerate() {
        let ack = 1 + (i as u32 + 1) * SEG;
        a.on_segment(200 * MS, &from_b(ack, tsval, 200, false));
        let s = a.sender_state();
        assert_eq!((s.srtt_ns, s.rttvar_ns, s.rto_ns), want, "ACK {}", i + 1);
        // (5.3): an ACK of new data restarts the timer.
        assert_eq!(a.poll_at(), Some(200 * MS + want.2));
    }
    // A 300 ms sample: RTTVAR = (3 × 21.09375 + 200) / 4 = 65.8203125 ms (truncated
    // to 65_820_312 ns), SRTT = (7 × 100 + 300) / 8 = 125 ms.
    a.on_segment(400 * MS, &from_b(1 + 4 * SEG, tsval, 400, false));
    let s = a.sender_state();
    assert_eq!((s.srtt_ns, s.rttvar_ns), (125 * MS, 65_820_312));
    assert_eq!(s.rto_ns, 125 * MS + 4 * 65_820_312);
    assert_eq!(a.stats().rtt_samples, 5);
    // (5.2): everything acknowledged, the timer stops.
    a.on_segment(400 * MS, &from_b(1 + 10 * SEG, tsval, 400, false));
    assert_eq!(a.poll_at(), None);
}

/// Without timestamps, one segment at a time is timed; the SYN is too.
fn no_ts() -> Config {
    let mut c = Config::linux();
    c.timestamps = false;
    c
}

/// A single segment (no dupacks can come) is lost once. Its retransmission is
/// acknowledged, but Karn's rule takes no sample from it, and the backoff stays until
/// the next segment gives one (RFC 6298 §5 (5.7) and §3).
#[test]
fn karn_no_sample_from_a_retransmitted_segment() {
    let mut net = Net::same(no_ts(), 50 * MS).send_open(u64::from(SEG));
    net.drop_seg(0, 1);
    net.run();
    // Handshake sample: 100 ms → RTO 300 ms. Data sent at 100 ms, timeout at 400 ms.
    assert_eq!(
        net.trace()[3..],
        [
            "  100.000 A>B P. 1:1449(1448) ack 1 win 32768 DROPPED",
            "  400.000 A>B P. 1:1449(1448) ack 1 win 32768",
            "  490.000 B>A . 1:1(0) ack 1449 win 32768",
        ]
    );
    let s = net.ep[A].sender_state();
    assert_eq!(net.ep[A].stats().rtt_samples, 1);
    assert_eq!((s.srtt_ns, s.backoff, s.rto_ns), (100 * MS, 1, 600 * MS));

    // The next segment, at 1 s, is timed: its ACK (delayed 40 ms) is a 140 ms sample
    // and clears the backoff. RTTVAR = (3×50 + 40)/4 = 47.5 ms, SRTT = (700+140)/8.
    net.to_write += u64::from(SEG);
    net.at(S).run();
    let s = net.ep[A].sender_state();
    assert_eq!(net.ep[A].stats().rtt_samples, 2);
    assert_eq!(
        (s.srtt_ns, s.rttvar_ns, s.backoff),
        (105 * MS, 47_500_000, 0)
    );
    assert_eq!(s.rto_ns, 105 * MS + 190 * MS);
}

/// The same loss with timestamps: the ACK of the retransmission echoes the
/// retransmission's TSval, a valid 140 ms sample (RFC 7323 §4), so the backoff clears.
#[test]
fn timestamps_give_a_sample_from_a_retransmission() {
    let mut net = Net::same(Config::linux(), 50 * MS).send_open(u64::from(SEG));
    net.drop_seg(0, 1);
    net.run();
    let s = net.ep[A].sender_state();
    assert_eq!(net.ep[A].stats().rtt_samples, 2);
    assert_eq!((s.backoff, s.srtt_ns), (0, 105 * MS));
}

/// 4.4BSD: 500 ms ticks. The handshake crosses no tick boundary: a 0-tick sample,
/// RTO = 0 + max(G, 0) = 500 ms, raised to the 1 s minimum (two ticks). The data
/// segment leaves at 100 ms; the timer expires at the second tick boundary, 1.000 s,
/// then (backoff ×2: four ticks) at 3.000 s.
#[test]
fn bsd_timer_expires_on_tick_boundaries() {
    let mut net = Net::same(Config::bsd(), 50 * MS).send_open(1460);
    net.drop_seg(0, 1);
    net.drop_seg(0, 2);
    net.run();
    assert_eq!(
        net.trace()[3..],
        [
            "  100.000 A>B P. 1:1461(1460) ack 1 win 16384 DROPPED",
            " 1000.000 A>B P. 1:1461(1460) ack 1 win 16384 DROPPED",
            " 3000.000 A>B P. 1:1461(1460) ack 1 win 16384",
            " 3250.000 B>A . 1:1(0) ack 1461 win 16384",
        ]
    );
    let a = net.ep[A].stats();
    assert_eq!((a.timeouts, a.rtt_samples), (2, 1));
}

/// RTT samples count whole ticks: a 600 ms handshake crosses one boundary (500 ms), a
/// 500 ms sample: SRTT 500, RTTVAR 250, RTO = 500 + max(500, 1000) = 1.5 s. The data
/// sent at 600 ms arms a 3-tick timer: it expires at 2.000 s.
#[test]
fn bsd_rtt_is_measured_in_ticks() {
    let mut net = Net::same(Config::bsd(), 300 * MS).send_open(1460);
    net.drop_seg(0, 1);
    net.run_until(1_500 * MS);
    let s = net.ep[A].sender_state();
    assert_eq!(
        (s.srtt_ns, s.rttvar_ns, s.rto_ns),
        (500 * MS, 250 * MS, 1_500 * MS)
    );
    assert_eq!(net.ep[A].poll_at(), Some(2 * S));
    net.run();
    assert_eq!(net.retransmissions()[0].t, 2 * S);
}

/// Backoff doubles the RTO at most max_backoff_shift times (BSD: 64×, and 64 s max).
#[test]
fn backoff_is_capped() {
    let mut net = Net::same(Config::bsd(), 50 * MS).send_open(1460);
    for k in 1..=10 {
        net.drop_seg(0, k);
    }
    net.run();
    let t: Vec<i64> = net
        .log
        .iter()
        .filter(|s| s.from == A && s.is_data())
        .map(|s| s.t)
        .collect();
    let gaps: Vec<i64> = t.windows(2).map(|w| (w[1] - w[0]) / MS).collect();
    assert_eq!(
        gaps,
        [900, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 64_000, 64_000, 64_000]
    );
    assert_eq!(net.ep[A].stats().timeouts, 10);
    assert_eq!(net.delivered, 1460);
}

#[test]
fn linux_backoff_stops_at_max_rto() {
    let mut net = Net::same(Config::linux(), 50 * MS).send_open(1448);
    for k in 1..=12 {
        net.drop_seg(0, k);
    }
    net.run();
    let t: Vec<i64> = net
        .log
        .iter()
        .filter(|s| s.from == A && s.is_data())
        .map(|s| s.t)
        .collect();
    let gaps: Vec<i64> = t.windows(2).map(|w| (w[1] - w[0]) / MS).collect();
    // RTO 300 ms after the handshake sample, doubled up to the 120 s maximum.
    assert_eq!(
        gaps,
        [300, 600, 1_200, 2_400, 4_800, 9_600, 19_200, 38_400, 76_800, 120_000, 120_000, 120_000]
    );
}

/// Linux's rule (`rto_rule = linux`, `tcp_rtt_estimator`): the same samples as in
/// `rto_follows_rfc6298_from_samples`, a steady 100 ms. RFC 6298's RTTVAR decays and
/// its RTO comes down to the 200 ms minimum; Linux's variance term is never below
/// the minimum, so the RTO stays SRTT + 200 ms = 300 ms.
#[test]
fn linux_rto_at_srtt_100_ms_is_300_ms() {
    let mut c = Config::linux();
    c.rto_rule = airtrace_tcp::RtoRule::Linux;
    let mut a = Endpoint::client(c, 0, 1_000);
    a.poll_transmit(0).unwrap();
    a.on_segment(100 * MS, &from_b(1, 1_000, 100, true));
    // First sample: SRTT 100 ms, mean deviation 50 ms, RTO 300 ms (as RFC 6298).
    let s = a.sender_state();
    assert_eq!(
        (s.srtt_ns, s.rttvar_ns, s.rto_ns),
        (100 * MS, 50 * MS, 300 * MS)
    );
    a.write(u64::from(10 * SEG));
    while a.poll_transmit(100 * MS).is_some() {}
    for i in 1..=9u32 {
        a.on_segment(200 * MS, &from_b(1 + i * SEG, 1_100, 200, false));
        let s = a.sender_state();
        assert_eq!((s.srtt_ns, s.rto_ns), (100 * MS, 300 * MS), "ACK {i}");
        assert_eq!(a.poll_at(), Some(500 * MS));
    }
    // The mean deviation shrinks by a quarter per sample as RFC 6298's RTTVAR does,
    // to 50 ms × (3/4)^9 (less the truncations); the RTO does not follow.
    let expect = 50.0e6 * 0.75f64.powi(9);
    assert!((a.sender_state().rttvar_ns as f64 - expect).abs() < 10.0);
}

/// A tail loss on a 100 ms path: the last segment of 60 is lost, no duplicate ACK
/// comes, and the timer, restarted by the last ACK, expires SRTT + 200 ms later
/// under Linux's rule, 200 ms later (the minimum) under RFC 6298's. (Every segment
/// acknowledged at once, so that each sample is the path's 100 ms.)
#[test]
fn a_tail_loss_waits_srtt_plus_the_minimum_under_linux_rule() {
    let run = |rule| {
        let mut c = Config::linux();
        c.rto_rule = rule;
        c.delayed_ack.enabled = false;
        let mut net = Net::same(c, 50 * MS).send_open(u64::from(60 * SEG));
        net.drop_seg(59, 1);
        net.run();
        assert_eq!(net.delivered, u64::from(60 * SEG));
        assert_eq!(net.ep[A].sender_state().srtt_ns, 100 * MS);
        let rtx = net.retransmissions();
        assert_eq!(rtx.len(), 1);
        let last_ack = net
            .log
            .iter()
            .filter(|s| s.from == B && s.t < rtx[0].t)
            .map(|s| s.t + 50 * MS)
            .max()
            .unwrap();
        (rtx[0].t - last_ack) / MS
    };
    assert_eq!(run(airtrace_tcp::RtoRule::Rfc6298), 200);
    assert_eq!(run(airtrace_tcp::RtoRule::Linux), 300);
}
