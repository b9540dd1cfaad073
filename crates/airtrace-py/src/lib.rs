//! The private Python module `airtrace._core`: the only crate that touches PyO3.
//!
//! It exposes [`analyze`], [`simulate::simulate`], [`sweep::plan_load`],
//! [`sweep::plan_run`] and [`diagnose::diagnose`]; the Python
//! package wraps them (`airtrace.read`, `airtrace.simulate`, `airtrace.sweep`, `airtrace.diagnose`, the
//! `airtrace` command). Keep this boundary thin: Rust does
//! the work and returns JSON for summaries and raw column buffers for tables.

mod columns;
mod diagnose;
mod emulate;
mod simulate;
mod sweep;

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use airtrace_analysis::{analyze_capture, analyze_file_summary};
use airtrace_pcap::CaptureReader;
use airtrace_report::{Progress, SortKey};
use columns::{Exported, PacketColumns};

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
    /// TCP connections in the file (all of them, whichever `conns` chose).
    #[pyo3(get)]
    connections: usize,
    /// The ids `conns` asked for that the file does not have, in order.
    #[pyo3(get)]
    missing: Vec<u32>,
    /// The packets table, if asked for.
    #[pyo3(get)]
    packets: Option<Py<PacketTable>>,
}

/// The packets table, handed to Python one column at a time. Each column's buffers
/// become `bytes` objects as it is taken and are freed here at once, so the table is
/// held about once, not twice, while Python turns it into Arrow or pandas columns
/// (issue 19 item 12: 5.5M frames took 2.1 GB for a 979 MB DataFrame).
#[pyclass(module = "airtrace._core")]
struct PacketTable {
    /// Rows (frames) in every column.
    #[pyo3(get)]
    rows: usize,
    /// The columns not taken yet, in table order.
    left: std::collections::VecDeque<Exported>,
}

/// A column as Python sees it: (name, kind, data, validity or None, dictionary or None).
type PyColumn = (
    String,
    &'static str,
    Py<PyBytes>,
    Option<Py<PyBytes>>,
    Option<Vec<String>>,
);

#[pymethods]
impl PacketTable {
    /// The names of the columns not taken yet, in table order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.left.iter().map(|c| c.name.clone()).collect()
    }

    /// Takes the next column, or None once every column was taken.
    fn take(&mut self, py: Python<'_>) -> Option<PyColumn> {
        let c = self.left.pop_front()?;
        let data = PyBytes::new(py, &c.data).unbind();
        drop(c.data);
        let validity = c.validity.map(|v| PyBytes::new(py, &v).unbind());
        Some((c.name, c.kind, data, validity, c.dictionary))
    }
}

