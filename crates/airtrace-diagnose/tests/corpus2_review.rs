//! Regression tests for the wrong findings the review of the second corpus found
//! (docs/diagnosis-corpus2.md), each on the capture that showed it (testdata/corpus,
//! kept in the repository) and named after it; each also checks that a right finding
//! of the same capture, where it has one, is still there.

mod common;

use airtrace_diagnose::{diagnose_file, Finding};

fn findings(name: &str) -> Vec<Finding> {
    let path = common::repo().join("testdata/corpus").join(name);
    diagnose_file(&path)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .1
}

/// The `timeout_backoff` findings of connection `conn`, direction `dir`: their evidence.
fn timeouts(found: &[Finding], conn: u32, dir: &str) -> Vec<Vec<u64>> {
    found
        .iter()
        .filter(|f| f.kind == "timeout_backoff" && f.connection == conn && f.direction == dir)
        .map(|f| f.evidence.clone())
        .collect()
}

/// `ndpi_rtsp`: a router captured on all its interfaces; each SYN/ACK is seen again
/// 74 µs later at the second interface (IP ID 0, TTL one lower). Those copies were five
/// handshake timeouts "after 0.00 s" (frames 18, 116, 198, 200, 400, 492).
#[test]
fn ndpi_rtsp_syn_ack_copies_at_a_second_interface_are_no_handshake_timeout() {
    let found = findings("ndpi_rtsp.pcap");
    for conn in [1, 2, 3, 5, 6] {
        assert_eq!(
            timeouts(&found, conn, "b_to_a"),
            Vec::<Vec<u64>>::new(),
            "conn {conn}"
        );
    }
    // The data copies are still what they are: capture duplicates.
    assert!(
        found.iter().any(|f| f.kind == "capture_artifact"),
        "{found:#?}"
    );
}

/// `zeek_gtp6_gtp_0x32`: two SYNs 1 µs apart (frames 1-2) were a SYN that "went
/// unanswered and was sent again" after 0.00 s.
#[test]
fn zeek_gtp6_two_syns_a_microsecond_apart_are_no_handshake_timeout() {
    let found = findings("zeek_gtp6_gtp_0x32.pcap");
    assert!(timeouts(&found, 0, "a_to_b").is_empty(), "{found:#?}");
}

/// `zeek_ssh.*-half-duplex` conn 16: the SYN (and, on the server's side, the SYN/ACK)
/// repeated after 0.11 s and 0.10 s, sooner than any stack's handshake timer (1 s,
/// RFC 6298 §2.1). `ndpi_webex` conn 52: a SYN resent after 1.01 s is a handshake
/// timeout; the copy 10 ms after it is not a second one.
#[test]
fn handshake_segments_repeated_sooner_than_any_rto_are_no_timeout() {
    let client = findings("zeek_ssh.client-side-half-duplex.pcap");
    assert!(timeouts(&client, 16, "a_to_b").is_empty(), "{client:#?}");
    let server = findings("zeek_ssh.server-side-half-duplex.pcap");
    assert!(timeouts(&server, 16, "b_to_a").is_empty(), "{server:#?}");
    let webex = findings("ndpi_webex.pcap");
    assert_eq!(timeouts(&webex, 52, "a_to_b"), [vec![1061]]);
}

/// `ndpi_webex` conns 19 and 21: the server's first FIN (frames 443, 460), right after
/// its pure ACK, was "a FIN that went unacknowledged" after 0.00 s: no FIN had been
/// sent before it.
#[test]
fn ndpi_webex_a_first_fin_is_no_fin_resent() {
    let found = findings("ndpi_webex.pcap");
    assert!(timeouts(&found, 19, "b_to_a").is_empty(), "{found:#?}");
    assert!(timeouts(&found, 21, "b_to_a").is_empty(), "{found:#?}");
}

/// `zeek_fin_retransmission`: the client's first FIN (frame 2) went before the SYN/ACK
/// came, and its FIN+ACK (frame 4) 2 ms after the SYN/ACK: neither is the timer's (the
/// first is no resend, the second acknowledges the SYN/ACK it waited for).
#[test]
fn zeek_fin_retransmission_fins_around_the_syn_ack_are_no_timeouts() {
    let found = findings("zeek_fin_retransmission.pcap");
    assert!(timeouts(&found, 0, "a_to_b").is_empty(), "{found:#?}");
}

