//! The analyzer's self-check: values in a report that cannot be true.
//!
//! Every rule below is an invariant of a correct analysis: a connection's RTT fits in
//! its own duration, a direction retransmits no more packets than it sent, no count of
//! a file's packets exceeds the frames read. A capture that breaks one (a clock gone
//! wrong, a decoding rule misled by something new) must not have the broken value
//! printed as a result (issue 18: "an RTT maximum of 1.47×10⁹ s", "872 million bytes
//! not captured from a 30 kB file"). [`check`] runs over a finished report: it blanks
//! or bounds each broken value and says so in a warning naming the connection and the
//! frame that opened it.

use crate::metrics::{ConnSummary, DirMetrics, RttStats};

/// Slack for comparing seconds computed along different paths.
const EPS_S: f64 = 1e-6;

/// Checks every connection of a file whose `tcp_frames` frames carried TCP; returns
/// one warning per broken rule, each naming the file (`name`), the connection and its
/// first frame.
pub fn check(name: &str, tcp_frames: u64, connections: &mut [ConnSummary]) -> Vec<String> {
    let mut warnings = Vec::new();
    for c in connections.iter_mut() {
        let at = format!(
            "{name}: connection {} (opened at frame {})",
            c.id, c.first_frame
        );
        for problem in check_connection(c) {
            warnings.push(format!("{at}: {problem}"));
        }
    }
    let packets: u64 = connections
        .iter()
        .map(|c| c.a_to_b.packets + c.b_to_a.packets)
        .sum();
    if packets > tcp_frames {
        warnings.push(format!(
            "{name}: self-check: the connections count {packets} packets, more than the {tcp_frames} TCP frames read"
        ));
    }
    warnings
}

/// The broken rules of one connection, after blanking or bounding their values.
fn check_connection(c: &mut ConnSummary) -> Vec<String> {
    let mut problems = Vec::new();
    if c.start_s < 0.0 || c.end_s + EPS_S < c.start_s {
        problems.push(format!(
            "self-check: span {:.6}–{:.6} s runs backwards or before the capture; duration reported as 0",
            c.start_s, c.end_s
        ));
        c.duration_s = 0.0;
    }
    let duration = c.duration_s;
    if let Some(h) = c
        .handshake_rtt_s
        .filter(|&h| h < 0.0 || h > duration + EPS_S)
    {
        problems.push(format!(
            "self-check: handshake RTT {h:.6} s outside the connection's {duration:.6} s; left out"
        ));
        c.handshake_rtt_s = None;
    }
    for (dir, m) in [("a_to_b", &mut c.a_to_b), ("b_to_a", &mut c.b_to_a)] {
        for problem in check_direction(m, duration) {
            problems.push(format!("{dir}: {problem}"));
        }
    }
    problems
}