/// Analyse one capture file.
///
/// Returns an `Analysis`: the report as JSON, and, if asked for, the summary table
/// and the packets table as columns. `name` names the file in the report and the
/// messages (default: the path). The JSON and the table show the connections whose
/// ids are in `conns` (all when None), and their findings, in the order of the `sort`
/// key (`sort_keys()`). `progress` draws this file's own bar on stderr; `on_progress`,
/// for a caller that draws one bar over more than this file, is called with (bytes
/// read, file size or None) at most every 100 ms and once at the end; the first
/// exception it raises stops the calls and is raised here once the analysis is done. Raises ValueError with a one-line
/// message naming the file and the place when nothing could be read, or naming the sort
/// keys for an unknown one.
#[pyfunction]
#[pyo3(signature = (path, packets = false, progress = false, table = false, name = None, findings = false, conns = None, sort = "id", on_progress = None))]
#[allow(clippy::too_many_arguments)]
fn analyze(
    py: Python<'_>,
    path: PathBuf,
    packets: bool,
    progress: bool,
    table: bool,
    name: Option<String>,
    findings: bool,
    conns: Option<Vec<u32>>,
    sort: &str,
    on_progress: Option<Py<PyAny>>,
) -> PyResult<Analysis> {
    let key = SortKey::parse(sort).ok_or_else(|| {
        let names: Vec<_> = SortKey::ALL.iter().map(|(_, n, _)| *n).collect();
        PyValueError::new_err(format!(
            "unknown sort key {sort:?}; the keys are: {}",
            names.join(", ")
        ))
    })?;
    let name = name.unwrap_or_else(|| path.display().to_string());
    let mut reported = Reported::new(on_progress);
    let result = py.detach(|| {
        let mut bar = Progress::new(progress);
        let mut on_progress = |pos: u64, len: Option<u64>| {
            bar.update(pos, len, &name);
            reported.call(pos, len);
        };
        let out = if packets {
            // Per-packet output is in capture order: one thread.
            let reader = CaptureReader::open(&path).map_err(|e| e.to_string());
            reader.and_then(|reader| {
                let mut cols = PacketColumns::default();
                analyze_capture(reader, &name, &mut cols, &mut on_progress)
                    .map(|r| ((r, None), Some(cols)))
            })
        } else if findings {
            airtrace_report::analyze_with_findings(&path, &name, &mut on_progress)
                .map(|(r, f)| ((r, Some(f)), None))
        } else {
            analyze_file_summary(&path, &name, &mut on_progress).map(|r| ((r, None), None))
        };
        bar.finish();
        reported.end();
        let ((mut report, found), cols) = out?;
        let total = report.connections.len();
        let missing = airtrace_report::select(&mut report, conns.as_deref(), key);
        let json = match found {
            Some(mut f) => {
                if let Some(ids) = &conns {
                    f.retain(|f| ids.contains(&f.connection));
                }
                airtrace_report::json_with_findings(&report, &f)?
            }
            None => airtrace_report::json(&report)?,
        };
        let text = table.then(|| airtrace_report::selected_table(&report, total));
        Ok::<_, String>((
            json,
            text,
            report,
            total,
            missing,
            cols.map(PacketColumns::export),
        ))
    });
    if let Some(raised) = reported.raised {
        return Err(raised);
    }
    let (json, table, report, connections, missing, cols) =
        result.map_err(PyValueError::new_err)?;
    let packets = match cols {
        Some((rows, left)) => Some(Py::new(
            py,
            PacketTable {
                rows,
                left: left.into(),
            },
        )?),
        None => None,
    };
    Ok(Analysis {
        json,
        table,
        warnings: report.warnings,
        error: report.error,
        frames: report.frames,
        connections,
        missing,
        packets,
    })
}

/// `analyze`'s `on_progress`: the Python callable, called with the GIL taken at most
/// every [`Reported::EVERY`] and once at the end with the last position; the first
/// exception it raises stops the calls and is kept for `analyze` to raise.
struct Reported {
    callback: Option<Py<PyAny>>,
    last: Option<(u64, Option<u64>)>,
    called: Option<std::time::Instant>,
    raised: Option<PyErr>,
}

impl Reported {
    const EVERY: std::time::Duration = std::time::Duration::from_millis(100);

    fn new(callback: Option<Py<PyAny>>) -> Self {
        Reported {
            callback,
            last: None,
            called: None,
            raised: None,
        }
    }

    fn call(&mut self, pos: u64, len: Option<u64>) {
        self.last = Some((pos, len));
        if self.called.is_none_or(|t| t.elapsed() >= Self::EVERY) {
            self.called = Some(std::time::Instant::now());
            self.send(pos, len);
        }
    }

    fn end(&mut self) {
        if let Some((pos, len)) = self.last {
            self.send(pos, len);
        }
    }

    fn send(&mut self, pos: u64, len: Option<u64>) {
        let (Some(callback), None) = (&self.callback, &self.raised) else {
            return;
        };
        self.raised = Python::attach(|py| callback.call1(py, (pos, len)).err());
    }
}

/// The keys `analyze(sort=...)` takes, each with what it orders by.
#[pyfunction]
fn sort_keys() -> Vec<(&'static str, &'static str)> {
    SortKey::ALL
        .iter()
        .map(|(_, name, what)| (*name, *what))
        .collect()
}

/// Names of the per-packet flag columns, in order (stable: users script against them).
#[pyfunction]
fn flag_names() -> Vec<&'static str> {
    airtrace_analysis::Flags::ALL
        .iter()
        .map(|(_, n)| *n)
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Analysis>()?;
    m.add_class::<PacketTable>()?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(flag_names, m)?)?;
    m.add_function(wrap_pyfunction!(sort_keys, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate_cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::plan_load, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::plan_run, m)?)?;
    m.add_function(wrap_pyfunction!(diagnose::diagnose, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulate_cleanup, m)?)?;
    m.add("__version__", airtrace_report::VERSION)?;
    Ok(())
}
