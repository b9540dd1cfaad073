//! Spurious retransmission timeouts (RFC 5682 F-RTO, RFC 3522 Eifel, RFC 4015
//! response) as packet exchanges.
//!
//! The path: 20 ms each way, 10 Mbit/s, Linux's settings with a 20-segment receive
//! window, so that the sender is ACK-clocked with 20 segments out. At 300 ms the
//! forward path stalls for 300 ms (a delay spike: what A sends meanwhile is delivered
//! late, nothing is lost). The ACKs stop, the RTO (200 ms, its minimum) fires at
//! 542 ms, and the retransmission of the first unacknowledged segment waits in the
//! stall behind the originals, so the first ACKs after it acknowledge the originals.
mod common;

use airtrace_tcp::{Config, Phase, SenderState, SpuriousRtoDetection, UndoRule};
use common::*;

const SEG: u32 = 1448;

fn stalled(mode: SpuriousRtoDetection) -> Net {
    stalled_after(mode, false)
}

/// The stall; `early_loss`: segment 40 is lost once first (a fast recovery at about
/// 140 ms leaves ssthresh at half the window).
fn stalled_after(mode: SpuriousRtoDetection, early_loss: bool) -> Net {
    let mut c = Config::linux();
    c.spurious_rto = mode;
    c.rcvbuf = 20 * SEG;
    let mut net = Net::same(c, 20 * MS)
        .rate(10_000_000)
        .send_open(u64::from(200 * SEG));
    net.stall(A, 300 * MS, 600 * MS);
    if early_loss {
        net.drop_seg(40, 1);
    }
    net.run();
    assert_eq!(net.delivered, u64::from(200 * SEG));
    net
}

/// The timeout: its time and A's state just before and just after it.
fn timeout(net: &Net) -> (i64, SenderState, SenderState) {
    let i = net
        .states
        .iter()
        .position(|(_, s)| s.backoff == 1)
        .expect("a timeout");
    (net.states[i].0, net.states[i - 1].1, net.states[i].1)
}

/// A's state changes after `t`, in order.
fn states_after(net: &Net, t: i64) -> Vec<(i64, SenderState)> {
    net.states.iter().filter(|(u, _)| *u > t).copied().collect()
}

/// A's new data segments (first transmissions) sent at `t`, as relative sequence
/// numbers.
fn new_data_at(net: &Net, t: i64) -> Vec<u32> {
    let rtx: Vec<i64> = net.retransmissions().iter().map(|s| s.t).collect();
    net.log
        .iter()
        .filter(|s| s.from == A && s.is_data() && s.t == t && !rtx.contains(&s.t))
        .map(|s| s.rel_seq())
        .collect()
}

/// Without detection the timeout is taken for the loss of the whole window: cwnd
/// one segment, ssthresh halved, and every segment outstanding is sent again
/// (go-back-N), though the receiver gets each original too.
#[test]
fn without_detection_the_whole_window_is_retransmitted() {
    let net = stalled(SpuriousRtoDetection::Off);
    let (t, before, after) = timeout(&net);
    assert_eq!(t, 542_028_800);
    assert_eq!((after.cwnd, after.ssthresh), (SEG, 10 * SEG));
    let outstanding = before.snd_nxt.wrapping_sub(before.snd_una) / SEG;
    assert_eq!(outstanding, 20);
    let a = net.ep[A].stats();
    // All but the one the first ACK after the stall covers.
    assert_eq!(
        (a.timeouts, a.retransmitted_segments, a.spurious_rtos),
        (1, 19, 0)
    );
}

