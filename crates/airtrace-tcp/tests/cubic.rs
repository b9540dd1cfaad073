//! CUBIC (RFC 9438) driven by packet exchanges: a sender in slow start loses one
//! segment, recovers with SACK, and then its window follows the cubic function of the
//! time since congestion avoidance began.
//!
//! The paths: a long one (50 ms each way, 100 Mbit/s, a 1448-byte segment every
//! 0.12 ms, so about 830 segments in flight before a queue forms) where CUBIC's cubic
//! region rules, and a short one (0.5 ms each way, no rate limit) where the Reno-
//! friendly region does. Both ends are the `linux` profile with 8 MiB buffers, so only
//! cwnd limits the sender. Segment k is bytes [1 + 1448·k, 1 + 1448·(k+1)).
mod common;

use airtrace_tcp::cc::cubic::{self, Cubic, ALPHA, BETA};
use airtrace_tcp::{CcAlgorithm, Config, Phase, SenderState};
use common::*;

const SEG: u32 = 1448;

fn cubic_config() -> Config {
    let mut c = Config::linux();
    c.cc = CcAlgorithm::Cubic;
    c.sndbuf = 8 << 20;
    c.rcvbuf = 8 << 20;
    c
}

/// Long path, a bulk transfer with more data than it can send in the test's time.
fn long_path() -> Net {
    Net::same(cubic_config(), 50 * MS)
        .rate(100_000_000)
        .send_open(1 << 32)
}

fn cubic_of(net: &Net) -> &Cubic {
    net.ep[A]
        .congestion_control()
        .as_cubic()
        .expect("cc = cubic")
}

/// A's sender state at `t` (the last change at or before it).
fn state_at(net: &Net, t: i64) -> SenderState {
    net.states
        .iter()
        .take_while(|(u, _)| *u <= t)
        .last()
        .expect("no state yet")
        .1
}

fn segs(bytes: u32) -> f64 {
    f64::from(bytes) / f64::from(SEG)
}

/// The i-th entry into fast recovery: (time, state just before, state at entry).
fn recovery_entry(net: &Net, nth: usize) -> (i64, SenderState, SenderState) {
    let mut n = 0;
    for w in net.states.windows(2) {
        if w[1].1.phase == Phase::Recovery && w[0].1.phase != Phase::Recovery {
            n += 1;
            if n == nth {
                return (w[1].0, w[0].1, w[1].1);
            }
        }
    }
    panic!("no recovery number {nth}");
}

