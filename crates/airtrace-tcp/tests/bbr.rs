//! BBR v1 (`cc = bbr`, as Linux's tcp_bbr.c) driven by packet exchanges: a bulk
//! sender on a 10 Mbit/s path with 20 ms each way and a 100-packet queue, both ends
//! the `linux` profile with 8 MiB buffers, so that BBR alone limits the sender.
//!
//! The path carries a 1500-byte packet every 1.2 ms, 1448 bytes of payload each:
//! 1 206 667 bytes of payload a second, with a base RTT of 41.3 ms (propagation plus
//! one data packet's and one ACK's serialisation), so a BDP of about 34 segments.
//! Each test steps the network and records BBR's state after every event
//! ([`timeline`]), then reads the story off it.
mod common;

use airtrace_tcp::cc::bbr::{self, Mode};
use airtrace_tcp::cc::{CongestionOps, INIT_CWND_SEGMENTS};
use airtrace_tcp::{CcAlgorithm, Config, Phase};
use common::*;

const SEG: u32 = 1448;
/// Payload bytes per second the path delivers.
const LINK_PAYLOAD_BPS: f64 = 10e6 / 8.0 * 1448.0 / 1500.0;

fn bbr_config() -> Config {
    let mut c = Config::linux();
    c.cc = CcAlgorithm::Bbr;
    c.sndbuf = 8 << 20;
    c.rcvbuf = 8 << 20;
    c
}

fn path(cfg: Config) -> Net {
    Net::same(cfg, 20 * MS)
        .rate(10_000_000)
        .queue_packets(100)
        .send_open(1 << 32)
}

/// A ten times faster path (BDP about 345 segments), where STARTUP takes more rounds.
fn fast_path() -> Net {
    Net::same(bbr_config(), 20 * MS)
        .rate(100_000_000)
        .queue_packets(1000)
        .send_open(1 << 32)
}

/// BBR's state after one event.
#[derive(Clone, Copy, Debug)]
struct Point {
    t: i64,
    mode: Mode,
    rounds: u64,
    max_bw: u64,
    min_rtt: Option<i64>,
    pacing_rate: u64,
    pacing_gain: u64,
    cycle_idx: usize,
    cwnd: u32,
    ssthresh: u32,
    in_flight: u32,
}

/// Runs `net` to `until`, recording BBR's state after every event.
fn timeline(net: &mut Net, until: i64) -> Vec<Point> {
    net.run_until(0);
    let mut points = Vec::new();
    while net.step(until) {
        let ep = &net.ep[A];
        let b = ep.congestion_control().as_bbr().expect("cc = bbr");
        let s = ep.sender_state();
        points.push(Point {
            t: net.now,
            mode: b.mode(),
            rounds: b.rounds(),
            max_bw: b.max_bw(),
            min_rtt: b.min_rtt_ns(),
            pacing_rate: ep.congestion_control().pacing_rate().unwrap(),
            pacing_gain: b.pacing_gain(),
            cycle_idx: b.cycle_idx(),
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            in_flight: s.bytes_in_flight,
        });
    }
    points
}

/// The state at the first event of each round (the round count's first value).
fn round_starts(points: &[Point]) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for p in points {
        if out.last().is_none_or(|q| q.rounds != p.rounds) {
            out.push(*p);
        }
    }
    out
}

fn first(points: &[Point], f: impl Fn(&Point) -> bool) -> Point {
    *points.iter().find(|p| f(p)).expect("no such point")
}

