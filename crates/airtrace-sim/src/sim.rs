//! The simulation proper: two hosts, the link between them, the flows, and the loop
//! that jumps from one wake-up to the next.
//!
//! Host `a` (198.18.0.1) runs every flow's sender or RPC client, host `b`
//! (198.18.1.1) its receiver or server. Packets from `a` take the link's forward
//! direction, packets from `b` the reverse one. The loop pops the next component due
//! (see [`crate::sched`]), polls it at that time, hands whatever it emits to the link,
//! and asks each touched component when it next needs attention. Nothing here reads a
//! clock or an unseeded random source: a run is a function of the scenario and seed.

use std::io::{self, Write};
use std::path::Path;

use airtrace_link::arq::{AirFrame, AirKind};
use airtrace_link::link::{Event, Sent};
use airtrace_link::record::{DropReason, LinkDir, LinkEventKind, LinkRecord};
use airtrace_link::rng::Streams;
use airtrace_link::vj::{Compressor, Decompressor, Verdict};
use airtrace_tcp::{Endpoint, Phase, Segment};
use rand::RngExt;
use serde::Serialize;

use crate::air::AirEncoder;
use crate::build;
use crate::bundle::{BundleWriter, EPOCH_NS};
use crate::links::{link_dir, Link, PacketId};
use crate::packet::{Body, Datagram, Encoder, Packet};
use crate::rpc;
use crate::scenario::{AppKind, FlowSpec, Scenario, Vantage};
use crate::sched::{Component, Scheduler};

/// VJ compression slots per direction (RFC 1144's default of 16).
const VJ_SLOTS: u8 = 16;
/// Bytes a stream or on-off application writes at a time.
pub const APP_WRITE: u64 = 1460;
/// Port of the first TCP flow's receiver on host `b`; flow `i` uses `TCP_SERVER_PORT +
/// i`. Ports are chosen where Wireshark registers no dissector (`tshark -G decodes`), so
/// the pattern payload is shown as data, never misread as some protocol.
pub const TCP_SERVER_PORT: u16 = 15000;
/// Port of the first TCP flow's sender on host `a`.
pub const TCP_CLIENT_PORT: u16 = 40000;
/// Ports of the first RPC flow's server (host `b`) and client (host `a`).
pub const RPC_SERVER_PORT: u16 = 20049;
/// See [`RPC_SERVER_PORT`].
pub const RPC_CLIENT_PORT: u16 = 25000;

/// Results of one flow, as summary.json reports them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSummary {
    /// The flow's name.
    pub name: String,
    /// The application.
    pub app: &'static str,
    /// `tcp` or `udp`.
    pub protocol: &'static str,
    /// When the application started, s.
    pub start_s: f64,
    /// When its last byte was delivered, s (None if none was).
    pub end_s: Option<f64>,
    /// True when every byte the application had to move got through.
    pub finished: bool,
    /// Application bytes delivered in order at the receiving side.
    pub bytes_delivered: u64,
    /// `bytes_delivered` × 8 / (`end_s` − `start_s`), bit/s.
    pub goodput_bps: f64,
    /// Packets the sending side sent again (TCP segments, RPC calls).
    pub retransmissions: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// Fast retransmits (TCP).
    pub fast_retransmits: u64,
    /// Window reductions for ECN congestion marks (TCP with `ecn`).
    pub ecn_reductions: u64,
    /// Time the transmitter of the link direction carrying this flow's data (forward;
    /// reverse for RPC reads) was idle while the flow had data not yet acknowledged
    /// (Ludwig's utilization: the link should never idle while data waits), s.
    pub idle_s: f64,
    /// Packets host `a` sent for this flow.
    pub packets_sent: u64,
    /// Packets host `b` sent for this flow.
    pub packets_returned: u64,
}

/// Results of a run: summary.json.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The scenario's name.
    pub scenario: String,
    /// The seed used.
    pub seed: u64,
    /// Simulated time at the end of the run, s.
    pub end_s: f64,
    /// Wake-ups processed.
    pub events: u64,
    /// Per-link-direction counters.
    pub link: LinkSummary,
    /// One entry per `[[flow]]`, in order.
    pub flows: Vec<FlowSummary>,
}

/// Counters of the two link directions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LinkSummary {
    /// Forward direction (a → b).
    pub forward: DirectionCounters,
    /// Reverse direction (b → a).
    pub reverse: DirectionCounters,
}

/// What one link direction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DirectionCounters {
    /// Packets offered to the link.
    pub offered: u64,
    /// Packets dropped at a full queue.
    pub queue_drops: u64,
    /// Packets the link gave up on after accepting them: AQM drops, ARQ retry limit,
    /// link resets.
    pub link_drops: u64,
    /// Packets that arrived but that the VJ header decompressor discarded (out of
    /// step after a loss; the receiving TCP would drop them for a bad checksum).
    pub decompressor_discards: u64,
    /// Packets lost by the loss process.
    pub lost: u64,
    /// Packets delivered.
    pub delivered: u64,
}