/// One loss on the long path. Slow start from IW10 reaches about 100 segments when
/// segment 100 is dropped; three duplicate ACKs (SACKs) later the sender retransmits
/// it and sets ssthresh = 0.7·cwnd (§4.6), W_max = cwnd (first loss, §4.7 does not
/// apply); recovery ends with cwnd = ssthresh. The first ACK in congestion avoidance
/// starts the epoch: cwnd_epoch = ssthresh, K = cbrt((W_max − cwnd_epoch)/C).
/// From then on cwnd lies between W_cubic(t) and W_cubic(t + RTT) (it aims at the
/// latter, one RTT ahead, §4.4), within a segment: concave up to K, where it flattens
/// at W_max, convex after.
#[test]
fn window_follows_w_cubic_after_a_loss() {
    let mut net = long_path();
    net.drop_seg(100, 1);
    net.run_until(14 * S);
    let (t_rec, before, at) = recovery_entry(&net, 1);
    // The fast retransmit of segment 100, at the recovery's start, is the only one.
    let rtx: Vec<_> = net
        .retransmissions()
        .into_iter()
        .map(|s| (s.t, (s.rel_seq() - 1) / SEG))
        .collect();
    assert_eq!(rtx, [(t_rec, 100)]);
    let fast_rtx = net.retransmissions()[0];
    assert_eq!(
        line(fast_rtx),
        "  504.831 A>B P. 144801:146249(1448) ack 1 win 32768"
    );
    let c = cubic_of(&net);
    // §4.6: ssthresh = cwnd·β_cubic on the window when the loss was detected.
    let w_max = c.w_max();
    assert_eq!(c.cwnd_prior(), w_max);
    assert_eq!(before.cwnd, (w_max * f64::from(SEG)) as u32);
    assert_eq!(at.ssthresh, before.cwnd * 7 / 10);
    assert_eq!((at.cwnd, at.ssthresh), (at.ssthresh, at.ssthresh)); // RFC 6675 §5
    assert!((90.0..130.0).contains(&w_max), "W_max {w_max}");
    // The epoch: from recovery's end, at cwnd = ssthresh.
    let e = c.epoch().expect("in congestion avoidance").clone();
    assert!(e.start_ns > t_rec && e.start_ns < t_rec + 200 * MS);
    assert_eq!(e.cwnd_epoch, segs(at.ssthresh));
    let k = cubic::k(w_max, e.cwnd_epoch);
    assert_eq!(e.k, k);
    // (W_max − 0.7·W_max)/0.4 = 0.75·W_max: K = cbrt(0.75·W_max), 4.2–4.6 s here.
    assert!((k - cubic::cbrt(0.75 * w_max)).abs() < 0.01, "K {k}");
    assert_eq!(net.ep[A].stats().timeouts, 0);
    let cwnd_at = |t_s: f64| segs(state_at(&net, e.start_ns + (t_s * 1e9) as i64).cwnd);
    let rtt = 0.1;
    let mut times: Vec<f64> = vec![0.5, 1.0, 2.0, 3.0, 4.0, k, k + 1.0, k + 2.0, k + 3.0];
    times.sort_by(f64::total_cmp);
    for &t in &times {
        let w = cwnd_at(t);
        let lo = cubic::w_cubic(t, k, w_max);
        let hi = cubic::w_cubic(t + rtt, k, w_max);
        assert!(
            lo - 1.0 <= w && w <= hi + 1.0,
            "t = {t:.2} s: cwnd {w:.2} segments, W_cubic(t) = {lo:.2}, W_cubic(t + RTT) = {hi:.2}"
        );
    }
    // At K the window is W_max, within a segment.
    assert!((cwnd_at(k) - w_max).abs() <= 1.0);
    // Concave before K: each second adds less than the one before; convex after.
    let gain = |a: f64, b: f64| cwnd_at(b) - cwnd_at(a);
    assert!(gain(0.0, 1.0) > gain(1.0, 2.0) && gain(1.0, 2.0) > gain(2.0, 3.0));
    assert!(gain(k, k + 1.0) < gain(k + 1.0, k + 2.0));
    assert!(gain(k + 1.0, k + 2.0) < gain(k + 2.0, k + 3.0));
    // Around K the window is nearly flat: under a segment in the second before.
    assert!(gain(k - 1.0, k) < 1.0);
}

/// Fast convergence (§4.7): a second loss half a second into the epoch, while cwnd is
/// still below W_max, sets W_max = cwnd·(1 + β)/2 rather than cwnd, so the next epoch
/// flattens out below the previous W_max and the flow yields bandwidth sooner.
#[test]
fn fast_convergence_lowers_w_max() {
    let mut net = long_path();
    net.drop_seg(100, 1);
    net.run_until(2 * S);
    let first_w_max = cubic_of(&net).w_max();
    let e = cubic_of(&net)
        .epoch()
        .expect("in congestion avoidance")
        .clone();
    net.run_until(e.start_ns + S / 2);
    // Drop the next new segment A sends.
    let next = state_at(&net, net.now).snd_nxt.wrapping_sub(ISN[A]);
    let mut dropped = false;
    net.drop_if(move |c| {
        let hit = !dropped && c.from == A && c.seg.len > 0 && c.rel_seq >= next;
        dropped |= hit;
        hit
    });
    net.run_until(e.start_ns + 3 * S);
    let (_, before, at) = recovery_entry(&net, 2);
    let c = cubic_of(&net);
    let cwnd = segs(before.cwnd);
    assert!(cwnd < first_w_max, "{cwnd} < {first_w_max}");
    assert_eq!(c.cwnd_prior(), cwnd);
    assert_eq!(at.ssthresh, before.cwnd * 7 / 10);
    assert!((c.w_max() - cwnd * (1.0 + BETA) / 2.0).abs() < 1e-9);
    // The new epoch's K counts from the lowered W_max: (0.85 − 0.7)·cwnd/0.4.
    let e2 = c.epoch().expect("in congestion avoidance");
    assert!(e2.start_ns > e.start_ns);
    assert_eq!(e2.cwnd_epoch, segs(at.ssthresh));
    assert_eq!(e2.k, cubic::k(c.w_max(), e2.cwnd_epoch));
    assert!((e2.k - cubic::cbrt(0.375 * cwnd)).abs() < 0.01);
}

