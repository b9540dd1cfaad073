//! The simulation of a network of nodes: each flow's two ends at the nodes its
//! scenario names, the radio network between them (`airtrace-net`: 802.11 DCF, ARP,
//! static routes or DSR), and the same wake-up loop as the one-link simulation
//! ([`crate::sim`]).
//!
//! Component 0 is the network; each flow has three more (side a, side b, its
//! application), polled when due. A packet a flow sends is kept here, with its
//! transport content, until the network delivers it at its destination or drops it;
//! the network carries only its IP header. Node `i` has the address 198.18.x.y with
//! x.y = i + 1, inside the 198.18.0.0/15 benchmarking block (RFC 2544). Air captures
//! (802.11 frames, the nodes' MAC addresses) are [`crate::netair`]'s.

use std::collections::BTreeMap;
use std::io::{self, Write};

use airtrace_link::rng::Streams;
use airtrace_net::dsr::agent::{ReplyBy, RouteEvent};
use airtrace_net::dsr::{LinkError, Path};
use airtrace_net::mobile_ip::{Mip, MipEvent};
use airtrace_net::network::{IpPacket, NetEvent, Network};
use airtrace_net::roam::RoamEvent;
use airtrace_net::{Mobility, NodeId, Routes, TxCounters, BROADCAST};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::build::{self, NodeInfo};
use crate::bundle::{BundleWriter, EPOCH_NS, LINKTYPE_IEEE802_11_RADIOTAP, LINKTYPE_RAW};
use crate::flows::{new_flow, Flow, FlowSummary};
use crate::mipwire::MipWriter;
use crate::netair::{mac_text, AirCaptures};
use crate::packet::{Body, Encoder, Packet, DEFAULT_TTL};
use crate::scenario::{AppKind, FlowSpec, MobilitySpec, NetworkSpec, RoutingProfile, Scenario};
use crate::sched::{FlowPart, Scheduler, CARRIER};
use crate::sim::{Options, SimError, Summary, CANCEL_EVERY};
use crate::split::{self, Split, SplitSummary, ZoneSummary};

/// How many packets that left the network are kept for late copies of them.
const RECENT_PACKETS: usize = 4096;

/// MTU of every interface, the network's (802.11 carries 2304 bytes; IP over it uses
/// 1500): where a datagram the network left whole (DSR, a tunnel) is still written as
/// fragments.
const MTU: u32 = airtrace_net::network::DEFAULT_MTU;

/// What summary.json reports of a network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetworkSummary {
    /// One entry per node, in id order.
    pub nodes: Vec<NodeSummary>,
    /// Packets dropped in the network, by reason (`retry_limit`, `queue`, `arp_hold`,
    /// `arp_unanswered`, `no_route`, `ttl_expired`, `not_router`,
    /// `send_buffer_timeout`, `send_buffer_full`, `not_associated`).
    pub drops: BTreeMap<&'static str, u64>,
    /// What the routing did, when routes are discovered (DSR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<RoutingSummary>,
    /// When the nodes move: for each flow, the time its two ends spent at each
    /// shortest-path hop count (links decoded both ways on a quiet channel, sampled
    /// every [`PATH_SAMPLE_NS`]), the "expected throughput" of Holland & Vaidya.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathSummary>>,
}

/// Sampling period of [`PathSummary`], ns.
pub const PATH_SAMPLE_NS: i64 = 50_000_000;

/// How far apart a flow's two ends were over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathSummary {
    /// The flow's name.
    pub flow: String,
    /// Seconds at each hop count (`"1"`, `"2"`, …; `"none"`: no path).
    pub hops_s: BTreeMap<String, f64>,
}

/// Counts of what DSR did over the run, all nodes together.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoutingSummary {
    /// Route requests sent (neighbour searches and floods; forwarding not counted).
    pub requests: u64,
    /// Route replies sent by targets.
    pub replies: u64,
    /// Route replies sent from intermediate nodes' caches.
    pub cache_replies: u64,
    /// Gratuitous replies telling a source of a shorter route (promiscuous listening).
    pub shortening_replies: u64,
    /// Routes an initiator learned from a reply.
    pub routes_learned: u64,
    /// Links the MAC gave up on.
    pub links_broken: u64,
    /// Route errors sent.
    pub errors: u64,
    /// Packets salvaged on another route.
    pub salvaged: u64,
}

/// What one node did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeSummary {
    /// Its name.
    pub name: String,
    /// Its IPv4 address.
    pub address: String,
    /// Where it is (where it starts, if it moves), m.
    pub x: f64,
    /// See `x`.
    pub y: f64,
    /// The 802.11 frames it sent.
    pub frames_sent: TxCounters,
    /// Packets its MAC gave up on after the last attempt.
    pub mac_drops: u64,
    /// Packets dropped at its full interface queue.
    pub queue_drops: u64,
    /// Changes of data rate its rate adaptation made (left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub rate_changes: u64,
    /// Handoffs it started, as a roaming station (left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub handoffs: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Node `id`'s IPv4 address.
