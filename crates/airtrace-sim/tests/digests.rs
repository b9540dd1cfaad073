//! Every bundled scenario's bundle, pinned file by file.
//!
//! Before the simulator's core changes (the network of nodes, the TCP fixes), this test
//! holds the SHA-256 of every file of the bundle of every scenario in `scenarios/`, as
//! the simulator wrote them at commit 059197a (`digests/pinned.txt`). A run must give
//! those bytes, or a digest that `digests/changes.toml` lists for that scenario and file
//! with the reason the bytes moved. So no result moves silently, and every move that
//! was meant says why.
//!
//! Long scenarios run with their captures off (`LONG`): their link and TCP logs and the
//! summary still pin every packet's fate.
//!
//! `AIRTRACE_BLESS=1 cargo test -p airtrace-sim --test digests` prints the digests that
//! differ, in the two files' formats, to copy in with a reason; it never writes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use airtrace_sim::{run, Options, Scenario};
use sha2::{Digest, Sha256};

/// Scenarios whose captures would be hundreds of megabytes: run without captures.
const LONG: &[&str] = &["overbuffered_slow.toml", "gsm_rlp_resets.toml"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn digests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/digests")
}

/// `scenario file digest` lines.
fn read_pinned() -> BTreeMap<(String, String), String> {
    let text = std::fs::read_to_string(digests_dir().join("pinned.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<_> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "pinned.txt: bad line {l:?}");
            ((f[0].to_string(), f[1].to_string()), f[2].to_string())
        })
        .collect()
}

/// One explained change: a scenario's file now has `digest`, for `why`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    scenario: String,
    file: String,
    digest: String,
    why: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Changes {
    #[serde(default)]
    change: Vec<Change>,
}

fn read_changes() -> Vec<Change> {
    let text = std::fs::read_to_string(digests_dir().join("changes.toml")).unwrap();
    let changes: Changes = toml::from_str(&text).unwrap_or_else(|e| panic!("changes.toml: {e}"));
    for c in &changes.change {
        assert!(
            c.why.trim().len() >= 20,
            "changes.toml: {} {}: say why the bytes moved",
            c.scenario,
            c.file
        );
    }
    changes.change
}

/// The scenario's text, captures removed for the long ones.
fn scenario_text(name: &str, path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    if !LONG.contains(&name) {
        return text;
    }
    text.lines()
        .map(|l| {
            if l.starts_with("captures") {
                "captures = []"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `name` into `out` and returns each file's digest.
fn bundle_digests(name: &str, out: &Path) -> BTreeMap<String, String> {
    let path = repo().join("scenarios").join(name);
    let text = scenario_text(name, &path);
    let scenario = Scenario::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
    run(
        &scenario,
        &text,
        Options {
            out: Some(out),
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap();
            let digest: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            (e.file_name().to_string_lossy().into_owned(), digest)
        })
        .collect()
}

#[test]
fn every_scenario_bundle_is_pinned() {
    let pinned = read_pinned();
    let changes = read_changes();
    let mut names: Vec<String> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("digests");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let mut unexplained = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for name in &names {
        let out = scratch.join(name.trim_end_matches(".toml"));
        for (file, digest) in bundle_digests(name, &out) {
            let key = (name.clone(), file.clone());
            seen.insert(key.clone());
            let explained = changes
                .iter()
                .any(|c| c.scenario == *name && c.file == file && c.digest == digest);
            if pinned.get(&key) != Some(&digest) && !explained {
                unexplained.push(format!("{name} {file} {digest}"));
            }
        }
        let _ = std::fs::remove_dir_all(&out);
    }
    let missing: Vec<_> = pinned
        .keys()
        .filter(|k| !seen.contains(*k))
        .map(|(s, f)| format!("{s} {f}"))
        .collect();
    if std::env::var_os("AIRTRACE_BLESS").is_some() {
        for line in &unexplained {
            println!("{line}");
        }
    }
    assert!(
        missing.is_empty(),
        "pinned files no run writes any more: {missing:?}"
    );
    assert!(
        unexplained.is_empty(),
        "bundle files whose bytes moved without a reason in tests/digests/changes.toml:\n{}",
        unexplained.join("\n")
    );
}