/// The Reno-friendly region (§4.3) on a 1 ms RTT: a thousand RTTs a second, so a Reno
/// flow's estimate W_est (α_cubic = 3(1 − β)/(1 + β) ≈ 0.53 segments per window of
/// data acknowledged) outgrows W_cubic at once, and cwnd = W_est. Once W_est reaches
/// cwnd_prior (the window at the loss), α is 1: a segment per window, as Reno.
#[test]
fn reno_friendly_region_on_a_short_rtt() {
    let mut c = cubic_config();
    c.delayed_ack.enabled = false;
    let mut net = Net::same(c, MS / 2).send_open(1 << 32);
    net.drop_seg(60, 1);
    net.run_until(150 * MS);
    let (_, before, at) = recovery_entry(&net, 1);
    assert_eq!(at.ssthresh, before.cwnd * 7 / 10);
    let cubic = cubic_of(&net);
    let e = cubic.epoch().expect("in congestion avoidance").clone();
    let prior = cubic.cwnd_prior();
    assert_eq!(prior, segs(before.cwnd));
    // W_cubic has barely moved; W_est, and cwnd with it, went past cwnd_prior.
    let now = net.now;
    let w_cubic = cubic.w_cubic_at(now).unwrap();
    assert!(w_cubic < prior, "W_cubic {w_cubic}");
    let s = state_at(&net, now);
    assert!(segs(s.cwnd) > prior + 20.0 && segs(s.cwnd) > w_cubic + 20.0);
    assert!((segs(s.cwnd) - e.w_est).abs() < 0.01, "cwnd = W_est");
    // The slope: segments cwnd gained per window of data acknowledged, below and
    // above cwnd_prior.
    let slope = |from: &SenderState, to: &SenderState| {
        let acked = segs(to.snd_una.wrapping_sub(from.snd_una));
        let mean = (segs(from.cwnd) + segs(to.cwnd)) / 2.0;
        (segs(to.cwnd) - segs(from.cwnd)) / (acked / mean)
    };
    let ca: Vec<SenderState> = net
        .states
        .iter()
        .filter(|(t, s)| *t >= e.start_ns && s.phase == Phase::Open)
        .map(|x| x.1)
        .collect();
    let below: Vec<_> = ca.iter().filter(|s| segs(s.cwnd) < prior - 1.0).collect();
    let above: Vec<_> = ca.iter().filter(|s| segs(s.cwnd) > prior + 1.0).collect();
    let a = slope(below[0], below[below.len() - 1]);
    let b = slope(above[0], above[above.len() - 1]);
    assert!((a - ALPHA).abs() < 0.03, "α below cwnd_prior: {a}");
    assert!((b - 1.0).abs() < 0.05, "α above cwnd_prior: {b}");
}

/// A timeout (§4.8): ssthresh = 0.7·cwnd, cwnd = 1 SMSS and slow start; the next
/// epoch has K = 0 and W_max = its cwnd_epoch, so the window starts convex, growing
/// from where slow start left it.
#[test]
fn after_a_timeout_the_epoch_restarts_with_k_zero() {
    let mut net = long_path();
    // Lose the whole window from segment 100 on, for a while: only the timer helps.
    net.drop_if(|c| {
        c.from == A
            && c.seg.len > 0
            && (1 + 100 * SEG..1 + 400 * SEG).contains(&c.rel_seq)
            && c.times_seen == 1
    });
    net.run_until(8 * S);
    assert!(net.ep[A].stats().timeouts >= 1);
    let c = cubic_of(&net);
    let e = c.epoch().expect("in congestion avoidance");
    assert_eq!(e.k, 0.0);
    assert_eq!(c.w_max(), e.cwnd_epoch);
    // The first timeout: cwnd_prior is the window then, ssthresh 0.7 of it.
    let (t_rto, s) = net
        .states
        .iter()
        .find(|(_, s)| s.phase == Phase::Loss)
        .copied()
        .unwrap();
    assert_eq!(s.cwnd, SEG);
    let before = state_at(&net, t_rto - 1);
    let w = if before.phase == Phase::Recovery {
        before.ssthresh.min(before.cwnd)
    } else {
        before.cwnd
    };
    assert_eq!(s.ssthresh, (w * 7 / 10).max(2 * SEG));
}

/// The default is Reno: no scenario changes unless it asks for CUBIC.
#[test]
fn presets_use_reno() {
    assert_eq!(Config::linux().cc, CcAlgorithm::Reno);
    assert_eq!(Config::bsd().cc, CcAlgorithm::Reno);
    assert_eq!(CcAlgorithm::from_name("cubic"), Some(CcAlgorithm::Cubic));
    assert_eq!(CcAlgorithm::from_name("bbr"), Some(CcAlgorithm::Bbr));
    assert_eq!(CcAlgorithm::from_name("vegas"), None);
}
