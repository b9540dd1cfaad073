//! Handshake, delayed ACK, SACK blocks, close, a clean bulk transfer: exchanges
//! checked line by line (tcpdump notation, sequence numbers relative to each ISN).
mod common;

use airtrace_tcp::{Config, Flags, Variant};
use common::*;

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn handshake_then_two_segments_acked_at_once() {
    let mut net = Net::same(Config::linux(), 10 * MS).send_open(2 * 1448);
    net.run();
    // rcvbuf 128 KiB with window scale 2: the scaled field is 32768.
    assert_eq!(
        net.trace(),
        lines(&[
            "    0.000 A>B S 0:0(0) win 65535",
            "   10.000 B>A S. 0:0(0) ack 1 win 65535",
            "   20.000 A>B . 1:1(0) ack 1 win 32768",
            "   20.000 A>B . 1:1449(1448) ack 1 win 32768",
            "   20.000 A>B P. 1449:2897(1448) ack 1 win 32768",
            // Two full-sized segments: acknowledged at once (RFC 5681 §4.2).
            "   30.000 B>A . 1:1(0) ack 2897 win 32768",
        ])
    );
    assert!(net.ep[A].is_established() && net.ep[B].is_established());
    assert_eq!(net.ep[A].smss(), 1448);
    let syn = &net.log[0].seg;
    assert_eq!(syn.options.mss, Some(1460));
    assert_eq!(syn.options.window_scale, Some(2));
    assert!(syn.options.sack_permitted);
    assert_eq!(syn.options.timestamps, Some((1_000, 0)));
    assert_eq!(syn.header_len(), 40);
    let synack = &net.log[1].seg;
    assert_eq!(synack.flags, Flags::SYN | Flags::ACK);
    assert_eq!(synack.options.timestamps, Some((50_010, 1_000)));
    assert!(synack.options.sack_permitted);
    // Data: NOP NOP TS.
    let data = &net.log[3].seg;
    assert_eq!(data.header_len(), 32);
    assert_eq!(data.options.timestamps, Some((1_020, 50_010)));
    assert!(net.ep[A].all_data_acked());
    assert!(!net.ep[A].is_closed());
}

#[test]
fn options_are_used_only_when_both_offer_them() {
    // Linux client, BSD server: no timestamps, no SACK, no window scaling; MSS 1460.
    let mut net = Net::new(Config::linux(), Config::bsd(), 10 * MS).send_open(1460);
    net.run();
    let synack = &net.log[1].seg;
    assert_eq!(synack.options.timestamps, None);
    assert!(!synack.options.sack_permitted);
    assert_eq!(synack.options.window_scale, None);
    assert_eq!(net.ep[A].smss(), 1460);
    assert_eq!(net.ep[B].smss(), 1460);
    // The client's window is unscaled and capped at 65535.
    assert_eq!(net.log[2].seg.window, 65535);
    assert_eq!(net.log[3].seg.header_len(), 20);
    assert_eq!(net.delivered, 1460);
}

#[test]
fn delayed_ack_fires_at_timeout_with_one_segment() {
    let mut net = Net::same(Config::linux(), 10 * MS).send_open(1448);
    net.run();
    assert_eq!(
        net.trace()[3..],
        lines(&[
            "   20.000 A>B P. 1:1449(1448) ack 1 win 32768",
            // Arrived at 30 ms, held for the 40 ms delayed-ACK timeout.
            "   70.000 B>A . 1:1(0) ack 1449 win 32768",
        ])
    );

    let mut net = Net::same(Config::bsd(), 10 * MS).send_open(1000);
    net.run();
    assert_eq!(
        net.trace()[3..],
        lines(&[
            "   20.000 A>B P. 1:1001(1000) ack 1 win 16384",
            "  230.000 B>A . 1:1(0) ack 1001 win 16384",
        ])
    );
}

#[test]
fn both_sides_close_after_a_transfer() {
    let mut net = Net::same(Config::linux(), 10 * MS).bulk(1448);
    net.run();
    assert_eq!(
        net.trace()[3..],
        lines(&[
            // The FIN rides on the last data segment.
            "   20.000 A>B FP. 1:1449(1448) ack 1 win 32768",
            // The FIN is acknowledged at once; B's application reads end-of-stream and
            // closes too.
            "   30.000 B>A F. 1:1(0) ack 1450 win 32768",
            "   40.000 A>B . 1450:1450(0) ack 2 win 32768",
        ])
    );
    assert!(net.ep[A].is_closed() && net.ep[B].is_closed());
    assert_eq!(net.ep[A].poll_at(), None);
    assert_eq!(net.ep[B].poll_at(), None);
}

