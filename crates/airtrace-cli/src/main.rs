//! The `airtrace` command that `pip install` puts on the PATH.
//!
//! Two commands run here, natively, without starting a Python interpreter (which costs
//! about 50 ms, a third of a short simulation):
//!
//! - `airtrace analyze [--json] [--no-progress] FILE...`: the analysis is
//!   `airtrace_analysis::analyze_file_summary`, on two threads if `AIRTRACE_THREADS=2`.
//! - `airtrace simulate SCENARIO [--out BUNDLE] [--seed N] [--set KEY=VALUE]... [--json]
//!   [--no-progress]` ([`simulate`]): `airtrace_sim::run`.
//!
//! Their output, messages, exit codes and handling of signals ([`signals`]) are those
//! of the Python command line (python/airtrace/cli.py), which tests check byte for byte
//! (tests/test_launcher.py).
//!
//! Every other command line (`demo`, `--parquet`, `simulate --cleanup`, `--help`,
//! `--version`, mistakes in the arguments, and commands to come) is handed to the
//! Python command line: this process becomes `python -c 'from airtrace.cli import main;
//! ...' ARGS...`, run by the interpreter installed next to this program (the virtual
//! environment's), else by `python3` from the PATH.

mod pyjson;
mod signals;
mod simulate;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use airtrace_analysis::analyze_file_summary;
use airtrace_report::{
    analyze_with_findings, connection_table, json_document, json_with_findings, Progress,
};

pub(crate) const PROG: &str = "airtrace";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let outcome = if let Some(cmd) = plain_analyze(&args) {
        signals::on_interrupt_say_so().and_then(|()| analyze(&cmd))
    } else if let Some(cmd) = args
        .split_first()
        .filter(|(first, _)| *first == "simulate")
        .and_then(|(_, rest)| simulate::plain(rest))
    {
        simulate::run(&cmd)
    } else {
        return python(&args);
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        // The reader of our output went away (e.g. `| head`): not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{PROG}: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A plain `airtrace analyze` command line, as the Python command line's fast path
/// takes it (`_fast_analyze_args` in cli.py).
struct Analyze {
    files: Vec<String>,
    as_json: bool,
    progress: bool,
}

/// The command if `args` is `analyze` with files and no option but `--json` and
/// `--no-progress` (every argument valid UTF-8); else `None`, for Python to handle.
fn plain_analyze(args: &[OsString]) -> Option<Analyze> {
    let (first, rest) = args.split_first()?;
    if first != "analyze" || rest.is_empty() {
        return None;
    }
    let mut cmd = Analyze {
        files: Vec::new(),
        as_json: false,
        progress: io::stderr().is_terminal(),
    };
    for arg in rest {
        match arg.to_str()? {
            "--json" => cmd.as_json = true,
            "--no-progress" => cmd.progress = false,
            a if a.starts_with('-') => return None,
            a => cmd.files.push(a.to_string()),
        }
    }
    (!cmd.files.is_empty()).then_some(cmd)
}

/// `airtrace analyze`: exit code 1 if some file could not be read at all.
fn analyze(cmd: &Analyze) -> io::Result<u8> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut reports = Vec::new();
    let mut failed = false;
    for path in &cmd.files {
        let mut bar = Progress::new(cmd.progress);
        let mut on_progress = |pos, len| bar.update(pos, len, path);
        // The table is the fast path; the JSON carries the diagnosis too.
        let result = if cmd.as_json {
            analyze_with_findings(Path::new(path), path, &mut on_progress)
                .map(|(r, f)| (r, Some(f)))
        } else {
            analyze_file_summary(Path::new(path), path, &mut on_progress).map(|r| (r, None))
        };
        bar.finish();
        let (report, findings) = match result {
            Ok(report) => report,
            Err(e) => {
                out.flush()?;
                eprintln!("{PROG}: error: {e}");
                failed = true;
                continue;
            }
        };
        if !report.warnings.is_empty() || report.error.is_some() {
            out.flush()?;
        }
        for w in &report.warnings {
            eprintln!("{PROG}: warning: {w}");
        }
        if let Some(error) = &report.error {
            eprintln!(
                "{PROG}: warning: {error} (analysed the {} frames before it)",
                report.frames
            );
        }
        if let Some(findings) = findings {
            reports.push(json_with_findings(&report, &findings).map_err(io::Error::other)?);
        } else {
            out.write_all(connection_table(&report).as_bytes())?;
        }
    }
    if cmd.as_json {
        out.write_all(json_document(&reports).as_bytes())?;
    }
    out.flush()?;
    Ok(u8::from(failed))
}

/// The Python code that runs the command line (with the arguments in `sys.argv[1:]`).
/// `-c` puts the working directory first on `sys.path`; it is taken off so that a
/// directory named like a module there cannot stand in for the installed one.
const PYTHON_MAIN: &str =
    "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\nfrom airtrace.cli import main\nsys.exit(main())";

/// Hands the command line to the Python package.
fn python(args: &[OsString]) -> ExitCode {
    let interpreter = interpreter();
    let mut command = std::process::Command::new(&interpreter);
    command.arg("-c").arg(PYTHON_MAIN).args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = command.exec();
        eprintln!(
            "{PROG}: error: cannot run the Python interpreter {}: {e}",
            interpreter.display()
        );
        ExitCode::from(127)
    }
    #[cfg(not(unix))]
    match command.status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c as u8)),
        Err(e) => {
            eprintln!(
                "{PROG}: error: cannot run the Python interpreter {}: {e}",
                interpreter.display()
            );
            ExitCode::from(127)
        }
    }
}

/// The interpreter next to this program (where pip installs both in a virtual
/// environment), else `python3` from the PATH.
fn interpreter() -> PathBuf {
    let names: &[&str] = if cfg!(windows) {
        &["python.exe"]
    } else {
        &["python3", "python"]
    };
    if let Some(dir) = std::env::current_exe()
        .ok()
        .as_deref()
        .and_then(Path::parent)
    {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    PathBuf::from(if cfg!(windows) { "python" } else { "python3" })
}
