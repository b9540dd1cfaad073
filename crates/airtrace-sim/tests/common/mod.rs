//! What the scenario tests share: a bundled scenario loaded with overrides, and run
//! into a bundle.
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};

use airtrace_sim::{Override, Scenario};

/// The repository's scenarios/ directory.
pub fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// scenarios/`name` parsed with `overrides` (`key=value`), and its text; the parse
/// error as a string.
pub fn load(name: &str, overrides: &[&str]) -> Result<(Scenario, String), String> {
    let path = scenarios().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let overrides: Vec<Override> = overrides
        .iter()
        .map(|o| Override::parse(o).unwrap())
        .collect();
    Scenario::parse_with(&path, &text, &overrides)
        .map(|s| (s, text))
        .map_err(|e| e.to_string())
}

/// A bundle that `run_bundle` wrote: where, its link.jsonl records and its summary.
pub struct Bundle {
    pub dir: PathBuf,
    pub link_log: Vec<serde_json::Value>,
    pub summary: serde_json::Value,
}

/// scenarios/`name` with `overrides` run into a bundle named `tag` under cargo's test
/// directory (emptied first).
pub fn run_bundle(name: &str, overrides: &[&str], tag: &str) -> Bundle {
    let (scenario, text) = load(name, overrides).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(tag);
    let _ = std::fs::remove_dir_all(&dir);
    let options = airtrace_sim::Options {
        out: Some(&dir),
        ..airtrace_sim::Options::default()
    };
    airtrace_sim::run(&scenario, &text, options).unwrap();
    let log = std::fs::read_to_string(dir.join("link.jsonl")).unwrap();
    let link_log = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    Bundle {
        link_log,
        summary: serde_json::from_str(&summary).unwrap(),
        dir,
    }
}
