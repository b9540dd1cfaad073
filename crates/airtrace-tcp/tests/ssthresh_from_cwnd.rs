//! `Config::ssthresh_from_cwnd` as a packet exchange: a loss found while less than
//! cwnd is in flight. RFC 5681 eq. (4) halves the FlightSize; Linux's
//! `tcp_reno_ssthresh` halves cwnd.
//!
//! The path: 20 ms each way, no rate limit; linux profile, SACK. A's application
//! writes 40 segments, waits 200 ms (everything acknowledged, cwnd 30 segments: IW10
//! plus slow start's growth), then writes 8 more. The first of those 8 is lost: the
//! loss is found with 8 segments in flight and a cwnd of 30.
mod common;

use airtrace_tcp::Config;
use common::*;

const SEG: u32 = 1448;

/// A's ssthresh after the fast retransmit, and its cwnd just before it (segments).
fn run(from_cwnd: bool) -> (u32, u32) {
    let mut c = Config::linux();
    c.ssthresh_from_cwnd = from_cwnd;
    c.rcvbuf = 200 * SEG;
    let mut net = Net::same(c, 20 * MS).send_open(40 * u64::from(SEG));
    net.run_until(400 * MS);
    assert_eq!(net.delivered, 40 * u64::from(SEG));
    let cwnd_before = net.ep[A].sender_state().cwnd / SEG;
    net.drop_seg(40, 1);
    net.to_write += 8 * u64::from(SEG);
    net.at(400 * MS).run_until(2 * S);
    assert_eq!(net.delivered, 48 * u64::from(SEG));
    assert_eq!(net.ep[A].stats().fast_retransmits, 1);
    (net.ep[A].sender_state().ssthresh / SEG, cwnd_before)
}

#[test]
fn rfc_5681_halves_the_flight_of_8_segments() {
    let (ssthresh, cwnd) = run(false);
    assert!(cwnd >= 20, "cwnd {cwnd}");
    assert_eq!(ssthresh, 4);
}

#[test]
fn linux_halves_cwnd() {
    let (ssthresh, cwnd) = run(true);
    assert_eq!(ssthresh, cwnd / 2);
}
