//! RACK-TLP (RFC 8985) as packet exchanges: a tail loss repaired by a Tail Loss Probe
//! instead of a timeout, reordering within RACK's reordering window not taken for a
//! loss (and beyond it, taken for one when the window has passed), and a lost
//! retransmission found by RACK where RFC 6675's DupThresh rules wait for the RTO.
//!
//! Linux's settings (SACK, timestamps, IW10, delayed ACK every 2 segments, min RTO
//! 200 ms), 20 ms each way. The application keeps the connection open (a FIN would
//! ride on the last segment, and the model's SACK blocks never cover a FIN).
mod common;

use airtrace_tcp::{Config, Phase};
use common::*;

const SEG: u32 = 1448;

fn linux(rack_tlp: bool) -> Config {
    let mut c = Config::linux();
    c.rack_tlp = rack_tlp;
    c
}

/// When A sent its data segment `index`, each time.
fn sends_of(net: &Net, index: u32) -> Vec<i64> {
    net.log
        .iter()
        .filter(|s| s.from == A && s.is_data() && s.rel_seq() == 1 + index * SEG)
        .map(|s| s.t)
        .collect()
}

/// When A last sent a data segment for the first time.
fn last_new_send(net: &Net) -> i64 {
    let rtx: Vec<i64> = net.retransmissions().iter().map(|s| s.t).collect();
    net.log
        .iter()
        .filter(|s| s.from == A && s.is_data() && !rtx.contains(&s.t))
        .map(|s| s.t)
        .max()
        .unwrap()
}

// ---------------------------------------------------------------------------
// Tail Loss Probe (RFC 8985 §7)
// ---------------------------------------------------------------------------

/// `segments` segments: the initial window of 10 at 40 ms, the rest when the first
/// ACKs arrive at 80 ms; segments `lost` are dropped the first time.
fn tail_loss(rack_tlp: bool, segments: u32, lost: &[u32]) -> Net {
    let mut net = Net::same(linux(rack_tlp), 20 * MS).send_open(u64::from(segments * SEG));
    for &i in lost {
        net.drop_seg(i, 1);
    }
    net.run();
    net
}

/// The last two segments of 12 are lost. RFC 6675 has nothing to go on (no SACK
/// arrives) and waits for the RTO, 200 ms after the last ACK. With TLP the PTO is
/// 2·SRTT = 80 ms after the last send (and the ACK that let it out): the probe is the
/// last segment again (nothing new to send), its SACK lets RACK mark the segment
/// before it lost (sent before a delivered one, more than RACK.rtt + reo_wnd ago), a
/// fast retransmission repairs it: no timeout.
#[test]
fn a_tail_loss_is_repaired_by_a_probe_two_srtt_after_the_last_send() {
    let rfc6675 = tail_loss(false, 12, &[10, 11]);
    let last = last_new_send(&rfc6675);
    assert_eq!(last, 80 * MS);
    let a = rfc6675.ep[A].stats();
    assert_eq!((a.timeouts, a.fast_retransmits), (1, 0));
    assert_eq!(sends_of(&rfc6675, 10)[1], last + 200 * MS);

    let tlp = tail_loss(true, 12, &[10, 11]);
    assert_eq!(last_new_send(&tlp), last);
    let srtt = tlp.ep[A].sender_state().srtt_ns;
    assert_eq!(srtt, 40 * MS);
    // The probe: segment 11 again, 2·SRTT after the last send.
    assert_eq!(sends_of(&tlp, 11), [last, last + 2 * srtt]);
    // Its SACK arrives one RTT later; RACK marks segment 10 lost and it goes at once.
    assert_eq!(sends_of(&tlp, 10), [last, last + 2 * srtt + 40 * MS]);
    let a = tlp.ep[A].stats();
    assert_eq!(
        (
            a.timeouts,
            a.tlp_probes,
            a.fast_retransmits,
            a.rack_marked_lost
        ),
        (0, 1, 1, 1)
    );
    assert_eq!(tlp.delivered, u64::from(12 * SEG));
}