/// `zeek_reassembly`: the server, its FIN unacknowledged, sets FIN again on each ACK of
/// the client's new data (frames 8, 10, 12, 0.2 ms after each segment): "its FIN went
/// unacknowledged 3 time(s)" was no timer. The client's loss repair of the same
/// connection is still reported.
#[test]
fn zeek_reassembly_a_fin_set_again_on_acks_of_new_data_is_no_timeout() {
    let found = findings("zeek_reassembly.pcap");
    assert!(timeouts(&found, 0, "b_to_a").is_empty(), "{found:#?}");
    assert!(!timeouts(&found, 0, "a_to_b").is_empty(), "{found:#?}");
}

/// `suri_tls-subjectaltname`, captured beside the client: the server's segments
/// released by the client's ACK reach the capture point one round trip (18 ms) after
/// that ACK (conn 4 frame 96, conn 57 frame 2766); they were "retransmission timeouts"
/// of 0.02 s. Conn 4's real timeout (frame 94, 0.45 s of silence) stays.
#[test]
fn suri_tls_data_an_ack_released_seen_at_the_receiver_is_no_timeout() {
    let found = findings("suri_tls-subjectaltname.pcap");
    assert_eq!(timeouts(&found, 4, "b_to_a"), [vec![94]]);
    assert!(timeouts(&found, 57, "b_to_a").is_empty(), "{found:#?}");
    assert!(
        !found
            .iter()
            .any(|f| f.kind == "fast_retransmit_impossible" && f.evidence.contains(&2766)),
        "{found:#?}"
    );
}

/// `ndpi_reddit` conn 21: each of the client's lone segments (frames 1001, 1059, 1763)
/// got a pure ACK, then the server's data, then the client's next segment 10 ms later:
/// that segment answered the server's data, not the ACK; no delayed ACK held the
/// client back.
#[test]
fn ndpi_reddit_data_that_answers_the_peers_data_was_not_waiting_for_an_ack() {
    let found = findings("ndpi_reddit.pcap");
    assert!(
        !found
            .iter()
            .any(|f| f.kind == "delayed_ack_stall" && f.connection == 21),
        "{found:#?}"
    );
}

/// `ndpi_teams` conn 29 (frame 1018, 88 ms after the original) and `ndpi_zoom` conn 13
/// (frame 411, 63 ms): resends sooner than any common stack's minimum RTO, with nothing
/// ACK-driven behind them, were told as plain retransmission timeouts; they now say
/// that the capture cannot tell them from tail loss probes. A timeout after 0.45 s
/// (`suri_tls-subjectaltname` conn 4 frame 94) says nothing of the kind.
#[test]
fn timeouts_sooner_than_any_common_minimum_rto_say_their_doubt() {
    for (name, conn, frame) in [("ndpi_teams.pcap", 29, 1018), ("ndpi_zoom.pcap", 13, 411)] {
        let found = findings(name);
        for kind in ["timeout_backoff", "fast_retransmit_impossible"] {
            let f = found
                .iter()
                .find(|f| f.kind == kind && f.connection == conn && f.evidence.contains(&frame))
                .unwrap_or_else(|| panic!("{name} {kind}: {found:#?}"));
            assert_eq!(f.details.get("low_confidence"), Some(&1.0), "{f:#?}");
            assert!(
                f.explanation.contains("tail loss probe"),
                "{}",
                f.explanation
            );
        }
    }
    // A 0.45 s wait, and one of 197 ms (libtrace_vlan frame 266: Linux's 200 ms RTO,
    // measured from the last packet), are the timer's.
    for (name, frame) in [
        ("suri_tls-subjectaltname.pcap", 94),
        ("libtrace_vlan.pcap", 266),
    ] {
        let found = findings(name);
        let real = found
            .iter()
            .find(|f| f.kind == "timeout_backoff" && f.evidence == [frame])
            .unwrap_or_else(|| panic!("{found:#?}"));
        assert!(!real.details.contains_key("low_confidence"), "{real:#?}");
        assert!(
            !real.explanation.contains("tail loss probe"),
            "{}",
            real.explanation
        );
    }
}

