//! Loss recovery per variant, with targeted drops (ns-3's TcpGeneralTest style).
//!
//! The path: 20 ms each way, 10 Mbit/s both ways (a 1448-byte segment is 1500 bytes
//! on the wire, 1.2 ms), receive buffer 20 segments, so in steady state the sender is
//! window-limited with exactly 20 segments (28960 bytes) in flight. Segment k is bytes
//! [1 + 1448·k, 1 + 1448·(k+1)).
mod common;

use airtrace_tcp::{Config, Phase, SenderState, Variant};
use common::*;

const SEG: u32 = 1448;
const SER: i64 = 1_200_000;

fn path(variant: Variant, window_segments: u32) -> Config {
    let mut c = Config::linux();
    c.variant = variant;
    c.rcvbuf = window_segments * SEG;
    c
}

fn net(variant: Variant) -> Net {
    Net::same(path(variant, 20), 20 * MS)
        .rate(10_000_000)
        .bulk(200 * u64::from(SEG))
}

fn rel(seg: u32) -> u32 {
    1 + seg * SEG
}

/// The retransmissions as (time, segment number, dropped).
fn rtx(net: &Net) -> Vec<(i64, u32, bool)> {
    net.retransmissions()
        .into_iter()
        .map(|s| (s.t, (s.rel_seq() - 1) / SEG, s.dropped))
        .collect()
}

fn phase_changes(net: &Net) -> Vec<(i64, Phase)> {
    let mut out: Vec<(i64, Phase)> = Vec::new();
    for (t, s) in &net.states {
        if out.last().map(|x| x.1) != Some(s.phase) {
            out.push((*t, s.phase));
        }
    }
    out
}

fn state_at(net: &Net, t: i64) -> SenderState {
    net.states
        .iter()
        .find(|(u, _)| *u == t)
        .expect("no state at that time")
        .1
}

fn finished_cleanly(net: &Net) {
    assert_eq!(net.delivered, 200 * u64::from(SEG));
    assert!(net.ep[A].is_closed() && net.ep[B].is_closed());
}

// ---------------------------------------------------------------------------
// One segment lost once
// ---------------------------------------------------------------------------

/// Segment 60 is dropped; 19 segments after it arrive and each draws a duplicate ACK,
/// 1.2 ms apart. The first dupack puts the sender in Disorder, the third (2.4 ms
/// later) triggers the fast retransmit. FlightSize is 28960, so ssthresh = 14480.
#[test]
fn reno_fast_retransmit_and_recovery_after_three_dupacks() {
    let mut net = net(Variant::Reno);
    net.drop_seg(60, 1);
    net.run();
    let p = phase_changes(&net);
    let (t_dis, t_rec, t_open) = (p[1].0, p[2].0, p[3].0);
    assert_eq!(
        p.iter().map(|x| x.1).collect::<Vec<_>>(),
        [Phase::Open, Phase::Disorder, Phase::Recovery, Phase::Open]
    );
    assert_eq!(t_rec - t_dis, 2 * SER);
    assert_eq!(rtx(&net), [(t_rec, 60, false)]);
    let s = state_at(&net, t_rec);
    assert_eq!(s.ssthresh, 14480);
    assert_eq!(s.cwnd, 14480 + 3 * SEG); // RFC 5681 §3.2 step 3
    assert_eq!(s.bytes_in_flight, 28960);
    // Each further dupack inflates cwnd by one SMSS (step 4): 16 more.
    let last_in_recovery = net
        .states
        .iter()
        .rev()
        .find(|(_, s)| s.phase == Phase::Recovery);
    assert_eq!(last_in_recovery.unwrap().1.cwnd, 14480 + 19 * SEG);
    // The ACK of the retransmission deflates cwnd to ssthresh (step 6).
    let s = state_at(&net, t_open);
    assert_eq!((s.cwnd, s.ssthresh), (14480, 14480));
    let a = net.ep[A].stats();
    assert_eq!(
        (a.fast_retransmits, a.timeouts, a.dupacks_received),
        (1, 0, 19)
    );
    finished_cleanly(&net);
}