/// Run options besides the scenario.
#[derive(Default)]
pub struct Options<'a> {
    /// Write a bundle here; `None` runs without writing files.
    pub out: Option<&'a Path>,
    /// Use this seed instead of the scenario's.
    pub seed: Option<u64>,
    /// Called now and then with (simulated now, simulated end), in ns.
    pub progress: Option<&'a mut dyn FnMut(i64, i64)>,
    /// Asked before the first event and every [`CANCEL_EVERY`] events whether to
    /// stop: `true` ends the run with [`SimError::Cancelled`], its partial bundle
    /// removed.
    pub cancel: Option<&'a mut dyn FnMut() -> bool>,
}

/// Events between two questions to [`Options::cancel`] (a power of two; well under a
/// millisecond of a run).
pub const CANCEL_EVERY: u64 = 4096;

/// An error that stopped a run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scenario cannot be built (a trace that does not load, a TCP setting the
    /// model refuses).
    #[error("{0}")]
    Setup(String),
    /// Writing the bundle failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// [`Options::cancel`] asked to stop; no bundle was written.
    #[error("cancelled; no bundle written")]
    Cancelled,
}

/// The transport state of a flow.
enum Transport {
    Tcp {
        a: Box<Endpoint>,
        b: Box<Endpoint>,
    },
    Rpc {
        client: Box<rpc::Client>,
        server: Box<rpc::Server>,
        request_size: u32,
    },
}

/// A flow and its application.
struct Flow {
    name: String,
    app: AppKind,
    ports: (u16, u16),
    start_ns: i64,
    stop_ns: Option<i64>,
    transport: Transport,
    /// Initial sequence numbers of `a` and `b`, for the payload pattern.
    isn: (u32, u32),
    /// Bytes the application still has to hand to TCP (bulk: the rest of the file;
    /// stream: what it could not write yet).
    backlog: u64,
    /// Bytes the application may write in all (None: unlimited).
    limit: Option<u64>,
    /// Bytes accepted by TCP so far.
    written: u64,
    started: bool,
    closed: bool,
    /// Application rate in bit/s and on/off periods (stream, onoff).
    rate_bps: u64,
    on_off: Option<(i64, i64)>,
    next_write_ns: i64,
    delivered: u64,
    last_delivery_ns: Option<i64>,
    finished: bool,
    idle_ns: i64,
    /// When idle time was last settled, and whether data was waiting then.
    settled_ns: i64,
    waiting: bool,
    packets: (u64, u64),
}

impl Flow {
    /// The link direction that carries the flow's data: forward (0), except for RPC
    /// reads, whose data comes back in the replies.
    fn data_direction(&self) -> usize {
        usize::from(self.app == AppKind::RpcRead)
    }

    /// True while the flow has application data not yet acknowledged end to end.
    fn has_waiting_data(&self) -> bool {
        if !self.started || self.finished {
            return false;
        }
        match &self.transport {
            Transport::Tcp { a, .. } => self.backlog > 0 || self.written > a.stats().bytes_acked,
            Transport::Rpc { client, .. } => client.finished_at().is_none(),
        }
    }
}

/// Component numbers: the link, then three per flow (side a, side b, application).
const LINK: Component = 0;
fn side_component(flow: usize, side_a: bool) -> Component {
    1 + 3 * flow as Component + u32::from(!side_a)
}
fn app_component(flow: usize) -> Component {
    1 + 3 * flow as Component + 2
}

/// Everything a run holds.
struct World {
    now: i64,
    sched: Scheduler,
    link: Link,
    mtu: [u32; 2],
    /// For the link log: each packet id's flow and IP ID (kept only with the log on).
    packet_info: Vec<(u32, u16)>,
    records: Vec<LinkRecord>,
    /// The link log is on.
    log_link: bool,
    /// VJ header compression per direction (compressor at the sending end,
    /// decompressor at the receiving end), on links that compress.
    vj: Option<Box<[(Compressor, Decompressor); 2]>>,
    flows: Vec<Flow>,
    bundle: Option<BundleWriter>,
    encoder: Encoder,
    /// The `air` capture's 802.11 frames, when the scenario takes one.
    air: Option<AirEncoder>,
    next_packet_id: u64,
    ip_id: [u16; 2],
    counters: [DirectionCounters; 2],
    /// Scratch buffers, kept to avoid allocating per event.
    segments: Vec<Segment>,
    datagrams: Vec<Datagram>,
    /// Packets on the link, by id.
    in_link: PacketStore,
    events: Vec<(LinkDir, Event<PacketId>)>,
    scratch: Vec<Event<PacketId>>,
    air_frames: Vec<AirFrame>,
    line: Vec<u8>,
}

