//! What `airtrace analyze` shows, shared by the native `airtrace` command
//! (crates/airtrace-cli) and the Python module (crates/airtrace-py): the summary
//! table ([`connection_table`]), the JSON report ([`json`], with the diagnosis:
//! [`analyze_with_findings`], [`json_with_findings`]) and the progress bar
//! ([`Progress`], `airtrace simulate`'s too); which connections they show, in what
//! order ([`select`], `--conn` and `--sort`).

mod select;
mod table;

use std::time::{Duration, Instant};

use airtrace_analysis::FileReport;

pub use select::{select, SortKey};
pub use table::{connection_table, selected_table};

/// The version of airtrace, as `airtrace --version` and the JSON report give it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One file's report as JSON text (docs/json-schema.md).
pub fn json(report: &FileReport) -> Result<String, String> {
    serde_json::to_string(report).map_err(|e| e.to_string())
}

/// Analyzes the capture at `path` (named `name` in messages) and diagnoses it in the
/// same pass: what `airtrace analyze --json` reports.
pub fn analyze_with_findings(
    path: &std::path::Path,
    name: &str,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<(FileReport, Vec<airtrace_diagnose::Finding>), String> {
    let reader = airtrace_pcap::CaptureReader::open(path).map_err(|e| e.to_string())?;
    let mut diagnoser = airtrace_diagnose::Diagnoser::default();
    let mut report = airtrace_analysis::analyze_capture(reader, name, &mut diagnoser, progress)?;
    let (findings, warnings) = diagnoser.finish(&report);
    report.warnings.extend(warnings);
    Ok((report, findings))
}

/// One file's report as JSON text with its findings (docs/diagnosis.md) as the last
/// field, `findings`.
pub fn json_with_findings(
    report: &FileReport,
    findings: &[airtrace_diagnose::Finding],
) -> Result<String, String> {
    let report = json(report)?;
    let findings = serde_json::to_string(findings).map_err(|e| e.to_string())?;
    let body = report
        .strip_suffix('}')
        .ok_or("a report is a JSON object")?;
    Ok(format!("{body},\"findings\":{findings}}}"))
}

/// The JSON document of `airtrace analyze --json`: the reports of the files (each from
/// [`json`]) and the version, ending with a newline.
pub fn json_document(reports: &[String]) -> String {
    format!(
        "{{\"airtrace_version\": \"{VERSION}\", \"files\": [{}]}}\n",
        reports.join(", ")
    )
}

/// Simulated time `now` of `end` (ns) as the simulation's bar says it: `12.3 s of 120.0 s`.
fn simulated_of(now: i64, end: i64) -> String {
    format!("{:.1} s of {:.1} s", now as f64 / 1e9, end as f64 / 1e9)
}

/// A progress bar on stderr that shows itself only once the work takes more than a
/// moment: a file's bytes read ([`Progress::new`]) or a run's simulated time
/// ([`Progress::simulation`]).
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    enabled: bool,
    template: &'static str,
}

impl Progress {
    /// The bar of reading a file: bytes read of its size, after its name.
    pub fn new(enabled: bool) -> Self {
        Self::with_template(enabled, "{msg} {wide_bar} {bytes}/{total_bytes} {eta}")
    }

    /// The bar of `airtrace simulate`: simulated time against the scenario's end, in
    /// seconds (fed by [`Progress::simulated`]).
    pub fn simulation(enabled: bool) -> Self {
        Self::with_template(enabled, "simulated {msg} {wide_bar} {eta}")
    }

    fn with_template(enabled: bool, template: &'static str) -> Self {
        Progress {
            bar: None,
            started: Instant::now(),
            enabled,
            template,
        }
    }

    /// `pos` of `len` done (bytes read from the file `name`).
    pub fn update(&mut self, pos: u64, len: Option<u64>, name: &str) {
        if !self.enabled || self.started.elapsed() < Duration::from_millis(700) {
            return;
        }
        let template = self.template;
        let bar = self.bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                len,
                indicatif::ProgressDrawTarget::stderr(),
            );
            let style = indicatif::ProgressStyle::with_template(template).expect("valid template");
            bar.set_style(style);
            bar.set_message(name.to_string());
            bar
        });
        bar.set_position(pos);
    }

    /// Simulated time `now` of `end`, in ns, as `airtrace_sim::Options::progress`
    /// reports it.
    pub fn simulated(&mut self, now: i64, end: i64) {
        self.update((now / 1_000_000) as u64, Some((end / 1_000_000) as u64), "");
        if let Some(bar) = &self.bar {
            bar.set_message(simulated_of(now, end));
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulation_bar_says_seconds_of_the_scenarios_end() {
        // Issue 17 item 7: it said `1085726/2000000 ms`.
        assert_eq!(
            simulated_of(1_085_726_000_000, 2_000_000_000_000),
            "1085.7 s of 2000.0 s"
        );
        assert_eq!(simulated_of(0, 120_000_000_000), "0.0 s of 120.0 s");
    }
}
