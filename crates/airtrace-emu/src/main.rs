//! `airtrace-emu SCENARIO --out BUNDLE [--busy-poll] [--spin-us US] [--seed N] [--max-duration S]`,
//! `airtrace-emu --cleanup`: the emulator without Python (the `airtrace emulate`
//! command calls the same library through the Python package).

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
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" | "-o" => out = it.next().map(PathBuf::from),
            "--busy-poll" => busy = true,
            "--server" => {
                server = it
                    .next()
                    .map(|s| s.split_whitespace().map(str::to_string).collect())
            }
            "--" => {
                command = Some(it.by_ref().cloned().collect());
                break;
            }
            "--spin-us" => {
                spin = it
                    .next()
                    .and_then(|s| s.parse::<u64>().ok())
                    .map(Duration::from_micros)
            }
            "--cleanup" => cleanup = true,
            "--seed" => seed = it.next().and_then(|s| s.parse().ok()),
            "--max-duration" => {
                max = it
                    .next()
                    .and_then(|s| s.parse::<f64>().ok())
                    .map(Duration::from_secs_f64)
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            s if !s.starts_with('-') && scenario.is_none() => scenario = Some(PathBuf::from(s)),
            s => {
                eprintln!("airtrace-emu: unknown argument {s:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if cleanup {
        if let Err(m) = airtrace_emu::preflight() {
            eprintln!("airtrace-emu: {m}");
            return ExitCode::from(1);
        }
        return match airtrace_emu::cleanup() {
            Ok(removed) => {
                for r in &removed {
                    println!("removed namespace {r}");
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
    options.command = command.filter(|c| !c.is_empty());
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
        Err(e) => {
            eprintln!("airtrace-emu: {e}");
            ExitCode::from(1)
        }
    }
}
