//! `airtrace._core.simulate`: runs a scenario file through the simulator;
//! `airtrace._core.simulate_cleanup`: removes what killed runs left.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;

use airtrace_report::Progress;
use airtrace_sim::{Options, Scenario, SimError, Summary};

/// How often a run, off the GIL, takes it back to let Python handle the signals that
/// arrived (`PyErr_CheckSignals`: its handlers run then, in the main thread).
const SIGNAL_CHECK: Duration = Duration::from_millis(20);

/// Runs the scenario at `path` with `overrides` (`KEY=VALUE`, as `airtrace simulate
/// --set` takes them) applied; writes a bundle to `out` when given (its scenario.toml
/// is the scenario as overridden). Returns the summary as JSON text (the bundle's
/// summary.json). Raises ValueError for a scenario that does not load
/// (`FILE:LINE:COL: message`, or `FILE: --set KEY=VALUE: message`) and OSError when the
/// bundle cannot be written. A signal handler that raises (Ctrl-C's
/// KeyboardInterrupt) stops the run within [`SIGNAL_CHECK`] or so: its partial bundle
/// is removed and its exception raised here.
#[pyfunction]
#[pyo3(signature = (path, out = None, seed = None, progress = false, overrides = Vec::new()))]
pub fn simulate(
    py: Python<'_>,
    path: PathBuf,
    out: Option<PathBuf>,
    seed: Option<u64>,
    progress: bool,
    overrides: Vec<String>,
) -> PyResult<String> {
    let summary = run(py, &path, out, seed, progress, &overrides)?;
    serde_json::to_string(&summary).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// [`simulate`]'s run, for the bindings that make something else of the summary.
pub fn run(
    py: Python<'_>,
    path: &Path,
    out: Option<PathBuf>,
    seed: Option<u64>,
    progress: bool,
    overrides: &[String],
) -> PyResult<Summary> {
    let (scenario, text) = Scenario::load_with(path, overrides, out.is_some())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let result = py.detach(move || {
        let mut bar = Progress::simulation(progress);
        let mut report = |now: i64, end: i64| bar.simulated(now, end);
        let mut raised = None;
        let mut checked: Option<Instant> = None;
        let mut cancel = || {
            if checked.is_some_and(|t| t.elapsed() < SIGNAL_CHECK) {
                return false;
            }
            checked = Some(Instant::now());
            raised = Python::attach(|py| py.check_signals()).err();
            raised.is_some()
        };
        let options = Options {
            out: out.as_deref(),
            seed,
            progress: Some(&mut report),
            cancel: Some(&mut cancel),
        };
        let summary = airtrace_sim::run(&scenario, &text, options);
        bar.finish();
        (summary, raised)
    });
    let (result, raised) = result;
    match result {
        Ok(summary) => Ok(summary),
        Err(SimError::Setup(m)) => Err(PyValueError::new_err(format!("{}: {m}", path.display()))),
        Err(SimError::Io(e)) => Err(PyOSError::new_err(e.to_string())),
        Err(SimError::Cancelled) => {
            Err(raised.unwrap_or_else(|| PyKeyboardInterrupt::new_err("cancelled")))
        }
    }
}

/// Removes, in `dir`, the partial bundles that killed runs left (their process gone,
/// no one holding them). Returns their paths.
#[pyfunction]
pub fn simulate_cleanup(py: Python<'_>, dir: PathBuf) -> PyResult<Vec<String>> {
    let removed = py
        .detach(|| airtrace_sim::dest::remove_stale(&dir))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    Ok(removed.iter().map(|p| p.display().to_string()).collect())
}
