//! Findings against known truth: the bundled real capture (whose fade and stall are
//! documented in testdata/pcaps/README.md) and simulated runs where the cause is set
//! by the scenario.

mod common;

use std::path::Path;

use airtrace_diagnose::diagnose_file;
use common::{diagnose_simulated, diagnose_simulated_at, of, repo};

#[test]
fn the_sample_captures_fade_and_stall() {
    let (_, f) = diagnose_file(&repo().join("testdata/pcaps/sample-sender.pcapng")).unwrap();
    // The fade (6.88-7.48 s) cost one RTO and its backed-off repeat; the stall
    // (13.52-16.02 s) three doubling RTOs.
    let backoff = of(&f, "timeout_backoff");
    let episodes: Vec<(Vec<u64>, f64)> = backoff
        .iter()
        .map(|x| (x.evidence.clone(), x.details["max_backoff"]))
        .collect();
    assert_eq!(
        episodes,
        [(vec![1140, 1141], 2.0), (vec![2163, 2164, 2165], 3.0)]
    );
    // The sender's silence: from its last segment at 13.74 s to the third RTO at 16.005 s.
    assert!(
        (2.2..2.3).contains(&backoff[1].cost_s),
        "{}",
        backoff[1].cost_s
    );
    assert!(backoff[1]
        .explanation
        .contains("3 retransmission timeouts in a row"));
    // Both directions went silent while data waited, twice.
    let outages = of(&f, "link_outage");
    assert_eq!(outages.len(), 2);
    assert!(
        (6.8..7.0).contains(&outages[0].start_s),
        "{}",
        outages[0].start_s
    );
    assert!(
        (13.5..13.8).contains(&outages[1].start_s),
        "{}",
        outages[1].start_s
    );
    // Four timer retransmissions were not needed (testdata/pcaps/README.md): the fade's
    // repeat (1141; the fade had eaten the ACK) and the stall's three (2163-2165; the
    // stall held frames rather than dropping them). The last one's ACK came 20 ms after
    // it on a 100 ms path; the receiver's D-SACKs (1142, 2189, 2190) show the others.
    let spurious = of(&f, "spurious_timeout");
    assert_eq!(spurious.len(), 1);
    assert_eq!(spurious[0].details["spurious_timeouts"], 4.0);
    assert_eq!(
        spurious[0].evidence,
        [1141, 1142, 2163, 2164, 2165, 2166, 2189, 2190]
    );
    assert!(
        spurious[0].explanation.contains("D-SACK"),
        "{}",
        spurious[0].explanation
    );
    // The base-station loss was random (a BPF random drop).
    assert_eq!(of(&f, "random_loss").len(), 1);
    assert!(of(&f, "burst_loss").is_empty());
}

#[test]
fn bursts_are_told_from_random_loss() {
    let bursty = diagnose_simulated("rais_burst_fixed", None);
    let burst = of(&bursty, "burst_loss");
    assert_eq!(burst.len(), 1);
    assert!(burst[0].details["mean_burst_segments"] >= 3.0);
    assert!(
        burst[0].details["explains_timeout_s"] > 50.0,
        "the bursts' timeouts cost most of the transfer"
    );
    assert!(of(&bursty, "random_loss").is_empty());
    assert!(!of(&bursty, "timeout_backoff").is_empty());

    let random = diagnose_simulated(
        "bernoulli",
        Some(
            r#"
duration = "120 s"
captures = ["sender"]
[link]
rate = "20 Mbit/s"
delay = "20 ms"
queue_packets = 2000
[link.forward]
loss = { model = "bernoulli", p = 0.01 }
[[flow]]
app = "bulk"
bytes = "20 MB"
[flow.tcp]
variant = "sack"
rcvbuf = "1 MiB"
sndbuf = "1 MiB"
"#,
        ),
    );
    let loss = of(&random, "random_loss");
    assert_eq!(loss.len(), 1, "{random:#?}");
    assert!(
        (0.005..0.015).contains(&loss[0].details["loss_rate"]),
        "{:?}",
        loss[0].details
    );
    assert!(loss[0].details["mean_burst_segments"] < 1.5);
    assert!(of(&random, "burst_loss").is_empty());
}

#[test]
fn an_overbuffered_link_is_excessive_queueing() {
    let f = diagnose_simulated("overbuffered", None);
    let q = of(&f, "excessive_queueing");
    assert_eq!(q.len(), 1);
    assert!(q[0].details["rtt_median_s"] > 5.0, "{:?}", q[0].details);
    assert!(q[0].details["standing_queue_packets"] > 30.0);
    assert!(q[0].explanation.contains("initial RTO"));
    let codel = diagnose_simulated("overbuffered_codel_ecn", None);
    let small = of(&codel, "excessive_queueing")
        .first()
        .map_or(0.0, |x| x.details["standing_queue_packets"]);
    assert!(
        small < 10.0,
        "CoDel keeps the standing queue short ({small:.0} packets)"
    );
}