/// STARTUP, on the fast path: each round's bandwidth estimate is about twice the
/// last while the pipe is not full (a pacing gain of 2.885 sends about twice what was delivered); the
/// estimate then stops growing by 25 % and, three rounds later, BBR finds the pipe
/// full and goes to DRAIN, setting ssthresh to one BDP. The estimate is the path's
/// payload rate.
#[test]
fn startup_doubles_the_delivery_rate_each_round_and_exits_after_three_flat_rounds() {
    let mut net = fast_path();
    let points = timeline(&mut net, 3 * S);
    let rounds = round_starts(&points);
    let link = 10.0 * LINK_PAYLOAD_BPS;
    let drain = first(&points, |p| p.mode == Mode::Drain);
    let drain_round = rounds
        .iter()
        .position(|p| p.rounds == drain.rounds)
        .unwrap();
    // Growth round over round while the estimate is well below the path's rate.
    let early: Vec<f64> = rounds
        .windows(2)
        .skip(2)
        .filter(|w| (w[1].max_bw as f64) < 0.4 * link)
        .map(|w| w[1].max_bw as f64 / w[0].max_bw as f64)
        .collect();
    assert!(early.len() >= 3, "{early:?}");
    // Each round 1.5 to 2.5 times the last, twice on average (the rounds are
    // packet-timed, so a round's samples straddle two flights).
    for g in &early {
        assert!(
            (1.5..=2.5).contains(g),
            "startup growth per round {g} ({early:?})"
        );
    }
    let mean = early.iter().product::<f64>().powf(1.0 / early.len() as f64);
    assert!((1.75..=2.25).contains(&mean), "{early:?}");
    // The last round that grew by 25 % is three rounds before DRAIN.
    let full_bw = rounds[drain_round - 3].max_bw;
    for p in &rounds[drain_round - 2..=drain_round] {
        assert!(
            (p.max_bw as f64) < 1.25 * full_bw as f64,
            "round {}: {} against {full_bw}",
            p.rounds,
            p.max_bw
        );
    }
    assert!(rounds[drain_round - 3].max_bw as f64 >= 1.25 * rounds[drain_round - 4].max_bw as f64);
    assert!(points
        .iter()
        .filter(|p| p.t < drain.t)
        .all(|p| p.mode == Mode::Startup));
    let bw = drain.max_bw as f64;
    assert!((0.95..=1.01).contains(&(bw / link)), "{bw}");
    // ssthresh: one BDP plus the quantization budget, in whole segments: three TSO
    // bursts of 1 ms at the pacing rate (STARTUP's, 2.885 × 100 Mbit/s: 23
    // segments each) and rounding up to an even number.
    let startup = points.iter().rev().find(|p| p.t < drain.t).unwrap();
    let tso = ((startup.pacing_rate >> 10) / u64::from(SEG)) as f64;
    assert_eq!(tso, 23.0);
    let bdp = bw * drain.min_rtt.unwrap() as f64 / 1e9 / f64::from(SEG);
    let ss = f64::from(drain.ssthresh) / f64::from(SEG);
    assert!(
        ss >= bdp + 3.0 * tso && ss <= bdp + 3.0 * tso + 2.0,
        "ssthresh {ss} segments, BDP {bdp}"
    );
}

/// DRAIN paces at 1/2.885 of the estimate until what is in flight is down to one
/// BDP (plus the budget), then PROBE_BW begins; STARTUP had about two BDPs and a
/// queue in flight.
#[test]
fn drain_brings_inflight_down_to_the_bdp() {
    let mut net = path(bbr_config());
    let points = timeline(&mut net, 3 * S);
    let drain = first(&points, |p| p.mode == Mode::Drain);
    let probe = first(&points, |p| p.mode == Mode::ProbeBw);
    let bdp = drain.max_bw as f64 * drain.min_rtt.unwrap() as f64 / 1e9;
    assert_eq!(drain.pacing_gain, bbr::DRAIN_GAIN);
    assert!(
        f64::from(drain.in_flight) > 1.5 * bdp,
        "{} vs BDP {bdp}",
        drain.in_flight
    );
    assert!(
        f64::from(probe.in_flight) <= bdp + 8.0 * f64::from(SEG),
        "{} vs BDP {bdp}",
        probe.in_flight
    );
    // About one round of draining.
    let took = probe.t - drain.t;
    assert!(took > 0 && took < 3 * drain.min_rtt.unwrap(), "{took}");
}

