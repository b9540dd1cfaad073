//! `airtrace._core.emulate` and `airtrace._core.emulate_cleanup`: real kernel TCP
//! between network namespaces through the scenario's link (airtrace-emu).

use std::path::PathBuf;

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;

use airtrace_emu::{EmuError, Options};
use airtrace_sim::Scenario;

/// Emulates the scenario at `path` in real time and writes the bundle to `out`.
/// `command` runs in host a's namespace instead of the built-in traffic generator
/// (the run ends when it exits), `server` in host b's first. Returns the summary as
/// JSON text. Raises ValueError for a scenario that does not
/// load or cannot be emulated, PermissionError without root / CAP_NET_ADMIN /
/// /dev/net/tun, KeyboardInterrupt after SIGINT or SIGTERM (everything removed, no
/// bundle), OSError otherwise.
#[pyfunction]
#[pyo3(signature = (path, out, seed = None, busy_poll = false, max_duration_s = None, command = None, server = None))]
#[allow(clippy::too_many_arguments)] // a Python keyword-argument signature
pub fn emulate(
    py: Python<'_>,
    path: PathBuf,
    out: PathBuf,
    seed: Option<u64>,
    busy_poll: bool,
    max_duration_s: Option<f64>,
    command: Option<Vec<String>>,
    server: Option<Vec<String>>,
) -> PyResult<String> {
    let max_duration = match max_duration_s {
        Some(s) => Some(
            std::time::Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    PyValueError::new_err(format!("max_duration_s: {s} is not a time above 0"))
                })?,
        ),
        None => None,
    };
    let text = Scenario::read_text(&path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let scenario =
        Scenario::parse(&path, &text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let result = py.detach(move || {
        let mut options = Options::new(&out);
        options.seed = seed;
        options.busy_poll = busy_poll;
        options.max_duration = max_duration;
        options.command = command.filter(|c| !c.is_empty());
        options.server = server.filter(|c| !c.is_empty());
        airtrace_emu::run(&scenario, &text, &options)
    });
    match result {
        Ok(summary) => {
            serde_json::to_string(&summary).map_err(|e| PyValueError::new_err(e.to_string()))
        }
        Err(EmuError::Unsupported(m)) => Err(PyPermissionError::new_err(m)),
        Err(EmuError::Setup(m)) => Err(PyValueError::new_err(format!("{}: {m}", path.display()))),
        // The signal also tripped Python's own handler (the run's handler calls it):
        // running it now raises its exception here, once, instead of again later
        // inside the caller's `except KeyboardInterrupt`.
        Err(EmuError::Interrupted) => Err(py
            .check_signals()
            .err()
            .unwrap_or_else(|| PyKeyboardInterrupt::new_err(EmuError::Interrupted.to_string()))),
        Err(EmuError::Io(e)) => Err(PyOSError::new_err(e.to_string())),
    }
}

/// A namespace `emulate_cleanup` removed, and the processes (pid, command line) it
/// ended there first.
type Removed = (String, Vec<(u32, String)>);

/// Removes the namespaces (and their devices) left by emulations whose process is
/// gone, after ending the processes inside them.
#[pyfunction]
pub fn emulate_cleanup(py: Python<'_>) -> PyResult<Vec<Removed>> {
    airtrace_emu::preflight().map_err(PyPermissionError::new_err)?;
    let removed = py
        .detach(airtrace_emu::cleanup)
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    Ok(removed
        .into_iter()
        .map(|r| {
            let ended = r.processes.into_iter().map(|p| (p.pid, p.command));
            (r.namespace, ended.collect())
        })
        .collect())
}