/// F-RTO (RFC 5682): only the first segment is retransmitted. The first ACK after
/// the timeout acknowledges data below RecoveryPoint: two new segments go, from
/// snd_max (step 2b). The next acknowledges more of the data sent before the
/// timeout: spurious (step 3b). The response (RFC 4015) puts ssthresh back to
/// pipe_prev = max(FlightSize, ssthresh) at the timeout and cwnd to FlightSize +
/// min(bytes_acked, IW), and the transfer goes on with new data. An earlier loss
/// left ssthresh at 10 segments, below the 12 in flight at the timeout: the timeout
/// halves that to 6, the undo brings back 12.
#[test]
fn frto_declares_the_timeout_spurious_on_the_second_ack_and_restores_the_window() {
    let net = stalled_after(SpuriousRtoDetection::Frto, true);
    let (t, before, after) = timeout(&net);
    assert_eq!(net.ep[A].stats().fast_retransmits, 1);
    let flight = before.snd_nxt.wrapping_sub(before.snd_una);
    assert_eq!(
        (before.ssthresh, flight, after.ssthresh),
        (10 * SEG, 12 * SEG, 6 * SEG)
    );
    let later = states_after(&net, t);
    let (t1, first) = later[0];
    assert_eq!(first.phase, Phase::Loss);
    let recovery_point = before.snd_nxt.wrapping_sub(ISN[A]);
    assert_eq!(
        new_data_at(&net, t1),
        [recovery_point, recovery_point + SEG]
    );
    let (_, second) = later[1];
    assert_eq!(second.phase, Phase::Open);
    assert_eq!(second.ssthresh, before.flight_max_ssthresh());
    assert_eq!(second.ssthresh, 12 * SEG);
    assert_eq!(second.cwnd, second.snd_nxt.wrapping_sub(second.snd_una));
    assert_eq!(second.backoff, 0);
    let a = net.ep[A].stats();
    assert_eq!(
        (a.timeouts, a.retransmitted_segments, a.spurious_rtos),
        (1, 2, 1)
    );
}

/// The same spurious timeout undone as Linux does (`undo = linux`,
/// `tcp_undo_cwnd_reduction`): ssthresh goes back to prior_ssthresh, its value
/// before the episode (max(ssthresh, ¾·cwnd) at the timeout: the 10 segments the
/// earlier loss left), not to RFC 4015's pipe_prev (the 12 in flight), and cwnd to
/// its value before the timeout; the RTO is not adapted.
#[test]
fn linux_undo_restores_the_ssthresh_before_the_episode() {
    let mut c = Config::linux();
    c.spurious_rto = SpuriousRtoDetection::Frto;
    c.undo = UndoRule::Linux;
    c.rcvbuf = 20 * SEG;
    let mut net = Net::same(c, 20 * MS)
        .rate(10_000_000)
        .send_open(u64::from(200 * SEG));
    net.stall(A, 300 * MS, 600 * MS);
    net.drop_seg(40, 1);
    net.run();
    assert_eq!(net.delivered, u64::from(200 * SEG));
    let (t, before, after) = timeout(&net);
    let prior = before.ssthresh.max(before.cwnd / 2 + before.cwnd / 4);
    assert_eq!((before.ssthresh, prior), (10 * SEG, 10 * SEG));
    // The timeout halved the 12 in flight (RFC 5681 eq. (4)).
    assert_eq!(after.ssthresh, 6 * SEG);
    let undone = states_after(&net, t)
        .into_iter()
        .find(|(_, s)| s.phase == Phase::Open)
        .unwrap()
        .1;
    assert_eq!(undone.ssthresh, 10 * SEG);
    assert_eq!(undone.cwnd, before.cwnd);
    assert_eq!(net.ep[A].stats().spurious_rtos, 1);
}

/// A timeout during a fast recovery (the fast retransmission of segment 30 is lost
/// too), with ssthresh from cwnd (`ssthresh_from_cwnd`, as Linux's reno). The RFCs
/// take it as a new congestion event: ssthresh is halved again. Linux's
/// `tcp_enter_loss` keeps the recovery's ssthresh: the window was reduced in this
/// window of data already. (It starts no F-RTO either; here F-RTO would fall back
/// at once, the first ACK reaching the recovery point.)
#[test]
fn linux_keeps_the_recoverys_ssthresh_on_a_timeout_during_it() {
    let run = |undo| {
        let mut c = Config::linux();
        c.spurious_rto = SpuriousRtoDetection::Frto;
        c.undo = undo;
        c.ssthresh_from_cwnd = true;
        c.rcvbuf = 20 * SEG;
        let mut net = Net::same(c, 20 * MS)
            .rate(10_000_000)
            .send_open(u64::from(100 * SEG));
        net.drop_seg(30, 1);
        net.drop_seg(30, 2);
        net.run();
        assert_eq!(net.delivered, u64::from(100 * SEG));
        let (_, before, after) = timeout(&net);
        assert_eq!(before.phase, Phase::Recovery);
        (before, after)
    };
    let (before, after) = run(UndoRule::Linux);
    assert_eq!(after.ssthresh, before.ssthresh);
    let (before_rfc, after_rfc) = run(UndoRule::Rfc4015);
    assert_eq!(before_rfc.ssthresh, before.ssthresh);
    assert_eq!(after_rfc.ssthresh, before.ssthresh / 2);
}