/// PROBE_BW cycles its pacing gain 1.25, 0.75, then 1.0 six times, one phase a
/// min RTT or more (the 0.75 phase may end early once inflight is down to the BDP),
/// from a first phase drawn from the seeded stream; cwnd is 2 BDP plus the budget.
#[test]
fn probe_bw_cycles_its_gains() {
    let mut net = path(bbr_config());
    let points = timeline(&mut net, 4 * S);
    let probe: Vec<Point> = points
        .iter()
        .filter(|p| p.mode == Mode::ProbeBw)
        .copied()
        .collect();
    // The phases in order, with their start times.
    let mut phases: Vec<(i64, usize, u64)> = Vec::new();
    for p in &probe {
        if phases.last().is_none_or(|q| q.1 != p.cycle_idx) {
            phases.push((p.t, p.cycle_idx, p.pacing_gain));
        }
    }
    assert!(phases.len() > 16, "{phases:?}");
    for w in phases.windows(2) {
        assert_eq!(w[1].1, (w[0].1 + 1) % bbr::CYCLE_LEN, "{phases:?}");
        assert_eq!(w[0].2, bbr::PACING_GAIN[w[0].1]);
    }
    let min_rtt = probe[0].min_rtt.unwrap();
    for w in phases.windows(2).skip(1) {
        let len = w[1].0 - w[0].0;
        if w[0].2 != bbr::PACING_GAIN[1] {
            assert!(len >= min_rtt, "phase {} lasted {len}", w[0].1);
        }
    }
    let last = probe.last().unwrap();
    let bdp = last.max_bw as f64 * min_rtt as f64 / 1e9;
    let cwnd = f64::from(last.cwnd);
    assert!(
        cwnd >= 2.0 * bdp && cwnd <= 2.0 * bdp + 12.0 * f64::from(SEG),
        "{cwnd} vs BDP {bdp}"
    );
}

/// The first gain phase of PROBE_BW is drawn from the seed: two seeds, two first
/// phases (over a few seeds, never the 0.75 phase).
#[test]
fn the_first_gain_phase_comes_from_the_seed() {
    let mut firsts = Vec::new();
    for seed in 1..=6u64 {
        let mut net = path(bbr_config());
        net.ep[A] = net.ep[A].clone().with_cc_seed(seed);
        let points = timeline(&mut net, 2 * S);
        firsts.push(first(&points, |p| p.mode == Mode::ProbeBw).cycle_idx);
    }
    assert!(!firsts.contains(&1), "{firsts:?}");
    firsts.sort_unstable();
    firsts.dedup();
    assert!(firsts.len() >= 3, "{firsts:?}");
}

/// The pacing rate is the estimate times the gain, 1 % below (in STARTUP before the
/// pipe is full it never falls); data segments leave spaced by their length over
/// the rate rather than in bursts of two per ACK. Before the first RTT sample the
/// rate comes from the initial window over the handshake's RTT, times 2.885.
#[test]
fn the_pacing_rate_follows_the_bandwidth_estimate() {
    let mut net = path(bbr_config());
    let points = timeline(&mut net, 3 * S);
    for p in points.iter().filter(|p| p.mode == Mode::ProbeBw) {
        let want = (u128::from(p.max_bw) * u128::from(p.pacing_gain) / 256 * 99 / 100) as u64;
        assert_eq!(p.pacing_rate, want, "at {}", p.t);
    }
    let init = first(&points, |p| p.min_rtt.is_some());
    let handshake_rtt = init.min_rtt.unwrap() as f64;
    let want =
        f64::from(INIT_CWND_SEGMENTS * SEG) / (handshake_rtt / 1e9) * bbr::HIGH_GAIN as f64 / 256.0;
    assert!(
        (init.pacing_rate as f64 / want - 0.99).abs() < 0.02,
        "{} vs {want}",
        init.pacing_rate
    );
    // Departures in PROBE_BW after 2 s: never two data segments at the same instant,
    // and on average one per segment's time at the rate.
    let sends: Vec<i64> = net
        .log
        .iter()
        .filter(|s| s.from == A && s.seg.len > 0 && s.t > 2 * S)
        .map(|s| s.t)
        .collect();
    assert!(sends.windows(2).all(|w| w[1] > w[0]), "a burst");
    let per_seg = (sends.last().unwrap() - sends[0]) as f64 / (sends.len() - 1) as f64;
    let at_rate = f64::from(SEG) / LINK_PAYLOAD_BPS * 1e9;
    assert!(
        (per_seg / at_rate - 1.0).abs() < 0.05,
        "{per_seg} ns per segment, {at_rate} at the path's rate"
    );
}