/// One segment in flight: the PTO adds the worst-case delayed-ACK time (2·SRTT + 200
/// ms), which the RTO (200 ms after the last send) caps: the probe goes when the
/// timeout would have fired, in its place. The probe repairs the loss, so its ACK
/// covers everything; no timeout, no window collapse to one segment.
#[test]
fn with_one_segment_in_flight_the_pto_waits_for_a_delayed_ack_capped_by_the_rto() {
    let tlp = tail_loss(true, 11, &[10]);
    let last = last_new_send(&tlp);
    assert_eq!(sends_of(&tlp, 10), [last, last + 200 * MS]);
    let a = tlp.ep[A].stats();
    assert_eq!((a.timeouts, a.tlp_probes), (0, 1));
    assert_eq!(tlp.delivered, u64::from(11 * SEG));
    let end = tlp.ep[A].sender_state();
    assert_eq!(end.phase, Phase::Open);
    assert!(end.cwnd > 10 * SEG);

    let rfc6675 = tail_loss(false, 11, &[10]);
    assert_eq!(sends_of(&rfc6675, 10), [last, last + 200 * MS]);
    assert_eq!(rfc6675.ep[A].stats().timeouts, 1);
    // Slow start again from one segment: one RTT later, two.
    assert_eq!(rfc6675.ep[A].sender_state().cwnd, 2 * SEG);
}

/// RFC 8985 §7.4: a retransmitted probe whose ACK then covers more than TLP.end_seq,
/// with no duplicate ACK saying the receiver had it, repaired a loss: the window is
/// reduced once (ssthresh from the congestion control, Reno's max(FlightSize/2,
/// 2·SMSS), cwnd down to it, as Linux's CWR), with no retransmission beyond the
/// probe. Here the flight is the one new segment: ssthresh = 2·SMSS.
#[test]
fn a_probe_that_repaired_a_loss_reduces_the_window_when_later_data_is_acked() {
    let mut net = Net::same(linux(true), 20 * MS).send_open(u64::from(11 * SEG));
    net.drop_seg(10, 1);
    net.run_until(600 * MS);
    let before = net.ep[A].sender_state();
    assert_eq!(before.ssthresh, airtrace_tcp::endpoint::INITIAL_SSTHRESH);
    // The application writes one more segment; its ACK goes beyond TLP.end_seq.
    net.to_write += u64::from(SEG);
    net.at(600 * MS).run();
    let after = net.ep[A].sender_state();
    assert!(before.cwnd > 10 * SEG);
    assert_eq!((after.ssthresh, after.cwnd), (2 * SEG, 2 * SEG));
    assert_eq!(net.ep[A].stats().retransmitted_segments, 1);
}

// ---------------------------------------------------------------------------
// RACK: the reordering window (RFC 8985 §6.2)
// ---------------------------------------------------------------------------

/// 60 segments at 10 Mbit/s (1.2 ms a segment) with a 20-segment receive window, so
/// that the sender is ACK-clocked. Segment 3 arrives 2 ms late, overtaken by one
/// segment: not enough for any loss detection, but RACK sees an original delivered
/// below RACK.fack (reordering_seen, §6.2 step 3). Then segment 30 arrives `late_ms`
/// late. min_RTT is 40 ms, so the reordering window is 10 ms.
fn reordered(rack_tlp: bool, first_reordering: bool, late_ms: i64) -> Net {
    let mut c = linux(rack_tlp);
    c.rcvbuf = 20 * SEG;
    let mut net = Net::same(c, 20 * MS)
        .rate(10_000_000)
        .send_open(u64::from(60 * SEG));
    if first_reordering {
        net.delay_seg(3, 1, 2 * MS);
    }
    net.delay_seg(30, 1, late_ms * MS);
    net.run();
    assert_eq!(net.delivered, u64::from(60 * SEG));
    net
}

/// Segment 30 is 6 ms late: five segments overtake it, their SACKs are three or more
/// duplicate ACKs and RFC 6675 retransmits it (a spurious fast retransmit). RACK
/// waits RACK.rtt + reo_wnd from its send, and its ACK comes first: nothing is
/// retransmitted and the window is not reduced.
#[test]
fn reordering_within_the_window_is_not_a_loss() {
    let rfc6675 = reordered(false, true, 6);
    assert_eq!(sends_of(&rfc6675, 30).len(), 2);
    assert_eq!(rfc6675.ep[A].stats().fast_retransmits, 1);

    let rack = reordered(true, true, 6);
    assert_eq!(sends_of(&rack, 30).len(), 1);
    let a = rack.ep[A].stats();
    assert_eq!((a.retransmitted_segments, a.fast_retransmits), (0, 0));
    assert!(rack.states.iter().all(|(_, s)| s.phase != Phase::Recovery));
}

