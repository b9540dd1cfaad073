//! `airtrace._core.simulate`: runs a scenario file through the simulator;
//! `airtrace._core.simulate_cleanup`: removes what killed runs left.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;

use airtrace_sim::overrides::effective_text;
use airtrace_sim::{Options, Override, Scenario, SimError, Summary};

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
    let (scenario, text) = load(path, overrides, out.is_some())?;
    let result = py.detach(move || {
        let started = Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        let mut report = |now: i64, end: i64| {
            if !progress || started.elapsed() < Duration::from_millis(700) {
                return;
            }
            let bar = bar.get_or_insert_with(|| {
                let bar = indicatif::ProgressBar::with_draw_target(
                    Some((end / 1_000_000) as u64),
                    indicatif::ProgressDrawTarget::stderr(),
                );
                let style = indicatif::ProgressStyle::with_template(
                    "simulated {msg} {wide_bar} {pos}/{len} ms {eta}",
                )
                .expect("valid template");
                bar.set_style(style);
                bar
            });
            bar.set_position((now / 1_000_000) as u64);
        };
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
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
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

/// The scenario at `path` with `overrides` applied, and, when there is a bundle to
/// write it into (`bundle`), its text as the bundle keeps it.
fn load(path: &Path, overrides: &[String], bundle: bool) -> PyResult<(Scenario, String)> {
    let bad = |m: String| PyValueError::new_err(format!("{}: {m}", path.display()));
    let text = Scenario::read_text(path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let overrides = overrides
        .iter()
        .map(|arg| Override::parse(arg))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    let scenario = Scenario::parse_with(path, &text, &overrides)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    if !bundle {
        return Ok((scenario, String::new()));
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let text = effective_text(&name, &text, &overrides).map_err(bad)?;
    Ok((scenario, text))
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
