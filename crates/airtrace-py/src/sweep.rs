//! `airtrace._core.plan_load` and `plan_run`: the Rust half of `airtrace sweep` (the
//! plan, expanded and checked; one run's row of metrics). The Python half
//! (`airtrace.sweep`) schedules the runs and keeps the results.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use airtrace_sim::plan::{metrics, Plan};

/// Loads, expands and checks the sweep plan at `path`; returns it as JSON text (the
/// fields of `airtrace_sim::plan::Plan`). Raises ValueError, `PLAN:LINE:COL: message`,
/// for a plan or a combination of values that does not load.
#[pyfunction]
pub fn plan_load(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let plan = py
        .detach(|| Plan::load(&path))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    serde_json::to_string(&plan).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Runs one run of a sweep (the scenario at `path` with `overrides` and `seed`, its
/// bundle written to `out` when given) and returns its metric columns as JSON text.
/// Raises as `simulate` does.
#[pyfunction]
#[pyo3(signature = (path, overrides, seed, out = None))]
pub fn plan_run(
    py: Python<'_>,
    path: PathBuf,
    overrides: Vec<String>,
    seed: u64,
    out: Option<PathBuf>,
) -> PyResult<String> {
    let summary = crate::simulate::run(py, &path, out, Some(seed), false, &overrides)?;
    serde_json::to_string(&metrics(&summary)).map_err(|e| PyValueError::new_err(e.to_string()))
}
