//! Roaming between access points (`[network.roaming]`, issue 14 item 3): the layer-2
//! handoff of `scenarios/roam_l2.toml` and the Mobile IP handoff of
//! `scenarios/roam_mobileip.toml` told as their link logs tell them, their cost to TCP,
//! the checks of the keys, and the same bytes from the same seed.

use std::path::PathBuf;

use serde_json::Value;

mod common;

use common::{load, run_bundle};

/// Runs roam_l2 with `overrides` into a bundle named `tag`: its link log and summary.
fn walk(tag: &str, overrides: &[&str]) -> (Vec<Value>, Value, PathBuf) {
    walk_in("roam_l2.toml", tag, overrides)
}

/// Runs `scenario` with `overrides` into a bundle named `tag`.
fn walk_in(scenario: &str, tag: &str, overrides: &[&str]) -> (Vec<Value>, Value, PathBuf) {
    let b = run_bundle(scenario, overrides, &format!("roam-{tag}"));
    (b.link_log, b.summary, b.dir)
}

fn kind<'a>(log: &'a [Value], k: &str) -> Vec<&'a Value> {
    log.iter().filter(|e| e["kind"] == k).collect()
}

fn t_s(e: &Value) -> f64 {
    e["t_ns"].as_f64().unwrap() / 1e9
}

/// The walk from ap1 to ap2: associated with ap1 from the start; a handoff for signal
/// when ap2's smoothed beacons are 6 dB above ap1's (the node then 61 m down the
/// corridor by the distance law, a little farther for the smoothing); associated with
/// ap2 one handoff gap later, when ap1 drops what it still held for the node; TCP
/// goes on through ap2.
#[test]
fn a_walk_across_two_access_points_hands_off_once_for_signal() {
    let (log, summary, _) = walk("l2", &["network.captures=[]", "network.air_captures=[]"]);
    let assoc = kind(&log, "association");
    let handoffs = kind(&log, "handoff");
    assert_eq!(assoc.len(), 2, "{assoc:?}");
    assert_eq!(handoffs.len(), 1, "{handoffs:?}");
    let (start, handoff, joined) = (assoc[0], handoffs[0], assoc[1]);
    assert_eq!(
        (t_s(start), &start["node"], &start["peer"]),
        (0.0, &"mn".into(), &"ap1".into())
    );
    assert_eq!(handoff["from_peer"], "ap1");
    assert_eq!(handoff["peer"], "ap2");
    assert_eq!(handoff["reason"], "signal");
    // The node walks from 20 m at 2 m/s from 2 s: 61.3 m at 22.6 s.
    let at = 20.0 + 2.0 * (t_s(handoff) - 2.0);
    assert!((61.3..66.0).contains(&at), "handed off at {at:.1} m");
    assert_eq!(joined["peer"], "ap2");
    let gap = joined["t_ns"].as_i64().unwrap() - handoff["t_ns"].as_i64().unwrap();
    assert_eq!(gap, 50_000_000, "the handoff gap");
    let stale: Vec<_> = kind(&log, "packet_dropped")
        .into_iter()
        .filter(|e| e["reason"] == "not_associated")
        .collect();
    assert!(!stale.is_empty());
    assert!(stale
        .iter()
        .all(|e| e["node"] == "ap1" && e["t_ns"] == joined["t_ns"]));
    let mn = &summary["network"]["nodes"][4];
    assert_eq!((&mn["name"], &mn["handoffs"]), (&"mn".into(), &1.into()));
    assert_eq!(
        summary["network"]["drops"]["not_associated"].as_u64(),
        Some(stale.len() as u64)
    );
    let flow = &summary["flows"][0];
    assert!(
        flow["timeouts"].as_u64().unwrap() >= 1,
        "the burst costs TCP a timeout"
    );
    // 2 Mbit/s DSSS carries TCP at about 1.5 Mbit/s; the handoff costs a little.
    let goodput = flow["goodput_bps"].as_f64().unwrap();
    assert!((1.3e6..1.6e6).contains(&goodput), "{goodput}");
}