#[test]
fn newreno_full_ack_sets_cwnd_to_flight_plus_one_segment() {
    let mut net = net(Variant::NewReno);
    net.drop_seg(60, 1);
    net.run();
    let p = phase_changes(&net);
    assert_eq!(
        p.iter().map(|x| x.1).collect::<Vec<_>>(),
        [Phase::Open, Phase::Disorder, Phase::Recovery, Phase::Open]
    );
    let s = state_at(&net, p[2].0);
    assert_eq!((s.cwnd, s.ssthresh), (18824, 14480));
    // RFC 6582 §3.2 step 3, full ACK option (1): min(ssthresh, max(FlightSize, SMSS) +
    // SMSS). The window edge kept new data back, so nothing is in flight: 2 segments.
    let s = state_at(&net, p[3].0);
    assert_eq!(
        (s.cwnd, s.ssthresh, s.bytes_in_flight),
        (2 * SEG, 14480, 2 * SEG)
    );
    assert_eq!(rtx(&net), [(p[2].0, 60, false)]);
    assert_eq!(net.ep[A].stats().timeouts, 0);
    finished_cleanly(&net);
}

#[test]
fn sack_recovery_sets_cwnd_to_ssthresh_and_pipe_excludes_sacked_data() {
    let mut net = net(Variant::Sack);
    net.drop_seg(60, 1);
    net.run();
    let p = phase_changes(&net);
    assert_eq!(
        p.iter().map(|x| x.1).collect::<Vec<_>>(),
        [Phase::Open, Phase::Disorder, Phase::Recovery, Phase::Open]
    );
    assert_eq!(p[2].0 - p[1].0, 2 * SER);
    let s = state_at(&net, p[2].0);
    // RFC 6675 §5 (4.2): ssthresh = cwnd = FlightSize / 2. Pipe: 20 segments out,
    // 3 SACKed, 1 lost and retransmitted → 17.
    assert_eq!((s.cwnd, s.ssthresh), (14480, 14480));
    assert_eq!(s.bytes_in_flight, 17 * SEG);
    assert_eq!(state_at(&net, p[3].0).cwnd, 14480);
    assert_eq!(rtx(&net), [(p[2].0, 60, false)]);
    // SACK blocks do not stop ACKs from being duplicates (RFC 6675 §2).
    let a = net.ep[A].stats();
    assert_eq!(
        (a.fast_retransmits, a.timeouts, a.dupacks_received),
        (1, 0, 19)
    );
    finished_cleanly(&net);
}

#[test]
fn tahoe_fast_retransmit_falls_back_to_one_segment_and_slow_start() {
    let mut net = net(Variant::Tahoe);
    net.drop_seg(60, 1);
    net.run();
    let p = phase_changes(&net);
    assert_eq!(
        p.iter().map(|x| x.1).collect::<Vec<_>>(),
        [Phase::Open, Phase::Disorder, Phase::Loss, Phase::Open]
    );
    let s = state_at(&net, p[2].0);
    assert_eq!((s.cwnd, s.ssthresh), (SEG, 14480));
    // The retransmission fills the only hole: the cumulative ACK then covers everything
    // (go-back-N has nothing else to resend) and slow start resumes: 1 + 2 segments.
    assert_eq!(rtx(&net), [(p[2].0, 60, false)]);
    assert_eq!(state_at(&net, p[3].0).cwnd, 3 * SEG);
    assert_eq!(net.ep[A].stats().timeouts, 0);
    finished_cleanly(&net);
}

// ---------------------------------------------------------------------------
// The retransmission lost too: timeouts and backoff
// ---------------------------------------------------------------------------

