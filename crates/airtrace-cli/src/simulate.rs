//! `airtrace simulate SCENARIO [--out/-o BUNDLE] [--seed N] [--set KEY=VALUE]... [--json]
//! [--no-progress]`, natively: what `_simulate` in python/airtrace/cli.py does through
//! `airtrace.simulate` (crates/airtrace-py), with the same scenario loading
//! (`Scenario::load_with`), run (`airtrace_sim::run`), progress bar
//! (`airtrace_report::Progress::simulation`), output (the table of `_summary_table`, or
//! `json.dumps(summary, indent=2)`: [`crate::pyjson`]), messages and exit statuses: 0;
//! 1 when the scenario does not load or the bundle cannot be written; 2 without a
//! SCENARIO; 128 + the signal's number when SIGINT, SIGTERM or SIGHUP stopped the run
//! ([`crate::signals`]). tests/test_launcher.py compares the two byte for byte.
//!
//! Only these plain forms are taken ([`plain`]; `--opt=VALUE` too); anything else
//! (`--cleanup`, `--help`, abbreviations, mistakes) is left to the Python command line,
//! and so is a SCENARIO that is no file and has no directory in it: the name of a
//! scenario shipped with the package (`airtrace simulate kuang_cell`), which the
//! Python package finds (`airtrace.data.resolve`) or refuses, listing the names.

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::Path;

use airtrace_report::Progress;
use airtrace_sim::{Options, Scenario, SimError, Summary};

use crate::signals::StopSignals;
use crate::PROG;

/// A plain `airtrace simulate` command line.
#[derive(Debug, PartialEq)]
pub struct Simulate {
    scenario: Option<String>,
    out: Option<String>,
    seed: Option<u64>,
    overrides: Vec<String>,
    as_json: bool,
    progress: bool,
}

/// The command if `args` (after `simulate`) are a scenario and options of the plain
/// forms, every one valid UTF-8 and not empty, every value not starting with `-`, a
/// seed of decimal digits that fits in 64 bits, the scenario a path that exists or has
/// a directory in it; else `None`, for Python to handle (argparse's way with what is
/// left: abbreviations, `-oBUNDLE`, negative numbers, errors; the shipped scenarios'
/// names).
pub fn plain(args: &[OsString]) -> Option<Simulate> {
    let mut cmd = Simulate {
        scenario: None,
        out: None,
        seed: None,
        overrides: Vec::new(),
        as_json: false,
        progress: io::stderr().is_terminal(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let arg = arg.to_str()?;
        let (option, attached) = match arg.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value)),
            _ => (arg, None),
        };
        let mut value = || {
            let value = match attached {
                Some(value) => value,
                None => args.next()?.to_str()?,
            };
            (!value.is_empty() && !value.starts_with('-')).then(|| value.to_string())
        };
        match option {
            "--json" if attached.is_none() => cmd.as_json = true,
            "--no-progress" if attached.is_none() => cmd.progress = false,
            "--out" | "-o" => cmd.out = Some(value()?),
            "--set" => cmd.overrides.push(value()?),
            "--seed" => {
                let seed = value()?;
                if !seed.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                cmd.seed = Some(seed.parse().ok()?);
            }
            _ if arg.is_empty() || arg.starts_with('-') || cmd.scenario.is_some() => return None,
            _ => cmd.scenario = Some(arg.to_string()),
        }
    }
    match &cmd.scenario {
        Some(name) if !name.contains('/') && !Path::new(name).exists() => None,
        _ => Some(cmd),
    }
}

/// Runs the command; its exit status.
pub fn run(cmd: &Simulate) -> io::Result<u8> {
    let Some(scenario) = &cmd.scenario else {
        eprintln!("{PROG}: error: simulate needs SCENARIO (or --cleanup)");
        return Ok(2);
    };
    let signals = StopSignals::catch()?;
    let result = simulate(cmd, Path::new(scenario), &signals);
    let stopped = signals.received();
    drop(signals);
    if let Some(stopped) = stopped {
        return Ok(stopped.say_so());
    }
    let summary = match result {
        Ok(summary) => summary,
        Err(message) => {
            eprintln!("{PROG}: error: {message}");
            return Ok(1);
        }
    };
    let text = if cmd.as_json {
        crate::pyjson::dumps(&summary).map_err(io::Error::other)? + "\n"
    } else {
        summary_table(&summary)
    };
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    match &cmd.out {
        Some(out) => eprintln!("{PROG}: wrote {out}"),
        None => eprintln!("{PROG}: {NO_BUNDLE}"),
    }
    Ok(0)
}

/// What a run without `--out` says: that it kept nothing, and how to keep it (the same
/// words as python/airtrace/cli.py's).
const NO_BUNDLE: &str = "no bundle written (--out DIR keeps the captures, logs and summary)";

