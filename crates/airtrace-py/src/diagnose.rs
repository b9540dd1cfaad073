//! `airtrace._core.diagnose`: the findings for one capture file.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Analyzes the capture at `path` and returns its findings as JSON text: a list of
/// objects with `kind`, `connection`, `direction`, `start_s`, `end_s`, `cost_s`,
/// `throughput_share`, `evidence`, `explanation`, `fix` and `details`. Raises
/// ValueError (one line naming the file and place) when nothing can be read.
#[pyfunction]
pub fn diagnose(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let result = py.detach(move || {
        let (_, findings) = airtrace_diagnose::diagnose_file(&path)?;
        serde_json::to_string(&findings).map_err(|e| e.to_string())
    });
    result.map_err(PyValueError::new_err)
}
