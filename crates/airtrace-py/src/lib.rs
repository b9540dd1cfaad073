//! The private Python module `airtrace._core`: the only crate that touches PyO3.
//!
//! It exposes [`analyze`] and [`simulate::simulate`]; the Python package wraps them
//! (`airtrace.read`, `airtrace.simulate`, the `airtrace` command). Keep this boundary thin: Rust does
//! the work and returns JSON for summaries and raw column buffers for tables.

mod columns;
mod emulate;
mod simulate;
mod table;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use airtrace_analysis::analyze_capture;
use airtrace_pcap::CaptureReader;
use columns::PacketColumns;

/// A progress bar on stderr that shows itself only once a file takes more than a moment.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    enabled: bool,
}

impl Progress {
    fn new(enabled: bool) -> Self {
        Progress { bar: None, started: Instant::now(), enabled }
    }

    fn update(&mut self, pos: u64, len: Option<u64>, name: &str) {
        if !self.enabled || self.started.elapsed() < Duration::from_millis(700) {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::with_draw_target(len, indicatif::ProgressDrawTarget::stderr());
            let style = indicatif::ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes} {eta}")
                .expect("valid template");
            bar.set_style(style);
            bar.set_message(name.to_string());
            bar
        });
        bar.set_position(pos);
    }

    fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The result of analysing one file.
#[pyclass(frozen, module = "airtrace._core")]
struct Analysis {
    /// The report as JSON text (docs/json-schema.md).
    #[pyo3(get)]
    json: String,
    /// The summary table for the terminal, if asked for.
    #[pyo3(get)]
    table: Option<String>,
    /// Problems that did not stop the analysis, one line each.
    #[pyo3(get)]
    warnings: Vec<String>,
    /// The error that ended reading early, if any.
    #[pyo3(get)]
    error: Option<String>,
    /// Frames read.
    #[pyo3(get)]
    frames: u64,
    /// The packets table as a list of columns, if asked for: (name, kind, data,
    /// validity or None, dictionary or None).
    #[pyo3(get)]
    columns: Option<Py<PyList>>,
}

/// Analyse one capture file.
///
/// Returns an `Analysis`: the report as JSON, and, if asked for, the summary table
/// and the packets table as columns. `name` names the file in the report and the
/// messages (default: the path). Raises ValueError with a one-line message naming
/// the file and the place when nothing could be read.
#[pyfunction]
#[pyo3(signature = (path, packets = false, progress = false, table = false, name = None))]
fn analyze(
    py: Python<'_>,
    path: PathBuf,
    packets: bool,
    progress: bool,
    table: bool,
    name: Option<String>,
) -> PyResult<Analysis> {
    let name = name.unwrap_or_else(|| path.display().to_string());
    let result = py.detach(move || {
        let reader = CaptureReader::open(&path).map_err(|e| e.to_string())?;
        let mut bar = Progress::new(progress);
        let mut on_progress = |pos: u64, len: Option<u64>| bar.update(pos, len, &name);
        let out = if packets {
            let mut cols = PacketColumns::default();
            analyze_capture(reader, &name, &mut cols, &mut on_progress).map(|r| (r, Some(cols)))
        } else {
            analyze_capture(reader, &name, &mut (), &mut on_progress).map(|r| (r, None))
        };
        bar.finish();
        let (report, cols) = out?;
        let json = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        let text = table.then(|| table::connection_table(&report));
        Ok::<_, String>((json, text, report, cols.map(PacketColumns::export)))
    });
    let (json, table, report, cols) = result.map_err(PyValueError::new_err)?;
    let columns = match cols {
        Some(cols) => {
            let items = cols.into_iter().map(|c| {
                let data = PyBytes::new(py, &c.data).unbind();
                let validity = c.validity.map(|v| PyBytes::new(py, &v).unbind());
                (c.name, c.kind, data, validity, c.dictionary)
            });
            Some(PyList::new(py, items)?.unbind())
        }
        None => None,
    };
    Ok(Analysis { json, table, warnings: report.warnings, error: report.error, frames: report.frames, columns })
}

/// Names of the per-packet flag columns, in order (stable: users script against them).
#[pyfunction]
fn flag_names() -> Vec<&'static str> {
    airtrace_analysis::Flags::ALL.iter().map(|(_, n)| *n).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Analysis>()?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(flag_names, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulate_cleanup, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