/// The run, stopped when `signals` note a signal; the error as the Python command line
/// words it.
fn simulate(cmd: &Simulate, path: &Path, signals: &StopSignals) -> Result<Summary, String> {
    let out = cmd.out.as_deref().map(Path::new);
    let (scenario, text) =
        Scenario::load_with(path, &cmd.overrides, out.is_some()).map_err(|e| e.to_string())?;
    let mut bar = Progress::simulation(cmd.progress);
    let mut progress = |now, end| bar.simulated(now, end);
    let mut cancel = || signals.received().is_some();
    let options = Options {
        out,
        seed: cmd.seed,
        progress: Some(&mut progress),
        cancel: Some(&mut cancel),
    };
    let result = airtrace_sim::run(&scenario, &text, options);
    bar.finish();
    result.map_err(|e| match e {
        SimError::Setup(m) => format!("{}: {m}", path.display()),
        e => e.to_string(),
    })
}

/// The per-flow results as a small text table (`_summary_table` in cli.py).
pub fn summary_table(summary: &Summary) -> String {
    let head = format!(
        "scenario {}, seed {}: {:.3} s simulated, {} events\n",
        summary.scenario,
        summary.seed,
        summary.end_s,
        thousands(summary.events)
    );
    let cols = [
        "flow",
        "app",
        "bytes",
        "goodput kbit/s",
        "retx",
        "RTOs",
        "fast retx",
        "idle s",
        "done",
    ];
    let rows: Vec<[String; 9]> = summary
        .flows
        .iter()
        .map(|f| {
            [
                f.name.clone(),
                f.app.to_string(),
                thousands(f.bytes_delivered),
                format!("{:.1}", f.goodput_bps / 1000.0),
                f.retransmissions.to_string(),
                f.timeouts.to_string(),
                f.fast_retransmits.to_string(),
                format!("{:.3}", f.idle_s),
                (if f.finished { "yes" } else { "no" }).to_string(),
            ]
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([cols[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols.len()).map(width).collect();
    let line = |cells: &[&str]| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| match i {
                0 | 1 => format!("{c:<w$}", w = widths[i]),
                _ => format!("{c:>w$}", w = widths[i]),
            })
            .collect();
        padded.join("  ")
    };
    let mut lines = vec![line(&cols)];
    for r in &rows {
        lines.push(line(&r.each_ref().map(String::as_str)));
    }
    head + &lines.join("\n") + "\n"
}

/// `n` with commas between groups of three digits (Python's `f"{n:,}"`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn the_plain_forms_are_taken() {
        let cmd = plain(&args(
            "--set a=1 dir/s.toml -o run --seed=7 --set=b=x=y --json --no-progress --out=r2",
        ))
        .unwrap();
        assert_eq!(
            cmd,
            Simulate {
                scenario: Some("dir/s.toml".into()),
                out: Some("r2".into()),
                seed: Some(7),
                overrides: vec!["a=1".into(), "b=x=y".into()],
                as_json: true,
                progress: false,
            }
        );
        assert_eq!(plain(&args("--json")).unwrap().scenario, None);
    }

    #[test]
    fn everything_else_is_left_to_python() {
        for line in [
            "--cleanup",
            "--cleanup runs",
            "dir/s.toml --help",
            "-h",
            "dir/a.toml dir/b.toml",
            "dir/s.toml --out",
            "dir/s.toml --out -x",
            "dir/s.toml --seed -1",
            "dir/s.toml --seed 1e3",
            "dir/s.toml --seed 18446744073709551616",
            "dir/s.toml --set",
            "dir/s.toml --js",
            "dir/s.toml --json=1",
            "dir/s.toml -orun",
            "dir/s.toml -- x",
            "-",
        ] {
            assert_eq!(plain(&args(line)), None, "{line}");
        }
        assert_eq!(plain(&[OsString::new()]), None);
        assert_eq!(plain(&args("dir/s.toml --out=")), None);
    }

    #[test]
    fn a_scenario_name_that_is_no_file_is_left_to_python() {
        // The name of a shipped scenario: the Python package knows where they are.
        assert_eq!(plain(&args("kuang_cell --out run")), None);
        assert_eq!(plain(&args("no_such_file.toml")), None);
        // A file that exists, or a path with a directory in it, is the native run's
        // (a missing one is then its error: `cannot read`).
        let here = env!("CARGO_MANIFEST_DIR").to_string() + "/Cargo.toml";
        assert!(plain(&args(&here)).is_some());
        assert!(plain(&args("runs/missing.toml")).is_some());
    }

    #[test]
    fn thousands_are_grouped() {
        for (n, s) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1234567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), s);
        }
    }
}