/// Runs `scenario` (whose file text is `scenario_text`, copied into the bundle).
pub fn run(
    scenario: &Scenario,
    scenario_text: &str,
    options: Options<'_>,
) -> Result<Summary, SimError> {
    let seed = options.seed.unwrap_or(scenario.seed);
    let streams = Streams::new(seed);
    let (mut link, mtu) = build::link(&scenario.link, &streams).map_err(SimError::Setup)?;
    let log_link = options.out.is_some() && scenario.link_log;
    if log_link {
        link.enable_log();
    }
    let mut flows = Vec::with_capacity(scenario.flows.len());
    for (i, spec) in scenario.flows.iter().enumerate() {
        flows.push(
            new_flow(i, spec, &streams)
                .map_err(|e| SimError::Setup(format!("flow[{}]: {e}", i + 1)))?,
        );
    }
    let bundle = match options.out {
        Some(dir) => Some(BundleWriter::create(
            dir,
            &scenario.captures,
            scenario
                .snaplen
                .map_or(262_144, |s| s.0.min(262_144) as u32),
            scenario.link_log,
            scenario.tcp_state_log,
        )?),
        None => None,
    };
    let mut world = World {
        now: 0,
        sched: Scheduler::new(1 + 3 * flows.len()),
        link,
        mtu,
        packet_info: Vec::new(),
        records: Vec::new(),
        log_link,
        vj: scenario.link.header_compression.then(|| {
            Box::new([0, 1].map(|_| (Compressor::new(VJ_SLOTS), Decompressor::new(VJ_SLOTS))))
        }),
        flows,
        air: None,
        bundle,
        encoder: Encoder::default(),
        next_packet_id: 0,
        ip_id: [0, 0],
        counters: Default::default(),
        segments: Vec::new(),
        datagrams: Vec::new(),
        in_link: PacketStore::default(),
        events: Vec::new(),
        scratch: Vec::new(),
        air_frames: Vec::new(),
        line: Vec::with_capacity(256),
    };
    if world
        .bundle
        .as_ref()
        .is_some_and(|b| b.vantages().contains(&Vantage::Air))
        && world.link.enable_air()
    {
        world.air = Some(AirEncoder::default());
    }
    for (i, flow) in world.flows.iter().enumerate() {
        world.sched.wake(app_component(i), Some(flow.start_ns));
    }
    let end_ns = scenario.duration.0;
    let (mut progress, mut cancel) = (options.progress, options.cancel);
    let mut events = 0u64;
    let result = (|| -> Result<(), SimError> {
        while let Some((at, component)) = world.sched.pop() {
            if at > end_ns {
                break;
            }
            if events & (CANCEL_EVERY - 1) == 0 && cancel.as_mut().is_some_and(|c| c()) {
                return Err(SimError::Cancelled);
            }
            world.now = at;
            events += 1;
            world.settle_idle();
            match component {
                LINK => world.service_link()?,
                c => {
                    let flow = ((c - 1) / 3) as usize;
                    match (c - 1) % 3 {
                        0 => world.service_side(flow, true)?,
                        1 => world.service_side(flow, false)?,
                        _ => world.service_app(flow)?,
                    }
                }
            }
            world.note_waiting();
            if events & 0xffff == 0 {
                if let Some(report) = progress.as_mut() {
                    report(world.now, end_ns);
                }
            }
            if world.all_done() {
                break;
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        if let Some(b) = world.bundle.take() {
            b.abandon();
        }
        return Err(e);
    }
    let end = world.now;
    let summary = world.summary(scenario, seed, end, events);
    if let Some(bundle) = world.bundle.take() {
        let meta = meta_json(
            scenario,
            seed,
            end,
            events,
            &bundle.vantages(),
            &world.flows,
            &world.link,
        );
        bundle.complete(&meta, scenario_text, &summary)?;
    }
    Ok(summary)
}

/// Builds flow `i` from its spec.
fn new_flow(i: usize, spec: &FlowSpec, streams: &Streams) -> Result<Flow, String> {
    let mut rng = streams.stream(&format!("flow{}/isn", i + 1));
    let isn = (rng.random::<u32>(), rng.random::<u32>());
    let ts_offsets = (rng.random::<u32>(), rng.random::<u32>());
    let transport = if spec.app.is_tcp() {
        let config = build::tcp_config(spec.tcp.as_ref())?;
        Transport::Tcp {
            a: Box::new(Endpoint::client(config.clone(), isn.0, ts_offsets.0)),
            b: Box::new(Endpoint::server(config, isn.1, ts_offsets.1)),
        }
    } else {
        let rpc = spec.rpc.clone().unwrap_or_default();
        let op = if spec.app == AppKind::RpcRead {
            rpc::Op::Read
        } else {
            rpc::Op::Write
        };
        let request_size = rpc.request_size.0 as u32;
        Transport::Rpc {
            client: Box::new(rpc::Client::new(rpc::ClientConfig {
                op,
                total: spec.bytes.map_or(0, |b| b.0),
                request_size,
                timeout_ns: rpc.timeout.0,
                max_timeout_ns: rpc.max_timeout.0,
                pacing_ns: rpc.pacing.0,
                outstanding: rpc.outstanding,
            })),
            server: Box::new(rpc::Server::new(rpc.service_time.0)),
            request_size,
        }
    };
    let (client_port, server_port) = if spec.app.is_tcp() {
        (TCP_CLIENT_PORT, TCP_SERVER_PORT)
    } else {
        (RPC_CLIENT_PORT, RPC_SERVER_PORT)
    };
    Ok(Flow {
        name: spec
            .name
            .clone()
            .unwrap_or_else(|| format!("flow{}", i + 1)),
        app: spec.app,
        ports: (client_port + i as u16, server_port + i as u16),
        start_ns: spec.start.0,
        stop_ns: spec.stop.map(|d| d.0),
        transport,
        isn,
        backlog: 0,
        limit: spec.bytes.map(|b| b.0),
        written: 0,
        started: false,
        closed: false,
        rate_bps: spec.rate.and_then(|r| r.0).unwrap_or(0),
        on_off: spec.on.zip(spec.off).map(|(on, off)| (on.0, off.0)),
        next_write_ns: spec.start.0,
        delivered: 0,
        last_delivery_ns: None,
        finished: false,
        idle_ns: 0,
        settled_ns: 0,
        waiting: false,
        packets: (0, 0),
    })
}

fn app_name(app: AppKind) -> &'static str {
    match app {
        AppKind::Bulk => "bulk",
        AppKind::Stream => "stream",
        AppKind::Onoff => "onoff",
        AppKind::RpcRead => "rpc_read",
        AppKind::RpcWrite => "rpc_write",
    }
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Open => "open",
        Phase::Disorder => "disorder",
        Phase::Recovery => "recovery",
        Phase::Loss => "loss",
    }
}

impl World {
    /// True when every flow has finished and nothing of theirs is left to exchange.
    fn all_done(&self) -> bool {
        self.flows.iter().all(|f| {
            f.finished
                && match &f.transport {
                    Transport::Tcp { a, b } => a.is_closed() && b.is_closed(),
                    Transport::Rpc { .. } => true,
                }
        })
    }

    /// Polls the link and delivers what arrived.
    fn service_link(&mut self) -> io::Result<()> {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        self.link
            .poll_into(self.now, &mut self.scratch, &mut events);
        self.capture_air()?;
        for (dir, event) in events.drain(..) {
            let d = dir.index();
            match event {
                Event::Delivered { item, ce, at_ns } => {
                    let mut item = self.in_link.take(item);
                    if ce {
                        item.ecn = 3; // RFC 3168 §5: Congestion Experienced
                    }
                    self.counters[d].delivered += 1;
                    self.capture(Vantage::LinkOut, &item, d)?;
                    if !self.decompress(d, &item, at_ns) {
                        continue;
                    }
                    let host = if item.from_a {
                        Vantage::Receiver
                    } else {
                        Vantage::Sender
                    };
                    self.capture(host, &item, d)?;
                    self.deliver(item)?;
                }
                Event::Lost { item, .. } => {
                    self.in_link.take(item);
                    self.counters[d].lost += 1;
                    // A frame damaged on a plain link fails the framing check (PPP's
                    // FCS), which tells the decompressor (RFC 1144 §4.2). Frames an ARQ
                    // link drops or a reset flushes vanish without a word.
                    if let (Some(vj), Link::Plain(_)) = (self.vj.as_mut(), &self.link) {
                        vj[d].1.link_error();
                    }
                }
                Event::Dropped { item, .. } => {
                    self.in_link.take(item);
                    self.counters[d].link_drops += 1;
                }
            }
        }
        self.events = events;
        self.write_link_log()?;
        self.sched.wake(LINK, self.link.next_deadline());
        Ok(())
    }

    /// Runs an arrived packet through direction `d`'s VJ decompressor; false (and a
    /// `packet_discarded` record) when it cannot rebuild the header.
    fn decompress(&mut self, d: usize, packet: &Packet, at_ns: i64) -> bool {
        let (Some(vj), Some((encoded, header))) = (self.vj.as_mut(), packet.vj.as_ref()) else {
            return true;
        };
        let Verdict::Discard(_) = vj[d].1.receive(encoded, header) else {
            return true;
        };
        self.counters[d].decompressor_discards += 1;
        if self.log_link {
            let mut r = LinkRecord::new(at_ns, link_dir(d), LinkEventKind::PacketDiscarded);
            r.packet = Some(packet.id);
            r.bytes = Some(packet.ip_len());
            r.reason = Some(DropReason::HeaderCompression);
            self.records.push(r);
        }
        false
    }

    /// Hands an arrived packet to its flow's endpoint and lets that endpoint answer.
    fn deliver(&mut self, packet: Packet) -> io::Result<()> {
        let i = packet.flow as usize;
        let to_a = !packet.from_a;
        let now = self.now;
        let flow = &mut self.flows[i];
        match (&mut flow.transport, packet.body) {
            (Transport::Tcp { a, b }, Body::Tcp(seg)) => {
                let ep = if to_a { a } else { b };
                ep.on_segment_ce(now, &seg, packet.ecn == 3);
            }
            (
                Transport::Rpc {
                    client,
                    server,
                    request_size,
                },
                Body::Udp(d),
            ) => {
                if to_a {
                    // Replies reach the client: a request's data counts as delivered
                    // when its reply arrives (READ data comes in it; WRITE is
                    // acknowledged by it).
                    client.on_datagram(now, &d);
                    let done = client.stats().bytes_done;
                    if done > flow.delivered {
                        flow.delivered = done;
                        flow.last_delivery_ns = Some(now);
                    }
                    flow.finished |= client.finished_at().is_some();
                } else {
                    server.on_datagram(now, &d, *request_size);
                }
            }
            _ => unreachable!("a flow's packets all have its transport"),
        }
        self.service_side(i, to_a)
    }

    /// Lets one side of a flow send what it can now, then asks when it is next due.
    fn service_side(&mut self, i: usize, side_a: bool) -> io::Result<()> {
        let now = self.now;
        let mut segments = std::mem::take(&mut self.segments);
        let mut datagrams = std::mem::take(&mut self.datagrams);
        let flow = &mut self.flows[i];
        if !flow.started {
            self.segments = segments;
            self.datagrams = datagrams;
            return Ok(());
        }
        let mut state_changed = None;
        let wake = match &mut flow.transport {
            Transport::Tcp { a, b } => {
                let ep = if side_a { a } else { b };
                if side_a {
                    if flow.backlog > 0 {
                        let n = ep.write(flow.backlog);
                        flow.backlog -= n;
                        flow.written += n;
                    }
                    let app_done = flow.backlog == 0
                        && match flow.app {
                            AppKind::Bulk => true,
                            _ => {
                                flow.limit.is_some_and(|l| flow.written >= l)
                                    || flow.stop_ns.is_some_and(|s| now >= s)
                            }
                        };
                    if app_done && !flow.closed {
                        ep.close();
                        flow.closed = true;
                    }
                }
                while let Some(seg) = ep.poll_transmit(now) {
                    segments.push(seg);
                }
                if side_a {
                    if ep.take_state_changed() {
                        state_changed = Some(ep.sender_state());
                    }
                } else {
                    let got = ep.take_delivered();
                    if got > 0 {
                        flow.delivered += got;
                        flow.last_delivery_ns = Some(now);
                    }
                }
                if !flow.finished && flow.closed && a_done(flow) {
                    flow.finished = true;
                }
                match &flow.transport {
                    Transport::Tcp { a, b } => (if side_a { a } else { b }).poll_at(),
                    Transport::Rpc { .. } => unreachable!(),
                }
            }
            Transport::Rpc { client, server, .. } => {
                if side_a {
                    while let Some(d) = client.poll_transmit(now) {
                        datagrams.push(d);
                    }
                    client.poll_at()
                } else {
                    while let Some(d) = server.poll_transmit(now) {
                        datagrams.push(d);
                    }
                    server.poll_at()
                }
            }
        };
        if let Some(state) = state_changed {
            self.log_tcp_state(i, &state)?;
        }
        for seg in segments.drain(..) {
            self.transmit(i, side_a, Body::Tcp(seg))?;
        }
        for d in datagrams.drain(..) {
            self.transmit(i, side_a, Body::Udp(d))?;
        }
        self.segments = segments;
        self.datagrams = datagrams;
        self.sched
            .wake(side_component(i, side_a), wake.map(|t| t.max(now)));
        Ok(())
    }

    /// The application of flow `i`: starts the flow, and writes for stream and
    /// on-off sources.
    fn service_app(&mut self, i: usize) -> io::Result<()> {
        let now = self.now;
        let flow = &mut self.flows[i];
        if !flow.started {
            flow.started = true;
            if flow.app == AppKind::Bulk {
                flow.backlog = flow.limit.unwrap_or(0);
            }
        }
        let mut next = None;
        if matches!(flow.app, AppKind::Stream | AppKind::Onoff) && flow.rate_bps > 0 && !flow.closed
        {
            let stopped = flow.stop_ns.is_some_and(|s| now >= s);
            let room = flow
                .limit
                .map_or(u64::MAX, |l| l.saturating_sub(flow.written + flow.backlog));
            let interval = ((APP_WRITE * 8 * 1_000_000_000) / flow.rate_bps).max(1) as i64;
            if !stopped && room > 0 && now >= flow.next_write_ns {
                let in_on = match flow.on_off {
                    Some((on, off)) => (now - flow.start_ns) % (on + off) < on,
                    None => true,
                };
                if in_on {
                    flow.backlog += APP_WRITE.min(room);
                    flow.next_write_ns = now + interval;
                } else if let Some((on, off)) = flow.on_off {
                    let cycle = on + off;
                    let elapsed = now - flow.start_ns;
                    flow.next_write_ns = flow.start_ns + (elapsed / cycle + 1) * cycle;
                }
            }
            if !stopped && room > APP_WRITE {
                next = Some(flow.next_write_ns.max(now + 1));
            } else if stopped || room == 0 {
                // The last write: the side service closes the connection.
                next = flow.stop_ns.filter(|&s| s > now);
            }
            if let Some(stop) = flow.stop_ns {
                next = next.map(|n| n.min(stop.max(now)));
            }
        }
        self.sched.wake(app_component(i), next);
        self.service_side(i, true)
    }

    /// Sends a packet from one side of flow `i` onto the link.
    fn transmit(&mut self, i: usize, from_a: bool, body: Body) -> io::Result<()> {
        let d = if from_a { 0 } else { 1 };
        let ip_id = self.ip_id[d];
        self.ip_id[d] = ip_id.wrapping_add(1);
        let flow = &mut self.flows[i];
        if from_a {
            flow.packets.0 += 1;
        } else {
            flow.packets.1 += 1;
        }
        let ect = matches!(&body, Body::Tcp(seg) if seg.ect);
        let mut packet = Packet {
            id: self.next_packet_id,
            flow: i as u32,
            from_a,
            ip_id,
            ports: flow.ports,
            ecn: if ect { 2 } else { 0 },
            vj: None,
            body,
        };
        self.next_packet_id += 1;
        let host = if from_a {
            Vantage::Sender
        } else {
            Vantage::Receiver
        };
        self.capture(host, &packet, d)?;
        self.capture(Vantage::LinkIn, &packet, d)?;
        self.counters[d].offered += 1;
        if self.log_link {
            self.packet_info.push((packet.flow, packet.ip_id));
        }
        let mut len = packet.ip_len() as usize;
        if let Some(vj) = self.vj.as_mut() {
            if let Some(header) = packet.tcp_ip_header(u64::from(packet.flow) * 2 + d as u64) {
                let encoded = vj[d].0.compress(&header);
                len = len - header.header_len() + encoded.header_bytes;
                packet.vj = Some((encoded, header));
            }
        }
        let id = packet.id;
        self.in_link.insert(packet);
        if let Sent::Dropped(_, reason) = self.link.send(self.now, d, id, len, ect) {
            self.in_link.take(id);
            match reason {
                DropReason::Queue => self.counters[d].queue_drops += 1,
                _ => self.counters[d].link_drops += 1,
            }
        }
        self.write_link_log()?;
        self.sched.wake(LINK, self.link.next_deadline());
        Ok(())
    }

    /// Writes `packet` to the capture at `vantage`, if there is one.
    fn capture(&mut self, vantage: Vantage, packet: &Packet, d: usize) -> io::Result<()> {
        let Some(bundle) = self.bundle.as_mut() else {
            return Ok(());
        };
        let Some(pcap) = bundle.capture(vantage) else {
            return Ok(());
        };
        let offset = stream_offset(&self.flows, packet);
        let ts = EPOCH_NS + self.now;
        for frame in self.encoder.encode(packet, offset, self.mtu[d]) {
            pcap.write_packet(ts, frame, frame.len() as u32)?;
        }
        Ok(())
    }

    /// Writes what went on the air since the last poll to the `air` capture: every
    /// attempt of the packets still in the link, and the 802.11 ACKs.
    fn capture_air(&mut self) -> io::Result<()> {
        let Some(air) = self.air.as_mut() else {
            return Ok(());
        };
        let Some(pcap) = self.bundle.as_mut().and_then(|b| b.capture(Vantage::Air)) else {
            return Ok(());
        };
        let mut frames = std::mem::take(&mut self.air_frames);
        self.link.drain_air(&mut frames);
        let Some(cfg) = self.link.arq_config() else {
            return Ok(());
        };
        // The Duration field of a data frame covers SIFS and the ACK.
        let nav_us = (cfg.ack_ns / 1000).clamp(0, 32_767) as u16;
        let mut result = Ok(());
        for frame in &frames {
            let ts = EPOCH_NS + frame.t_ns;
            let mut write = |record: &[u8]| {
                if result.is_ok() {
                    result = pcap.write_packet(ts, record, record.len() as u32);
                }
            };
            match frame.kind {
                AirKind::Data { packet, .. } => {
                    let p = self.in_link.get(packet);
                    let offset = stream_offset(&self.flows, p);
                    let d = frame.dir.index();
                    air.encode(
                        frame,
                        self.encoder.encode(p, offset, self.mtu[d]),
                        nav_us,
                        &mut write,
                    );
                }
                AirKind::Ack => air.encode(frame, std::iter::empty(), nav_us, &mut write),
            }
        }
        frames.clear();
        self.air_frames = frames;
        result
    }

    /// Writes the link's new records to link.jsonl (docs/link-log.md), adding each
    /// packet's flow and IP ID (to find it in the captures).
    fn write_link_log(&mut self) -> io::Result<()> {
        if !self.log_link {
            return Ok(());
        }
        let Some(log) = self.bundle.as_mut().and_then(|b| b.link_log.as_mut()) else {
            return Ok(());
        };
        self.link.drain_log(&mut self.records);
        // The simulator's own records (decompressor discards) and the link's, in time order.
        self.records.sort_by_key(|r| r.t_ns);
        let info = &self.packet_info;
        crate::bundle::write_link_records(
            log,
            &self.records,
            |id| info.get(id as usize).copied(),
            &mut self.line,
        )?;
        self.records.clear();
        Ok(())
    }

    /// Appends a line to the TCP state log.
    fn log_tcp_state(&mut self, i: usize, s: &airtrace_tcp::SenderState) -> io::Result<()> {
        let Some(log) = self.bundle.as_mut().and_then(|b| b.tcp_log.as_mut()) else {
            return Ok(());
        };
        let retransmits = match &self.flows[i].transport {
            Transport::Tcp { a, .. } => a.stats().retransmitted_segments,
            Transport::Rpc { .. } => 0,
        };
        self.line.clear();
        write!(
            self.line,
            r#"{{"t_ns":{},"flow":{},"cwnd":{},"ssthresh":{},"srtt_ns":{},"rttvar_ns":{},"rto_ns":{},"phase":"{}","in_flight":{},"backoff":{},"retransmits":{}}}"#,
            self.now,
            i,
            s.cwnd,
            s.ssthresh,
            s.srtt_ns,
            s.rttvar_ns,
            s.rto_ns,
            phase_name(s.phase),
            s.bytes_in_flight,
            s.backoff,
            retransmits
        )?;
        self.line.push(b'\n');
        log.write_all(&self.line)
    }

    /// Adds to each flow's idle time the part of the time since the last event during
    /// which the link direction carrying its data sat idle while it had data waiting (the flow's
    /// state cannot change between events, and the link only falls idle between them,
    /// at the time `forward_idle_from` gives), then notes each flow's state now.
    fn settle_idle(&mut self) {
        let now = self.now;
        let idle_from = [self.link.idle_from(0, now), self.link.idle_from(1, now)];
        for flow in &mut self.flows {
            if flow.waiting {
                if let Some(from) = idle_from[flow.data_direction()] {
                    let start = from.max(flow.settled_ns);
                    if now > start {
                        flow.idle_ns += now - start;
                    }
                }
            }
            flow.settled_ns = now;
        }
    }

    /// Notes, after an event, which flows have data waiting.
    fn note_waiting(&mut self) {
        for flow in &mut self.flows {
            flow.waiting = flow.has_waiting_data();
        }
    }

    fn summary(&self, scenario: &Scenario, seed: u64, end: i64, events: u64) -> Summary {
        let s = |ns: i64| ns as f64 / 1e9;
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let (retransmissions, timeouts, fast, ecn) = match &f.transport {
                    Transport::Tcp { a, .. } => {
                        let st = a.stats();
                        (
                            st.retransmitted_segments,
                            st.timeouts,
                            st.fast_retransmits,
                            st.ecn_reductions,
                        )
                    }
                    Transport::Rpc { client, .. } => {
                        let st = client.stats();
                        (st.retransmissions, st.retransmissions, 0, 0)
                    }
                };
                let end_s = f.last_delivery_ns.map(s);
                let span = f.last_delivery_ns.map_or(0, |t| t - f.start_ns);
                FlowSummary {
                    name: f.name.clone(),
                    app: app_name(f.app),
                    protocol: if f.app.is_tcp() { "tcp" } else { "udp" },
                    start_s: s(f.start_ns),
                    end_s,
                    finished: f.finished,
                    bytes_delivered: f.delivered,
                    goodput_bps: if span > 0 {
                        f.delivered as f64 * 8.0 / s(span)
                    } else {
                        0.0
                    },
                    retransmissions,
                    timeouts,
                    fast_retransmits: fast,
                    ecn_reductions: ecn,
                    idle_s: s(f.idle_ns),
                    packets_sent: f.packets.0,
                    packets_returned: f.packets.1,
                }
            })
            .collect();
        Summary {
            scenario: scenario.name.clone().unwrap_or_default(),
            seed,
            end_s: s(end),
            events,
            link: LinkSummary {
                forward: self.counters[0],
                reverse: self.counters[1],
            },
            flows,
        }
    }
}

