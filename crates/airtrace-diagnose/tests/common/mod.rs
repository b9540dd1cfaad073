//! Shared by the diagnosis tests: simulate a scenario, diagnose the sender's capture.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use airtrace_diagnose::{diagnose_file, Finding};
use airtrace_sim::{run, Options, Scenario};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Simulates `text` (or the repository scenario `name` when `text` is None) and
/// diagnoses the capture at the sender.
pub fn diagnose_simulated(name: &str, text: Option<&str>) -> Vec<Finding> {
    diagnose_simulated_at(name, text, "sender")
}

/// As [`diagnose_simulated`], at vantage point `vantage` (`"air"`: the sniffer).
pub fn diagnose_simulated_at(name: &str, text: Option<&str>, vantage: &str) -> Vec<Finding> {
    // One directory per call: tests running in parallel may simulate the same scenario.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("diagnose-{name}-{vantage}-{call}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (path, text) = match text {
        Some(t) => {
            let p = dir.join(format!("{name}.toml"));
            std::fs::write(&p, t).unwrap();
            (p, t.to_string())
        }
        None => {
            let p = repo().join("scenarios").join(format!("{name}.toml"));
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        }
    };
    let scenario = Scenario::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.join("bundle");
    run(
        &scenario,
        &text,
        Options {
            out: Some(&out),
            ..Options::default()
        },
    )
    .unwrap();
    diagnose_file(&out.join(format!("{vantage}.pcap")))
        .unwrap()
        .1
}

/// Every real capture beside and in the repository: the shared corpus
/// (`../shared/corpus/real`, skipped when absent), the second corpus and the samples.
pub fn real_captures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        repo().join("../shared/corpus/real"),
        repo().join("testdata/corpus"),
        repo().join("testdata/pcaps"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("skipped: {} is not there", dir.display());
            continue;
        };
        files.extend(
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x != "md")),
        );
    }
    files.sort();
    files
}

pub fn of<'a>(findings: &'a [Finding], kind: &str) -> Vec<&'a Finding> {
    findings.iter().filter(|f| f.kind == kind).collect()
}