/// Eifel (RFC 3522): the first ACK after the retransmission echoes the timestamp of
/// an original sent before the timeout, older than the retransmission's: spurious at
/// once, one ACK before F-RTO can tell. The go-back-N it had started stops (only the
/// head was retransmitted: cwnd was one segment) and new data follows.
#[test]
fn eifel_detects_the_spurious_timeout_by_the_first_acks_timestamp_echo() {
    let net = stalled(SpuriousRtoDetection::Eifel);
    let (t, before, after) = timeout(&net);
    // The timeout itself is the conventional one: go-back-N begins.
    assert_eq!((after.cwnd, after.phase), (SEG, Phase::Loss));
    let (t1, first) = states_after(&net, t)[0];
    assert_eq!(first.phase, Phase::Open);
    assert_eq!(first.ssthresh, before.flight_max_ssthresh());
    // RFC 4015 step (8): SRTT = max(SRTT_prev, the sample of this ACK), which the
    // stall made 341 ms (whole milliseconds, the timestamp clock's).
    assert_eq!(first.srtt_ns, 341 * MS);
    assert!(!new_data_at(&net, t1).is_empty());
    let a = net.ep[A].stats();
    assert_eq!(
        (a.timeouts, a.retransmitted_segments, a.spurious_rtos),
        (1, 1, 1)
    );
}

/// Eifel needs timestamps: without them it does nothing.
#[test]
fn eifel_without_timestamps_is_the_conventional_recovery() {
    let run = |mode| {
        let mut c = Config::linux();
        c.spurious_rto = mode;
        c.timestamps = false;
        c.rcvbuf = 20 * SEG;
        let mut net = Net::same(c, 20 * MS)
            .rate(10_000_000)
            .send_open(u64::from(200 * SEG));
        net.stall(A, 300 * MS, 600 * MS);
        net.run();
        net.trace()
    };
    assert_eq!(
        run(SpuriousRtoDetection::Off),
        run(SpuriousRtoDetection::Eifel)
    );
}

/// A genuine timeout: the last two segments of a transfer are lost. Eifel's first
/// ACK echoes the retransmission's own timestamp; F-RTO has no new data to send
/// after the first ACK (step 2b): both keep the window reduced and retransmit the
/// other lost segment, as without detection.
#[test]
fn a_genuine_timeout_is_not_undone() {
    let run = |mode| {
        let mut c = Config::linux();
        c.spurious_rto = mode;
        let mut net = Net::same(c, 20 * MS).send_open(u64::from(12 * SEG));
        net.drop_seg(10, 1);
        net.drop_seg(11, 1);
        net.run();
        assert_eq!(net.delivered, u64::from(12 * SEG));
        net
    };
    let off = run(SpuriousRtoDetection::Off);
    for mode in [SpuriousRtoDetection::Frto, SpuriousRtoDetection::Eifel] {
        let net = run(mode);
        assert_eq!(net.ep[A].stats().spurious_rtos, 0, "{mode:?}");
        assert_eq!(net.ep[A].stats().retransmitted_segments, 2, "{mode:?}");
        assert_eq!(
            net.ep[A].sender_state().ssthresh,
            off.ep[A].sender_state().ssthresh
        );
    }
}

trait Pipe {
    /// RFC 4015's pipe_prev for a state taken just before a timeout.
    fn flight_max_ssthresh(&self) -> u32;
}

impl Pipe for SenderState {
    fn flight_max_ssthresh(&self) -> u32 {
        self.snd_nxt.wrapping_sub(self.snd_una).max(self.ssthresh)
    }
}
