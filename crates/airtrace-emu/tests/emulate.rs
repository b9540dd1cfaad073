//! End-to-end tests of the emulator (they need root, as CI has; skipped otherwise).
//!
//! Each runs the `airtrace-emu` binary in its own process, one at a time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_airtrace-emu")
}

/// Why the tests cannot run here, if they cannot.
fn skip_reason() -> Option<String> {
    airtrace_emu::preflight().err()
}

macro_rules! require_root {
    () => {
        if let Some(why) = skip_reason() {
            eprintln!("skipping: {why}");
            return;
        }
    };
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("airtrace-emu-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SMALL: &str = r#"
name = "emu_small"
duration = "60 s"
captures = ["sender", "receiver", "link_in", "link_out"]

[link]
rate = "2 Mbit/s"
delay = "20 ms"
queue_packets = 50

[[flow]]
app = "bulk"
bytes = "1 MB"
"#;

const LONG: &str = r#"
name = "emu_long"
duration = "120 s"
captures = ["sender"]

[link]
rate = "2 Mbit/s"
delay = "20 ms"
queue_packets = 50

[[flow]]
app = "bulk"
bytes = "20 MB"
"#;

/// Classic pcap records: (time stamp ns, bytes).
fn read_pcap(path: &Path) -> Vec<(i64, Vec<u8>)> {
    let data = std::fs::read(path).unwrap();
    assert_eq!(&data[..4], &0xa1b23c4du32.to_le_bytes(), "nanosecond pcap");
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= data.len() {
        let u = |o: usize| u32::from_le_bytes(data[at + o..at + o + 4].try_into().unwrap());
        let ts = i64::from(u(0)) * 1_000_000_000 + i64::from(u(4));
        let caplen = u(8) as usize;
        out.push((ts, data[at + 16..at + 16 + caplen].to_vec()));
        at += 16 + caplen;
    }
    out
}

/// Time the link spends sending the packets of `records` from `src` read before
/// `until_ns` (capture stamps), at `rate` bit/s: its busy time, when nothing was
/// dropped at the queue.
fn busy_ns(records: &[(i64, Vec<u8>)], src: [u8; 4], until_ns: i64, rate: f64) -> i64 {
    records
        .iter()
        .filter(|(t, p)| p[12..16] == src && *t < until_ns)
        .map(|(_, p)| (p.len() as f64 * 8.0 / rate * 1e9) as i64)
        .sum()
}

fn our_namespaces(pid: u32) -> Vec<String> {
    airtrace_emu::netns::list()
        .unwrap()
        .into_iter()
        .filter(|n| airtrace_emu::netns::owner_pid(n) == Some(pid))
        .collect()
}

fn spawn(scenario: &Path, out: &Path) -> Child {
    Command::new(bin())
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_namespaces(pid: u32) {
    let t = Instant::now();
    while our_namespaces(pid).len() < 2 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        our_namespaces(pid).len(),
        2,
        "the run created its namespaces"
    );
}

fn partial_dirs(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".partial-"))
        .collect()
}