/// The packets inside the link, by id. Ids are given in order and packets mostly leave
/// in order, so a ring indexed by `id - base` holds them, its length bounded by the
/// span of ids in the link.
#[derive(Debug, Default)]
struct PacketStore {
    base: u64,
    slots: std::collections::VecDeque<Option<Packet>>,
}

impl PacketStore {
    /// Keeps `packet`; its id must follow the previous one's.
    fn insert(&mut self, packet: Packet) {
        if self.slots.is_empty() {
            self.base = packet.id;
        }
        debug_assert_eq!(packet.id, self.base + self.slots.len() as u64);
        self.slots.push_back(Some(packet));
    }

    /// The packet `id`, still in the link.
    fn get(&self, id: PacketId) -> &Packet {
        self.slots[(id - self.base) as usize]
            .as_ref()
            .expect("the packet is in the link")
    }

    /// Removes and returns the packet `id`.
    fn take(&mut self, id: PacketId) -> Packet {
        let packet = self.slots[(id - self.base) as usize]
            .take()
            .expect("a packet leaves the link once");
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        packet
    }
}

/// Where a TCP segment's first payload byte sits in its stream (0 for UDP): the
/// encoder writes that many bytes of the stream's pattern.
fn stream_offset(flows: &[Flow], packet: &Packet) -> u64 {
    match &packet.body {
        Body::Tcp(seg) => {
            let flow = &flows[packet.flow as usize];
            let isn = if packet.from_a {
                flow.isn.0
            } else {
                flow.isn.1
            };
            u64::from(seg.seq.wrapping_sub(isn).wrapping_sub(1))
        }
        Body::Udp(_) => 0,
    }
}

