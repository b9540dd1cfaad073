//! The opt-in radio keys of a `[network]` (`[network.signal]`, `[[network.wall]]`,
//! `rate_control`): their checks, Bachmann's rooms, and rate changes in the link log.

use airtrace_link::rng::Streams;
use airtrace_sim::Scenario;

mod common;

use common::{load, run_bundle, scenarios};

/// The mobile node of `scenarios/bachmann_room.toml` placed in each room of Table 1
/// receives the access point's frames at the study's SIR (noise and interference
/// floor, no shadowing): 37, 33, 18 and 4 dB.
#[test]
fn bachmann_rooms_have_the_studys_signal_to_interference_ratios() {
    for (room, x, y, sir) in [
        (23, 0.0, 5.75, 37.0),
        (14, 5.75, 0.0, 33.0),
        (15, 8.42, 0.0, 18.0),
        (16, 11.5, 0.0, 4.0),
    ] {
        let set_x = format!("network.node[3].x={x}");
        let set_y = format!("network.node[3].y={y}");
        let (scenario, _) = load("bachmann_room.toml", &[&set_x, &set_y]).unwrap();
        let spec = scenario.network.as_ref().unwrap();
        let (net, nodes) = airtrace_sim::build::network(spec, &Streams::new(1), 0).unwrap();
        let id = |name: &str| nodes.iter().position(|n| n.name == name).unwrap() as u16;
        let snr = net.wireless().mean_snr_db(id("ap"), id("mn"));
        assert!(
            (snr - sir).abs() < 0.3,
            "room {room}: {snr:.2} dB, not {sir}"
        );
    }
}

/// Two stations and a wall; `extra` adds keys to `[network]`, `signal` is the
/// `[network.signal]` table's body (None: no table).
fn cell(extra: &str, signal: Option<&str>) -> Result<Scenario, String> {
    let signal = signal.map_or(String::new(), |b| format!("[network.signal]\n{b}\n"));
    let text = format!(
        r#"
duration = "1 s"
[network]
mac = "dsss"
{extra}
{signal}
[[network.wall]]
from = [5, -5]
to = [5, 5]
loss_db = 10
[[network.node]]
name = "a"
x = 0
[[network.node]]
name = "b"
x = 10
[[flow]]
app = "bulk"
bytes = "1 kB"
from = "a"
to = "b"
"#
    );
    Scenario::parse(&scenarios().join("test.toml"), &text).map_err(|e| e.to_string())
}

#[test]
fn radio_keys_are_checked() {
    if let Err(e) = cell("rate_control = \"aarf\"", Some("shadowing_db = 2")) {
        panic!("{e}");
    }
    for (extra, signal, want) in [
        ("", None, "walls need [network.signal]"),
        (
            "",
            Some("shadowing_db = -1"),
            "network.signal.shadowing_db: must be between 0 and 30",
        ),
        (
            "",
            Some("noise_dbm = 10"),
            "network.signal.noise_dbm: must be between",
        ),
        ("", Some("frame_errors = 1"), "invalid type"),
        ("rate_control = \"samplerate\"", Some(""), "unknown variant"),
    ] {
        let err = cell(extra, signal)
            .err()
            .unwrap_or_else(|| panic!("{extra} {signal:?} accepted"));
        assert!(err.contains(want), "{extra} {signal:?}: {err}");
    }
    let err = load(
        "bachmann_walk.toml",
        &["network.mac=ns2", "network.rate=\"2 Mbit/s\""],
    )
    .err()
    .unwrap();
    assert!(
        err.contains("rate adaptation needs mac = \"dsss\""),
        "{err}"
    );
    let err = load("bachmann_room.toml", &["network.wall[1].loss_db=-3"])
        .err()
        .unwrap();
    assert!(
        err.contains("network.wall[1].loss_db: must be between 0 and 200 dB"),
        "{err}"
    );
}

/// The walk's first 45 s with `rate_control`: the `rate_changed` records of
/// link.jsonl, and the access point's `rate_changes` in summary.json.
fn walk(rate_control: &str) -> (Vec<serde_json::Value>, u64) {
    let set = format!("network.rate_control={rate_control}");
    let bundle = run_bundle(
        "bachmann_walk.toml",
        &["duration=\"45 s\"", "network.captures=[]", &set],
        &format!("signal-walk-{rate_control}"),
    );
    let changes: Vec<serde_json::Value> = bundle
        .link_log
        .into_iter()
        .filter(|r| r["kind"] == "rate_changed")
        .collect();
    let summary = bundle.summary;
    let ap = summary["network"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "ap")
        .unwrap()
        .clone();
    (changes, ap["rate_changes"].as_u64().unwrap_or(0))
}

fn lowest_rate(changes: &[serde_json::Value]) -> u64 {
    changes
        .iter()
        .map(|c| c["rate_bps"].as_u64().unwrap())
        .min()
        .unwrap()
}

/// As the mobile node leaves, the access point's ARF steps down from 11 Mbit/s, and
/// each step is a `rate_changed` record naming the node and its peer; summary.json
/// counts them.
#[test]
fn rate_changes_are_in_the_link_log_and_the_summary() {
    let (changes, counted) = walk("arf");
    assert!(!changes.is_empty());
    let first = &changes[0];
    assert_eq!(
        (
            &first["node"],
            &first["peer"],
            &first["from_rate_bps"],
            &first["rate_bps"]
        ),
        (
            &serde_json::json!("ap"),
            &serde_json::json!("mn"),
            &serde_json::json!(11_000_000),
            &serde_json::json!(5_500_000)
        )
    );
    assert!(
        lowest_rate(&changes) <= 2_000_000,
        "the walk reaches 2 Mbit/s by 45 s"
    );
    assert_eq!(counted, changes.len() as u64);
}

/// The Minstrel-like sampler on the same walk: it too ends up at 2 Mbit/s or lower, and
/// changes rate less often than the MIMD prober, which chases every outcome.
#[test]
fn minstrel_follows_the_walk_with_fewer_changes_than_mimd() {
    let (minstrel, counted) = walk("minstrel");
    assert_eq!(counted, minstrel.len() as u64);
    assert!(lowest_rate(&minstrel) <= 2_000_000);
    let (mimd, _) = walk("mimd");
    assert!(
        minstrel.len() * 2 < mimd.len(),
        "{} against {}",
        minstrel.len(),
        mimd.len()
    );
}