#[test]
fn small_bulk_transfer_is_timed_and_captured() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("small");
    let scenario = dir.join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let out = dir.join("bundle");
    let child = spawn(&scenario, &out);
    let pid = child.id();
    let result = child.wait_with_output().unwrap();
    assert!(
        result.status.success(),
        "emulation failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(our_namespaces(pid).is_empty(), "namespaces left behind");
    assert!(!Path::new(&format!("/sys/class/net/at{pid}a")).exists());

    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["source"], "emulation");
    let flow = &summary["flows"][0];
    assert_eq!(flow["finished"], true, "{summary}");
    assert_eq!(flow["bytes_delivered"], 1_000_000);
    let goodput = flow["goodput_bps"].as_f64().unwrap();
    assert!(goodput > 1.7e6 && goodput < 2.0e6, "goodput {goodput}");

    let epoch = meta["clock"]["epoch_ns"].as_i64().unwrap();
    let link_in = read_pcap(&out.join("link_in.pcap"));
    let link_out = read_pcap(&out.join("link_out.pcap"));
    // Every packet that left the link entered it first; match them by their bytes.
    let mut entered: HashMap<Vec<u8>, Vec<i64>> = HashMap::new();
    for (t, p) in &link_in {
        entered.entry(p.clone()).or_default().push(*t);
    }
    let rate = 2e6;
    let mut reverse_err = Vec::new();
    let mut forward = Vec::new();
    for (t, p) in &link_out {
        let t_in = entered
            .get_mut(p)
            .and_then(|v| (!v.is_empty()).then(|| v.remove(0)))
            .expect("left the link without entering it");
        let delay = t - t_in;
        let base = 20_000_000 + (p.len() as f64 * 8.0 / rate * 1e9) as i64;
        assert!(
            delay >= base - 200_000,
            "delay {delay} ns below the link's minimum {base} ns"
        );
        if p[12..16] == [198, 18, 1, 1] {
            reverse_err.push(delay - base); // ACKs: the reverse queue is (nearly) always empty
        } else {
            forward.push((*t, p.len()));
        }
    }
    reverse_err.sort_unstable();
    let p50 = reverse_err[reverse_err.len() / 2];
    assert!(p50 < 1_000_000, "reverse one-way delay error p50 {p50} ns");

    // Model delivery times (link.jsonl) against the times packets left (link_out):
    // both in event order.
    let log = std::fs::read_to_string(out.join("link.jsonl")).unwrap();
    let delivered: Vec<i64> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["kind"] == "packet_delivered")
        .map(|r| r["t_ns"].as_i64().unwrap())
        .collect();
    assert_eq!(delivered.len(), link_out.len());
    let mut late: Vec<i64> = delivered
        .iter()
        .zip(&link_out)
        .map(|(m, (t, _))| t - epoch - m)
        .collect();
    late.sort_unstable();
    assert!(late[0] >= 0, "a packet left before its time");
    let p50 = late[late.len() / 2];
    assert!(p50 < 1_000_000, "lateness p50 {p50} ns");

    // Delivered rate while the forward queue is busy: from the 100th full-size packet to
    // the last, back to back at 2 Mbit/s.
    let full: Vec<_> = forward.iter().filter(|(_, len)| *len >= 1400).collect();
    let (t0, _) = full[100];
    let (t1, _) = full[full.len() - 1];
    let bytes: usize = full[101..].iter().map(|(_, l)| l).sum();
    let measured = bytes as f64 * 8.0 / ((t1 - t0) as f64 / 1e9);
    assert!(
        (measured / rate - 1.0).abs() < 0.03,
        "delivered rate {measured} bit/s"
    );

    let states = std::fs::read_to_string(out.join("tcpstate.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(states.lines().next().unwrap()).unwrap();
    for key in [
        "t_ns",
        "cwnd",
        "ssthresh",
        "srtt_ns",
        "rttvar_ns",
        "rto_ns",
        "phase",
        "retransmits",
        "delivery_rate_bps",
    ] {
        assert!(first.get(key).is_some(), "tcpstate.jsonl lacks {key}");
    }
    // At least one sample per millisecond of the transfer.
    let span_ms = (flow["end_s"].as_f64().unwrap() - flow["start_s"].as_f64().unwrap()) * 1000.0;
    assert!(
        states.lines().count() as f64 >= span_ms * 0.9,
        "{} samples over {span_ms} ms",
        states.lines().count()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_mid_run_leaves_nothing() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("term");
    let scenario = dir.join("long.toml");
    std::fs::write(&scenario, LONG).unwrap();
    let out = dir.join("bundle");
    let child = spawn(&scenario, &out);
    let pid = child.id();
    wait_namespaces(pid);
    std::thread::sleep(Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let result = child.wait_with_output().unwrap();
    assert_eq!(
        result.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(our_namespaces(pid).is_empty(), "namespaces left behind");
    assert!(!out.exists(), "no bundle from an interrupted run");
    assert!(partial_dirs(&dir).is_empty(), "partial bundle left behind");
    let _ = std::fs::remove_dir_all(&dir);
}

/// LONG, on a link that loses every packet host a sends: the connect stays pending.
fn lost_scenario() -> String {
    LONG.replace(
        "queue_packets = 50",
        "queue_packets = 50\n\n[link.forward]\nloss = { model = \"bernoulli\", p = 1.0 }",
    )
}

#[test]
fn a_signal_while_a_connect_is_pending_stops_the_run_at_once() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("pending");
    let scenario = dir.join("lost.toml");
    std::fs::write(&scenario, lost_scenario()).unwrap();
    for signal in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let out = dir.join("bundle");
        let mut child = spawn(&scenario, &out);
        let pid = child.id();
        wait_namespaces(pid);
        std::thread::sleep(Duration::from_millis(1500)); // two SYNs lost
        let t = Instant::now();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
        while child.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let took = t.elapsed();
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            child.wait().unwrap();
            let _ = Command::new(bin()).arg("--cleanup").output();
            panic!("{signal}: still running 10 s later");
        }
        let result = child.wait_with_output().unwrap();
        assert_eq!(result.status.code(), Some(130), "{signal}");
        assert!(took < Duration::from_secs(2), "{signal}: {took:?}");
        assert!(our_namespaces(pid).is_empty(), "namespaces left behind");
        assert!(!out.exists(), "no bundle from an interrupted run");
        assert!(partial_dirs(&dir).is_empty(), "partial bundle left behind");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_process_in_a_namespace_is_ended_and_nothing_else() {
    require_root!();
    use airtrace_emu::netns::ip;
    let ns = format!("airtrace-test-contain-{}", std::process::id());
    ip(&["netns", "add", &ns]).unwrap();
    // Removed however the test ends: a failed assertion used to leave it behind.
    struct Removed<'a>(&'a str);
    impl Drop for Removed<'_> {
        fn drop(&mut self) {
            let _ = airtrace_emu::contain::end_all(self.0, Duration::from_millis(300));
            let _ = ip(&["netns", "del", self.0]);
        }
    }
    let _removed = Removed(&ns);
    // A daemon (its own session, parent gone) and a process that ignores SIGTERM.
    let status = Command::new("ip")
        .args(["netns", "exec", &ns, "setsid", "-f", "sleep", "983"])
        .status()
        .unwrap();
    assert!(status.success());
    let mut stubborn = Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            "sh",
            "-c",
            "trap '' TERM; exec sleep 984",
        ])
        .spawn()
        .unwrap();
    let mut outside = Command::new("sleep").arg("982").spawn().unwrap();
    // Both started and both became `sleep` (until its exec, the stubborn one is still
    // `ip netns exec ... sh -c ...`: under load it was caught and named so).
    let t = Instant::now();
    let commands = || -> Vec<String> {
        let mut c: Vec<String> = airtrace_emu::contain::processes_in(&ns)
            .unwrap()
            .into_iter()
            .map(|p| p.command)
            .collect();
        c.sort_unstable();
        c
    };
    while commands() != ["sleep 983", "sleep 984"] {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the processes started: {:?}",
            commands()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let ended = airtrace_emu::contain::end_all(&ns, Duration::from_millis(300)).unwrap();
    let mut lines: Vec<&str> = ended.iter().map(|p| p.command.as_str()).collect();
    lines.sort_unstable();
    assert_eq!(lines, ["sleep 983", "sleep 984"]);
    assert!(airtrace_emu::contain::processes_in(&ns).unwrap().is_empty());
    stubborn.wait().unwrap();
    assert!(
        outside.try_wait().unwrap().is_none(),
        "a process outside the namespace was left alone"
    );
    outside.kill().unwrap();
    outside.wait().unwrap();
}

