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
use serde::Serialize;

use crate::air::AirEncoder;
use crate::build;
use crate::bundle::{BundleWriter, EPOCH_NS};
use crate::flows::{new_flow, Flow};
pub use crate::flows::{
    FlowSummary, APP_WRITE, RPC_CLIENT_PORT, RPC_SERVER_PORT, TCP_CLIENT_PORT, TCP_SERVER_PORT,
};
use crate::links::{link_dir, Link, PacketId};
use crate::packet::{Body, Encoder, Packet, ADDR_A, ADDR_B, DEFAULT_TTL};
use crate::scenario::{Scenario, Vantage};
use crate::sched::{FlowPart, Scheduler, CARRIER};

/// VJ compression slots per direction (RFC 1144's default of 16).
const VJ_SLOTS: u8 = 16;

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
    /// Per-link-direction counters (a one-link scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkSummary>,
    /// Per-node counters and drops (a network scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::netsim::NetworkSummary>,
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
    bodies: Vec<Body>,
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
    if let Some(network) = &scenario.network {
        return crate::netsim::run(scenario, network, scenario_text, options);
    }
    let spec = scenario.one_link().map_err(SimError::Setup)?;
    let seed = options.seed.unwrap_or(scenario.seed);
    let streams = Streams::new(seed);
    let (mut link, mtu) = build::link(spec, &streams).map_err(SimError::Setup)?;
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
            scenario.captures(),
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
        vj: spec.header_compression.then(|| {
            Box::new([0, 1].map(|_| (Compressor::new(VJ_SLOTS), Decompressor::new(VJ_SLOTS))))
        }),
        flows,
        air: None,
        bundle,
        encoder: Encoder::default(),
        next_packet_id: 0,
        ip_id: [0, 0],
        counters: Default::default(),
        bodies: Vec::new(),
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
        world
            .sched
            .wake(FlowPart::App(i).component(), Some(flow.start_ns));
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
            match FlowPart::of(component) {
                None => world.service_link()?,
                Some(FlowPart::Side(flow, side_a)) => world.service_side(flow, side_a)?,
                Some(FlowPart::App(flow)) => world.service_app(flow)?,
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

impl World {
    /// True when every flow has finished and nothing of theirs is left to exchange.
    fn all_done(&self) -> bool {
        self.flows.iter().all(Flow::done)
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
        self.sched.wake(CARRIER, self.link.next_deadline());
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
        self.flows[i].deliver(self.now, to_a, packet.body, packet.ecn == 3);
        self.service_side(i, to_a)
    }

    /// Lets one side of a flow send what it can now, then asks when it is next due.
    fn service_side(&mut self, i: usize, side_a: bool) -> io::Result<()> {
        let mut bodies = std::mem::take(&mut self.bodies);
        let (wake, state) = self.flows[i].service_side(self.now, side_a, &mut bodies);
        if let Some(state) = state {
            self.log_tcp_state(i, &state)?;
        }
        for body in bodies.drain(..) {
            self.transmit(i, side_a, body)?;
        }
        self.bodies = bodies;
        if self.flows[i].started {
            self.sched.wake(FlowPart::Side(i, side_a).component(), wake);
        }
        Ok(())
    }

    /// The application of flow `i`: starts the flow, and writes for stream and
    /// on-off sources.
    fn service_app(&mut self, i: usize) -> io::Result<()> {
        let next = self.flows[i].service_app(self.now);
        self.sched.wake(FlowPart::App(i).component(), next);
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
            hosts: (ADDR_A, ADDR_B),
            ttl: DEFAULT_TTL,
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
        self.sched.wake(CARRIER, self.link.next_deadline());
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
        let offset = self.flows[packet.flow as usize].stream_offset(packet);
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
                    let offset = self.flows[p.flow as usize].stream_offset(p);
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
        self.line.clear();
        self.flows[i].write_state_line(i, self.now, s, &mut self.line)?;
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
        let flows = self.flows.iter().map(Flow::summary).collect();
        Summary {
            scenario: scenario.name.clone().unwrap_or_default(),
            seed,
            end_s: end as f64 / 1e9,
            events,
            link: Some(LinkSummary {
                forward: self.counters[0],
                reverse: self.counters[1],
            }),
            network: None,
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
                "app": f.app.name(),
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
        "clock": crate::bundle::simulated_clock_json(),
        "end_ns": end,
        "events": events,
        "hosts": { "a": "198.18.0.1", "b": "198.18.1.1" },
        "vantage_points": vantage_points,
        "flows": flows,
        "link": link.meta(),
        "files": crate::bundle::files_json(scenario),
    });
    crate::bundle::json_file(&meta)
}
