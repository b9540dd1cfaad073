//! The airtrace emulator: the kernel's real TCP between two network namespaces,
//! through the scenario's link models running in real time, captured by the forwarder.
//!
//! # Map of the code
//!
//! - [`run`]: the entry point; sets up, runs and tears down, and writes the bundle.
//! - [`idle`]: each flow's idle time, from the forwarder's and the generator's
//!   intervals.
//! - [`kernel`]: the scenario's TCP settings as sysctls and route attributes in the
//!   namespaces, and the list of those Linux has no knob for.
//! - [`netns`]: the namespaces, TUN devices, addresses and routes (through iproute2),
//!   removed on drop; [`cleanup`] for what a killed run left; [`netns::preflight`].
//! - [`command`]: a user's command or server in a namespace; [`contain`]: ending every
//!   process a run started, whatever it daemonized, before its namespaces go.
//! - [`forward`]: the real-time forwarder between the two TUN devices, driving the
//!   simulator's own [`airtrace_sim::links::Link`] with CLOCK_MONOTONIC time.
//! - [`traffic`]: the built-in traffic generator (kernel TCP sockets, per-socket
//!   congestion control, TCP_INFO sampling); [`rpc`]: its RPC flows over UDP, run by the
//!   simulator's RPC state machines.
//! - [`writer`]: the thread writing captures and logs into the bundle.
//! - [`tcpinfo`]: `struct tcp_info` fields and tcpstate.jsonl lines.
//! - `sys`: the only unsafe code (TUNSETIFF, getsockopt TCP_INFO).
//!
//! # Safety of the host
//!
//! Traffic never leaves the two namespaces: they have no other device, no default
//! route, addresses from 198.18.0.0/15 only, and the forwarder passes only IPv4 between
//! the two hosts' addresses. SIGINT and SIGTERM stop the run cleanly (namespaces
//! deleted, devices closed, threads joined, processes ended, no partial bundle) within
//! about 50 ms plus the time its commands take to stop: every wait of the run sees
//! the signal at least every 50 ms, a pending TCP connect included.

pub mod command;
pub mod contain;
pub mod forward;
pub mod idle;
pub mod kernel;
pub mod netns;
pub mod rpc;
mod sys;
pub mod tcpinfo;
pub mod traffic;
pub mod writer;

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use airtrace_link::rng::Streams;
use airtrace_sim::bundle::{BundleWriter, LINKTYPE_RAW};
use airtrace_sim::scenario::{AppKind, Scenario, Vantage};
use serde::Serialize;

pub use forward::{DirectionCounters, Timing};
pub use netns::{cleanup_stale as cleanup, preflight};

/// Run options besides the scenario.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// Write the bundle here.
    pub out: &'a Path,
    /// Use this seed instead of the scenario's.
    pub seed: Option<u64>,
    /// Spin instead of sleeping between deadlines (one core at 100 %).
    pub busy_poll: bool,
    /// Wake this long before each deadline and spin the rest (a wake-up from sleep
    /// takes tens of µs). Default 0: on a loaded 2-CPU machine spinning raised the 99th percentile (docs/emulator.md).
    pub spin: Duration,
    /// How often the sampler reads TCP_INFO.
    pub sample_every: Duration,
    /// Stop after this long even if flows are still running (the scenario's
    /// `duration` applies too).
    pub max_duration: Option<Duration>,
    /// Run this command in host a's namespace instead of the built-in traffic
    /// generator; the run ends when it exits.
    pub command: Option<Vec<String>>,
    /// Start this command in host b's namespace first (a server for `command`);
    /// stopped at the end.
    pub server: Option<Vec<String>>,
}

impl<'a> Options<'a> {
    /// Defaults: the scenario's seed, sleeping forwarder, TCP_INFO every millisecond.
    pub fn new(out: &'a Path) -> Self {
        Options {
            out,
            seed: None,
            busy_poll: false,
            spin: Duration::ZERO,
            sample_every: Duration::from_millis(1),
            max_duration: None,
            command: None,
            server: None,
        }
    }
}

/// What stopped a run.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// Missing privileges or system support (one line saying what).
    #[error("{0}")]
    Unsupported(String),
    /// The scenario cannot be emulated.
    #[error("{0}")]
    Setup(String),
    /// SIGINT or SIGTERM arrived; everything was cleaned up and no bundle written.
    #[error("interrupted by a signal; namespaces removed, no bundle written")]
    Interrupted,
    /// A system call or file failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// One flow in summary.json (the simulator's fields where the kernel tells them).