pub fn address(id: NodeId) -> [u8; 4] {
    let n = u32::from(id) + 1;
    [198, 18 + (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The IPv4 source and destination of a DSR routing packet (a route request goes to
/// the limited broadcast address, RFC 4728 §6.2).
pub fn routing_hosts(ip: &IpPacket) -> ([u8; 4], [u8; 4]) {
    let dst = if ip.dst == BROADCAST {
        [255; 4]
    } else {
        address(ip.dst)
    };
    (address(ip.src), dst)
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// meta.json's `mobility`: the model and its settings, or the movement file's name
/// (not its path: a bundle does not depend on where the run was).
fn mobility_json(m: &MobilitySpec, spec: &NetworkSpec, seed: u64) -> serde_json::Value {
    match &m.file {
        Some(file) => serde_json::json!({
            "model": "ns2_movement_file",
            "file": file.file_name().map(|f| f.to_string_lossy()),
        }),
        None => serde_json::json!({
            "model": "random_waypoint",
            "speed_mps": m.speed_mps,
            "speed_spread": airtrace_net::mobility::random_waypoint::SPEED_SPREAD,
            "pause_s": m.pause_s.unwrap_or(0.0),
            "pattern": m.pattern.unwrap_or(seed),
            "width_m": spec.random.map(|r| r.width_m),
            "height_m": spec.random.map(|r| r.height_m),
        }),
    }
}

/// One line of mobility.jsonl: a leg of a node's movement (docs/bundle.md).
#[derive(Serialize)]
struct LegLine<'a> {
    t_ns: i64,
    node: &'a str,
    x: f64,
    y: f64,
    speed_mps: f64,
    towards_x: f64,
    towards_y: f64,
    end_ns: i64,
}

/// Writes mobility.jsonl: every leg that starts by `end`, in time order (node order at
/// one time, file order for one node).
fn write_mobility_log(
    out: &mut impl Write,
    mobility: &Mobility,
    nodes: &[NodeInfo],
    end: i64,
) -> io::Result<()> {
    let mut legs: Vec<_> = (0..mobility.nodes())
        .flat_map(|i| {
            let legs = mobility.path(i).legs().iter();
            legs.take_while(|l| l.start_ns <= end).map(move |l| (i, l))
        })
        .collect();
    legs.sort_by_key(|&(i, l)| (l.start_ns, i));
    for (i, leg) in legs {
        let line = LegLine {
            t_ns: leg.start_ns,
            node: &nodes[i].name,
            x: leg.from.x,
            y: leg.from.y,
            speed_mps: leg.speed_mps,
            towards_x: leg.towards.x,
            towards_y: leg.towards.y,
            end_ns: leg.end_ns,
        };
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// A flow's place in a Split-TCP flow: (split, zone from the source).
type Zone = (usize, usize);

/// Split-TCP: for each of the scenario's flows with `[flow.split]`, its proxies, its
/// first zone made of the flow itself (`ends` cut at the first proxy) and a flow per
/// further zone, appended to `flows` and `ends`. Returns the splits, and for each flow
/// the split and zone it is.
fn split_flows(
    scenario: &Scenario,
    spec: &NetworkSpec,
    net: &Network,
    nodes: &[NodeInfo],
    streams: &Streams,
    flows: &mut Vec<Flow>,
    ends: &mut Vec<(NodeId, NodeId)>,
) -> Result<(Vec<Split>, Vec<Option<Zone>>), SimError> {
    let mut zone_of = vec![None; flows.len()];
    let dynamic_routing = spec.routing == RoutingProfile::Dsr;
    let mut splits = Vec::new();
    // Proxies every K hops go on the static route, or with DSR on the shortest path
    // when the run starts (where the first discovery finds the route).
    let start_routes = (dynamic_routing && scenario.flows.iter().any(|f| f.split.is_some()))
        .then(|| Routes::shortest_paths(nodes.len(), |a, b| net.wireless().decodes(a, b)));
    let routes = start_routes.as_ref().unwrap_or(net.routes());
    for (i, f) in scenario.flows.iter().enumerate() {
        let Some(sp) = &f.split else { continue };
        let (src, dst) = ends[i];
        let path = match sp.every {
            Some(0) => vec![src, dst],
            // With DSR, ends with no path at the start get no proxies.
            Some(every) => match split::proxies_every(routes, src, dst, every) {
                Some(path) => path,
                None if dynamic_routing => vec![src, dst],
                None => {
                    return Err(SimError::Setup(format!(
                        "flow[{}]: no route from {} to {} to place Split-TCP proxies on",
                        i + 1,
                        nodes[src as usize].name,
                        nodes[dst as usize].name
                    )))
                }
            },
            None => {
                let mut path = vec![src];
                for p in &sp.proxies {
                    let id = nodes.iter().position(|n| n.name == *p);
                    let id =
                        id.ok_or_else(|| SimError::Setup(format!("no node is named {p:?}")))?;
                    path.push(id as NodeId);
                }
                path.push(dst);
                path
            }
        };
        let follow = sp.follow == Some(true) && sp.every != Some(0);
        if path.len() == 2 && !follow {
            // No proxy between the ends: a plain TCP flow.
            continue;
        }
        ends[i] = (path[0], path[1]);
        let mut zones = vec![i];
        let name = format!("{}/zone", flows[i].name);
        let more = add_zones(
            f,
            &name,
            &path[1..],
            (splits.len(), 1),
            streams,
            flows,
            ends,
        )
        .map_err(|e| SimError::Setup(format!("flow[{}]: {e}", i + 1)))?;
        zone_of.extend(more.iter().map(|&(_, zone)| Some(zone)));
        zones.extend(more.iter().map(|&(z, _)| z));
        let mss = build::tcp_config(f.tcp.as_ref()).map_or(1460, |c| u64::from(c.mss));
        let window = sp.window.map_or(split::DEFAULT_WINDOW, |w| w.0);
        flows[i].write_limit = Some(window);
        zone_of[i] = Some((splits.len(), 0));
        let ack_every = u64::from(sp.ack_every.unwrap_or(split::DEFAULT_ACK_EVERY));
        let mut split = Split::new(zones, path, window, ack_every * mss);
        split.follow = sp.every.filter(|_| follow);
        splits.push(split);
    }
    Ok((splits, zone_of))
}

/// Opens a zone (a relay flow, named `name` and its number) between each two
/// consecutive nodes of `path`, appended to `flows` and `ends`, the first numbered
/// `at.1` in split `at.0`: returns each one's flow index and place.
fn add_zones(
    f: &FlowSpec,
    name: &str,
    path: &[NodeId],
    at: Zone,
    streams: &Streams,
    flows: &mut Vec<Flow>,
    ends: &mut Vec<(NodeId, NodeId)>,
) -> Result<Vec<(usize, Zone)>, String> {
    let mut added = Vec::new();
    for (k, hop) in path.windows(2).enumerate() {
        let z = flows.len();
        let zone = (at.0, at.1 + k);
        let relay = FlowSpec {
            name: Some(format!("{name}{}", zone.1)),
            app: AppKind::Stream,
            bytes: None,
            rate: None,
            on: None,
            off: None,
            stop: None,
            split: None,
            ..f.clone()
        };
        let mut flow = new_flow(z, &relay, streams)?;
        flow.relay_upstream_done = Some(false);
        flows.push(flow);
        ends.push((hop[0], hop[1]));
        added.push((z, zone));
    }
    Ok(added)
}

struct World {
    now: i64,
    sched: Scheduler,
    net: Network,
    nodes: Vec<NodeInfo>,
    /// Each flow's nodes: (side a, side b).
    ends: Vec<(NodeId, NodeId)>,
    /// The scenario's flows, then the zones after the first of the Split-TCP flows.
    flows: Vec<Flow>,
    /// How many of `flows` are the scenario's.
    scenario_flows: usize,
    /// The Split-TCP flows, and for each flow the split and zone it is, if any.
    splits: Vec<Split>,
    zone_of: Vec<Option<Zone>>,
    /// The end-to-end acknowledgements of Split-TCP in the network or delivered, by
    /// packet id: the split and the bytes each acknowledges.
    e2e_acks: FxHashMap<u64, (usize, u64)>,
    /// Split-TCP sources' probes of their destinations in the network, by packet id:
    /// the split.
    probes: FxHashMap<u64, usize>,
    /// The random streams and the scenario's flows, for the zones opened along a new
    /// route.
    streams: Streams,
    flow_specs: Vec<FlowSpec>,
    /// Packets in the network, by id.
    packets: FxHashMap<u64, Packet>,
    /// Packets that left the network lately, whose copies may still arrive (see
    /// `take_packet`), and their order.
    recent: FxHashMap<u64, Packet>,
    recent_order: std::collections::VecDeque<u64>,
    next_packet_id: u64,
    /// Next IP ID of each node.
    ip_id: Vec<u16>,
    bundle: Option<BundleWriter>,
    /// Each node's capture in the bundle, if it has one.
    node_capture: Vec<Option<usize>>,
    /// The air captures, if any.
    air: Option<AirCaptures>,
    encoder: Encoder,
    /// Scratch buffer for a packet's DSR header.
    dsr_bytes: Vec<u8>,
    drops: BTreeMap<&'static str, u64>,
    mac_drops: Vec<u64>,
    /// Rate changes per node.
    rate_changes: Vec<u64>,
    /// Handoffs per node.
    handoffs: Vec<u64>,
    queue_drops: Vec<u64>,
    bodies: Vec<Body>,
    /// DSR's counts (`None`: static routes).
    routing: Option<RoutingSummary>,
    /// Scratch buffer for the network's events.
    net_events: Vec<NetEvent>,
    /// Mobile IP's packets for the captures.
    mip: MipWriter,
    line: Vec<u8>,
}

/// Runs a network scenario (see the [module documentation](self)).
pub(crate) fn run(
    scenario: &Scenario,
    spec: &NetworkSpec,
    scenario_text: &str,
    options: Options<'_>,
) -> Result<Summary, SimError> {
    let seed = options.seed.unwrap_or(scenario.seed);
    let streams = Streams::new(seed);
    let (mut net, nodes) =
        build::network(spec, &streams, scenario.duration.0).map_err(SimError::Setup)?;
    let id_of = |name: &Option<String>| {
        let name = name.as_deref().unwrap_or_default();
        nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as NodeId)
            .ok_or_else(|| SimError::Setup(format!("no node is named {name:?}")))
    };
    let mut flows = Vec::with_capacity(scenario.flows.len());
    let mut ends = Vec::with_capacity(scenario.flows.len());
    for (i, f) in scenario.flows.iter().enumerate() {
        flows.push(
            new_flow(i, f, &streams)
                .map_err(|e| SimError::Setup(format!("flow[{}]: {e}", i + 1)))?,
        );
        let (from, to) = spec.flow_ends(f);
        ends.push((id_of(&from)?, id_of(&to)?));
    }
    let dynamic_routing = spec.routing == RoutingProfile::Dsr;
    let (splits, zone_of) = split_flows(
        scenario, spec, &net, &nodes, &streams, &mut flows, &mut ends,
    )?;
    let mut node_capture = vec![None; nodes.len()];
    let mut air = None;
    let bundle = match options.out {
        Some(dir) => {
            let snaplen = scenario
                .snaplen
                .map_or(262_144, |s| s.0.min(262_144) as u32);
            let mut b =
                BundleWriter::create(dir, &[], snaplen, scenario.link_log, scenario.tcp_state_log)?;
            for name in &spec.captures {
                let id = id_of(&Some(name.clone()))?;
                node_capture[id as usize] = Some(b.add_node_capture(name, LINKTYPE_RAW)?);
            }
            if dynamic_routing && scenario.link_log {
                b.start_routes_log()?;
            }
            if !spec.air_captures.is_empty() {
                let mut capture = vec![None; nodes.len()];
                for name in &spec.air_captures {
                    let id = id_of(&Some(name.clone()))?;
                    let file = format!("air-{name}");
                    capture[id as usize] =
                        Some(b.add_node_capture(&file, LINKTYPE_IEEE802_11_RADIOTAP)?);
                }
                air = Some(AirCaptures::new(capture, &mut net));
            }
            Some(b)
        }
        None => None,
    };
    let n = nodes.len();
    let mut world = World {
        now: 0,
        sched: Scheduler::new(1 + 3 * flows.len()),
        net,
        nodes,
        ends,
        flows,
        scenario_flows: scenario.flows.len(),
        splits,
        zone_of,
        e2e_acks: FxHashMap::default(),
        probes: FxHashMap::default(),
        streams,
        flow_specs: scenario.flows.clone(),
        packets: FxHashMap::default(),
        recent: FxHashMap::default(),
        recent_order: std::collections::VecDeque::new(),
        next_packet_id: 0,
        ip_id: vec![0; n],
        bundle,
        node_capture,
        air,
        encoder: Encoder::default(),
        dsr_bytes: Vec::new(),
        drops: BTreeMap::new(),
        mac_drops: vec![0; n],
        rate_changes: vec![0; n],
        handoffs: vec![0; n],
        queue_drops: vec![0; n],
        bodies: Vec::new(),
        routing: dynamic_routing.then(RoutingSummary::default),
        net_events: Vec::new(),
        mip: MipWriter::default(),
        line: Vec::with_capacity(256),
    };
    for (i, flow) in world.flows.iter().enumerate() {
        if flow.relay_upstream_done.is_none() {
            world
                .sched
                .wake(FlowPart::App(i).component(), Some(flow.start_ns));
        }
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
            match FlowPart::of(component) {
                None => world.service_net()?,
                Some(FlowPart::Side(flow, side_a)) => world.service_side(flow, side_a)?,
                Some(FlowPart::App(flow)) => world.service_app(flow)?,
            }
            if events & 0xffff == 0 {
                if let Some(report) = progress.as_mut() {
                    report(world.now, end_ns);
                }
            }
            if world.flows.iter().all(Flow::done) {
                break;
            }
        }
        world.finish_air()?;
        Ok(())
    })();
    if let Err(e) = result {
        if let Some(b) = world.bundle.take() {
            b.abandon();
        }
        return Err(e);
    }
    let end = world.now;
    let summary = Summary {
        scenario: scenario.name.clone().unwrap_or_default(),
        seed,
        end_s: end as f64 / 1e9,
        events,
        link: None,
        network: Some(world.network_summary(end_ns)),
        flows: world.flow_summaries(),
    };
    if let Some(bundle) = world.bundle.take() {
        if let Some(mobility) = world.net.wireless().mobility() {
            bundle.put_with("mobility.jsonl", |out| {
                write_mobility_log(out, mobility, &world.nodes, end)
            })?;
        }
        let meta = world.meta_json(scenario, spec, seed, end, events);
        bundle.complete(&meta, scenario_text, &summary)?;
    }
    Ok(summary)
}

impl World {
    /// Polls the network and handles what happened.
    fn service_net(&mut self) -> io::Result<()> {
        let mut events = std::mem::take(&mut self.net_events);
        self.net.poll_into(self.now, &mut events);
        self.handle(&mut events)?;
        self.net_events = events;
        self.write_air()?;
        self.sched.wake(CARRIER, self.net.next_deadline());
        Ok(())
    }

    /// Writes what the radios saw since the last call to the air captures.
    fn write_air(&mut self) -> io::Result<()> {
        match (self.air.as_mut(), self.bundle.as_mut()) {
            (Some(air), Some(bundle)) => air.write(&mut self.net, bundle),
            _ => Ok(()),
        }
    }

    /// Ends the air captures with the frames still on the air.
    fn finish_air(&mut self) -> io::Result<()> {
        match (self.air.as_mut(), self.bundle.as_mut()) {
            (Some(air), Some(bundle)) => air.finish(&mut self.net, bundle),
            _ => Ok(()),
        }
    }

    /// Handles (and empties) `events`.
    fn handle(&mut self, events: &mut Vec<NetEvent>) -> io::Result<()> {
        for e in events.drain(..) {
            match e {
                NetEvent::Out { node, packet, .. } | NetEvent::In { node, packet, .. } => {
                    self.capture(node, packet)?
                }
                NetEvent::Local { packet, .. } if !packet.is_control() => {
                    let Some(p) = self.take_packet(packet.user) else {
                        continue;
                    };
                    if let Some(&(s, acked)) = self.e2e_acks.get(&p.id) {
                        self.on_e2e_ack(s, acked, packet.dsr.map(|h| h.route))?;
                        continue;
                    }
                    if let Some(&s) = self.probes.get(&p.id) {
                        let acked = self.splits[s].ack_now(self.now);
                        self.send_e2e_ack(s, acked)?;
                        continue;
                    }
                    let i = p.flow as usize;
                    if self.flows[i].retired {
                        continue;
                    }
                    let to_a = !p.from_a;
                    self.flows[i].deliver(self.now, to_a, p.body, p.ecn == 3);
                    self.service_side(i, to_a)?;
                    if to_a {
                        self.on_single_zone_ack(i, packet.dsr.map(|h| h.route))?;
                    }
                }
                NetEvent::Local { .. } => {}
                NetEvent::Route { at_ns, node, event } => self.on_route(at_ns, node, event)?,
                NetEvent::RateChanged {
                    at_ns,
                    node,
                    neighbour,
                    from_bps,
                    to_bps,
                } => {
                    self.rate_changes[node as usize] += 1;
                    self.log_rate(at_ns, node, neighbour, from_bps, to_bps)?;
                }
                NetEvent::MobileIp { at_ns, node, event } => self.log_mip(at_ns, node, event)?,
                NetEvent::Roam { at_ns, node, event } => {
                    if matches!(event, RoamEvent::Handoff { .. }) {
                        self.handoffs[node as usize] += 1;
                    }
                    self.log_roam(at_ns, node, event)?;
                }
                NetEvent::Dropped {
                    at_ns,
                    node,
                    packet,
                    reason,
                } => {
                    // A fragment's packet stays for its other fragments: it leaves with
                    // its datagram's own drop or delivery.
                    let p = if packet.is_control() {
                        None
                    } else if packet.frag.is_some() {
                        self.packets.get(&packet.user).copied()
                    } else {
                        self.take_packet(packet.user)
                    };
                    *self.drops.entry(reason.name()).or_default() += 1;
                    match reason {
                        airtrace_net::DropReason::RetryLimit => self.mac_drops[node as usize] += 1,
                        airtrace_net::DropReason::QueueFull => self.queue_drops[node as usize] += 1,
                        _ => {}
                    }
                    let fragment_len = packet.frag.map(|_| packet.len);
                    self.log_drop(at_ns, node, p.as_ref(), fragment_len, reason.name())?;
                }
            }
        }
        Ok(())
    }

    /// The packet `id` leaves the network (delivered or dropped). With dynamic routing
    /// the network may hold copies of it still (a node whose MAC gave up after the
    /// frame got through sends it again on another route), so the last
    /// [`RECENT_PACKETS`] that left are kept for their copies.
    fn take_packet(&mut self, id: u64) -> Option<Packet> {
        if let Some(p) = self.packets.remove(&id) {
            if self.routing.is_some() {
                if self.recent_order.len() == RECENT_PACKETS {
                    if let Some(old) = self.recent_order.pop_front() {
                        self.recent.remove(&old);
                    }
                }
                self.recent_order.push_back(id);
                self.recent.insert(id, p);
            }
            return Some(p);
        }
        self.recent.get(&id).copied()
    }

    /// A route error about packet `id` reached `node`: if `node` sent it from one end
    /// of a flow, that end hears that its route broke (ELFN, when its TCP has it on).
    fn notify_sender(&mut self, node: NodeId, id: u64) -> io::Result<()> {
        let Some(p) = self.packets.get(&id).or_else(|| self.recent.get(&id)) else {
            return Ok(());
        };
        let (i, side_a) = (p.flow as usize, p.from_a);
        let (a, b) = self.ends[i];
        if node != if side_a { a } else { b } {
            return Ok(());
        }
        self.flows[i].route_failed(self.now, side_a);
        self.service_side(i, side_a)
    }

    /// Counts a routing event and writes it to routes.jsonl.
    fn on_route(&mut self, at_ns: i64, node: NodeId, event: RouteEvent) -> io::Result<()> {
        match event {
            RouteEvent::LinkBroken { .. } => self.mac_drops[node as usize] += 1,
            RouteEvent::ErrorReceived {
                link,
                about: Some(id),
            } if link.tell == node => self.notify_sender(node, id)?,
            _ => {}
        }
        if let Some(r) = self.routing.as_mut() {
            match event {
                RouteEvent::RequestSent { .. } => r.requests += 1,
                RouteEvent::ReplySent { by, .. } => match by {
                    ReplyBy::Target => r.replies += 1,
                    ReplyBy::Cache => r.cache_replies += 1,
                    ReplyBy::Shortening => r.shortening_replies += 1,
                },
                RouteEvent::RouteLearned { .. } => r.routes_learned += 1,
                RouteEvent::LinkBroken { .. } => r.links_broken += 1,
                RouteEvent::ErrorSent { .. } => r.errors += 1,
                RouteEvent::ErrorReceived { .. } => {}
                RouteEvent::Salvaged { .. } => r.salvaged += 1,
            }
        }
        let Some(log) = self.bundle.as_mut().and_then(|b| b.routes_log.as_mut()) else {
            return Ok(());
        };
        let names = |p: &Path| -> Vec<&str> {
            p.as_slice()
                .iter()
                .map(|&n| self.nodes[n as usize].name.as_str())
                .collect()
        };
        let name = |n: NodeId| self.nodes.get(n as usize).map(|n| n.name.as_str());
        let link = |l: &LinkError| serde_json::json!({"from": name(l.from), "to": name(l.to), "tell": name(l.tell)});
        let mut line = serde_json::json!({"t_ns": at_ns, "node": name(node)});
        let fields = match event {
            RouteEvent::RequestSent {
                target,
                id,
                propagating,
            } => serde_json::json!({
                "event": "request", "target": name(target), "id": id, "propagating": propagating}),
            RouteEvent::ReplySent { to, route, by } => serde_json::json!({
                "event": "reply", "to": name(to), "route": names(&route), "by": by.name()}),
            RouteEvent::RouteLearned { route } => serde_json::json!({
                "event": "route_learned", "route": names(&route)}),
            RouteEvent::LinkBroken { to } => {
                serde_json::json!({"event": "link_broken", "to": name(to)})
            }
            RouteEvent::ErrorSent { link: l } => {
                serde_json::json!({"event": "error_sent", "link": link(&l)})
            }
            RouteEvent::ErrorReceived { link: l, about } => serde_json::json!({
                "event": "error_received", "link": link(&l), "packet": about}),
            RouteEvent::Salvaged { src, dst, route } => serde_json::json!({
                "event": "salvaged", "src": name(src), "dst": name(dst), "route": names(&route)}),
        };
        if let (Some(line), serde_json::Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        serde_json::to_writer(&mut *log, &line)?;
        log.write_all(b"\n")
    }

    /// Writes `ip`'s packet to `node`'s capture, if it has one, with the TTL it has
    /// there.
    fn capture(&mut self, node: NodeId, ip: IpPacket) -> io::Result<()> {
        let (Some(index), Some(bundle)) = (self.node_capture[node as usize], self.bundle.as_mut())
        else {
            return Ok(());
        };
        self.dsr_bytes.clear();
        if let Some(h) = &ip.dsr {
            h.write(0, address, &mut self.dsr_bytes);
        }
        if let Some(Mip::Message(_)) = ip.mip {
            if let Some(frame) = self.mip.packet(&mut self.encoder, &ip, None, &[]) {
                let pcap = bundle.node_capture(index);
                return pcap.write_packet(EPOCH_NS + self.now, frame, frame.len() as u32);
            }
        }
        if ip.is_control() {
            let frame = self
                .encoder
                .encode_routing(ip.ttl, routing_hosts(&ip), &self.dsr_bytes);
            let pcap = bundle.node_capture(index);
            return pcap.write_packet(EPOCH_NS + self.now, frame, frame.len() as u32);
        }
        let Some(packet) = self
            .packets
            .get_mut(&ip.user)
            .or_else(|| self.recent.get_mut(&ip.user))
        else {
            return Ok(());
        };
        let offset = self.flows[packet.flow as usize].stream_offset(packet);
        let pcap = bundle.node_capture(index);
        if let Some(Mip::Tunnel { .. }) = ip.mip {
            let inner = Some((&*packet, offset));
            if let Some(frame) = self
                .mip
                .packet(&mut self.encoder, &ip, inner, &self.dsr_bytes)
            {
                pcap.write_packet(EPOCH_NS + self.now, frame, frame.len() as u32)?;
            }
            return Ok(());
        }
        packet.ttl = ip.ttl;
        if let Some(f) = ip.frag {
            let piece = (
                f.offset as usize,
                ip.len.saturating_sub(20) as usize,
                f.more,
            );
            let frame = self
                .encoder
                .encode_fragment(packet, offset, &self.dsr_bytes, piece);
            return pcap.write_packet(EPOCH_NS + self.now, frame, frame.len() as u32);
        }
        for frame in self
            .encoder
            .encode_routed(packet, offset, MTU, &self.dsr_bytes)
        {
            pcap.write_packet(EPOCH_NS + self.now, frame, frame.len() as u32)?;
        }
        Ok(())
    }

    /// Writes one record of the network's link.jsonl, when there is one: the fields
    /// every record has ([`Record`], docs/link-log.md), then those of its kind, which
    /// `extra` appends, each led by a comma; `extra` is given the JSON of a node's name
    /// (null for none).
    fn log_record(
        &mut self,
        at_ns: i64,
        node: NodeId,
        record: Record,
        extra: impl FnOnce(&mut Vec<u8>, &dyn Fn(Option<NodeId>) -> String) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some(log) = self.bundle.as_mut().and_then(|b| b.link_log.as_mut()) else {
            return Ok(());
        };
        let nodes = &self.nodes;
        let name = |n: Option<NodeId>| match n.and_then(|n| nodes.get(n as usize)) {
            Some(n) => format!("\"{}\"", n.name),
            None => "null".to_string(),
        };
        let line = &mut self.line;
        line.clear();
        let number = |v: Option<u64>| v.map_or_else(|| "null".to_string(), |v| v.to_string());
        let text = |v: Option<&str>| v.map_or_else(|| "null".to_string(), |v| format!("\"{v}\""));
        write!(
            line,
            r#"{{"t_ns":{at_ns},"node":{},"dir":null,"kind":"{}","packet":{},"frame":null,"attempt":{},"bytes":{},"queue_packets":null,"reason":{},"fragments":null,"flow":{},"ip_id":{}"#,
            name(Some(node)),
            record.kind,
            number(record.packet),
            number(record.attempt),
            number(record.bytes),
            text(record.reason),
            number(record.flow),
            number(record.ip_id),
        )?;
        extra(line, &name)?;
        line.extend_from_slice(b"}\n");
        log.write_all(line)
    }

    /// A `packet_dropped` record in link.jsonl, naming the node; a fragment's has the
    /// fragment's length.
    fn log_drop(
        &mut self,
        at_ns: i64,
        node: NodeId,
        packet: Option<&Packet>,
        fragment_len: Option<u32>,
        reason: &str,
    ) -> io::Result<()> {
        let record = Record {
            kind: "packet_dropped",
            packet: packet.map(|p| p.id),
            bytes: packet.map(|p| u64::from(fragment_len.unwrap_or_else(|| p.ip_len()))),
            reason: Some(reason),
            flow: packet.map(|p| p.flow as u64),
            ip_id: packet.map(|p| u64::from(p.ip_id)),
            ..Record::default()
        };
        self.log_record(at_ns, node, record, |_, _| Ok(()))
    }

    /// A `rate_changed` record in link.jsonl: `node`'s data frames to `peer` now go
    /// at `to_bps`.
    fn log_rate(
        &mut self,
        at_ns: i64,
        node: NodeId,
        peer: NodeId,
        from_bps: u64,
        to_bps: u64,
    ) -> io::Result<()> {
        let record = Record {
            kind: "rate_changed",
            ..Record::default()
        };
        self.log_record(at_ns, node, record, |line, name| {
            write!(
                line,
                r#","peer":{},"from_rate_bps":{from_bps},"rate_bps":{to_bps}"#,
                name(Some(peer))
            )
        })
    }

    /// A `handoff` or `association` record in link.jsonl (docs/link-log.md): station
    /// `node` left `from_peer` for `peer`, or is associated with `peer`.
    fn log_roam(&mut self, at_ns: i64, node: NodeId, event: RoamEvent) -> io::Result<()> {
        let (kind, peer, from, reason) = match event {
            RoamEvent::Handoff { from, to, reason } => {
                ("handoff", to, Some(from), Some(reason.name()))
            }
            RoamEvent::Associated { ap } => ("association", Some(ap), None, None),
        };
        let record = Record {
            kind,
            reason,
            ..Record::default()
        };
        self.log_record(at_ns, node, record, |line, name| {
            write!(line, r#","peer":{}"#, name(peer))?;
            if let Some(from) = from {
                write!(line, r#","from_peer":{}"#, name(from))?;
            }
            Ok(())
        })
    }

    /// A `registration_request` or `registration_reply` record in link.jsonl
    /// (docs/link-log.md): mobile node `node` sent a registration through `peer`, or
    /// heard its reply.
    fn log_mip(&mut self, at_ns: i64, node: NodeId, event: MipEvent) -> io::Result<()> {
        let (kind, r, attempt, reason) = match event {
            MipEvent::RequestSent {
                registration,
                attempt,
            } => (
                "registration_request",
                registration,
                Some(u64::from(attempt)),
                None,
            ),
            MipEvent::ReplyReceived {
                registration,
                accepted,
            } => (
                "registration_reply",
                registration,
                None,
                Some(if accepted { "accepted" } else { "denied" }),
            ),
        };
        let record = Record {
            kind,
            attempt,
            reason,
            ..Record::default()
        };
        self.log_record(at_ns, node, record, |line, name| {
            write!(
                line,
                r#","peer":{},"care_of":{},"home_agent":{},"registration":{}"#,
                name(Some(r.via)),
                name(r.care_of),
                name(Some(r.home_agent)),
                r.id
            )
        })
    }

    /// Lets one side of a flow send what it can now, then asks when it is next due.
    fn service_side(&mut self, i: usize, side_a: bool) -> io::Result<()> {
        if self.flows[i].retired {
            return Ok(());
        }
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
        if let Some((s, zone)) = self.zone_of[i] {
            self.relay(s, zone)?;
        }
        Ok(())
    }

    fn service_app(&mut self, i: usize) -> io::Result<()> {
        let next = self.flows[i].service_app(self.now);
        self.sched.wake(FlowPart::App(i).component(), next);
        self.service_side(i, true)
    }

    /// Split-TCP: hands what zone `zone` of split `s` delivered to the next zone's
    /// sender (at a proxy), or acknowledges it end to end (at the destination, whose
    /// zone's application wakes to repeat a lost acknowledgement).
    fn relay(&mut self, s: usize, zone: usize) -> io::Result<()> {
        let split = &mut self.splits[s];
        let i = split.zones[zone];
        if zone == 0 {
            split.note_written(self.flows[i].written);
            if split.single_zone() {
                let limit = split.on_zone_ack(self.now, self.flows[i].acked_bytes());
                self.flows[i].write_limit = Some(limit);
            }
            if split.probe_due(self.now) {
                self.send_probe(s)?;
                if self.flows[i].retired {
                    // The answer came at once and the zones were chosen again.
                    return Ok(());
                }
            }
            let split = &self.splits[s];
            self.sched
                .wake(FlowPart::App(i).component(), split.probe_at());
        }
        let split = &mut self.splits[s];
        let new = split.take_new(zone, self.flows[i].delivered);
        let all_in = self.flows[i].finished;
        match split.zones.get(zone + 1).copied() {
            Some(next) => {
                let flow = &mut self.flows[next];
                if new > 0 || flow.relay_upstream_done != Some(all_in) {
                    flow.backlog += new;
                    flow.relay_upstream_done = Some(all_in);
                    // A proxy opens its zone's connection when the first bytes for
                    // it arrive.
                    if flow.started {
                        self.service_side(next, true)?;
                    } else {
                        self.service_app(next)?;
                    }
                }
            }
            None => {
                if new > 0 {
                    split.delivered_at = Some(self.now);
                }
                if let Some(acked) = split.ack_due(self.now, all_in) {
                    self.send_e2e_ack(s, acked)?;
                }
                if !all_in {
                    let repeat = self.splits[s].repeat_at();
                    self.sched.wake(FlowPart::App(i).component(), repeat);
                }
            }
        }
        Ok(())
    }

    /// Sends split `s`'s end-to-end acknowledgement of `acked` bytes from the
    /// destination to the source: a pure ACK of the flow's connection as the
    /// source numbers it.
    fn send_e2e_ack(&mut self, s: usize, acked: u64) -> io::Result<()> {
        let nodes = &self.splits[s].nodes;
        let (src, dst) = (nodes[0], nodes[nodes.len() - 1]);
        let ip_id = self.next_ip_id(dst);
        let split = &self.splits[s];
        let flow = &self.flows[split.zones[0]];
        let seg = airtrace_tcp::Segment {
            seq: flow.isn.1.wrapping_add(1),
            ack: flow
                .isn
                .0
                .wrapping_add(1)
                .wrapping_add((acked - split.base) as u32),
            flags: airtrace_tcp::Flags::ACK,
            window: split.window.min(u64::from(u16::MAX)) as u16,
            len: 0,
            options: Default::default(),
            ect: false,
        };
        let packet = self.split_control_packet(s, false, ip_id, seg);
        self.e2e_acks.insert(packet.id, (s, acked));
        self.send_packet(packet, dst, src)
    }

    /// Split `s`'s source probes its destination: a keep-alive (RFC 1122 §4.2.3.6:
    /// no data, its sequence number one below the first byte not yet acknowledged end
    /// to end, so the receiver answers with an ACK) of the flow's
    /// connection as the destination numbers it, which the destination answers
    /// with its end-to-end acknowledgement.
    fn send_probe(&mut self, s: usize) -> io::Result<()> {
        let nodes = &self.splits[s].nodes;
        let (src, dst) = (nodes[0], nodes[nodes.len() - 1]);
        let ip_id = self.next_ip_id(src);
        let split = &self.splits[s];
        let flow = &self.flows[split.zones[0]];
        let seg = airtrace_tcp::Segment {
            seq: flow
                .isn
                .0
                .wrapping_add((split.acked_at_source - split.base) as u32),
            ack: flow.isn.1.wrapping_add(1),
            flags: airtrace_tcp::Flags::ACK,
            window: 0,
            len: 0,
            options: Default::default(),
            ect: false,
        };
        let packet = self.split_control_packet(s, true, ip_id, seg);
        self.probes.insert(packet.id, s);
        self.send_packet(packet, src, dst)
    }

    /// A pure TCP segment `seg` of split `s`'s end-to-end connection (its first zone's
    /// ports, between the split's end nodes), from the source if `from_a`, else from the
    /// destination.
    fn split_control_packet(
        &self,
        s: usize,
        from_a: bool,
        ip_id: u16,
        seg: airtrace_tcp::Segment,
    ) -> Packet {
        let split = &self.splits[s];
        let nodes = &split.nodes;
        let (src, dst) = (nodes[0], nodes[nodes.len() - 1]);
        Packet {
            id: self.next_packet_id,
            flow: split.zones[0] as u32,
            from_a,
            ip_id,
            ports: self.flows[split.zones[0]].ports,
            hosts: (address(src), address(dst)),
            ttl: DEFAULT_TTL,
            ecn: 0,
            vj: None,
            body: Body::Tcp(seg),
        }
    }

    /// An end-to-end acknowledgement of `acked` bytes reached the source of split
    /// `s`, by `route` (from the destination): the source purges them and may send as
    /// much more; with `follow`, on zones chosen again from the route reversed.
    fn on_e2e_ack(&mut self, s: usize, acked: u64, route: Option<Path>) -> io::Result<()> {
        let i = self.splits[s].zones[0];
        self.flows[i].write_limit = Some(self.splits[s].on_ack(acked));
        self.splits[s].quiet_since = self.now;
        let back = route.map(|r| r.reversed());
        match back.and_then(|r| self.splits[s].choose_again(r.as_slice())) {
            Some(nodes) => self.choose_zones_again(s, nodes),
            None => self.service_side(i, true),
        }
    }

    /// A packet of flow `i` reached its side a by `route`: when `i` is the single zone
    /// of a Split-TCP flow following the route, its ACK is end to end and brings the
    /// route the source follows, as an end-to-end acknowledgement's would
    /// ([`Self::on_e2e_ack`]).
    fn on_single_zone_ack(&mut self, i: usize, route: Option<Path>) -> io::Result<()> {
        let Some((s, 0)) = self.zone_of[i] else {
            return Ok(());
        };
        if !self.splits[s].single_zone() {
            return Ok(());
        }
        let back = route.map(|r| r.reversed());
        match back.and_then(|r| self.splits[s].choose_again(r.as_slice())) {
            Some(nodes) => self.choose_zones_again(s, nodes),
            None => Ok(()),
        }
    }

    /// Split-TCP with `follow`: closes split `s`'s zones and opens new ones through
    /// `nodes`; the source sends again from its last end-to-end acknowledgement.
    fn choose_zones_again(&mut self, s: usize, nodes: Vec<NodeId>) -> io::Result<()> {
        for &z in &self.splits[s].zones {
            self.flows[z].retired = true;
            self.zone_of[z] = None;
        }
        let origin = self.splits[s].origin;
        let spec = &self.flow_specs[origin];
        let name = format!(
            "{}/route{}/zone",
            self.flows[origin].name,
            self.splits[s].sources.len()
        );
        let added = add_zones(
            spec,
            &name,
            &nodes,
            (s, 0),
            &self.streams,
            &mut self.flows,
            &mut self.ends,
        )
        .map_err(io::Error::other)?;
        self.sched.add_components(3 * added.len());
        self.zone_of
            .extend(added.iter().map(|&(_, zone)| Some(zone)));
        let zones: Vec<usize> = added.iter().map(|&(z, _)| z).collect();
        let (first, last) = (zones[0], zones[zones.len() - 1]);
        let split = &mut self.splits[s];
        let base = split.restart(zones, nodes);
        let repeat = split.repeat_at();
        let window = split.window;
        let limit = self.flows[origin].limit;
        let source = &mut self.flows[first];
        source.backlog = limit.map_or(0, |l| l.saturating_sub(base));
        source.write_limit = Some(window);
        source.relay_upstream_done = Some(true);
        // The destination goes on repeating its last acknowledgement.
        self.sched.wake(FlowPart::App(last).component(), repeat);
        self.service_app(first)
    }

    /// Node `node`'s next IP identification.
    fn next_ip_id(&mut self, node: NodeId) -> u16 {
        let id = self.ip_id[node as usize];
        self.ip_id[node as usize] = id.wrapping_add(1);
        id
    }

    /// The summary.json entries of the scenario's flows (a Split-TCP flow's delivery
    /// is its last zone's, at the destination).
    fn flow_summaries(&self) -> Vec<FlowSummary> {
        (0..self.scenario_flows)
            .map(|i| {
                let Some(s) = self.split_of(i) else {
                    return self.flows[i].summary();
                };
                let split = &self.splits[s];
                let last = &self.flows[split.zones[split.zones.len() - 1]];
                let name = |n: NodeId| self.nodes[n as usize].name.clone();
                let mut summary = self.flows[i].summary_delivered_by(last);
                if split.sources.len() > 1 {
                    self.add_later_sources(split, &mut summary);
                }
                summary.split = Some(SplitSummary {
                    proxies: split.nodes[1..split.nodes.len() - 1]
                        .iter()
                        .map(|&n| name(n))
                        .collect(),
                    window: split.window,
                    e2e_acks: split.acks_sent,
                    peak_source_held_bytes: split.peak_held,
                    zones_chosen_again: split.follow.map(|_| split.sources.len() as u64 - 1),
                    zones: split
                        .zones
                        .iter()
                        .map(|&z| {
                            let zone = self.flows[z].summary();
                            let (from, to) = self.ends[z];
                            ZoneSummary {
                                from: name(from),
                                to: name(to),
                                bytes_delivered: zone.bytes_delivered,
                                retransmissions: zone.retransmissions,
                                timeouts: zone.timeouts,
                            }
                        })
                        .collect(),
                });
                summary
            })
            .collect()
    }

    /// The Split-TCP flow the scenario's flow `i` is, if any.
    fn split_of(&self, i: usize) -> Option<usize> {
        self.splits.iter().position(|s| s.origin == i)
    }

    /// A flow whose zones were chosen again: what the destination got in all, and
    /// what each of the source's connections (each route's zone 0) sent.
    fn add_later_sources(&self, split: &Split, summary: &mut FlowSummary) {
        let start = self.flows[split.origin].start_ns;
        summary.bytes_delivered = split.delivered;
        summary.end_s = split.delivered_at.map(|t| t as f64 / 1e9);
        let span = split.delivered_at.map_or(0, |t| t - start);
        summary.goodput_bps = if span > 0 {
            split.delivered as f64 * 8e9 / span as f64
        } else {
            0.0
        };
        for &z in &split.sources[1..] {
            let later = self.flows[z].summary();
            summary.retransmissions += later.retransmissions;
            summary.timeouts += later.timeouts;
            summary.fast_retransmits += later.fast_retransmits;
            summary.packets_sent += later.packets_sent;
            summary.packets_returned += later.packets_returned;
        }
    }

    /// The nodes a scenario's flow runs between (a Split-TCP flow's source and
    /// destination, beyond its first zone).
    fn flow_ends(&self, i: usize) -> (NodeId, NodeId) {
        match self.split_of(i) {
            Some(s) => {
                let nodes = &self.splits[s].nodes;
                (nodes[0], nodes[nodes.len() - 1])
            }
            None => self.ends[i],
        }
    }

    /// Hands a packet from one side of flow `i` to its node's IP layer.
    fn transmit(&mut self, i: usize, from_a: bool, body: Body) -> io::Result<()> {
        let (a, b) = self.ends[i];
        let (src, dst) = if from_a { (a, b) } else { (b, a) };
        let ip_id = self.next_ip_id(src);
        let flow = &mut self.flows[i];
        if from_a {
            flow.packets.0 += 1;
        } else {
            flow.packets.1 += 1;
        }
        let ect = matches!(&body, Body::Tcp(seg) if seg.ect);
        let packet = Packet {
            id: self.next_packet_id,
            flow: i as u32,
            from_a,
            ip_id,
            ports: flow.ports,
            hosts: (address(a), address(b)),
            ttl: DEFAULT_TTL,
            ecn: if ect { 2 } else { 0 },
            vj: None,
            body,
        };
        self.send_packet(packet, src, dst)
    }

    /// Hands `packet` to node `src`'s IP layer, for node `dst`.
    fn send_packet(&mut self, packet: Packet, src: NodeId, dst: NodeId) -> io::Result<()> {
        let i = packet.flow as usize;
        self.next_packet_id += 1;
        if let Some(air) = self.air.as_mut() {
            air.hold(&packet, self.flows[i].stream_offset(&packet));
        }
        let ip = IpPacket {
            src,
            dst,
            ttl: DEFAULT_TTL,
            len: packet.ip_len(),
            user: packet.id,
            dsr: None,
            mip: None,
            frag: None,
        };
        self.packets.insert(packet.id, packet);
        // A buffer kept between events (empty, not allocated, when this runs inside
        // the handling of another batch).
        let mut events = std::mem::take(&mut self.net_events);
        self.net.send(self.now, ip, &mut events);
        self.handle(&mut events)?;
        self.net_events = events;
        self.write_air()?;
        self.sched.wake(CARRIER, self.net.next_deadline());
        Ok(())
    }

    /// A tcpstate.jsonl line for the sender of the scenario's flow `i` (a Split-TCP
    /// flow's: its source's; its proxies' senders are not logged).
    fn log_tcp_state(&mut self, i: usize, s: &airtrace_tcp::SenderState) -> io::Result<()> {
        let Some(log) = self.bundle.as_mut().and_then(|b| b.tcp_log.as_mut()) else {
            return Ok(());
        };
        if i >= self.scenario_flows {
            return Ok(());
        }
        self.line.clear();
        self.flows[i].write_state_line(i, self.now, s, &mut self.line)?;
        log.write_all(&self.line)
    }

    /// summary.json's `network`, for a run scheduled to end at `end_ns`.
    fn network_summary(&self, end_ns: i64) -> NetworkSummary {
        let w = self.net.wireless();
        NetworkSummary {
            nodes: self
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| NodeSummary {
                    name: n.name.clone(),
                    address: dotted(address(i as NodeId)),
                    x: n.position.x,
                    y: n.position.y,
                    frames_sent: w.sent(i as NodeId),
                    mac_drops: self.mac_drops[i],
                    rate_changes: self.rate_changes[i],
                    handoffs: self.handoffs[i],
                    queue_drops: self.queue_drops[i],
                })
                .collect(),
            drops: self.drops.clone(),
            routing: self.routing.clone(),
            paths: w.mobility().map(|m| {
                self.flows[..self.scenario_flows]
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (f, self.flow_ends(i)))
                    .map(|(f, ends)| PathSummary {
                        flow: f.name.clone(),
                        hops_s: airtrace_net::connectivity::hops_over_time(
                            m,
                            |a, b| w.decodes_between(a, b),
                            ends,
                            end_ns,
                            PATH_SAMPLE_NS,
                        )
                        .into_iter()
                        .map(|(h, ns)| {
                            (h.map_or("none".into(), |h| h.to_string()), ns as f64 / 1e9)
                        })
                        .collect(),
                    })
                    .collect()
            }),
        }
    }

    /// meta.json of a network bundle: nodes, vantage points (node captures), flows with
    /// their nodes. With air captures, each node's radio interface has its MAC address.
    fn meta_json(
        &self,
        scenario: &Scenario,
        spec: &NetworkSpec,
        seed: u64,
        end: i64,
        events: u64,
    ) -> Vec<u8> {
        let nodes: Vec<_> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut interfaces = Vec::new();
                if n.radio {
                    let mut radio = serde_json::json!({ "kind": "radio", "mac": format!("{:?}", spec.mac).to_lowercase(), "rate_bps": spec.rate_bps() });
                    if self.air.is_some() {
                        radio["mac_address"] = mac_text(i as NodeId).into();
                    }
                    interfaces.push(radio);
                }
                for l in &spec.links {
                    let peer = match &l.between {
                        [a, b] if *a == n.name => b,
                        [a, b] if *b == n.name => a,
                        _ => continue,
                    };
                    interfaces.push(serde_json::json!({
                        "kind": "wired",
                        "peer": peer,
                        "rate_bps": l.rate.and_then(|r| r.0).unwrap_or(build::WIRED_RATE_BPS),
                        "delay_ns": l.delay.map_or(build::WIRED_DELAY_NS, |d| d.0),
                    }));
                }
                let role = match (n.bridge, n.router) {
                    (true, _) => "access_point",
                    (false, true) => "router",
                    (false, false) => "host",
                };
                serde_json::json!({
                    "name": n.name,
                    "address": dotted(address(i as NodeId)),
                    "x": n.position.x,
                    "y": n.position.y,
                    "role": role,
                    "interfaces": interfaces,
                })
            })
            .collect();
        let vantage = |name: String, node: &str, linktype: u32| {
            serde_json::json!({
                "name": name,
                "node": node,
                "file": format!("{name}.pcap"),
                "linktype": linktype,
            })
        };
        let mut vantage_points: Vec<_> = spec
            .captures
            .iter()
            .map(|node| vantage(node.clone(), node, LINKTYPE_RAW))
            .collect();
        if self.air.is_some() {
            vantage_points.extend(
                spec.air_captures
                    .iter()
                    .map(|node| vantage(format!("air-{node}"), node, LINKTYPE_IEEE802_11_RADIOTAP)),
            );
        }
        let flows: Vec<_> = self.flows[..self.scenario_flows]
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (a, b) = self.flow_ends(i);
                let mut flow = serde_json::json!({
                    "name": f.name,
                    "app": f.app.name(),
                    "protocol": if f.app.is_tcp() { "tcp" } else { "udp" },
                    "from": self.nodes[a as usize].name,
                    "to": self.nodes[b as usize].name,
                    "a": format!("{}:{}", dotted(address(a)), f.ports.0),
                    "b": format!("{}:{}", dotted(address(b)), f.ports.1),
                });
                if let Some(s) = self.split_of(i) {
                    let zones = self.splits[s].zones.iter().map(|&z| {
                        let (from, to) = self.ends[z];
                        let ports = self.flows[z].ports;
                        serde_json::json!({
                            "a": format!("{}:{}", dotted(address(from)), ports.0),
                            "b": format!("{}:{}", dotted(address(to)), ports.1),
                        })
                    });
                    flow["split_zones"] = zones.collect::<Vec<_>>().into();
                }
                flow
            })
            .collect();
        let mut files = crate::bundle::files_json(scenario);
        if self.routing.is_some() && scenario.link_log {
            files["routes_log"] = "routes.jsonl".into();
        }
        let mut meta = serde_json::json!({
            "format": "airtrace-bundle/1",
            "source": "simulation",
            "producer": format!("airtrace-sim {}", env!("CARGO_PKG_VERSION")),
            "scenario": scenario.name,
            "seed": seed,
            "clock": crate::bundle::simulated_clock_json(),
            "end_ns": end,
            "events": events,
            "nodes": nodes,
            "vantage_points": vantage_points,
            "flows": flows,
            "link": null,
            "files": files,
        });
        if let Some(m) = &spec.mobility {
            meta["mobility"] = mobility_json(m, spec, seed);
            meta["files"]["mobility_log"] = "mobility.jsonl".into();
        }
        crate::bundle::json_file(&meta)
    }
}

/// The fields every record of a network's link.jsonl has besides its time and node
/// (docs/link-log.md), for [`World::log_record`]; `None` is written null.
#[derive(Debug, Default)]
struct Record<'a> {
    kind: &'a str,
    packet: Option<u64>,
    attempt: Option<u64>,
    bytes: Option<u64>,
    reason: Option<&'a str>,
    flow: Option<u64>,
    ip_id: Option<u64>,
}