/// `suri_tls-subjectaltname` conn 14: three bursts of losses repaired without a timeout
/// were said to "defeat fast recovery: they caused 0 timeout episodes".
#[test]
fn suri_tls_bursts_repaired_without_a_timeout_are_not_said_to_defeat_fast_recovery() {
    let found = findings("suri_tls-subjectaltname.pcap");
    let burst = found
        .iter()
        .find(|f| f.kind == "burst_loss" && f.connection == 14)
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(
        !burst.explanation.contains("defeat"),
        "{}",
        burst.explanation
    );
    assert!(
        burst.explanation.contains("without a timeout"),
        "{}",
        burst.explanation
    );
}

/// `ndpi_ocs` (uplink only) and `ndpi_whatsapp` (86 connections, each seen one way): the
/// phone's resends were told as plain timeouts, though no ACK of either direction is in
/// the capture; they now say that whether the original arrived cannot be told. A
/// capture of both directions (`ndpi_zoom` conn 0, whose peer fell silent) says no such
/// thing.
#[test]
fn timeouts_in_a_capture_of_one_direction_say_the_acks_are_unseen() {
    for (name, frame) in [("ndpi_ocs.pcap", 52), ("ndpi_whatsapp.pcap", 88)] {
        let found = findings(name);
        let t = found
            .iter()
            .find(|f| f.kind == "timeout_backoff" && f.evidence == [frame])
            .unwrap_or_else(|| panic!("{name}: {found:#?}"));
        assert!(
            t.explanation
                .contains("No connection of the capture has packets both ways"),
            "{}",
            t.explanation
        );
        assert_eq!(t.details.get("low_confidence"), Some(&1.0));
    }
    let found = findings("ndpi_zoom.pcap");
    let t = found
        .iter()
        .find(|f| f.kind == "timeout_backoff" && f.connection == 0)
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(
        !t.explanation.contains("packets both ways"),
        "{}",
        t.explanation
    );
}

/// `ivre_ntlm-http` conns 5, 6, 11-13: two-segment requests, the second at the window's
/// edge, were "50 % window-limited", costing 0 s: a share of two segments says nothing.
#[test]
fn ivre_ntlm_two_segment_requests_are_not_receiver_limited() {
    let found = findings("ivre_ntlm-http.pcap");
    assert!(
        found.iter().all(|f| f.kind != "receiver_limited"),
        "{found:#?}"
    );
}

/// `zeek_reassembly` conn 0, captured beside the server: the client's resend (frame 39)
/// was "answered 0 ms after it went out, sooner than any round trip seen": beside the
/// receiver every ACK leaves at once, so that timing proves no spurious timeout.
#[test]
fn zeek_reassembly_an_ack_at_once_beside_the_receiver_proves_no_spurious_timeout() {
    let found = findings("zeek_reassembly.pcap");
    assert!(
        !found
            .iter()
            .any(|f| f.kind == "spurious_timeout" && f.direction == "a_to_b"),
        "{found:#?}"
    );
}

/// `suri_tls-subjectaltname` conn 4: before its 0.45 s timeout (frame 94) the server's
/// pure ACK (frame 92) carried sequence 12001, four segments past the last data
/// captured: they were in flight, lost before the capture. "Fewer than four segments in
/// flight (median 0.1)" was read from the captured data alone.
#[test]
fn suri_tls_a_pure_acks_sequence_number_shows_the_flight_the_capture_missed() {
    let found = findings("suri_tls-subjectaltname.pcap");
    let impossible = |dir: &str| {
        found.iter().any(|f| {
            f.kind == "fast_retransmit_impossible" && f.connection == 4 && f.direction == dir
        })
    };
    assert!(!impossible("b_to_a"), "{found:#?}");
    // The client's timeout of the same connection (frame 91, one segment in flight) stays.
    assert!(impossible("a_to_b"), "{found:#?}");
}
