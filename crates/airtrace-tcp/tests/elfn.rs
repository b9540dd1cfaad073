//! Explicit Link Failure Notification (Holland & Vaidya): standby, probes, and the
//! resumption with the retransmission timer restored.
mod common;

use airtrace_tcp::{Config, Endpoint};
use common::*;

const SEG: u32 = 1448;

fn connected(cfg: Config) -> Endpoint {
    let mut a = Endpoint::client(cfg, 0, 1_000);
    a.poll_transmit(0).unwrap();
    a.on_segment(100 * MS, &from_b(1, 1_000, 100, true));
    a.write(u64::from(4 * SEG));
    while a.poll_transmit(100 * MS).is_some() {}
    a
}

#[test]
fn a_route_failure_stops_the_timer_probes_and_an_ack_resumes() {
    let cfg = Config {
        elfn_probe_ns: Some(2 * S),
        ..Config::linux()
    };
    let mut a = connected(cfg);
    let rto_before = a.sender_state().rto_ns;
    let cwnd_before = a.sender_state().cwnd;
    assert!(a.poll_at().is_some_and(|t| t < 2 * S), "the timer runs");

    a.on_route_failure(150 * MS);
    assert!(a.in_standby());
    // Nothing until the probe is due: the retransmission timer does not fire.
    assert_eq!(a.poll_at(), Some(2150 * MS));
    assert!(a.poll_transmit(1_000 * MS).is_none());
    let probe = a.poll_transmit(2150 * MS).expect("a probe");
    assert_eq!(
        (probe.seq, probe.len),
        (1, SEG),
        "the first unacknowledged segment"
    );
    assert!(
        a.poll_transmit(2150 * MS).is_none(),
        "one probe per interval"
    );
    assert_eq!(a.poll_at(), Some(4150 * MS));
    let probe = a.poll_transmit(4150 * MS).expect("the next probe");
    assert_eq!(probe.seq, 1);
    assert_eq!(a.elfn_probes(), 2);
    assert_eq!(a.stats().timeouts, 0, "standing by is not a timeout");
    assert_eq!(
        a.sender_state().rto_ns,
        rto_before,
        "no back-off while standing by"
    );

    // The probe's ACK ends the standby: the window is kept (and grows with the ACK),
    // the timer runs again for what is still outstanding.
    a.on_segment(4300 * MS, &from_b(1 + SEG, 1_000 + 4150, 4300, false));
    assert!(!a.in_standby());
    let s = a.sender_state();
    assert!(s.cwnd >= cwnd_before);
    assert!(a
        .poll_at()
        .is_some_and(|t| t > 4300 * MS && t <= 4300 * MS + 2 * s.rto_ns));
}

#[test]
fn without_elfn_a_route_failure_changes_nothing() {
    let mut a = connected(Config::linux());
    let before = a.poll_at();
    a.on_route_failure(150 * MS);
    assert!(!a.in_standby());
    assert_eq!(a.poll_at(), before);
}

/// With RACK-TLP the Tail Loss Probe's timer stops too: in standby the only timer is
/// ELFN's probe (a PTO left armed would be due and never fired: poll_at would
/// stay in the past).
#[test]
fn standby_stops_the_tail_loss_probe_timer() {
    let cfg = Config {
        elfn_probe_ns: Some(2 * S),
        rack_tlp: true,
        ..Config::linux()
    };
    let mut a = connected(cfg);
    // The PTO (2·SRTT = 200 ms after the last send at 100 ms) comes first.
    assert_eq!(a.poll_at(), Some(300 * MS));
    a.on_route_failure(150 * MS);
    assert_eq!(a.poll_at(), Some(2150 * MS));
    assert!(a.poll_transmit(300 * MS).is_none());
    assert_eq!(a.stats().tlp_probes, 0);
}
