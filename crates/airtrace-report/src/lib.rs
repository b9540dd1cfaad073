//! What `airtrace analyze` shows, shared by the native `airtrace` command
//! (crates/airtrace-cli) and the Python module (crates/airtrace-py): the summary
//! table ([`connection_table`]), the JSON report ([`json`]) and the progress bar
//! ([`Progress`]).

mod table;

use std::time::{Duration, Instant};

use airtrace_analysis::FileReport;

pub use table::connection_table;

/// The version of airtrace, as `airtrace --version` and the JSON report give it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One file's report as JSON text (docs/json-schema.md).
pub fn json(report: &FileReport) -> Result<String, String> {
    serde_json::to_string(report).map_err(|e| e.to_string())
}

/// The JSON document of `airtrace analyze --json`: the reports of the files (each from
/// [`json`]) and the version, ending with a newline.
pub fn json_document(reports: &[String]) -> String {
    format!(
        "{{\"airtrace_version\": \"{VERSION}\", \"files\": [{}]}}\n",
        reports.join(", ")
    )
}

/// A progress bar on stderr that shows itself only once a file takes more than a moment.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    enabled: bool,
}

impl Progress {
    pub fn new(enabled: bool) -> Self {
        Progress {
            bar: None,
            started: Instant::now(),
            enabled,
        }
    }

    /// `pos` bytes of `len` read from the file `name`.
    pub fn update(&mut self, pos: u64, len: Option<u64>, name: &str) {
        if !self.enabled || self.started.elapsed() < Duration::from_millis(700) {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                len,
                indicatif::ProgressDrawTarget::stderr(),
            );
            let style = indicatif::ProgressStyle::with_template(
                "{msg} {wide_bar} {bytes}/{total_bytes} {eta}",
            )
            .expect("valid template");
            bar.set_style(style);
            bar.set_message(name.to_string());
            bar
        });
        bar.set_position(pos);
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
