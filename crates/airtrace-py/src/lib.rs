//! The private Python module `airtrace._core`: the only crate that touches PyO3.
//!
//! It exposes one function, [`analyze`]; the Python package wraps it
//! (`airtrace.read`, the `airtrace` command). Keep this boundary thin: Rust does
//! the work and returns JSON for summaries and raw column buffers for tables.

mod columns;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use airtrace_analysis::analyze_file;
use columns::PacketColumns;

/// A column for Python: (name, kind, data, validity or None, dictionary or None).
type PyColumn = (String, &'static str, Py<PyBytes>, Option<Py<PyBytes>>, Option<Vec<String>>);

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

/// Analyse one capture file.
///
/// Returns the report as JSON text (see docs/json-schema.md) and, if `packets`, the
/// packets table as columns. Raises ValueError with a one-line message naming the
/// file and the place when nothing could be read.
#[pyfunction]
#[pyo3(signature = (path, packets = false, progress = false))]
fn analyze(py: Python<'_>, path: PathBuf, packets: bool, progress: bool) -> PyResult<(String, Option<Vec<PyColumn>>)> {
    let name = path.display().to_string();
    let result = py.detach(move || {
        let mut bar = Progress::new(progress);
        let mut on_progress = |pos: u64, len: Option<u64>| bar.update(pos, len, &name);
        let out = if packets {
            let mut cols = PacketColumns::default();
            analyze_file(&path, &mut cols, &mut on_progress).map(|r| (r, Some(cols)))
        } else {
            analyze_file(&path, &mut (), &mut on_progress).map(|r| (r, None))
        };
        bar.finish();
        let (report, cols) = out?;
        let json = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        Ok::<_, String>((json, cols.map(PacketColumns::export)))
    });
    let (json, cols) = result.map_err(PyValueError::new_err)?;
    let cols = cols.map(|cols| {
        cols.into_iter()
            .map(|c| {
                let data = PyBytes::new(py, &c.data).unbind();
                let validity = c.validity.map(|v| PyBytes::new(py, &v).unbind());
                (c.name, c.kind, data, validity, c.dictionary)
            })
            .collect()
    });
    Ok((json, cols))
}

/// Names of the per-packet flag columns, in order (stable: users script against them).
#[pyfunction]
fn flag_names() -> Vec<&'static str> {
    airtrace_analysis::Flags::ALL.iter().map(|(_, n)| *n).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(flag_names, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
