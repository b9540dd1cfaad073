//! Proportional Rate Reduction (RFC 6937) in SACK recovery, as packet exchanges: RFC
//! 6937 §5's first example, one segment lost out of a window of 20.
//!
//! The path: 20 ms each way, 10 Mbit/s (a 1448-byte segment takes 1.2 ms), an initial
//! window of 20 segments and a receive window far larger, so that cwnd alone limits
//! the sender. Segment 0 of the first flight is dropped: segments 1–19 each draw a
//! duplicate ACK with SACK, 1.2 ms apart. The first two let a new segment out
//! (limited transmit: the SACKed bytes leave the pipe), the third starts the
//! recovery with FlightSize 22 segments, so ssthresh = 11 segments and RecoverFS = 22.
mod common;

use airtrace_tcp::{Config, Phase, Variant};
use common::*;

const SEG: u32 = 1448;
const SER: i64 = 1_200_000;

fn net(prr: bool) -> Net {
    net_of(Variant::Sack, prr)
}

/// RFC 6937's example set-up with `variant`: IW 20, a large window, segment 0 dropped.
fn net_of(variant: Variant, prr: bool) -> Net {
    let mut c = Config::linux();
    c.variant = variant;
    c.initial_cwnd_segments = 20;
    c.rcvbuf = 200 * SEG;
    c.prr = prr;
    let mut net = Net::same(c, 20 * MS)
        .rate(10_000_000)
        .bulk(60 * u64::from(SEG));
    net.drop_seg(0, 1);
    net.run();
    net
}

/// The 17 duplicate ACKs of the recovery (the third to the nineteenth) arrive 1.2 ms
/// apart from the fast retransmit on; A answers each at once. Returns what A sent on
/// each, as (ACK number, 1 = the ACK that started the recovery; segment number;
/// retransmission), and the recovery's start time.
fn sends_per_ack(net: &Net) -> (Vec<(i64, u32, bool)>, i64) {
    let start = net.first_state(|s| s.phase == Phase::Recovery).0;
    let sends = net
        .log
        .iter()
        .filter(|s| s.from == A && s.is_data() && s.t >= start && s.t < start + 17 * SER)
        .map(|s| {
            assert_eq!((s.t - start) % SER, 0, "A sends only when an ACK arrives");
            let seg = (s.rel_seq() - 1) / SEG;
            (
                1 + (s.t - start) / SER,
                seg,
                net.retransmissions().iter().any(|r| r.t == s.t),
            )
        })
        .collect();
    (sends, start)
}

fn new_on(acks: &[i64], first_new: u32) -> Vec<(i64, u32, bool)> {
    let mut v = vec![(1, 0, true)];
    v.extend(acks.iter().zip(first_new..).map(|(&a, s)| (a, s, false)));
    v
}

fn common_checks(net: &Net, start: i64) {
    let s = net.states.iter().find(|(t, _)| *t == start).unwrap().1;
    assert_eq!(s.ssthresh, 11 * SEG);
    // One fast retransmit, no timeout, and the recovery ends when the retransmission's
    // ACK arrives, with cwnd = ssthresh (RFC 6675 §5; RFC 6937 §3).
    let a = net.ep[A].stats();
    assert_eq!(
        (a.fast_retransmits, a.timeouts, a.retransmitted_segments),
        (1, 0, 1)
    );
    let (t_end, end) = *net
        .states
        .iter()
        .find(|(t, s)| *t > start && s.phase != Phase::Recovery)
        .unwrap();
    assert_eq!(
        (end.phase, end.cwnd, end.ssthresh),
        (Phase::Open, 11 * SEG, 11 * SEG)
    );
    assert!(t_end - start > 40 * MS && t_end - start < 42 * MS);
    assert_eq!(net.delivered, 60 * u64::from(SEG));
}

/// RFC 6675 (`prr` off, as before): cwnd = ssthresh = 11 segments at once, with 19
/// segments in the pipe. The sender sends nothing on the next eight ACKs, until the
/// pipe has drained below ssthresh, then one new segment per ACK.
#[test]
fn rfc6675_waits_half_a_window_then_sends_one_per_ack() {
    let net = net(false);
    let (sends, start) = sends_per_ack(&net);
    assert_eq!(sends, new_on(&[10, 11, 12, 13, 14, 15, 16, 17], 22));
    let s = net.states.iter().find(|(t, _)| *t == start).unwrap().1;
    assert_eq!(s.cwnd, 11 * SEG);
    common_checks(&net, start);
}

/// PRR (RFC 6937 §3, the example of §5 with one loss): on each ACK cwnd = pipe +
/// sndcnt. While the pipe is above ssthresh, sndcnt = CEIL(prr_delivered × 11/22) −
/// prr_out, so one new segment leaves for every two segments delivered (ACKs 4, 6,
/// 8, 10, 12; in bytes the first sndcnt is 724, half a segment, so the first new
/// segment waits for the fourth ACK where the RFC's table, counting segments, sends
/// on the third). Once the pipe has come down to ssthresh (ACK 14), PRR-SSRB sends
/// one segment per segment delivered, holding the pipe at ssthresh. Same number of
/// segments as RFC 6675 by the end of the duplicate ACKs, spread over the whole
/// round trip instead of crowded into its second half.
#[test]
fn prr_sends_one_new_segment_per_two_acks_while_the_pipe_is_above_ssthresh() {
    let net = net(true);
    let (sends, start) = sends_per_ack(&net);
    assert_eq!(sends, new_on(&[4, 6, 8, 10, 12, 15, 16, 17], 22));
    // At the start: pipe 18 segments (22 sent, 3 SACKed, the head lost) plus
    // sndcnt = CEIL(1448 × 15928 / 31856) = 724; the fast retransmit goes regardless.
    let s = net.states.iter().find(|(t, _)| *t == start).unwrap().1;
    assert_eq!(s.cwnd, 18 * SEG + SEG / 2);
    // cwnd comes down to ssthresh, never up, never below the pipe (or ssthresh).
    let in_rec: Vec<_> = net
        .states
        .iter()
        .filter(|(t, s)| *t >= start && s.phase == Phase::Recovery)
        .map(|(_, s)| s)
        .collect();
    assert!(in_rec
        .iter()
        .all(|s| s.cwnd >= s.bytes_in_flight.min(11 * SEG)));
    assert!(in_rec.windows(2).all(|w| w[1].cwnd <= w[0].cwnd));
    assert_eq!(in_rec.last().unwrap().cwnd, 11 * SEG);
    common_checks(&net, start);
}

/// `prr` only changes SACK recovery: a NewReno sender with it set behaves exactly as
/// without.
#[test]
fn prr_leaves_other_variants_alone() {
    let run = |prr: bool| net_of(Variant::NewReno, prr).trace();
    assert_eq!(run(false), run(true));
}