/// Segment 60 is dropped three times: the fast retransmission and the first timeout's
/// retransmission are lost. The timer restarts with the fast retransmission; the RTO
/// is 200 ms (the minimum), then doubles.
#[test]
fn lost_retransmissions_time_out_with_doubling_rto() {
    for variant in [
        Variant::Tahoe,
        Variant::Reno,
        Variant::NewReno,
        Variant::Sack,
    ] {
        let mut net = net(variant);
        net.drop_seg(60, 1);
        net.drop_seg(60, 2);
        net.drop_seg(60, 3);
        net.run();
        let r = rtx(&net);
        assert_eq!(r.len(), 3, "{variant:?}");
        let (t_fr, t1, t2) = (r[0].0, r[1].0, r[2].0);
        assert_eq!(
            r,
            [
                (t_fr, 60, true),
                (t_fr + 200 * MS, 60, true),
                (t_fr + 600 * MS, 60, false)
            ],
            "{variant:?}"
        );
        let s1 = state_at(&net, t1);
        assert_eq!(
            (s1.phase, s1.backoff, s1.rto_ns, s1.cwnd, s1.ssthresh),
            (Phase::Loss, 1, 400 * MS, SEG, 14480),
            "{variant:?}"
        );
        let s2 = state_at(&net, t2);
        // RFC 5681 §3.1: ssthresh is held on the second timeout of the same data.
        assert_eq!(
            (s2.phase, s2.backoff, s2.rto_ns, s2.cwnd, s2.ssthresh),
            (Phase::Loss, 2, 800 * MS, SEG, 14480),
            "{variant:?}"
        );
        // With timestamps, the ACK of the retransmission is a valid sample: the
        // backoff is cleared at once.
        let after = net.states.iter().find(|(t, _)| *t > t2).unwrap().1;
        assert_eq!(after.backoff, 0, "{variant:?}");
        assert_eq!(after.rto_ns, 200 * MS, "{variant:?}");
        assert_eq!(net.ep[A].stats().timeouts, 2, "{variant:?}");
        finished_cleanly(&net);
    }
}

#[test]
fn poll_at_shows_the_backed_off_deadline() {
    let mut net = net(Variant::NewReno);
    net.drop_seg(60, 1);
    net.drop_seg(60, 2);
    net.drop_seg(60, 3);
    net.run_until(0);
    let mut deadlines = Vec::new();
    let mut last = None;
    while net.step(2 * S) {
        let d = net.ep[A].poll_at();
        if let (true, Some(d)) = (d != last && net.ep[A].stats().fast_retransmits == 1, d) {
            deadlines.push((net.now, d));
        }
        last = d;
    }
    let t_fr = rtx(&net)[0].0;
    assert_eq!(deadlines[0], (t_fr, t_fr + 200 * MS));
    assert_eq!(deadlines[1], (t_fr + 200 * MS, t_fr + 600 * MS));
    assert_eq!(deadlines[2].0, t_fr + 600 * MS);
}

// ---------------------------------------------------------------------------
// Three segments of one window lost
// ---------------------------------------------------------------------------

fn three_in_one_window(variant: Variant) -> Net {
    let mut net = net(variant);
    net.drop_seg(60, 1);
    net.drop_seg(63, 1);
    net.drop_seg(66, 1);
    net.run();
    finished_cleanly(&net);
    net
}

/// Reno leaves fast recovery on the first partial ACK (which covers 60..62), deflates
/// cwnd to 10 segments with 17 still outstanding, gets no more duplicate ACKs and
/// waits for the timer: 200 ms after the partial ACK restarted it.
#[test]
fn reno_leaves_recovery_on_a_partial_ack_and_times_out() {
    let net = three_in_one_window(Variant::Reno);
    let p = phase_changes(&net);
    assert_eq!(
        p.iter().map(|x| x.1).collect::<Vec<_>>(),
        [
            Phase::Open,
            Phase::Disorder,
            Phase::Recovery,
            Phase::Open,
            Phase::Loss,
            Phase::Open,
            Phase::Disorder,
            Phase::Open
        ]
    );
    let (t_partial, t_rto) = (p[3].0, p[4].0);
    let s = state_at(&net, t_partial);
    assert_eq!((s.cwnd, s.snd_una.wrapping_sub(ISN[A])), (14480, rel(63)));
    assert_eq!(s.bytes_in_flight, 17 * SEG);
    assert_eq!(t_rto, t_partial + 200 * MS);
    // ssthresh from the FlightSize at the timeout: 17 segments / 2.
    assert_eq!(state_at(&net, t_rto).ssthresh, 17 * SEG / 2);
    // Go-back-N after the timeout resends 63, then 66 with 67 and 68 (which B had).
    let r: Vec<u32> = rtx(&net).iter().map(|x| x.1).collect();
    assert_eq!(r, [60, 63, 66, 67, 68]);
    let a = net.ep[A].stats();
    assert_eq!((a.fast_retransmits, a.timeouts), (1, 1));
}