/// Before any reordering was seen, RACK's window is 0 once DupThresh segments are
/// SACKed (§6.2 step 4): the same 6 ms delay is then taken for a loss, as RFC 6675
/// does.
#[test]
fn until_reordering_is_seen_three_sacked_segments_close_the_window() {
    let rack = reordered(true, false, 6);
    assert_eq!(sends_of(&rack, 30).len(), 2);
    assert_eq!(rack.ep[A].stats().rack_marked_lost, 1);
}

/// Segment 30 is 15 ms late, more than the window: RACK marks it lost when
/// RACK.rtt plus reo_wnd have passed since it was sent (the reordering timer, §6.3),
/// that is at least min_RTT + 10 ms after, and before its ACK reaches the sender.
#[test]
fn reordering_beyond_the_window_is_a_loss_when_the_window_has_passed() {
    let net = reordered(true, true, 15);
    let sends = sends_of(&net, 30);
    assert_eq!(sends.len(), 2);
    let acked = net
        .log
        .iter()
        .find(|s| s.from == B && s.rel_ack() > 1 + 30 * SEG)
        .map(|s| s.t + 20 * MS)
        .unwrap();
    let waited = sends[1] - sends[0];
    assert!(waited >= 50 * MS, "{waited}");
    assert!(sends[1] < acked);
    assert_eq!(net.ep[A].stats().rack_marked_lost, 1);
}

// ---------------------------------------------------------------------------
// RACK: lost retransmissions (RFC 8985 §3.3.3)
// ---------------------------------------------------------------------------

/// Segment 5 is lost, and so is its fast retransmission. RFC 6675 never marks a
/// segment lost twice: the sender waits for the RTO (200 ms after the
/// retransmission). RACK sees segments sent after the retransmission SACKed and,
/// RACK.rtt + reo_wnd after it, marks it lost again: a third send with no timeout.
#[test]
fn a_lost_retransmission_is_found_by_rack_not_by_the_rto() {
    let run = |rack_tlp: bool| {
        let mut net = Net::same(linux(rack_tlp), 20 * MS)
            .rate(10_000_000)
            .send_open(u64::from(60 * SEG));
        net.drop_seg(5, 1);
        net.drop_seg(5, 2);
        net.run();
        assert_eq!(net.delivered, u64::from(60 * SEG));
        net
    };
    let rfc6675 = run(false);
    let s = sends_of(&rfc6675, 5);
    assert_eq!(s.len(), 3);
    assert_eq!(s[2] - s[1], 200 * MS);
    assert_eq!(rfc6675.ep[A].stats().timeouts, 1);

    let rack = run(true);
    let r = sends_of(&rack, 5);
    assert_eq!(r.len(), 3);
    assert_eq!(r[1], s[1]);
    // More than an RTT (the SACKs of what was sent after it), well short of an RTO.
    assert!(
        r[2] - r[1] > 40 * MS && r[2] - r[1] < 100 * MS,
        "{}",
        r[2] - r[1]
    );
    let a = rack.ep[A].stats();
    assert_eq!(
        (a.timeouts, a.fast_retransmits, a.rack_marked_lost),
        (0, 1, 2)
    );
}

/// RACK-TLP needs SACK: on a NewReno connection `rack_tlp` changes nothing.
#[test]
fn rack_tlp_without_sack_changes_nothing() {
    let run = |rack_tlp: bool| {
        let mut c = linux(rack_tlp);
        c.variant = airtrace_tcp::Variant::NewReno;
        let mut net = Net::same(c, 20 * MS).send_open(u64::from(12 * SEG));
        net.drop_seg(10, 1);
        net.drop_seg(11, 1);
        net.run();
        net.trace()
    };
    assert_eq!(run(false), run(true));
}
