//! What the scenario tests share: a bundled scenario loaded with overrides.

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