/// True when a bulk or bounded flow's sender has handed over everything and all of it
/// is acknowledged.
fn a_done(flow: &Flow) -> bool {
    match &flow.transport {
        Transport::Tcp { a, .. } => flow.backlog == 0 && a.all_data_acked(),
        Transport::Rpc { client, .. } => client.finished_at().is_some(),
    }
}

/// meta.json: what produced the bundle.
fn meta_json(
    scenario: &Scenario,
    seed: u64,
    end: i64,
    events: u64,
    vantages: &[Vantage],
    flows: &[Flow],
    link: &Link,
) -> Vec<u8> {
    let vantage_points: Vec<_> = vantages
        .iter()
        .map(|v| {
            serde_json::json!({
                "name": v.name(),
                "file": format!("{}.pcap", v.name()),
                "linktype": crate::bundle::linktype(*v),
            })
        })
        .collect();
    let flows: Vec<_> = flows
        .iter()
        .map(|f| {
            serde_json::json!({
                "name": f.name,
                "app": app_name(f.app),
                "protocol": if f.app.is_tcp() { "tcp" } else { "udp" },
                "a": format!("198.18.0.1:{}", f.ports.0),
                "b": format!("198.18.1.1:{}", f.ports.1),
            })
        })
        .collect();
    let meta = serde_json::json!({
        "format": "airtrace-bundle/1",
        "source": "simulation",
        "producer": format!("airtrace-sim {}", env!("CARGO_PKG_VERSION")),
        "scenario": scenario.name,
        "seed": seed,
        "clock": {
            "kind": "simulated",
            "epoch_ns": EPOCH_NS,
            "note": "pcap time stamps are epoch_ns + simulated time; every vantage point shares this clock",
        },
        "end_ns": end,
        "events": events,
        "hosts": { "a": "198.18.0.1", "b": "198.18.1.1" },
        "vantage_points": vantage_points,
        "flows": flows,
        "link": link.meta(),
        "files": {
            "scenario": "scenario.toml",
            "summary": "summary.json",
            "link_log": scenario.link_log.then_some("link.jsonl"),
            "tcp_state_log": scenario.tcp_state_log.then_some("tcpstate.jsonl"),
        },
    });
    let mut out = serde_json::to_vec_pretty(&meta).unwrap_or_default();
    out.push(b'\n');
    out
}
