//! Runs a scenario and prints summary.json: `cargo run --release -p airtrace-sim
//! --example simulate -- SCENARIO.toml [BUNDLE]`. The `airtrace simulate` command
//! does the same with a table and a progress bar; this is for profiling the run alone.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: simulate SCENARIO.toml [BUNDLE]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    let scenario = airtrace_sim::Scenario::parse(path.as_ref(), &text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let out = args.get(1).map(std::path::Path::new);
    let options = airtrace_sim::Options {
        out,
        ..Default::default()
    };
    match airtrace_sim::run(&scenario, &text, options) {
        Ok(summary) => println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serialisable")
        ),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