/// NewReno stays in recovery: each partial ACK retransmits the next hole, one per
/// round trip, and no timer expires.
#[test]
fn newreno_retransmits_one_hole_per_partial_ack() {
    let net = three_in_one_window(Variant::NewReno);
    let r = rtx(&net);
    assert_eq!(r.iter().map(|x| x.1).collect::<Vec<_>>(), [60, 63, 66]);
    let p = phase_changes(&net);
    assert_eq!(
        p.iter().map(|x| x.1).collect::<Vec<_>>(),
        [Phase::Open, Phase::Disorder, Phase::Recovery, Phase::Open]
    );
    // The partial ACKs arrive one RTT after each retransmission; the next hole goes at
    // once.
    let rtt = 40 * MS + SER + 41_600; // both delays, data and ACK serialisation
    assert_eq!(r[1].0 - r[0].0, rtt);
    assert_eq!(r[2].0 - r[1].0, rtt);
    // RFC 6582 step 3: partial ACK of 3 segments deflates by 3 and adds back one.
    let s = state_at(&net, r[1].0);
    assert_eq!(s.phase, Phase::Recovery);
    assert_eq!(s.cwnd, 14480 + 17 * SEG - 3 * SEG + SEG);
    let a = net.ep[A].stats();
    assert_eq!((a.fast_retransmits, a.timeouts), (1, 0));
}

/// SACK learns of all three holes from the scoreboard and repairs them within one
/// round trip of the fast retransmit.
#[test]
fn sack_repairs_all_holes_within_one_rtt() {
    let net = three_in_one_window(Variant::Sack);
    let r = rtx(&net);
    assert_eq!(r.iter().map(|x| x.1).collect::<Vec<_>>(), [60, 63, 66]);
    let srtt = state_at(&net, r[0].0).srtt_ns;
    assert!(r[2].0 - r[0].0 < srtt, "{} >= {srtt}", r[2].0 - r[0].0);
    let p = phase_changes(&net);
    assert_eq!(
        p.iter().map(|x| x.1).collect::<Vec<_>>(),
        [Phase::Open, Phase::Disorder, Phase::Recovery, Phase::Open]
    );
    let a = net.ep[A].stats();
    assert_eq!((a.fast_retransmits, a.timeouts), (1, 0));
}

/// Tahoe: one fast retransmit, then go-back-N slow start resends the rest of the
/// window, including segments B already had (64, 65, 67, 68, ...).
#[test]
fn tahoe_goes_back_n() {
    let net = three_in_one_window(Variant::Tahoe);
    let r: Vec<u32> = rtx(&net).iter().map(|x| x.1).collect();
    assert_eq!(r, [60, 63, 64, 65, 66, 67, 68, 69, 70]);
    let a = net.ep[A].stats();
    assert_eq!((a.fast_retransmits, a.timeouts), (1, 0));
}

// ---------------------------------------------------------------------------
// Lost ACKs
// ---------------------------------------------------------------------------

