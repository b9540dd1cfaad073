//! HyStart++ (RFC 9406) as a packet exchange: a bulk transfer into a bottleneck whose
//! deep drop-tail queue makes the RTT rise during slow start.
//!
//! The path: 20 ms each way, 10 Mbit/s (a 1448-byte segment takes 1.2 ms, the BDP is
//! 33 segments), a 200-packet queue (240 ms) in front of the rate, buffers of 4 MiB,
//! so cwnd alone limits the sender: 2000 segments, linux profile (IW10, delayed ACKs,
//! byte counting with L = 2, timestamps: one RTT sample per ACK, in whole ms).
//!
//! Plain slow start doubles cwnd every round until the queue overflows: the first
//! drop comes at about 400 ms, with cwnd near 234 segments, and slow start goes on
//! until the losses are seen, to a cwnd twice what the path holds; hundreds of
//! segments are retransmitted. With HyStart++ the sender sees the minimum RTT of a
//! round rise by more than RttThresh, goes to Conservative Slow Start, and after five
//! rounds of it to congestion avoidance with ssthresh = cwnd: the queue never
//! overflows.
mod common;

use airtrace_tcp::cc::hystart::{HyStartPhase, CSS_ROUNDS};
use airtrace_tcp::endpoint::INITIAL_SSTHRESH;
use airtrace_tcp::{CcAlgorithm, Config};
use common::*;

const SEG: u32 = 1448;
const SEGS: u64 = 2000;

/// A's HyStart++ transitions: (time, phase, rounds started, cwnd, ssthresh).
type Transitions = Vec<(i64, HyStartPhase, u32, u32, u32)>;

fn run(cc: CcAlgorithm, hystart: bool) -> (Net, Transitions) {
    let mut c = Config::linux();
    c.cc = cc;
    c.hystart = hystart;
    c.sndbuf = 4 << 20;
    c.rcvbuf = 4 << 20;
    let mut net = Net::same(c, 20 * MS)
        .rate(10_000_000)
        .queue_packets(200)
        .bulk(SEGS * u64::from(SEG));
    net.run_until(0);
    let mut seen = Vec::new();
    let mut last = HyStartPhase::SlowStart;
    while net.step(60 * S) {
        let h = net.ep[A]
            .congestion_control()
            .hystart()
            .expect("reno has HyStart++");
        if h.phase() != last {
            last = h.phase();
            let s = net.ep[A].sender_state();
            seen.push((net.now, last, h.rounds(), s.cwnd, s.ssthresh));
        }
    }
    assert_eq!(net.delivered, SEGS * u64::from(SEG));
    (net, seen)
}

fn first_drop_ms(net: &Net) -> Option<i64> {
    net.log.iter().find(|s| s.dropped).map(|s| s.t / MS)
}

/// Reno with HyStart++: the minimum RTT of round 4 (48 ms, the queue building) is
/// at least round 3's plus RttThresh (max(4 ms, round 3's minimum / 8)): CSS at 215 ms
/// with cwnd 80.5 segments; cwnd then grows by about a quarter per round instead of doubling; the
/// fifth round start in CSS (round 9, at 904 ms) sets ssthresh = cwnd = 223.5
/// segments, congestion avoidance follows, and not one segment is lost in the
/// transfer. Plain slow start loses its first segment at 397 ms, still in slow start,
/// and retransmits 235.
#[test]
fn hystart_leaves_slow_start_on_the_rtt_rise_before_the_queue_overflows() {
    let (net, t) = run(CcAlgorithm::Reno, true);
    let phases: Vec<_> = t.iter().map(|x| x.1).collect();
    assert_eq!(
        phases,
        [
            HyStartPhase::Css { rounds: 0 },
            HyStartPhase::Css { rounds: 1 },
            HyStartPhase::Css { rounds: 2 },
            HyStartPhase::Css { rounds: 3 },
            HyStartPhase::Css { rounds: 4 },
            HyStartPhase::Done,
        ]
    );
    let (t_css, _, round_css, cwnd_css, ssthresh_css) = t[0];
    assert_eq!((t_css, round_css, cwnd_css), (215_462_400, 4, 116_564));
    assert_eq!(ssthresh_css, INITIAL_SSTHRESH);
    let (t_ca, _, round_ca, cwnd_ca, ssthresh_ca) = t[5];
    assert_eq!(round_ca - round_css, CSS_ROUNDS);
    assert_eq!(
        (t_ca, cwnd_ca, ssthresh_ca),
        (904_262_400, 323_628, 323_628)
    );
    // CSS grows cwnd by a quarter of slow start's increment: about ×1.25 per round.
    for w in t.windows(2).skip(1) {
        let ratio = f64::from(w[1].3) / f64::from(w[0].3);
        assert!((1.15..1.3).contains(&ratio), "{ratio}");
    }
    // The RTT rose by the queue's 240 ms at most: the baseline and the last round.
    let h = net.ep[A]
        .congestion_control()
        .hystart()
        .expect("reno has HyStart++");
    assert_eq!(h.css_entries(), 1);
    assert!(h.last_round_min_rtt_ns().unwrap() > 150 * MS);
    // No loss at all, and cwnd never above where HyStart++ left slow start by more
    // than congestion avoidance's growth.
    assert_eq!(first_drop_ms(&net), None);
    let a = net.ep[A].stats();
    assert_eq!(
        (a.retransmitted_segments, a.timeouts, a.fast_retransmits),
        (0, 0, 0)
    );
    let after = net.states.iter().filter(|(t, _)| *t > t_ca);
    assert!(after.clone().all(|(_, s)| s.ssthresh == 323_628));
    assert!(after.map(|(_, s)| s.cwnd).max().unwrap() < 240 * SEG);

    // Plain slow start on the same path: the queue overflows while ssthresh is still
    // the initial one, at 397 ms, and slow start only ends when the losses are seen,
    // with cwnd 234.5 segments.
    let (plain, _) = run(CcAlgorithm::Reno, false);
    assert_eq!(first_drop_ms(&plain), Some(397));
    let (t_exit, exit) = plain
        .states
        .iter()
        .find(|(_, s)| s.ssthresh != INITIAL_SSTHRESH)
        .unwrap();
    assert_eq!((*t_exit, exit.ssthresh), (681_078_400, 339_556));
    let p = plain.ep[A].stats();
    assert_eq!((p.retransmitted_segments, p.timeouts), (235, 0));
}

/// CUBIC's slow start is Reno's (RFC 9438 §4.10), HyStart++ included: the same exit
/// on the same path, and CUBIC's first epoch starts from it without a loss. Without
/// HyStart++, CUBIC overshoots as Reno does and ends in a timeout.
#[test]
fn cubic_with_hystart_leaves_slow_start_the_same_way() {
    let (net, t) = run(CcAlgorithm::Cubic, true);
    assert_eq!(t.len(), 6);
    assert_eq!((t[0].0, t[0].3), (215_462_400, 116_564));
    assert_eq!(
        (t[5].0, t[5].1, t[5].4),
        (904_262_400, HyStartPhase::Done, 323_628)
    );
    assert_eq!(first_drop_ms(&net), None);
    assert_eq!(net.ep[A].stats().retransmitted_segments, 0);
    let (plain, _) = run(CcAlgorithm::Cubic, false);
    assert_eq!(first_drop_ms(&plain), Some(397));
    let p = plain.ep[A].stats();
    assert_eq!((p.retransmitted_segments, p.timeouts), (376, 1));
}