/// The broken rules of one direction of a connection lasting `duration` s.
fn check_direction(m: &mut DirMetrics, duration: f64) -> Vec<String> {
    let mut problems = Vec::new();
    let rtt_broken =
        m.rtt.min_s.is_some_and(|v| v < 0.0) || m.rtt.max_s.is_some_and(|v| v > duration + EPS_S);
    if rtt_broken {
        problems.push(format!(
            "self-check: RTT samples {:.6}–{:.6} s do not fit in the connection's {duration:.6} s; left out",
            m.rtt.min_s.unwrap_or(f64::NAN),
            m.rtt.max_s.unwrap_or(f64::NAN)
        ));
        m.rtt = RttStats::default();
    }
    if let Some(w) = m
        .max_retransmit_wait_s
        .filter(|&w| w < 0.0 || w > duration + EPS_S)
    {
        problems.push(format!(
            "self-check: a retransmission wait of {w:.6} s does not fit in the connection's {duration:.6} s; left out"
        ));
        m.max_retransmit_wait_s = None;
    }
    if let Some(iw) = m.initial_window_bytes.filter(|&iw| iw > m.data_bytes) {
        problems.push(format!(
            "self-check: initial window {iw} B exceeds data_bytes {}; left out",
            m.data_bytes
        ));
        m.initial_window_bytes = None;
    }
    // Each count cannot exceed the count it is a part of.
    let mut at_most = |what: &str, value: &mut u64, bound: u64, of: &str| {
        if *value > bound {
            problems.push(format!(
                "self-check: {what} {value} exceeds {of} {bound}; reported as {bound}"
            ));
            *value = bound;
        }
    };
    at_most("data_packets", &mut m.data_packets, m.packets, "packets");
    at_most(
        "retransmitted_packets",
        &mut m.retransmitted_packets,
        m.packets,
        "packets",
    );
    at_most(
        "retransmitted_bytes",
        &mut m.retransmitted_bytes,
        m.data_bytes,
        "data_bytes",
    );
    at_most(
        "unique_bytes",
        &mut m.unique_bytes,
        m.data_bytes,
        "data_bytes",
    );
    at_most(
        "timeout_retransmissions",
        &mut m.timeout_retransmissions,
        m.retransmitted_packets,
        "retransmitted_packets",
    );
    at_most(
        "timeouts",
        &mut m.timeouts,
        m.timeout_retransmissions,
        "timeout_retransmissions",
    );
    at_most(
        "acked_bytes",
        &mut m.acked_bytes,
        m.unique_bytes,
        "unique_bytes",
    );
    at_most(
        "spurious_retransmissions",
        &mut m.spurious_retransmissions,
        m.retransmitted_packets,
        "retransmitted_packets",
    );
    at_most("out_of_order", &mut m.out_of_order, m.packets, "packets");
    at_most(
        "duplicate_acks",
        &mut m.duplicate_acks,
        m.packets,
        "packets",
    );
    // What is derived from the bounded counts follows them.
    m.genuine_retransmissions = m
        .retransmitted_packets
        .saturating_sub(m.spurious_retransmissions);
    m.goodput_bps = if duration > 0.0 {
        m.acked_bytes as f64 * 8.0 / duration
    } else {
        0.0
    };
    for wait in [&mut m.backoff_first_wait_s, &mut m.backoff_longest_wait_s] {
        if wait.is_some_and(|w| w < 0.0 || w > duration + EPS_S) {
            *wait = None;
        }
    }
    let by_kind = m.fast_retransmissions
        + m.sack_retransmissions
        + m.timeout_retransmissions
        + m.tail_loss_probes;
    if by_kind > m.retransmitted_packets {
        problems.push(format!(
            "self-check: retransmissions by kind add up to {by_kind}, more than the {} retransmitted packets",
            m.retransmitted_packets
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection() -> ConnSummary {
        ConnSummary {
            id: 3,
            first_frame: 17,
            a: "10.0.0.1:1".into(),
            b: "10.0.0.2:2".into(),
            start_s: 1.0,
            end_s: 3.0,
            duration_s: 2.0,
            handshake_rtt_s: Some(0.1),
            capture_point: None,
            syn_seen: true,
            state: Default::default(),
            reused_ports: false,
            complete: false,
            stray_syn_acks: None,
            a_to_b: DirMetrics::default(),
            b_to_a: DirMetrics::default(),
        }
    }

    #[test]
    fn a_sound_connection_passes_untouched() {
        let mut c = [connection()];
        c[0].a_to_b.packets = 10;
        c[0].a_to_b.data_packets = 8;
        c[0].a_to_b.rtt.add(50_000_000);
        c[0].a_to_b.finish(2.0);
        assert!(check("f.pcap", 10, &mut c).is_empty());
        assert_eq!(c[0].a_to_b.rtt.samples, 1);
        assert_eq!(c[0].handshake_rtt_s, Some(0.1));
    }

    #[test]
    fn an_rtt_longer_than_the_connection_is_left_out_with_a_warning() {
        let mut c = [connection()];
        c[0].a_to_b.packets = 4;
        c[0].b_to_a.packets = 4;
        c[0].b_to_a.rtt.add(5_000_000_000);
        c[0].b_to_a.finish(2.0);
        c[0].handshake_rtt_s = Some(-0.5);
        let warnings = check("f.pcap", 8, &mut c);
        assert_eq!(
            warnings,
            [
                "f.pcap: connection 3 (opened at frame 17): self-check: handshake RTT -0.500000 s outside the \
                 connection's 2.000000 s; left out",
                "f.pcap: connection 3 (opened at frame 17): b_to_a: self-check: RTT samples 5.000000–5.000000 s \
                 do not fit in the connection's 2.000000 s; left out",
            ]
        );
        assert_eq!((c[0].b_to_a.rtt.samples, c[0].b_to_a.rtt.max_s), (0, None));
        assert_eq!(c[0].handshake_rtt_s, None);
    }

    #[test]
    fn counts_beyond_what_contains_them_are_bounded_and_named() {
        let mut c = [connection()];
        let m = &mut c[0].a_to_b;
        (
            m.packets,
            m.retransmitted_packets,
            m.timeout_retransmissions,
            m.timeouts,
        ) = (5, 7, 7, 9);
        let warnings = check("f.pcap", 3, &mut c);
        let m = &c[0].a_to_b;
        assert_eq!(
            (
                m.retransmitted_packets,
                m.timeout_retransmissions,
                m.timeouts
            ),
            (5, 5, 5)
        );
        assert_eq!(warnings.len(), 4, "{warnings:#?}");
        assert!(warnings[0].ends_with(
            "a_to_b: self-check: retransmitted_packets 7 exceeds packets 5; reported as 5"
        ));
        assert_eq!(
            warnings[3],
            "f.pcap: self-check: the connections count 5 packets, more than the 3 TCP frames read"
        );
    }

    #[test]
    fn acknowledged_bytes_and_spurious_counts_are_bounded_and_what_follows_from_them_too() {
        let mut c = [connection()];
        let m = &mut c[0].a_to_b;
        (m.packets, m.data_bytes, m.unique_bytes, m.acked_bytes) = (4, 1000, 1000, 5000);
        (m.retransmitted_packets, m.spurious_retransmissions) = (2, 3);
        m.finish(2.0);
        let warnings = check("f.pcap", 4, &mut c);
        let m = &c[0].a_to_b;
        assert_eq!((m.acked_bytes, m.spurious_retransmissions), (1000, 2));
        assert_eq!((m.genuine_retransmissions, m.goodput_bps), (0, 4000.0));
        assert_eq!(warnings.len(), 2, "{warnings:#?}");
        assert!(warnings[0].ends_with(
            "a_to_b: self-check: acked_bytes 5000 exceeds unique_bytes 1000; reported as 1000"
        ));
    }

    #[test]
    fn a_span_that_runs_backwards_has_no_duration() {
        let mut c = [connection()];
        (c[0].start_s, c[0].end_s) = (5.0, 2.0);
        let warnings = check("f.pcap", 0, &mut c);
        assert_eq!(c[0].duration_s, 0.0);
        assert!(warnings[0].contains("runs backwards"), "{warnings:?}");
    }
}
