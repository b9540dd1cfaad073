//! `airtrace-emu SCENARIO --out BUNDLE [--busy-poll] [--spin-us US] [--seed N] [--max-duration S]
//! [--server 'CMD ARGS'] [-- COMMAND ARGS...]`, `airtrace-emu --cleanup`: the emulator without
//! Python (the `airtrace emulate` command calls the same library through the Python
//! package, with the same arguments). Everything after `--` is the user's command, run
//! in host a's namespace instead of the built-in traffic generator; `--server` is one
//! string split into words as a shell would (quotes, backslashes; no expansions).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use airtrace_emu::{EmuError, Options};
use airtrace_sim::Scenario;

const USAGE: &str = "usage: airtrace-emu SCENARIO --out BUNDLE [--busy-poll] [--spin-us US] [--seed N] [--max-duration SECONDS] [--server 'CMD ARGS'] [-- COMMAND ARGS...]\n       airtrace-emu --cleanup";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut scenario: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut busy = false;
    let mut cleanup = false;
    let mut seed = None;
    let mut max = None;
    let mut spin = None;
    let mut server: Option<Vec<String>> = None;
    let mut command: Option<Vec<String>> = None;
    let mut it = args.iter();
    // The value of option `name`, parsed, or a one-line error.
    fn value<T: std::str::FromStr>(name: &str, v: Option<&String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{name} needs a value"))?;
        v.parse().map_err(|_| format!("{name}: cannot read {v:?}"))
    }
    let parsed = (|| -> Result<bool, String> {
        while let Some(a) = it.next() {
            match a.as_str() {
                "--out" | "-o" => out = Some(value::<PathBuf>(a, it.next())?),
                "--busy-poll" => busy = true,
                "--server" => {
                    server = Some(
                        airtrace_emu::command::split_words(&value::<String>(a, it.next())?)
                            .map_err(|e| format!("--server: {e}"))?,
                    )
                }
                "--" => {
                    let rest: Vec<String> = it.by_ref().cloned().collect();
                    if rest.is_empty() {
                        return Err(
                            "nothing after `--` (give the command to run, or leave out `--`)"
                                .into(),
                        );
                    }
                    command = Some(rest);
                }
                "--spin-us" => spin = Some(Duration::from_micros(value(a, it.next())?)),
                "--cleanup" => cleanup = true,
                "--seed" => seed = Some(value(a, it.next())?),
                "--max-duration" => {
                    let s: f64 = value(a, it.next())?;
                    max = Some(Duration::try_from_secs_f64(s).map_err(|_| {
                        format!("--max-duration: {s} is not a duration in seconds")
                    })?);
                }
                "-h" | "--help" => return Ok(true),
                s if !s.starts_with('-') && scenario.is_none() => scenario = Some(PathBuf::from(s)),
                s => return Err(format!("unknown argument {s:?}")),
            }
        }
        Ok(false)
    })();
    match parsed {
        Ok(true) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(false) => {}
        Err(e) => {
            eprintln!("airtrace-emu: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    if cleanup {
        if scenario.is_some() || command.is_some() {
            eprintln!("airtrace-emu: --cleanup takes no SCENARIO and no command\n{USAGE}");
            return ExitCode::from(2);
        }
        if let Err(m) = airtrace_emu::preflight() {
            eprintln!("airtrace-emu: {m}");
            return ExitCode::from(1);
        }
        return match airtrace_emu::cleanup() {
            Ok(removed) => {
                for r in &removed {
                    if !r.processes.is_empty() {
                        println!(
                            "ended the processes left in namespace {}: {}",
                            r.namespace,
                            airtrace_emu::contain::describe(&r.processes)
                        );
                    }
                    println!("removed namespace {}", r.namespace);
                }
                if removed.is_empty() {
                    println!("nothing to clean up");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("airtrace-emu: {e}");
                ExitCode::from(1)
            }
        };
    }
    let (Some(path), Some(out)) = (scenario, out) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let scenario = match Scenario::load(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("airtrace-emu: {e}");
            return ExitCode::from(2);
        }
    };
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut options = Options::new(&out);
    options.busy_poll = busy;
    options.seed = seed;
    options.max_duration = max;
    options.server = server;
    options.command = command;
    if let Some(s) = spin {
        options.spin = s;
    }
    match airtrace_emu::run(&scenario, &text, &options) {
        Ok(summary) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&summary).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(EmuError::Interrupted) => {
            eprintln!("airtrace-emu: {}", EmuError::Interrupted);
            ExitCode::from(130)
        }
        Err(EmuError::Setup(m)) => {
            eprintln!("airtrace-emu: {}: {m}", path.display());
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("airtrace-emu: {e}");
            ExitCode::from(1)
        }
    }
}
