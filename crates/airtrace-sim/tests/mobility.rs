//! Networks whose nodes move (`[network.mobility]`): the scenario's rules, a receiver
//! walking out of range, and the mobility log.

use std::path::{Path, PathBuf};

use airtrace_pcap::CaptureReader;
use airtrace_sim::bundle::EPOCH_NS;
use airtrace_sim::{run, Options, Override, Scenario};

const S: i64 = 1_000_000_000;

/// testdata/mobility, where the movement files are: scenarios parsed "from" there find
/// them by their bare names.
fn movement_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/mobility")
}

fn parse(text: &str, overrides: &[&str]) -> Result<Scenario, String> {
    let overrides: Vec<Override> = overrides
        .iter()
        .map(|o| Override::parse(o).unwrap())
        .collect();
    Scenario::parse_with(&movement_dir().join("test.toml"), text, &overrides)
        .map_err(|e| e.to_string())
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("mobility")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    dir
}

fn simulate(text: &str, overrides: &[&str], seed: Option<u64>, out: &Path) {
    let scenario = parse(text, overrides).unwrap_or_else(|e| panic!("{e}"));
    run(
        &scenario,
        text,
        Options {
            out: Some(out),
            seed,
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Two nodes 100 m apart, TCP from n0 to n1, n1's packets captured; `mobility` is the
/// `[network.mobility]` table's body, or "" for none.
fn two_nodes(mobility: &str) -> String {
    let table = if mobility.is_empty() {
        String::new()
    } else {
        format!("[network.mobility]\n{mobility}\n")
    };
    format!(
        r#"
seed = 3
duration = "25 s"
tcp_state_log = false

[network]
arp = "prefilled"
captures = ["n1"]
{table}
[[network.node]]
name = "n0"
x = 0

[[network.node]]
name = "n1"
x = 100

[[flow]]
from = "n0"
to = "n1"
app = "bulk"
bytes = "100 MB"
"#
    )
}

/// Random waypoint over 4 nodes in 600 m × 300 m; `extra` goes into the mobility table.
fn waypoints(extra: &str) -> String {
    format!(
        r#"
seed = 1
duration = "20 s"
tcp_state_log = false

[network]
arp = "prefilled"
random = {{ nodes = 4, width_m = 600, height_m = 300 }}

[network.mobility]
model = "random_waypoint"
speed_mps = 10
{extra}

[[flow]]
from = "n0"
to = "n1"
app = "bulk"
bytes = "100 MB"
"#
    )
}

/// Times (s from the start) of the packets in a node's capture.
fn capture_times(pcap: &Path) -> Vec<f64> {
    let mut reader = CaptureReader::open(pcap).unwrap();
    let mut times = Vec::new();
    while let Some(record) = reader.next_record() {
        times.push((record.unwrap().ts_ns - EPOCH_NS) as f64 / S as f64);
    }
    times
}

/// testdata/mobility/walk-away.scen: n1 walks away from n0 at 10 m/s and is out of the
/// radio's 250 m at 15 s. TCP gets through until then and not after; standing still,
/// n1 keeps receiving to the end.
#[test]
fn a_receiver_walking_out_of_range_stops_receiving_at_15_s() {
    let out = scratch("walk-away");
    simulate(&two_nodes(r#"file = "walk-away.scen""#), &[], None, &out);
    let times = capture_times(&out.join("n1.pcap"));
    let last = *times.last().unwrap();
    assert!(times.len() > 1000, "{} packets", times.len());
    // The last data frame may start just before 15 s; its delayed ACK goes 40 ms on.
    assert!(
        (14.9..=15.05).contains(&last),
        "last packet at n1 at {last} s"
    );

    let still = scratch("standing");
    simulate(&two_nodes(""), &[], None, &still);
    let last = *capture_times(&still.join("n1.pcap")).last().unwrap();
    assert!(last > 24.9, "standing still, the last packet at {last} s");
    assert!(!still.join("mobility.jsonl").exists());
}

#[test]
fn the_mobility_log_has_a_line_per_leg_and_meta_json_lists_it() {
    let out = scratch("walk-away-log");
    simulate(&two_nodes(r#"file = "walk-away.scen""#), &[], None, &out);
    // A bundle with a mobility log is a bundle: a second run replaces it.
    simulate(&two_nodes(r#"file = "walk-away.scen""#), &[], None, &out);
    let log = std::fs::read_to_string(out.join("mobility.jsonl")).unwrap();
    assert_eq!(
        log,
        concat!(
            r#"{"t_ns":0,"node":"n1","x":100.0,"y":0.0,"speed_mps":10.0,"towards_x":1000.0,"towards_y":0.0,"end_ns":90000000000}"#,
            "\n"
        )
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["files"]["mobility_log"], "mobility.jsonl");
    assert_eq!(meta["mobility"]["model"], "ns2_movement_file");
    assert_eq!(
        meta["mobility"]["file"], "walk-away.scen",
        "its name, not its path"
    );
}

/// Same scenario and seed, same bytes; the pattern, not the seed, fixes the movement;
/// meta.json's places are where the nodes start.
#[test]
fn random_waypoint_runs_are_repeatable_and_the_pattern_is_apart_from_the_seed() {
    let text = waypoints("pattern = 12");
    let (a, b, c) = (scratch("rwp-a"), scratch("rwp-b"), scratch("rwp-c"));
    simulate(&text, &[], None, &a);
    simulate(&text, &[], None, &b);
    simulate(&text, &[], Some(99), &c);
    let files = |dir: &Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(files(&a), files(&b));
    for name in files(&a) {
        let read = |d: &Path| std::fs::read(d.join(&name)).unwrap();
        assert!(read(&a) == read(&b), "{name} differs between two runs");
    }
    let log = |d: &Path| std::fs::read_to_string(d.join("mobility.jsonl")).unwrap();
    assert_eq!(
        log(&a),
        log(&c),
        "another seed, the same pattern: the same movement"
    );

    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["mobility"]["pattern"], 12);
    let lines: Vec<serde_json::Value> = log(&a)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for node in meta["nodes"].as_array().unwrap() {
        let first = lines.iter().find(|l| l["node"] == node["name"]).unwrap();
        assert_eq!(first["t_ns"], 0, "no pause: the first trip at once");
        assert_eq!((&first["x"], &first["y"]), (&node["x"], &node["y"]));
    }

    // Without a pattern, the seed is the pattern.
    let (d, e) = (scratch("rwp-d"), scratch("rwp-e"));
    simulate(&waypoints(""), &[], Some(12), &d);
    simulate(&waypoints(""), &[], Some(13), &e);
    assert_eq!(log(&d), log(&a));
    assert_ne!(log(&d), log(&e));
}

/// `--set network.mobility.speed_mps` changes the speed, not the places: each node goes
/// to the same waypoints in the same order, more of them in the same time.
#[test]
fn a_faster_run_of_a_pattern_visits_the_same_waypoints() {
    let (slow, fast) = (scratch("rwp-slow"), scratch("rwp-fast"));
    let text = waypoints("pattern = 5");
    simulate(&text, &["network.mobility.speed_mps=2"], None, &slow);
    simulate(&text, &["network.mobility.speed_mps=30"], None, &fast);
    let towards = |dir: &Path, node: &str| -> Vec<(f64, f64)> {
        std::fs::read_to_string(dir.join("mobility.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|l| l["node"] == node)
            .map(|l| {
                (
                    l["towards_x"].as_f64().unwrap(),
                    l["towards_y"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    for node in ["n0", "n1", "n2", "n3"] {
        let (s, f) = (towards(&slow, node), towards(&fast, node));
        assert!(!s.is_empty() && f.len() > s.len(), "{node}: {s:?} {f:?}");
        assert_eq!(s, f[..s.len()], "{node}");
    }
}

#[test]
fn mobility_rules_point_at_their_line() {
    let rwp = |body: &str| parse(&waypoints("").replace("speed_mps = 10\n", body), &[]);
    let err = rwp("speed_mps = 0\n").unwrap_err();
    assert!(
        err.contains("test.toml:12:")
            && err.contains("network.mobility.speed_mps: must be above 0"),
        "{err}"
    );
    let err = rwp("").unwrap_err();
    assert!(
        err.contains("test.toml:11:") && err.contains("needs speed_mps"),
        "{err}"
    );
    let err = rwp("speed_mps = 10\npause_s = -1\n").unwrap_err();
    assert!(
        err.contains("test.toml:13:") && err.contains("pause_s: must be 0"),
        "{err}"
    );
    let err = rwp("speed_mps = 10\nfile = \"walk-away.scen\"\n").unwrap_err();
    assert!(
        err.contains("test.toml:10:") && err.contains("one of them"),
        "{err}"
    );

    let err = parse(
        &two_nodes("model = \"random_waypoint\"\nspeed_mps = 5"),
        &[],
    )
    .unwrap_err();
    assert!(
        err.contains("network.mobility.model: random_waypoint moves the nodes in the rectangle"),
        "{err}"
    );
    let err = parse(&two_nodes("file = \"walk-away.scen\"\npattern = 2"), &[]).unwrap_err();
    assert!(
        err.contains(
            "network.mobility.pattern: speed_mps, pause_s and pattern are random_waypoint's"
        ),
        "{err}"
    );
    let err = parse(&two_nodes("model = \"brownian\""), &[]).unwrap_err();
    assert!(err.contains("unknown variant `brownian`"), "{err}");

    // An override is checked as the file is, and named when it breaks a rule.
    let ok = parse(&waypoints(""), &["network.mobility.speed_mps=20"]).unwrap();
    let speed = ok.network.unwrap().mobility.unwrap().speed_mps;
    assert_eq!(speed, Some(20.0));
    let err = parse(&waypoints(""), &["network.mobility.speed_mps=2000"]).unwrap_err();
    assert!(
        err.contains("--set network.mobility.speed_mps=2000: network.mobility.speed_mps: must be above 0 and at most 1000 m/s"),
        "{err}"
    );
}

/// A movement file's own errors surface when the run starts: its line, or a node count
/// that does not match.
#[test]
fn movement_file_errors_name_the_file() {
    let start = |mobility: &str| {
        let text = two_nodes(mobility);
        let scenario = parse(&text, &[]).unwrap();
        run(&scenario, &text, Options::default())
            .unwrap_err()
            .to_string()
    };
    let err = start(r#"file = "setdest-3.scen""#);
    assert!(
        err.contains("setdest-3.scen: moves 3 nodes ($node_(0) … $node_(2)), the network has 2"),
        "{err}"
    );
    let err = start(r#"file = "README.md""#);
    // Its first line is a `#` comment, its second blank: the third is not movement.
    assert!(
        err.contains("README.md:3: `ns-2 movement files in the format"),
        "{err}"
    );
    let err = start(r#"file = "missing.scen""#);
    assert!(err.contains("missing.scen: cannot read"), "{err}");
}