#[test]
fn a_tiny_window_makes_fast_retransmit_impossible() {
    let text = |window: &str| {
        format!(
            r#"
duration = "300 s"
captures = ["sender"]
[link]
rate = "2 Mbit/s"
delay = "50 ms"
[link.forward]
loss = {{ model = "bernoulli", p = 0.02 }}
[[flow]]
app = "bulk"
bytes = "2 MB"
[flow.tcp]
variant = "newreno"
rcvbuf = "{window}"
"#
        )
    };
    let small = diagnose_simulated("tiny-window", Some(&text("4000")));
    let impossible = of(&small, "fast_retransmit_impossible");
    assert_eq!(impossible.len(), 1);
    assert!(impossible[0].details["median_segments_in_flight"] < 4.0);
    assert!(impossible[0].details["explains_timeout_s"] > 0.0);
    let large = diagnose_simulated("large-window", Some(&text("256 KiB")));
    let timeouts_large = of(&large, "fast_retransmit_impossible")
        .first()
        .map_or(0.0, |x| x.details["timeouts"]);
    assert!(timeouts_large < impossible[0].details["timeouts"]);
}

#[test]
fn window_and_application_limits() {
    let rwnd = diagnose_simulated(
        "small-rwnd",
        Some(
            r#"
captures = ["sender"]
[link]
rate = "10 Mbit/s"
delay = "50 ms"
[[flow]]
app = "bulk"
bytes = "3 MB"
[flow.tcp]
rcvbuf = "16 KiB"
"#,
        ),
    );
    let limited = of(&rwnd, "receiver_limited");
    assert_eq!(limited.len(), 1, "{rwnd:#?}");
    assert!(
        limited[0].details["window_limited_share"] > 0.5,
        "{:?}",
        limited[0].details
    );
    // The bottleneck from the ACKs' spacing: 10 Mbit/s carries 9.65 Mbit/s of payload
    // in 1500-byte packets; 16 KiB per 100 ms round trip uses an eighth of it.
    let capacity = limited[0].details["capacity_estimate_bps"];
    assert!((9.3e6..10.0e6).contains(&capacity), "{capacity}");
    let used = limited[0].details["capacity_used"];
    assert!((0.1..0.16).contains(&used), "{used}");

    let app = diagnose_simulated(
        "onoff",
        Some(
            r#"
duration = "20 s"
captures = ["sender"]
[link]
rate = "10 Mbit/s"
delay = "10 ms"
[[flow]]
app = "onoff"
rate = "1 Mbit/s"
on = "1 s"
off = "2 s"
stop = "15 s"
"#,
        ),
    );
    let idle = of(&app, "sender_limited");
    assert_eq!(idle.len(), 1, "{app:#?}");
    assert!(idle[0].details["idle_s"] > 6.0, "{:?}", idle[0].details);
}

#[test]
fn delay_spikes_past_the_rto_are_spurious_timeouts() {
    // 400 ms fades on a trace-driven link hold packets (nothing is lost) while the
    // Linux-like sender's RTO is about 200 ms.
    let f = diagnose_simulated("delivery_trace", None);
    assert!(!of(&f, "spurious_timeout").is_empty(), "{f:#?}");
}

#[test]
fn fast_retransmit_after_a_timeout_is_suppressed_by_design() {
    let f = diagnose_simulated("loss_gilbert_elliott", None);
    let s = of(&f, "fast_retransmit_suppressed");
    assert_eq!(s.len(), 1);
    assert!(s[0].explanation.contains("by design"));
    assert_eq!(s[0].cost_s, 0.0);
}

#[test]
fn a_one_segment_window_waits_for_delayed_acks() {
    let f = diagnose_simulated(
        "delack",
        Some(
            r#"
captures = ["sender"]
[link]
rate = "10 Mbit/s"
delay = "20 ms"
[[flow]]
app = "bulk"
bytes = "200 kB"
[flow.tcp]
profile = "bsd"
mss = 1460
sndbuf = "1460"
"#,
        ),
    );
    let stall = of(&f, "delayed_ack_stall");
    assert_eq!(stall.len(), 1, "{f:#?}");
    assert!(stall[0].details["stalls"] > 100.0);
    // BSD delays its ACK 200 ms; the path's RTT is 40 ms.
    assert!(
        (0.2..0.26).contains(&stall[0].details["typical_ack_delay_s"]),
        "{:?}",
        stall[0].details
    );
    assert!(
        stall[0].throughput_share > 0.7,
        "the stalls are most of the transfer"
    );
    let normal = diagnose_simulated("bernoulli-free", Some("captures = [\"sender\"]\n[link]\nrate = \"10 Mbit/s\"\ndelay = \"20 ms\"\n[[flow]]\napp = \"bulk\"\nbytes = \"2 MB\"\n"));
    assert!(of(&normal, "delayed_ack_stall").is_empty(), "{normal:#?}");
}