#[test]
fn lost_syn_is_retransmitted_after_the_initial_rto_and_iw_drops_to_one() {
    let mut net = Net::same(Config::linux(), 10 * MS).send_open(4 * 1448);
    net.drop_if(|c| c.seg.flags.contains(Flags::SYN) && c.from == A && c.now == 0);
    net.run();
    assert_eq!(
        net.trace()[..6],
        lines(&[
            "    0.000 A>B S 0:0(0) win 65535 DROPPED",
            " 1000.000 A>B S 0:0(0) win 65535",
            " 1010.000 B>A S. 0:0(0) ack 1 win 65535",
            " 1020.000 A>B . 1:1(0) ack 1 win 32768",
            // RFC 5681 §3.1: one segment after a lost SYN.
            " 1020.000 A>B . 1:1449(1448) ack 1 win 32768",
            // A lone segment: the delayed ACK waits 40 ms.
            " 1070.000 B>A . 1:1(0) ack 1449 win 32768",
        ])
    );
    assert_eq!(net.ep[A].stats().timeouts, 1);
    assert_eq!(net.ep[A].stats().retransmitted_segments, 1);
    // The SYN-ACK's timestamp echo gives a sample despite the retransmission.
    assert_eq!(net.states.last().unwrap().1.backoff, 0);
}

#[test]
fn sack_blocks_most_recent_first() {
    let mut net = Net::same(Config::linux(), 10 * MS).send_open(10 * 1448);
    net.drop_seg(2, 1);
    net.drop_seg(5, 1);
    net.run();
    let acks: Vec<String> = net
        .log
        .iter()
        .filter(|s| s.from == B && s.t > 0 && s.t < 31 * MS)
        .map(line)
        .collect();
    assert_eq!(
        acks,
        lines(&[
            "   10.000 B>A S. 0:0(0) ack 1 win 65535",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768 sack 4345:5793",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768 sack 4345:7241",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768 sack 8689:10137 sack 4345:7241",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768 sack 8689:11585 sack 4345:7241",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768 sack 8689:13033 sack 4345:7241",
            "   30.000 B>A . 1:1(0) ack 2897 win 32768 sack 8689:14481 sack 4345:7241",
        ])
    );
    assert_eq!(net.delivered, 10 * 1448);
}

fn wan(variant: Variant) -> Config {
    let mut c = Config::linux();
    c.variant = variant;
    c
}

#[test]
fn bulk_transfers_lose_nothing_and_retransmit_nothing() {
    for variant in [
        Variant::Tahoe,
        Variant::Reno,
        Variant::NewReno,
        Variant::Sack,
    ] {
        let n = 1_000_000;
        let mut net = Net::same(wan(variant), 20 * MS).rate(10_000_000).bulk(n);
        net.run();
        let a = net.ep[A].stats();
        assert_eq!(net.delivered, n, "{variant:?}");
        assert_eq!(a.retransmitted_segments, 0, "{variant:?}");
        assert_eq!(a.timeouts, 0, "{variant:?}");
        assert_eq!(a.dupacks_received, 0, "{variant:?}");
        assert_eq!(a.bytes_acked, n);
        assert!(
            net.ep[A].is_closed() && net.ep[B].is_closed(),
            "{variant:?}"
        );
        assert_eq!(net.ep[B].stats().bytes_delivered, n);
    }
}

#[test]
fn window_covering_the_bdp_fills_the_link() {
    // 10 Mbit/s, RTT 40 ms: BDP 50 kB < rcvbuf 128 KiB. Each 1448-byte segment is
    // 1500 bytes on the wire (20 IP + 32 TCP), 1.2 ms at 10 Mbit/s.
    let n: u64 = 1448 * 1000;
    let mut net = Net::same(Config::linux(), 20 * MS).rate(10_000_000).bulk(n);
    net.run();
    let done = net.deliveries.last().unwrap().0;
    let handshake = 40 * MS + 2 * 48_000 + 60_000; // SYN 60 B, SYN-ACK 60 B, ACK 52 B
    let serialise = 1000 * 1_200_000;
    let lower = handshake + serialise + 20 * MS;
    assert!(done >= lower, "{done} < {lower}");
    // Slow start from IW10 to a full pipe (42 segments) costs under three RTTs.
    assert!(
        done - lower < 3 * 40 * MS,
        "{} ms late",
        (done - lower) / MS
    );
    // Pinned: slow start from IW10 leaves the link partly idle for two RTTs.
    assert_eq!(done, 1_309_020_800);
}

#[test]
fn the_server_can_send_too() {
    let mut net = Net::same(Config::linux(), 10 * MS).send_open(3000);
    net.run_until(100 * MS);
    assert_eq!(net.ep[B].write(50_000), 50_000);
    net.at(100 * MS).run();
    assert_eq!(net.delivered, 3000);
    assert_eq!(net.ep[A].stats().bytes_delivered, 50_000);
    assert_eq!(net.ep[B].stats().retransmitted_segments, 0);
    assert!(net.ep[B].all_data_acked());
}