/// Without hysteresis the node hands off as soon as ap2 is heard stronger (smoothed):
/// nearer the midpoint than with 6 dB.
#[test]
fn no_hysteresis_hands_off_nearer_the_midpoint() {
    let (log, _, _) = walk(
        "l2-no-hysteresis",
        &[
            "network.captures=[]",
            "network.air_captures=[]",
            "network.roaming.hysteresis_db=0",
            "duration=\"20 s\"",
        ],
    );
    let handoffs = kind(&log, "handoff");
    assert!(!handoffs.is_empty());
    let at = 20.0 + 2.0 * (t_s(handoffs[0]) - 2.0);
    assert!((50.0..56.0).contains(&at), "handed off at {at:.1} m");
}

/// The air capture at the node holds the beacons it decoded: all 20 of ap1's in 2 s
/// (100 TU apart from 0), most of ap2's (from 51.2 ms; 80 m away, at 3 dB of SNR).
#[test]
fn the_air_capture_holds_each_access_points_beacons() {
    let (_, _, out) = walk("l2-air", &["duration=\"2 s\"", "network.captures=[]"]);
    let bytes = std::fs::read(out.join("air-mn.pcap")).unwrap();
    // ap1's and ap2's MAC addresses as beacon transmitters: subtype 0x80, then
    // flags, duration, broadcast DA, SA = the access point.
    let beacon_from = |last: u8| {
        let mut needle = vec![0x80, 0, 0, 0];
        needle.extend([0xff; 6]);
        needle.extend([0x02, 0, 0, 0, 0, last]);
        bytes.windows(needle.len()).filter(|w| *w == needle).count()
    };
    assert_eq!(beacon_from(3), 20, "ap1");
    assert!(
        (15..20).contains(&beacon_from(4)),
        "ap2: {}",
        beacon_from(4)
    );
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let set = ["duration=\"24 s\""];
    let (_, _, a) = walk("l2-same-a", &set);
    let (_, _, b) = walk("l2-same-b", &set);
    for file in [
        "link.jsonl",
        "summary.json",
        "mn.pcap",
        "air-mn.pcap",
        "tcpstate.jsonl",
    ] {
        let (x, y) = (
            std::fs::read(a.join(file)).unwrap(),
            std::fs::read(b.join(file)).unwrap(),
        );
        assert!(x == y, "{file} differs");
    }
}

#[test]
fn bad_roaming_keys_are_refused_naming_the_key() {
    for (set, want) in [
        (
            "network.roaming.beacon_interval=\"0 s\"",
            "network.roaming.beacon_interval: must be between 1 ms and 10 s",
        ),
        (
            "network.roaming.hysteresis_db=-1",
            "network.roaming.hysteresis_db: must be between 0 and 100 dB",
        ),
        (
            "network.roaming.beacon_loss=0",
            "network.roaming.beacon_loss: must be between 1 and 1000",
        ),
        (
            "network.roaming.access_points=[\"ap1\", \"server\"]",
            "network.roaming.access_points[2]: \"server\" has no radio",
        ),
        (
            "network.roaming.stations=[\"ap1\"]",
            "network.roaming.stations: \"ap1\" is both an access point and a station",
        ),
        (
            "network.roaming.stations=[\"nobody\"]",
            "network.roaming.stations[1]: no node is named \"nobody\"",
        ),
        ("network.roaming.gap=1", "unknown field `gap`"),
    ] {
        let err = load("roam_l2.toml", &[set])
            .err()
            .unwrap_or_else(|| panic!("{set} accepted"));
        assert!(err.contains(want), "{set}: {err}");
    }
}