#[test]
fn cleanup_after_sigkill() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("kill");
    let scenario = dir.join("long.toml");
    std::fs::write(&scenario, LONG).unwrap();
    let mut child = spawn(&scenario, &dir.join("bundle"));
    let pid = child.id();
    wait_namespaces(pid);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        our_namespaces(pid).len(),
        2,
        "a killed run leaves its namespaces"
    );
    let status = Command::new(bin()).arg("--cleanup").output().unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(our_namespaces(pid).is_empty(), "--cleanup left namespaces");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "process still there"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn user_command_with_a_server_runs_through_the_link() {
    require_root!();
    if Command::new("iperf3").arg("--version").output().is_err() {
        eprintln!("skipping: iperf3 is not installed");
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("cmd");
    let scenario = dir.join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let out = dir.join("bundle");
    let done = Command::new(bin())
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .args([
            "--server",
            "iperf3 -s -B 198.18.1.1 -1",
            "--",
            "iperf3",
            "-c",
            "198.18.1.1",
            "-t",
            "2",
            "-J",
        ])
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let text = String::from_utf8_lossy(&done.stdout);
    // iperf3's JSON report, then the summary: the summary is the last JSON object.
    let summary: serde_json::Value =
        serde_json::from_str(&text[text.rfind("\n{\n  \"scenario\"").map_or(0, |i| i + 1)..])
            .unwrap();
    assert_eq!(summary["command"]["exit_code"], 0, "{summary}");
    let delivered = summary["link"]["forward"]["delivered_bytes"]
        .as_u64()
        .unwrap();
    // 2 s at 2 Mbit/s: about 500 kB through the link.
    assert!(
        delivered > 300_000 && delivered < 700_000,
        "{delivered} bytes"
    );
    let sender = read_pcap(&out.join("sender.pcap"));
    assert!(
        sender
            .iter()
            .any(|(_, p)| p[22..24] == 5201u16.to_be_bytes()),
        "iperf3 traffic captured"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cleanup_after_sigkill_stops_the_users_processes() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("killcmd");
    let scenario = dir.join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let mut child = Command::new(bin())
        .arg(&scenario)
        .arg("--out")
        .arg(dir.join("bundle"))
        .args(["--server", "sleep 300", "--", "sleep", "301"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_namespaces(pid);
    std::thread::sleep(Duration::from_millis(1000));
    let inside = |ns: &String| -> Vec<String> {
        airtrace_emu::netns::ip(&["netns", "pids", ns])
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let procs: Vec<String> = our_namespaces(pid).iter().flat_map(inside).collect();
    assert_eq!(
        procs.len(),
        2,
        "the command and the server run in the namespaces: {procs:?}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let status = Command::new(bin()).arg("--cleanup").output().unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(our_namespaces(pid).is_empty(), "--cleanup left namespaces");
    std::thread::sleep(Duration::from_millis(200));
    for p in procs {
        // Gone, or a zombie waiting for init to reap it (its parent, the run, was killed).
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.trim_start().chars().next());
        assert!(
            matches!(state, None | Some(Some('Z' | 'X'))),
            "process {p} survived --cleanup: {stat}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_give_one_line_errors() {
    let run = |args: &[&str]| {
        let out = Command::new(bin()).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
        )
    };
    assert_eq!(
        run(&["s.toml", "--out", "b", "--"]),
        (
            Some(2),
            "airtrace-emu: nothing after `--` (give the command to run, or leave out `--`)".into()
        )
    );
    assert_eq!(
        run(&["s.toml", "--out", "b", "--seed", "x"]),
        (Some(2), r#"airtrace-emu: --seed: cannot read "x""#.into())
    );
    assert_eq!(
        run(&["s.toml", "--out", "b", "--server", "sh -c 'x"]),
        (
            Some(2),
            r#"airtrace-emu: --server: unclosed ' in "sh -c 'x""#.into()
        )
    );
    assert_eq!(
        run(&["--cleanup", "--", "true"]),
        (
            Some(2),
            "airtrace-emu: --cleanup takes no SCENARIO and no command".into()
        )
    );
}

/// scenarios/nfs_read_bursts.toml cut to 128 KiB: 8 KiB READs over UDP, each reply six
/// fragments, under 100 ms loss bursts every second.
const NFS_SHORT: &str = r#"
name = "nfs_read_bursts_short"
seed = 1
duration = "60 s"
captures = ["sender", "receiver", "link_in", "link_out"]

[link]
rate = "430 kbit/s"
delay = "2 ms"
queue_packets = 50
loss = { model = "bursts", length = "100 ms", every = "1 s" }

[[flow]]
name = "nfs-read"
app = "rpc_read"
bytes = "128 KiB"

[flow.rpc]
request_size = "8 KiB"
timeout = "1.1 s"
max_timeout = "60 s"
service_time = "10 ms"
pacing = "15 ms"
"#;

#[test]
fn rpc_reads_over_udp_time_out_and_back_off_as_simulated() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("rpc");
    let scenario = dir.join("nfs.toml");
    std::fs::write(&scenario, NFS_SHORT).unwrap();
    let out = dir.join("bundle");
    let result = spawn(&scenario, &out).wait_with_output().unwrap();
    assert!(
        result.status.success(),
        "emulation failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let flow = &summary["flows"][0];
    assert_eq!(
        (flow["protocol"].as_str(), flow["finished"].as_bool()),
        (Some("udp"), Some(true)),
        "{flow}"
    );
    assert_eq!(flow["bytes_delivered"], 131_072);
    assert_eq!(flow["requests"], 16, "128 KiB in 8 KiB READs");
    let retx = flow["retransmissions"].as_u64().unwrap();
    assert!(retx >= 1, "the bursts lose replies: {flow}");
    assert_eq!(
        flow["timeouts"], retx,
        "every RPC retransmission follows a timeout"
    );
    // Replies are fragmented by the kernel at the 1500-byte MTU and the link loses
    // fragments: the reverse direction lost some.
    assert!(summary["link"]["reverse"]["lost"].as_u64().unwrap() >= retx);

    // On host a's device: the calls (every xid sent again after 1.1 s, then 2.2 s, ...)
    // and the replies' fragments.
    let mut sends: HashMap<u32, Vec<i64>> = HashMap::new();
    let (mut reply_xid, mut replied): (HashMap<u16, u32>, HashMap<u32, i64>) = Default::default();
    for (t, p) in read_pcap(&out.join("sender.pcap")) {
        let ihl = usize::from(p[0] & 0x0f) * 4;
        let (ip_id, fragment) = (
            u16::from_be_bytes([p[4], p[5]]),
            u16::from_be_bytes([p[6], p[7]]),
        );
        let xid = || u32::from_be_bytes(p[ihl + 8..ihl + 12].try_into().unwrap());
        if p[9] == 17 && p[12..16] == [198, 18, 0, 1] {
            assert_eq!(
                u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]),
                20049,
                "calls go to the simulator's RPC port"
            );
            assert_eq!(&p[ihl + 12..ihl + 16], &[0, 0, 0, 1], "a READ call");
            sends.entry(xid()).or_default().push(t);
        } else if p[9] == 17 && fragment & 0x1fff == 0 {
            reply_xid.insert(ip_id, xid());
        } else if p[9] == 17 && fragment & 0x2000 == 0 {
            // The last fragment: the reply is complete (if no fragment was lost).
            if let Some(&x) = reply_xid.get(&ip_id) {
                replied.entry(x).or_insert(t);
            }
        }
    }
    assert_eq!(sends.len(), 16);
    let again: usize = sends.values().map(|v| v.len() - 1).sum();
    assert_eq!(again as u64, retx);
    // The capture stamps a call when the forwarder reads it from the device: up to a
    // few hundred µs after the client sent it, so a gap may look a little short.
    for times in sends.values() {
        for (k, w) in times.windows(2).enumerate() {
            let expected = 1_100_000_000i64 << k;
            let gap = w[1] - w[0];
            assert!(
                gap > expected - 2_000_000 && gap < expected + 30_000_000,
                "retransmission {} after {gap} ns, not {expected}",
                k + 1
            );
        }
    }
    // A call answered the first time: call forward (52 bytes at 430 kbit/s, 2 ms),
    // 10 ms of service, the reply back (8224 bytes of UDP in six fragments with their
    // IP headers: 8344 bytes, 2 ms).
    let serialise = |bytes: f64| (bytes * 8.0 / 430e3 * 1e9) as i64;
    let expected = serialise(52.0) + 2_000_000 + 10_000_000 + serialise(8344.0) + 2_000_000;
    let mut took: Vec<i64> = sends
        .iter()
        .filter(|(_, t)| t.len() == 1)
        .filter_map(|(x, t)| replied.get(x).map(|r| r - t[0]))
        .collect();
    took.sort_unstable();
    assert!(took.len() >= 8, "{took:?}");
    let median = took[took.len() / 2];
    assert!(
        (median - expected).abs() < 5_000_000,
        "call to reply {median} ns, the model's {expected} ns"
    );

    // Idle time: the reverse link (READ data comes back) idle while the client waited,
    // from its start to its last reply: that span less the time the link spent
    // sending what host b sent (nothing is dropped at the queue).
    assert_eq!(summary["link"]["reverse"]["queue_drops"], 0);
    let epoch =
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(out.join("meta.json")).unwrap())
            .unwrap()["clock"]["epoch_ns"]
            .as_i64()
            .unwrap();
    let (start, end) = (
        (flow["start_s"].as_f64().unwrap() * 1e9) as i64,
        (flow["end_s"].as_f64().unwrap() * 1e9) as i64,
    );
    let busy = busy_ns(
        &read_pcap(&out.join("link_in.pcap")),
        [198, 18, 1, 1],
        epoch + end,
        430e3,
    );
    let idle = (flow["idle_s"].as_f64().unwrap() * 1e9) as i64;
    assert!(
        (idle - (end - start - busy)).abs() < 5_000_000,
        "idle {idle} ns, span {} ns less busy {busy} ns",
        end - start
    );
    // Datagrams, their fragments counted once: the calls, and a reply to every call
    // that got through.
    let calls_lost = summary["link"]["forward"]["lost"].as_u64().unwrap();
    assert_eq!(
        (
            flow["packets_sent"].as_u64(),
            flow["packets_returned"].as_u64()
        ),
        (Some(16 + retx), Some(16 + retx - calls_lost)),
        "{flow}"
    );

    // The simulator on the same file: the same client and server, the same bursts (in
    // time: a reply that starts a little later can miss or meet a burst).
    let sim_scenario = airtrace_sim::Scenario::parse(&scenario, NFS_SHORT).unwrap();
    let sim =
        airtrace_sim::run(&sim_scenario, NFS_SHORT, airtrace_sim::Options::default()).unwrap();
    assert!(
        sim.flows[0].retransmissions.abs_diff(retx) <= 2,
        "emulated {flow} vs simulated {:?}",
        sim.flows[0]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 4.4BSD-like host (the simulator's `bsd` profile) with ECN and without delayed ACKs.
const BSD: &str = r#"
name = "bsd_knobs"
duration = "60 s"
captures = ["sender"]

[link]
rate = "2 Mbit/s"
delay = "20 ms"
queue_packets = 50

[[flow]]
app = "bulk"
bytes = "300 KB"
tcp = { profile = "bsd", ecn = true, delayed_ack = false, cc = "reno" }
"#;

#[test]
fn tcp_settings_reach_the_kernel() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("knobs");
    let scenario = dir.join("bsd.toml");
    std::fs::write(&scenario, BSD).unwrap();
    let out = dir.join("bundle");
    let result = spawn(&scenario, &out).wait_with_output().unwrap();
    assert!(
        result.status.success(),
        "emulation failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("meta.json")).unwrap()).unwrap();
    let tcp = &meta["tcp_settings"];
    for (name, value) in [
        ("tcp_sack", "0"),
        ("tcp_timestamps", "0"),
        ("tcp_window_scaling", "0"),
        ("tcp_ecn", "1"),
    ] {
        assert_eq!(tcp["sysctls"][format!("net.ipv4.{name}")], value, "{tcp}");
    }
    for side in ["a", "b"] {
        let route = tcp["routes"][side].as_str().unwrap();
        assert!(
            route.contains("initcwnd 1")
                && route.contains("rto_min lock 1s")
                && route.contains("quickack 1"),
            "{route}"
        );
    }
    let not_applied: Vec<&str> = tcp["not_applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    for key in [
        "initial_rto",
        "granularity",
        "max_backoff_shift",
        "delayed_ack_timeout",
        "limited_transmit",
    ] {
        assert!(
            not_applied.contains(&key),
            "{key} is not applied, and said so: {not_applied:?}"
        );
    }

    // On the wire: a SYN with ECE and CWR (ECN setup) and no option but the MSS (no
    // timestamps, window scale or SACK-permitted); ECT(0) data; one segment in the first
    // flight; an ACK for every data segment.
    let packets = read_pcap(&out.join("sender.pcap"));
    let tcp_of = |p: &[u8]| {
        let ihl = usize::from(p[0] & 0x0f) * 4;
        let doff = usize::from(p[ihl + 12] >> 4) * 4;
        (
            p[ihl + 13],
            p[ihl + 20..ihl + doff].to_vec(),
            p.len() - ihl - doff,
        )
    };
    let from_a = |p: &[u8]| p[12..16] == [198, 18, 0, 1];
    let syn = packets
        .iter()
        .find(|(_, p)| from_a(p) && tcp_of(p).0 & 0x02 != 0)
        .unwrap();
    let (flags, options, _) = tcp_of(&syn.1);
    assert_eq!(flags, 0xc2, "SYN with ECE and CWR");
    assert_eq!(options, [2, 4, 0x05, 0xb4], "MSS 1460 and nothing else");
    let data: Vec<_> = packets
        .iter()
        .filter(|(_, p)| from_a(p) && tcp_of(p).2 > 0)
        .collect();
    assert!(
        data.iter().all(|(_, p)| p[1] & 3 == 2),
        "ECT(0) on every data segment"
    );
    let first_ack = packets
        .iter()
        .find(|(t, p)| !from_a(p) && *t > data[0].0 && tcp_of(p).0 & 0x02 == 0)
        .unwrap()
        .0;
    assert_eq!(
        data.iter().filter(|(t, _)| *t < first_ack).count(),
        1,
        "initial window of one segment"
    );
    let acks = packets
        .iter()
        .filter(|(_, p)| !from_a(p) && tcp_of(p).2 == 0 && tcp_of(p).0 & 0x02 == 0)
        .count();
    assert!(
        acks as f64 >= 0.95 * data.len() as f64,
        "{acks} ACKs for {} segments: no delayed ACKs",
        data.len()
    );
    // The minimum RTO of 1 s, in the kernel's own state.
    let states = std::fs::read_to_string(out.join("tcpstate.jsonl")).unwrap();
    for line in states.lines() {
        let s: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(s["rto_ns"].as_i64().unwrap() >= 1_000_000_000, "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flows_wanting_different_namespace_settings_are_refused() {
    let dir = tmpdir("conflict");
    let scenario = dir.join("two.toml");
    std::fs::write(
        &scenario,
        "[link]\nrate = \"1 Mbit/s\"\ndelay = \"1 ms\"\n\
         [[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { initial_cwnd = 2 }\n\
         [[flow]]\napp = \"bulk\"\nbytes = \"1 MB\"\ntcp = { initial_cwnd = 4 }\n",
    )
    .unwrap();
    let done = Command::new(bin())
        .arg(&scenario)
        .arg("--out")
        .arg(dir.join("b"))
        .output()
        .unwrap();
    assert_eq!(done.status.code(), Some(1));
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(
        err.trim(),
        format!("airtrace-emu: {}: flow[2].tcp.initial_cwnd = 4 (set) needs route attribute initcwnd 4, but flow[1].tcp.initial_cwnd needs 2: one setting for the whole namespace, every flow shares it", scenario.display())
    );
    assert!(!dir.join("b").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The forward link loses its 31st to 71st packets: the tail of the first flights and
/// the first retransmissions, so that only the sender's retransmission timer recovers.
fn outage_scenario() -> String {
    let pattern = format!("{}{}{}", "0".repeat(30), "1".repeat(41), "0".repeat(400));
    format!(
        r#"
name = "rto_outage"
duration = "30 s"
captures = ["sender", "link_in"]

[link]
rate = "430 kbit/s"
delay = "2 ms"
queue_packets = 50

[link.forward]
loss = {{ model = "pattern", pattern = "{pattern}" }}

[[flow]]
app = "bulk"
bytes = "100 KB"
tcp = {{ cc = "reno" }}
"#
    )
}

#[test]
fn timeouts_and_idle_time_of_a_tcp_flow() {
    require_root!();
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmpdir("rto");
    let scenario = dir.join("outages.toml");
    std::fs::write(&scenario, outage_scenario()).unwrap();
    let out = dir.join("bundle");
    let result = spawn(&scenario, &out).wait_with_output().unwrap();
    assert!(
        result.status.success(),
        "emulation failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let flow = &summary["flows"][0];
    assert_eq!(flow["finished"], true, "{flow}");

    // Timeouts: the kernel's count (tcpi_total_rto) against the rises of its backoff
    // in the TCP_INFO samples: every expiry doubles the RTO once more.
    let mut rises = 0;
    let mut last = 0;
    for line in std::fs::read_to_string(out.join("tcpstate.jsonl"))
        .unwrap()
        .lines()
    {
        let b = serde_json::from_str::<serde_json::Value>(line).unwrap()["backoff"]
            .as_i64()
            .unwrap();
        rises += (b - last).max(0);
        last = b;
    }
    assert!(
        rises >= 2,
        "the losses made the timer expire, and again: {rises}"
    );
    assert_eq!(flow["timeouts"], rises, "{flow}");

    // Idle time: data waits from the SYN until the ACK of the last byte; the forward
    // link is busy only while it sends host a's packets.
    let sender = read_pcap(&out.join("sender.pcap"));
    let from_a = |p: &[u8]| p[12..16] == [198, 18, 0, 1];
    let (syn_t, syn) = sender
        .iter()
        .find(|(_, p)| from_a(p) && p[33] & 0x02 != 0)
        .unwrap();
    let isn = u32::from_be_bytes(syn[24..28].try_into().unwrap());
    let acked = |p: &[u8]| {
        u32::from_be_bytes(p[28..32].try_into().unwrap())
            .wrapping_sub(isn)
            .wrapping_sub(1)
    };
    let (end, _) = sender
        .iter()
        .find(|(_, p)| !from_a(p) && acked(p) >= 100_000 && acked(p) < 1 << 31)
        .unwrap();
    assert_eq!(summary["link"]["forward"]["queue_drops"], 0);
    let busy = busy_ns(
        &read_pcap(&out.join("link_in.pcap")),
        [198, 18, 0, 1],
        *end,
        430e3,
    );
    let idle = (flow["idle_s"].as_f64().unwrap() * 1e9) as i64;
    let expected = end - syn_t - busy;
    assert!(
        expected > 1_000_000_000,
        "the outages idled the link: {expected} ns"
    );
    assert!(
        (idle - expected).abs() < 5_000_000,
        "idle {idle} ns, expected {expected} ns"
    );
    let data = sender.iter().filter(|(_, p)| from_a(p)).count() as u64;
    assert_eq!(flow["packets_sent"], data, "every packet host a sent");
    let _ = std::fs::remove_dir_all(&dir);
}
