//! Linux's HyStart (the kernel cubic's slow-start exit, `hystart_update`) as packet
//! exchanges: a bulk transfer in slow start into a bottleneck with a deep drop-tail
//! queue (1000 packets, or 200), linux profile (IW10, delayed ACKs, byte counting
//! with L = 2), cubic, buffers of 8 MiB so that cwnd alone limits the sender.
//!
//! In slow start the sender sends two segments for each one acknowledged, twice the
//! bottleneck's rate: each round's ACKs come back spaced by the bottleneck (one per
//! two segments' serialisation, delayed ACKs) and the queue, and the RTT, grow.
//! Without HyStart slow start goes on until the queue overflows, to twice what the
//! path holds.
mod common;

use airtrace_tcp::cc::hystart_linux::{Exit, ACK_DELTA_NS, LOW_WINDOW, MAX_ACK_DELAY_NS};
use airtrace_tcp::endpoint::INITIAL_SSTHRESH;
use airtrace_tcp::{CcAlgorithm, Config};
use common::*;

const SEG: u32 = 1448;
const SEGS: u32 = 3000;

/// How slow start ended: when, by which detection (`None`: a loss), with what cwnd,
/// and the HyStart state then: delay_min, the round's start and minimum RTT.
#[derive(Debug)]
struct Exited {
    t: i64,
    how: Option<Exit>,
    cwnd: u32,
    delay_min: i64,
    round_start: i64,
    round_min_rtt: Option<i64>,
}

fn run(hystart_linux: bool, rate: u64, one_way: i64, queue: i64) -> (Net, Exited) {
    let mut c = Config::linux();
    c.cc = CcAlgorithm::Cubic;
    c.hystart_linux = hystart_linux;
    c.sndbuf = 8 << 20;
    c.rcvbuf = 8 << 20;
    let mut net = Net::same(c, one_way)
        .rate(rate)
        .queue_packets(queue)
        .bulk(u64::from(SEGS * SEG));
    net.run_until(0);
    let mut exit = None;
    while net.step(60 * S) {
        let s = net.ep[A].sender_state();
        if exit.is_none() && s.ssthresh != INITIAL_SSTHRESH {
            let cubic = net.ep[A].congestion_control().as_cubic().unwrap();
            let h = cubic.hystart_linux();
            exit = Some(Exited {
                t: net.now,
                how: h.found(),
                cwnd: s.cwnd,
                delay_min: h.delay_min_ns().unwrap_or(0),
                round_start: h.round_start_ns(),
                round_min_rtt: h.round_min_rtt_ns(),
            });
        }
    }
    assert_eq!(net.delivered, u64::from(SEGS * SEG));
    (net, exit.expect("slow start ended"))
}

fn drops(net: &Net) -> usize {
    net.log.iter().filter(|s| s.dropped).count()
}

/// 50 Mbit/s, 5 ms each way (min RTT 10.5 ms with a segment's serialisation). A
/// round's ACKs come 0.48 ms apart; once a round's train is longer than (delay_min
/// + 1 ms)/2 = 5.7 ms, slow start ends: at 53 ms, cwnd 86 segments (the path holds
/// 44 in flight), with the round's minimum RTT still below the delay threshold and
/// nothing lost. Plain slow start overflows the 1000-packet queue (hundreds lost).
#[test]
fn leaves_slow_start_on_an_ack_train_half_the_min_rtt_long() {
    let (net, e) = run(true, 50_000_000, 5 * MS, 1000);
    assert_eq!(e.how, Some(Exit::AckTrain));
    assert_eq!((e.t, e.cwnd / SEG), (53_420_800, 86));
    assert!(e.cwnd >= LOW_WINDOW * SEG);
    // The train: B's ACKs from the round's start to the exit, none more than 2 ms
    // after the one before, spanning more than half of delay_min + the allowance.
    let acks: Vec<i64> = net
        .log
        .iter()
        .filter(|s| s.from == B && s.t + 5 * MS >= e.round_start && s.t + 5 * MS <= e.t)
        .map(|s| s.t + 5 * MS)
        .collect();
    assert!(acks.windows(2).all(|w| w[1] - w[0] <= ACK_DELTA_NS));
    assert!(e.t - e.round_start > (e.delay_min + MAX_ACK_DELAY_NS) / 2);
    assert!(e.t - e.round_start - ACK_DELTA_NS <= (e.delay_min + MAX_ACK_DELAY_NS) / 2);
    assert!(e.round_min_rtt.unwrap() < e.delay_min + 4 * MS);
    let a = net.ep[A].stats();
    assert_eq!(
        (drops(&net), a.retransmitted_segments, a.timeouts),
        (0, 0, 0)
    );
    let (plain, p) = run(false, 50_000_000, 5 * MS, 1000);
    assert_eq!(p.how, None);
    assert!(drops(&plain) > 400, "{}", drops(&plain));
}

/// 10 Mbit/s, 20 ms each way, a 200-packet queue: the ACKs of a round come 2.4 ms
/// apart, more than the 2 ms a train allows, so only the delay can tell. The round
/// that begins at 196 ms, in the middle of a burst, has a minimum RTT (over its
/// first 8 samples and on) more than delay_min + clamp(delay_min/8, 4 ms, 16 ms)
/// = 42.4 + 5.3 ms: slow start ends at 215 ms with cwnd 80 segments, before the
/// queue overflows. Plain slow start overflows it and retransmits hundreds.
#[test]
fn leaves_slow_start_on_a_delay_increase() {
    let (net, e) = run(true, 10_000_000, 20 * MS, 200);
    assert_eq!(e.how, Some(Exit::Delay));
    assert_eq!((e.round_start / MS, e.t / MS, e.cwnd / SEG), (196, 215, 80));
    let thresh = (e.delay_min / 8).clamp(4 * MS, 16 * MS);
    assert!(e.round_min_rtt.unwrap() > e.delay_min + thresh);
    let a = net.ep[A].stats();
    assert_eq!(
        (drops(&net), a.retransmitted_segments, a.timeouts),
        (0, 0, 0)
    );
    let (plain, p) = run(false, 10_000_000, 20 * MS, 200);
    assert_eq!(p.how, None);
    assert!(plain.ep[A].stats().retransmitted_segments > 200);
}