#[test]
fn lost_acks_are_covered_by_later_cumulative_acks() {
    for variant in [
        Variant::Tahoe,
        Variant::Reno,
        Variant::NewReno,
        Variant::Sack,
    ] {
        let mut net = net(variant);
        for n in [5, 6, 7, 20, 40, 41] {
            net.drop_ack(n);
        }
        net.run();
        let dropped = net.log.iter().filter(|s| s.dropped).count();
        assert_eq!(dropped, 6);
        let a = net.ep[A].stats();
        assert_eq!(a.retransmitted_segments, 0, "{variant:?}");
        assert_eq!(
            (a.timeouts, a.fast_retransmits, a.dupacks_received),
            (0, 0, 0)
        );
        finished_cleanly(&net);
    }
}

// ---------------------------------------------------------------------------
// RFC 6582 §4.1: no fast retransmit for duplicate ACKs of data sent before a timeout
// ---------------------------------------------------------------------------

/// Window 10 segments (40..49 in flight). Segments 40, 41 and 46 are dropped, and so
/// is the fast retransmission of 40, so the timer expires (recover = 50). Go-back-N:
/// 40 (ACK 41), then 41 and 42 (ACK 46 and a dupack: 42 was there), then 46..49: 46
/// brings the ACK to 50 and 47..49, which B already had, draw three duplicate ACKs of
/// 50 — while A has new data (50..57) in flight. They are duplicates of data sent
/// before the timeout: the ACK does not cover more than `recover`.
fn after_timeout(variant: Variant) -> Net {
    let mut net = Net::same(path(variant, 10), 20 * MS)
        .rate(10_000_000)
        .bulk(100 * u64::from(SEG));
    net.drop_seg(40, 1);
    net.drop_seg(40, 2);
    net.drop_seg(41, 1);
    net.drop_seg(46, 1);
    net.run();
    assert_eq!(net.delivered, 100 * u64::from(SEG));
    net
}

fn dupacks_of(net: &Net, ack_seg: u32) -> Vec<i64> {
    net.log
        .iter()
        .filter(|s| s.from == B && s.is_pure_ack() && s.rel_ack() == rel(ack_seg))
        .map(|s| s.t)
        .collect()
}

#[test]
fn newreno_no_fast_retransmit_for_dupacks_of_data_sent_before_a_timeout() {
    let net = after_timeout(Variant::NewReno);
    // One ACK of 50 and three duplicates of it.
    assert_eq!(dupacks_of(&net, 50).len(), 4);
    let r: Vec<u32> = rtx(&net).iter().map(|x| x.1).collect();
    // The fast retransmission of 40 (lost), the timeout's 40, go-back-N 41 42 46..49;
    // no retransmission of 50.
    assert_eq!(r, [40, 40, 41, 42, 46, 47, 48, 49]);
    let a = net.ep[A].stats();
    assert_eq!((a.fast_retransmits, a.timeouts), (1, 1));
    assert!(!net
        .states
        .iter()
        .any(|(t, s)| *t > 500 * MS && s.phase == Phase::Recovery));
}

/// The same exchange with Reno (4.4BSD): the three dupacks start a spurious fast
/// retransmit of 50, which was still on its way, and halve ssthresh again.
#[test]
fn reno_fast_retransmits_spuriously_after_a_timeout() {
    let net = after_timeout(Variant::Reno);
    let r: Vec<u32> = rtx(&net).iter().map(|x| x.1).collect();
    assert_eq!(r, [40, 40, 41, 42, 46, 47, 48, 49, 50]);
    let a = net.ep[A].stats();
    assert_eq!((a.fast_retransmits, a.timeouts), (2, 1));
    let last_rtx = rtx(&net)[8].0;
    let s = state_at(&net, last_rtx);
    assert_eq!((s.phase, s.ssthresh), (Phase::Recovery, 4 * SEG));
}

// ---------------------------------------------------------------------------
// RFC 3042 limited transmit
// ---------------------------------------------------------------------------

