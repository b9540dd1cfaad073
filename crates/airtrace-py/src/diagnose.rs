//! `airtrace._core.diagnose`: the findings for one capture file.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Analyzes the capture at `path` and returns its diagnosis as JSON text: an object
/// with `findings`, a list of objects with `kind`, `connection`, `direction`,
/// `start_s`, `end_s`, `cost_s`, `throughput_share`, `evidence`, `explanation`, `fix`
/// and `details`, and `warnings`, a line for each finding the self-check left out.
/// Raises ValueError (one line naming the file and place) when nothing can be read.
#[pyfunction]
pub fn diagnose(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let result = py.detach(move || {
        let mut diagnoser = airtrace_diagnose::Diagnoser::default();
        let report = airtrace_analysis::analyze_file(&path, &mut diagnoser, &mut |_, _| {})?;
        let (findings, warnings) = diagnoser.finish(&report);
        let doc = serde_json::json!({ "findings": findings, "warnings": warnings });
        serde_json::to_string(&doc).map_err(|e| e.to_string())
    });
    result.map_err(PyValueError::new_err)
}