/// The Mobile IP walk, seed 1: the layer-2 handoff to ap2 (a foreign agent); ap2's
/// next agent advertisement (1 s apart) starts a registration through it, answered
/// by the home agent ap1 within milliseconds; from then on the home agent tunnels the
/// node's packets to ap2 (IP in IP at the router) and TCP goes on.
#[test]
fn a_walk_into_a_foreign_subnet_registers_at_the_next_advertisement() {
    let (log, summary, out) = walk_in(
        "roam_mobileip.toml",
        "mip",
        &["network.captures=[\"router\"]", "network.air_captures=[]"],
    );
    let handoff = kind(&log, "handoff")[0];
    assert_eq!(
        (&handoff["from_peer"], &handoff["peer"]),
        (&"ap1".into(), &"ap2".into())
    );
    let requests = kind(&log, "registration_request");
    let replies = kind(&log, "registration_reply");
    assert_eq!(
        (requests.len(), replies.len()),
        (1, 1),
        "{requests:?} {replies:?}"
    );
    let (req, rep) = (requests[0], replies[0]);
    for e in [req, rep] {
        assert_eq!(e["node"], "mn");
        assert_eq!(
            (&e["peer"], &e["care_of"], &e["home_agent"]),
            (&"ap2".into(), &"ap2".into(), &"ap1".into())
        );
        assert_eq!(e["registration"], 1);
    }
    assert_eq!(
        (&req["attempt"], &rep["reason"]),
        (&1.into(), &"accepted".into())
    );
    let after = t_s(req) - t_s(handoff);
    assert!(
        (0.05..1.05).contains(&after),
        "registered {after:.3} s after the handoff"
    );
    assert!(
        t_s(rep) - t_s(req) < 0.02,
        "one round trip through ap2 to ap1"
    );
    // The tunnel: IP-in-IP packets (protocol 4) from ap1 to ap2 at the router.
    let pcap = std::fs::read(out.join("router.pcap")).unwrap();
    let tunnelled = pcap
        .windows(12)
        .filter(|w| w[0] == 0x45 && w[9] == 4 && w[..2] != [0, 0])
        .count();
    assert!(tunnelled > 100, "{tunnelled} tunnelled packets");
    let flow = &summary["flows"][0];
    assert!(flow["bytes_delivered"].as_u64().unwrap() > 5_000_000);
}

/// With advertisements every 100 ms the registration follows the handoff within one
/// interval (and a little); with solicitation, at once.
#[test]
fn faster_advertisements_or_a_solicitation_register_sooner() {
    for (set, within) in [
        ("network.mobile_ip.advertisement_interval=\"100 ms\"", 0.2),
        ("network.mobile_ip.solicit=true", 0.08),
    ] {
        let (log, _, _) = walk_in(
            "roam_mobileip.toml",
            "mip-fast",
            &[
                "network.captures=[]",
                "network.air_captures=[]",
                "duration=\"26 s\"",
                set,
            ],
        );
        let handoff = kind(&log, "handoff")[0];
        let reply = kind(&log, "registration_reply")[0];
        let after = t_s(reply) - t_s(handoff);
        assert!(
            after < within,
            "{set}: registered {after:.3} s after the handoff"
        );
    }
}

#[test]
fn bad_mobile_ip_keys_are_refused_naming_the_key() {
    for (set, want) in [
        (
            "network.mobile_ip.home_agent=\"router\"",
            "network.mobile_ip.home_agent: \"router\" is not an access point of [network.roaming]",
        ),
        (
            "network.mobile_ip.foreign_agents=[\"ap2\", \"ap2\"]",
            "network.mobile_ip.foreign_agents[2]: \"ap2\" is named twice",
        ),
        (
            "network.mobile_ip.advertisement_interval=\"0 s\"",
            "network.mobile_ip.advertisement_interval: must be between 1 ms and 60 s",
        ),
        (
            "network.mobile_ip.lifetime=\"70000 s\"",
            "network.mobile_ip.lifetime: must be between 1 s and 65534 s",
        ),
    ] {
        let err = load("roam_mobileip.toml", &[set])
            .err()
            .unwrap_or_else(|| panic!("{set} accepted"));
        assert!(err.contains(want), "{set}: {err}");
    }
}