#[test]
fn acks_released_in_bunches_are_ack_compression() {
    // The reverse direction delivers its ACKs ten at a time every 100 ms.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bunched-acks");
    std::fs::create_dir_all(&dir).unwrap();
    let trace: String = (0..100)
        .flat_map(|k| std::iter::repeat_n(format!("{}\n", k * 100), 10))
        .collect();
    std::fs::write(dir.join("bunch.trace"), trace).unwrap();
    let scenario = format!(
        "captures = [\"sender\"]\n[link]\ndelay = \"10 ms\"\n[link.forward]\nrate = \"5 Mbit/s\"\n[link.reverse]\ntrace = \"{}\"\n[[flow]]\napp = \"bulk\"\nbytes = \"5 MB\"\n",
        dir.join("bunch.trace").display()
    );
    let f = diagnose_simulated("bunched-acks", Some(&scenario));
    let c = of(&f, "ack_compression");
    assert_eq!(c.len(), 1, "{f:#?}");
    assert!(c[0].details["share"] > 0.5);
    let smooth = diagnose_simulated("rais_clean", None);
    assert!(of(&smooth, "ack_compression").is_empty());
}

#[test]
fn data_and_acks_contending_for_one_channel_collide() {
    // A loss-free shared channel: every MAC retry follows a collision.
    let f = diagnose_simulated_at("wlan_collisions", None, "air");
    let c = of(&f, "data_ack_collisions");
    assert_eq!(c.len(), 1, "{f:#?}");
    assert_eq!(c[0].direction, "a_to_b");
    assert!(c[0].details["collisions"] >= 50.0, "{:?}", c[0].details);
    assert!(
        c[0].details["collision_retry_share"] > 0.99,
        "{:?}",
        c[0].details
    );
    assert!(c[0].cost_s > 0.0 && c[0].evidence.len() >= 2);
    assert!(
        of(&f, "bad_fcs").is_empty(),
        "collided frames are not channel corruption: {f:#?}"
    );
    // The sender's own capture shows none of it.
    let at_sender = diagnose_simulated("wlan_collisions", None);
    assert!(of(&at_sender, "data_ack_collisions").is_empty());
}

#[test]
fn frames_corrupted_by_the_channel_are_bad_fcs_apart_from_collisions() {
    let text = r#"
duration = "120 s"
captures = ["air"]
[link]
rate = "11 Mbit/s"
delay = "1 us"
arq = { kind = "stop_and_wait", retry_limit = 7, medium = "shared" }
[link.forward]
loss = { model = "bernoulli", p = 0.1 }
[[flow]]
app = "bulk"
bytes = "2 MB"
"#;
    // 10 % of the data frames are corrupted; the ACKs are not. Collisions happen too,
    // and are told apart.
    let f = diagnose_simulated_at("wlan_corrupted", Some(text), "air");
    let bad = of(&f, "bad_fcs");
    assert_eq!(bad.len(), 1, "{f:#?}");
    assert_eq!(bad[0].direction, "a_to_b");
    let share = bad[0].details["bad_fcs_share"];
    assert!(
        (0.07..0.13).contains(&share),
        "about 10 % of the data frames: {share}"
    );
}

#[test]
fn auto_rate_fallback_probing_a_rate_the_channel_cannot_carry_thrashes() {
    let f = diagnose_simulated_at("wlan_rate_thrash", None, "air");
    let thrash = of(&f, "rate_adaptation_thrash");
    let data: Vec<_> = thrash.iter().filter(|t| t.direction == "a_to_b").collect();
    assert_eq!(data.len(), 1, "{f:#?}");
    let d = &data[0].details;
    assert!(d["step_ups"] >= 20.0, "{d:?}");
    // 11 Mbit/s loses 80 % of its frames: most probes fail.
    assert!(d["failed_step_ups"] >= 0.6 * d["step_ups"], "{d:?}");
    assert!(data[0].cost_s > 0.0);
    assert!(
        data[0].explanation.contains("1, 2, 5.5, 11 Mbit/s")
            || data[0].explanation.contains("5.5, 11 Mbit/s")
    );
    // A link without rate adaptation does not thrash.
    let steady = diagnose_simulated_at("wlan_collisions", None, "air");
    assert!(
        of(&steady, "rate_adaptation_thrash").is_empty(),
        "{steady:#?}"
    );
}
