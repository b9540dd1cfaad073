//! Prints the findings for a capture as JSON: `cargo run --release -p
//! airtrace-diagnose --example diagnose -- CAPTURE`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: diagnose CAPTURE");
        std::process::exit(2);
    };
    match airtrace_diagnose::diagnose_file(path.as_ref()) {
        Ok((_, findings)) => println!(
            "{}",
            serde_json::to_string_pretty(&findings).expect("serialisable")
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