#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    /// The flow's name.
    pub name: String,
    /// The application.
    pub app: &'static str,
    /// `tcp`, or `udp` for the RPC applications.
    pub protocol: &'static str,
    /// Kernel congestion control used (None for RPC flows).
    pub cc: Option<String>,
    /// When the application started, s.
    pub start_s: f64,
    /// When the receiver read the last byte, s.
    pub end_s: Option<f64>,
    /// True when every byte got through.
    pub finished: bool,
    /// Bytes the receiving application read.
    pub bytes_delivered: u64,
    /// `bytes_delivered` × 8 / (`end_s` − `start_s`), bit/s.
    pub goodput_bps: f64,
    /// Segments retransmitted (`tcpi_total_retrans`); RPC calls sent again.
    pub retransmissions: Option<u64>,
    /// Retransmission timer expiries: the sender's `tcpi_total_rto` (SYN timeouts
    /// included; on kernels before 6.7 the rises of `tcpi_backoff` between samples);
    /// for RPC, the client's (each retransmits a call), as in the simulator.
    pub timeouts: Option<u64>,
    /// Not measured for TCP (TCP_INFO does not count them); 0 for RPC (it has none).
    pub fast_retransmits: Option<u64>,
    /// Time the link direction carrying the flow's data sat idle while the flow had
    /// data waiting, s ([`idle`]: the simulator's definition).
    pub idle_s: f64,
    /// Packets host a sent for this flow (IP fragments of a datagram count once).
    pub packets_sent: u64,
    /// Packets host b sent for this flow.
    pub packets_returned: u64,
    /// Last smoothed RTT the sender reported, s (TCP).
    pub srtt_s: Option<f64>,
    /// RPC calls sent for the first time (RPC flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Replies that matched no outstanding call: answers to a retransmitted call whose
    /// first reply had come (RPC flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_replies: Option<u64>,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// The two link directions' counters.
#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    /// a → b.
    pub forward: DirectionCounters,
    /// b → a.
    pub reverse: DirectionCounters,
}

/// summary.json of an emulation.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The scenario's name.
    pub scenario: String,
    /// The seed used (for the link's random streams).
    pub seed: u64,
    /// Always `emulation`.
    pub source: &'static str,
    /// Wall time the run took, s.
    pub end_s: f64,
    /// Link counters.
    pub link: LinkSummary,
    /// How precisely delivery times were kept.
    pub timing: Timing,
    /// One per flow (none when a command ran instead of the generator).
    pub flows: Vec<FlowSummary>,
    /// The user's command, when one ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSummary>,
}

/// What the user's command did.
#[derive(Debug, Clone, Serialize)]
pub struct CommandSummary {
    /// The command run in host a's namespace.
    pub argv: Vec<String>,
    /// Its exit code (negative: killed by that signal; None: still running at the end
    /// and stopped).
    pub exit_code: Option<i32>,
    /// The server run in host b's namespace, if any.
    pub server: Option<Vec<String>>,
}

/// Registers SIGINT and SIGTERM to set the returned flag for the run's lifetime.
struct Signals {
    flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    fn new() -> io::Result<Self> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            ids.push(signal_hook::flag::register(sig, flag.clone())?);
        }
        Ok(Signals { flag, ids })
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Runs `scenario` (its file text `scenario_text` goes into the bundle) in real time
/// and writes the bundle to `options.out`. SIGINT and SIGTERM end it with
/// [`EmuError::Interrupted`] from the moment it starts.
pub fn run(
    scenario: &Scenario,
    scenario_text: &str,
    options: &Options<'_>,
) -> Result<Summary, EmuError> {
    let signals = Signals::new()?;
    match run_until(scenario, scenario_text, options, &signals.flag) {
        // A step that failed while a signal arrived (a Ctrl-C at the terminal reaches
        // every process of the foreground group) failed because of it.
        Err(_) if signals.flag.load(Ordering::SeqCst) => Err(EmuError::Interrupted),
        r => r,
    }
}