/// Ten seconds without a new min RTT (the path's delay grew by 5 ms at 1 s, so no
/// sample matches the old minimum): PROBE_RTT, cwnd 4 segments for at least 200 ms
/// and a round, then back to PROBE_BW with the min RTT measured again (the longer
/// one) and cwnd restored.
#[test]
fn probe_rtt_after_ten_seconds_without_a_new_min_rtt() {
    let mut net = path(bbr_config());
    net.run_until(S);
    net.delay = [25 * MS; 2];
    let points = timeline(&mut net, 13 * S);
    let old_min = points[0].min_rtt.unwrap();
    let enter = first(&points, |p| p.mode == Mode::ProbeRtt);
    let leave = first(&points, |p| p.t > enter.t && p.mode != Mode::ProbeRtt);
    assert!(
        enter.t > 10 * S && enter.t < 11 * S,
        "PROBE_RTT at {}",
        enter.t
    );
    let before = points.iter().rev().find(|p| p.t < enter.t).unwrap();
    for p in points.iter().filter(|p| p.t >= enter.t && p.t < leave.t) {
        assert!(
            p.cwnd <= bbr::CWND_MIN_SEGMENTS * SEG,
            "cwnd {} at {}",
            p.cwnd,
            p.t
        );
    }
    assert!(
        leave.t - enter.t >= bbr::PROBE_RTT_NS,
        "{}",
        leave.t - enter.t
    );
    assert!(leave.t - enter.t < bbr::PROBE_RTT_NS + 3 * old_min);
    assert_eq!(leave.mode, Mode::ProbeBw);
    // The old minimum is the handshake's (SYNs are short); the new one a data
    // segment's: 10 ms more, plus 1.2 ms of serialisation.
    let new_min = leave.min_rtt.unwrap();
    assert!(
        new_min > old_min + 10 * MS && new_min < old_min + 12 * MS,
        "{old_min} → {new_min}"
    );
    assert!(
        leave.cwnd >= before.cwnd,
        "{} restored to {}",
        before.cwnd,
        leave.cwnd
    );
}

/// One data segment lost in PROBE_BW at 3 s. Reno halves cwnd, and so what it has
/// in flight (the pair below); BBR holds cwnd to packet conservation for the first
/// round of the recovery — what is in flight plus what each ACK delivers, which cuts
/// the cwnd it did not use (paced, BBR has about one BDP in flight under a cwnd of
/// two) but not the data in flight — keeps ssthresh, and ends the recovery with
/// the cwnd it had before.
#[test]
fn a_loss_does_not_halve_cwnd_as_reno_would() {
    fn one_loss(cc: CcAlgorithm) -> (Net, i64) {
        let mut cfg = bbr_config();
        cfg.cc = cc;
        let mut net = path(cfg);
        let mut done = false;
        net.drop_if(move |c| {
            let hit = !done && c.from == A && c.seg.len > 0 && c.now >= 3 * S;
            done |= hit;
            hit
        });
        net.run_until(5 * S);
        let (t, _) = net.first_state(|s| s.phase == Phase::Recovery);
        (net, t)
    }
    let (reno, t) = one_loss(CcAlgorithm::Reno);
    let before = reno.states.iter().rev().find(|(u, _)| *u < t).unwrap().1;
    let at = reno.states.iter().find(|(u, _)| *u >= t).unwrap().1;
    assert!(
        f64::from(at.cwnd) <= 0.55 * f64::from(before.cwnd),
        "reno {} → {}",
        before.cwnd,
        at.cwnd
    );
    assert!(f64::from(at.cwnd) <= 0.6 * f64::from(before.bytes_in_flight));

    let (bbr, t) = one_loss(CcAlgorithm::Bbr);
    let before = bbr.states.iter().rev().find(|(u, _)| *u < t).unwrap().1;
    let recovery: Vec<_> = bbr
        .states
        .iter()
        .filter(|(u, s)| *u >= t && s.phase == Phase::Recovery)
        .map(|(_, s)| *s)
        .collect();
    let lowest = recovery.iter().map(|s| s.cwnd).min().unwrap();
    let flight = f64::from(before.bytes_in_flight);
    assert!(f64::from(before.cwnd) > 1.5 * flight, "{before:?}");
    assert!(
        f64::from(lowest) >= 0.9 * flight,
        "bbr {before:?} → {lowest}"
    );
    assert!(recovery.iter().all(|s| s.ssthresh == before.ssthresh));
    let after = bbr
        .states
        .iter()
        .find(|(u, s)| *u > t && s.phase == Phase::Open)
        .unwrap()
        .1;
    assert!(
        after.cwnd >= before.cwnd,
        "restored {} → {}",
        before.cwnd,
        after.cwnd
    );
    assert_eq!(bbr.retransmissions().len(), 1);
    assert_eq!(bbr.ep[A].stats().timeouts, 0);
}