/// A cwnd-limited sender (large receive window) loses segment 30. The first two
/// duplicate ACKs each release one new segment with limited transmit, none without.
#[test]
fn limited_transmit_sends_one_new_segment_per_early_dupack() {
    for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        for (lt, want) in [(true, 2), (false, 0)] {
            let mut c = Config::linux();
            c.variant = variant;
            c.limited_transmit = lt;
            let mut net = Net::same(c, 20 * MS)
                .rate(10_000_000)
                .bulk(200 * u64::from(SEG));
            net.drop_seg(30, 1);
            net.run();
            let p = phase_changes(&net);
            let (t_dis, t_rec) = (p[1].0, p[2].0);
            assert_eq!((p[1].1, p[2].1), (Phase::Disorder, Phase::Recovery));
            let mut seen = std::collections::HashSet::new();
            let new_in_disorder = net
                .log
                .iter()
                .filter(|s| s.from == A && s.is_data())
                .filter(|s| seen.insert(s.rel_seq()))
                .filter(|s| s.t >= t_dis && s.t < t_rec)
                .count();
            assert_eq!(new_in_disorder, want, "{variant:?} limited transmit {lt}");
            finished_cleanly(&net);
        }
    }
}

// ---------------------------------------------------------------------------
// A loss just after recovery: the ACK that ends the episode equals `recover`
// ---------------------------------------------------------------------------

/// Segment 60 is lost, and so is segment 80, the first segment past `recover` (the
/// end of segment 79: everything in flight at the fast retransmission; the receive
/// window held 80 back until the episode's end). The retransmission of 60 draws the
/// ACK of 80, which is exactly `recover`: the episode ends there, and HighACK has
/// reached RecoveryPoint. The duplicate ACKs that 81, 82, ... draw then start a second
/// fast retransmit (RFC 6675 §5: HighACK greater than RecoveryPoint = HighData, the
/// last byte sent; RFC 6582 §3.2 step 1: the ACK covers more than `recover`, the
/// highest sequence number transmitted). A strict `snd_una > snd_max` test (FreeBSD's)
/// forbade it, and the sender sat out a retransmission timeout while the duplicate
/// ACKs came in.
#[test]
fn a_loss_right_after_recovery_is_fast_retransmitted_not_timed_out() {
    for variant in [Variant::NewReno, Variant::Sack] {
        let mut net = net(variant);
        net.drop_seg(60, 1);
        net.drop_seg(80, 1);
        net.run();
        let a = net.ep[A].stats();
        assert_eq!(
            (a.fast_retransmits, a.timeouts),
            (2, 0),
            "{variant:?}: {:?}",
            rtx(&net)
        );
        let r: Vec<u32> = rtx(&net).iter().map(|x| x.1).collect();
        assert_eq!(r, [60, 80], "{variant:?}");
        // Before the retransmission timer would have fired.
        let t = rtx(&net)[1].0;
        let s = state_at(&net, t);
        assert!(t - rtx(&net)[0].0 < s.rto_ns, "{variant:?}");
        finished_cleanly(&net);
    }
}

/// `ssthresh_from_pipe` (ns-3's `GetSsThresh(tcb, BytesInFlight)`), without SACK: the
/// three duplicate ACKs count as three segments that left the network, and the lost
/// head stays counted as in flight, as ns-3's `TcpSocketBase::EnterRecovery` adds it
/// back "for compatibility with old ns-3 versions": (20 − 3) segments halved. With
/// SACK the head is out of the pipe (marked lost, not yet resent), as RFC 6675's pipe.
#[test]
fn ssthresh_from_pipe_keeps_the_lost_head_without_sack_as_ns3() {
    for (variant, want_segments_x2) in [(Variant::NewReno, 17), (Variant::Sack, 16)] {
        let mut c = path(variant, 20);
        c.ssthresh_from_pipe = true;
        let mut net = Net::same(c, 20 * MS)
            .rate(10_000_000)
            .bulk(200 * u64::from(SEG));
        net.drop_seg(60, 1);
        net.run();
        let (t, _) = net.first_state(|s| s.phase == Phase::Recovery);
        let s = state_at(&net, t);
        assert_eq!(s.ssthresh, want_segments_x2 * SEG / 2, "{variant:?}");
        finished_cleanly(&net);
    }
}
