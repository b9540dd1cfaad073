//! Simulation agrees with reality (issue 4): scenarios/emu_agreement.toml in the
//! simulator (TCP profile "linux") and in the emulator (the kernel's Reno) give
//! goodputs within ±15 % of each other. Needs root; about 30 s.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn simulator_and_emulator_goodputs_agree() {
    if let Err(why) = airtrace_emu::preflight() {
        eprintln!("skipping: {why}");
        return;
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/emu_agreement.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = airtrace_sim::Scenario::parse(&path, &text).unwrap();
    let sim = airtrace_sim::run(&scenario, &text, airtrace_sim::Options::default()).unwrap();
    let sim_goodput = sim.flows[0].goodput_bps;
    assert!(sim.flows[0].finished);

    let out = std::env::temp_dir().join(format!("airtrace-emu-agreement-{}", std::process::id()));
    let done = Command::new(env!("CARGO_BIN_EXE_airtrace-emu"))
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let flow = &summary["flows"][0];
    assert_eq!(flow["finished"], true);
    assert_eq!(flow["cc"], "reno");
    let emu_goodput = flow["goodput_bps"].as_f64().unwrap();
    let ratio = emu_goodput / sim_goodput;
    eprintln!("goodput: simulator {sim_goodput:.0} bit/s, emulator {emu_goodput:.0} bit/s, ratio {ratio:.3}");
    assert!(
        (ratio - 1.0).abs() <= 0.15,
        "simulator {sim_goodput} bit/s vs emulator {emu_goodput} bit/s"
    );
    let _ = std::fs::remove_dir_all(&out);
}