/// Sleeps `d`, or less when `flag` is raised (seen every 50 ms at most).
fn sleep_unless(d: Duration, flag: &AtomicBool) {
    let until = Instant::now() + d;
    while !flag.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// [`run`], stopping when `signalled` is raised.
fn run_until(
    scenario: &Scenario,
    scenario_text: &str,
    options: &Options<'_>,
    signalled: &Arc<AtomicBool>,
) -> Result<Summary, EmuError> {
    let kernel_plan =
        kernel::plan(&scenario.flows, kernel::Kernel::probe()).map_err(EmuError::Setup)?;
    preflight().map_err(EmuError::Unsupported)?;
    for (i, f) in scenario.flows.iter().enumerate() {
        if f.app == AppKind::UdpStream {
            return Err(EmuError::Setup(format!(
                "flow[{}]: udp_stream is simulated only; the emulator runs TCP and RPC flows",
                i + 1
            )));
        }
        if !f.app.is_tcp() {
            continue;
        }
        let cc = traffic::congestion_control(f);
        let have = traffic::available_ccs();
        if !have.is_empty() && !have.contains(&cc) {
            return Err(EmuError::Setup(format!(
                "flow[{}]: congestion control {cc:?} is not available (the kernel offers: {})",
                i + 1,
                have.join(", ")
            )));
        }
    }
    let link_spec = scenario.one_link().map_err(EmuError::Setup)?;
    if scenario.captures().contains(&Vantage::Air) {
        return Err(EmuError::Setup(
            "captures: the emulator does not write an air capture (radiotap frames per attempt); the simulator does"
                .into(),
        ));
    }
    let seed = options.seed.unwrap_or(scenario.seed);
    let streams = Streams::new(seed);
    let (link, mtu) = airtrace_sim::build::link(link_spec, &streams).map_err(EmuError::Setup)?;
    let link_meta = link.meta();
    let snaplen = scenario
        .snaplen
        .map_or(262_144, |s| s.0.min(262_144) as u32);
    let bundle = BundleWriter::create(
        options.out,
        scenario.captures(),
        snaplen,
        scenario.link_log,
        scenario.tcp_state_log,
    )?;
    let captures = scenario
        .captures()
        .iter()
        .fold(0u8, |m, &v| m | writer::bit(v));

    // Set up; from here on, dropping `spaces` removes the namespaces. A signal
    // during the setup ends the run before anything starts in them.
    let interrupted = || signalled.load(Ordering::SeqCst);
    let (spaces, tun_a, tun_b) = match netns::Namespaces::create(mtu) {
        Ok(x) if !interrupted() => x,
        Ok(_) => {
            bundle.abandon();
            return Err(EmuError::Interrupted);
        }
        Err(e) => {
            bundle.abandon();
            return Err(e.into());
        }
    };
    let kernel_state = match spaces.apply(&kernel_plan) {
        Ok(state) if !interrupted() => state,
        Ok(_) => {
            bundle.abandon();
            return Err(EmuError::Interrupted);
        }
        Err(e) => {
            bundle.abandon();
            return Err(e.into());
        }
    };
    let epoch_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    let start = Instant::now();
    let mut bundle = bundle;
    let (to_writer, from_forwarder) = writer::channels();
    let (tx, tcp_rx) = mpsc::channel();
    let tcp_log = bundle.tcp_log.take();
    let tcp_writer = std::thread::spawn(move || writer::tcp_log(tcp_log, tcp_rx));
    let writer = std::thread::spawn(move || writer::run(bundle, from_forwarder, epoch_ns));
    let mut forwarder = forward::Forwarder::new(
        link,
        scenario.link_log,
        tun_a,
        tun_b,
        start,
        captures,
        snaplen as usize,
        to_writer,
        options.busy_poll,
    );
    let plans: Vec<_> = scenario
        .flows
        .iter()
        .enumerate()
        .map(|(index, spec)| traffic::Plan {
            index,
            spec: spec.clone(),
            cc: traffic::congestion_control(spec),
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let command_mode = options.command.is_some();
    let mut server = match &options.server {
        Some(argv) => match command::spawn(&spaces.b.ns, argv) {
            Ok(s) => {
                sleep_unless(Duration::from_millis(500), signalled); // let it listen
                Some(s)
            }
            Err(e) => {
                drop((tx, forwarder));
                let _ = (writer.join(), tcp_writer.join());
                return Err(e.into());
            }
        },
        None => None,
    };
    let client = match &options.command {
        Some(argv) => match command::spawn(&spaces.a.ns, argv) {
            Ok(c) => Some(Arc::new(std::sync::Mutex::new(c))),
            Err(e) => {
                drop((tx, forwarder));
                let _ = (writer.join(), tcp_writer.join());
                return Err(e.into());
            }
        },
        None => None,
    };
    let generator = traffic::Generator::start(
        if command_mode { Vec::new() } else { plans },
        spaces.a.ns.clone(),
        spaces.b.ns.clone(),
        start,
        stop.clone(),
        tx.clone(),
        options.sample_every,
    );
    drop(tx);
    let mut end_ns = scenario.duration.0;
    if let Some(max) = options.max_duration {
        end_ns = end_ns.min(i64::try_from(max.as_nanos()).unwrap_or(i64::MAX));
    }
    // The forwarder stops on a signal, at the end time, or once every flow is done.
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (done, stop, finished, n) = (
            done.clone(),
            stop.clone(),
            generator.finished.clone(),
            generator.flows,
        );
        let client = client.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let finished = match &client {
                    Some(c) => c
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .exited()
                        .is_some(),
                    None => finished.load(Ordering::SeqCst) >= n,
                };
                if finished {
                    done.store(true, Ordering::SeqCst);
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    // Its own thread: it may switch itself to real-time scheduling.
    forwarder.spin_ns = options.spin.as_nanos() as i64;
    let flag = signalled.clone();
    let fwd = std::thread::Builder::new()
        .name("airtrace-forwarder".into())
        .spawn(move || {
            let mut forwarder = forwarder;
            let r = forwarder.run(&flag, &done, end_ns);
            (forwarder, r)
        })?;
    let (mut forwarder, fwd_result) = fwd
        .join()
        .map_err(|_| io::Error::other("the forwarder thread panicked"))?;
    let end = start.elapsed();
    let (idle, packets) = (
        forwarder.take_idle(end.as_nanos() as i64),
        forwarder.take_flow_packets(),
    );
    stop.store(true, Ordering::SeqCst);
    let results = generator.join();
    let _ = watcher.join();
    let command = options.command.as_ref().map(|argv| CommandSummary {
        argv: argv.clone(),
        exit_code: client
            .as_ref()
            .and_then(|c| c.lock().unwrap_or_else(|p| p.into_inner()).stop()),
        server: options.server.clone(),
    });
    drop(client);
    if let Some(s) = server.as_mut() {
        s.stop();
    }
    drop(server);
    let timing = forwarder.timing();
    let counters = forwarder.counters;
    drop(forwarder); // closes the TUN devices
    drop(spaces); // deletes the namespaces
    let bundle = writer
        .join()
        .map_err(|_| io::Error::other("the writer thread panicked"))?;
    let mut bundle = bundle?;
    bundle.tcp_log = tcp_writer
        .join()
        .map_err(|_| io::Error::other("the TCP log writer thread panicked"))??;
    if interrupted() {
        bundle.abandon();
        return Err(EmuError::Interrupted);
    }
    if let Err(e) = fwd_result {
        bundle.abandon();
        return Err(e.into());
    }

    let s = |ns: i64| ns as f64 / 1e9;
    let flows: Vec<FlowSummary> = scenario
        .flows
        .iter()
        .zip(&results)
        .enumerate()
        .map(|(i, (spec, r))| {
            let start_s = r.connected_ns.map_or(s(spec.start.0), s);
            let end_s = r.last_ns.map(s);
            let span = end_s.map_or(0.0, |e| e - start_s);
            FlowSummary {
                name: spec
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("flow{}", i + 1)),
                app: spec.app.name(),
                protocol: if spec.app.is_tcp() { "tcp" } else { "udp" },
                cc: spec.app.is_tcp().then(|| r.cc.clone()),
                start_s,
                end_s,
                finished: r.finished,
                bytes_delivered: r.bytes_delivered,
                goodput_bps: if span > 0.0 {
                    r.bytes_delivered as f64 * 8.0 / span
                } else {
                    0.0
                },
                retransmissions: match r.rpc {
                    Some(st) => Some(st.retransmissions),
                    None => r.final_info.map(|x| u64::from(x.total_retrans)),
                },
                timeouts: r.rpc.map(|st| st.retransmissions).or(r.timeouts),
                fast_retransmits: r.rpc.map(|_| 0),
                srtt_s: r.final_info.map(|x| f64::from(x.rtt_us) / 1e6),
                idle_s: idle::overlap_ns(
                    &r.waiting,
                    &idle[usize::from(spec.app == AppKind::RpcRead)],
                ) as f64
                    / 1e9,
                packets_sent: packets.get(i).map_or(0, |p| p[0]),
                packets_returned: packets.get(i).map_or(0, |p| p[1]),
                requests: r.rpc.map(|st| st.requests),
                duplicate_replies: r.rpc.map(|st| st.duplicate_replies),
                error: r.error.clone(),
            }
        })
        .collect();
    let summary = Summary {
        scenario: scenario.name.clone().unwrap_or_default(),
        seed,
        source: "emulation",
        end_s: end.as_secs_f64(),
        link: LinkSummary {
            forward: counters[0],
            reverse: counters[1],
        },
        timing,
        flows,
        command,
    };
    let meta = meta_json(
        scenario,
        seed,
        epoch_ns,
        end.as_nanos() as i64,
        &bundle.vantages(),
        &summary,
        link_meta,
        serde_json::json!({
            "applied": kernel_plan.applied,
            "not_applied": kernel_plan.not_applied,
            "sysctls": kernel_state.sysctls,
            "routes": { "a": kernel_state.routes[0], "b": kernel_state.routes[1] },
            "note": "the scenario's [flow.tcp] settings in force (set, or from the profile or variant set) and what the kernel did with each: applied (a sysctl or route attribute in both namespaces, a socket option, or already the kernel's behaviour) or not applied, and why; `sysctls` are the values in force in host a's namespace, `routes` each namespace's routes",
        }),
    );
    bundle.complete(&meta, scenario_text, &summary)?;
    Ok(summary)
}

#[allow(clippy::too_many_arguments)] // each a part of meta.json
fn meta_json(
    scenario: &Scenario,
    seed: u64,
    epoch_ns: i64,
    end_ns: i64,
    vantages: &[airtrace_sim::scenario::Vantage],
    summary: &Summary,
    link: serde_json::Value,
    tcp_settings: serde_json::Value,
) -> Vec<u8> {
    let vantage_points: Vec<_> = vantages
        .iter()
        .map(|v| serde_json::json!({"name": v.name(), "file": format!("{}.pcap", v.name()), "linktype": LINKTYPE_RAW}))
        .collect();
    let flows: Vec<_> = summary
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            use airtrace_sim::sim::{
                RPC_CLIENT_PORT, RPC_SERVER_PORT, TCP_CLIENT_PORT, TCP_SERVER_PORT,
            };
            let (a, b) = if f.protocol == "tcp" {
                (TCP_CLIENT_PORT, TCP_SERVER_PORT)
            } else {
                (RPC_CLIENT_PORT, RPC_SERVER_PORT)
            };
            serde_json::json!({
                "name": f.name, "app": f.app, "protocol": f.protocol, "cc": f.cc,
                "a": format!("198.18.0.1:{}", a + i as u16),
                "b": format!("198.18.1.1:{}", b + i as u16),
            })
        })
        .collect();
    let uname = nix::sys::utsname::uname().ok();
    let meta = serde_json::json!({
        "format": "airtrace-bundle/1",
        "source": "emulation",
        "producer": format!("airtrace-emu {}", env!("CARGO_PKG_VERSION")),
        "scenario": scenario.name,
        "seed": seed,
        "clock": {
            "kind": "monotonic",
            "epoch_ns": epoch_ns,
            "note": "pcap time stamps are epoch_ns (wall clock at the start) + CLOCK_MONOTONIC time since the start; every vantage point shares this clock; link.jsonl and tcpstate.jsonl t_ns count from the start",
        },
        "kernel": uname.map(|u| u.release().to_string_lossy().into_owned()),
        "end_ns": end_ns,
        "hosts": { "a": "198.18.0.1", "b": "198.18.1.1" },
        "vantage_points": vantage_points,
        "flows": flows,
        "link": link,
        "tcp_settings": tcp_settings,
        "files": airtrace_sim::bundle::files_json(scenario),
    });
    airtrace_sim::bundle::json_file(&meta)
}
