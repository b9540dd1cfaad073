//! From scenario settings to the models that run: the link (from airtrace-link, the
//! code the emulator shares), the network of nodes (from airtrace-net) and TCP
//! configurations (from airtrace-tcp).

use airtrace_link::aqm::QueueDiscipline;
use airtrace_link::arq::{Backoff, Medium, RateAdaptation, StopAndWait, StopAndWaitConfig};
use airtrace_link::link::Direction;
use airtrace_link::loss::{LossModel, LossProcess};
use airtrace_link::queue::QueueLimit;
use airtrace_link::rlp::{GsmRlp, RlpConfig};
use airtrace_link::rng::Streams;
use airtrace_link::trace::DeliveryTrace;
use airtrace_tcp::{CcAlgorithm, Config, Variant};

use airtrace_net::mobile_ip::MipConfig;
use airtrace_net::mobility::random_waypoint::RandomWaypoint;
use airtrace_net::mobility::setdest::MovementFile;
use airtrace_net::radio::{dbm_to_w, PhyProfile, Position, Propagation};
use airtrace_net::rate::{RateAlgorithm, RateConfig};
use airtrace_net::roam::RoamConfig;
use airtrace_net::wired::{WiredConfig, WiredLinks};
use airtrace_net::{
    ArpConfig, DcfConfig, DsrConfig, Mobility, NodeId, Routes, SignalConfig, SignalModel, Wall,
    Wireless,
};
use rand::RngExt;

use crate::links::{Link, PacketId};
use crate::scenario::{
    self, ArpProfile, ArqSpec, DirSpec, LinkSpec, MacProfile, MobilityModel, MobilitySpec,
    NetworkSpec, RateControlSpec, RoamingSpec, Role, RoutingProfile, SignalSpec, TcpSpec, WallSpec,
};

/// Default queue limit, in packets, when a scenario gives none.
pub const DEFAULT_QUEUE_PACKETS: u64 = 100;
/// Default IP MTU.
pub const DEFAULT_MTU: u32 = 1500;
/// Default rate of a network's wired link, bit/s (Fast Ethernet).
pub const WIRED_RATE_BPS: u64 = 100_000_000;
/// Default propagation delay of a network's wired link, ns.
pub const WIRED_DELAY_NS: i64 = 1_000;

/// A node of a network as built: its name, place, and whether it forwards.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    /// Its name in the scenario.
    pub name: String,
    /// Where it is (at time 0, if it moves).
    pub position: Position,
    /// It forwards packets for others.
    pub router: bool,
    /// It forwards as an access point: a bridge between its radio and its wire.
    pub bridge: bool,
    /// It has a radio (false: wires only).
    pub radio: bool,
}

/// Builds the network of a `[network]` scenario: the stations on the WaveLAN channel
/// with their MACs (random streams `node/<name>/mac`) and their movement up to
/// `until_ns` if they move, the routes (given, else shortest paths between the places
/// at time 0) and ARP. Returns it with the nodes in id order.
pub fn network(
    spec: &NetworkSpec,
    streams: &Streams,
    until_ns: i64,
) -> Result<(airtrace_net::Network, Vec<NodeInfo>), String> {
    let names = spec.node_names();
    let mut nodes: Vec<NodeInfo> = if let Some(c) = &spec.chain {
        names
            .into_iter()
            .enumerate()
            .map(|(i, name)| NodeInfo {
                name,
                position: Position {
                    x: c.spacing_m * i as f64,
                    y: 0.0,
                },
                router: true,
                bridge: false,
                radio: true,
            })
            .collect()
    } else if let Some(r) = &spec.random {
        let mut rng = streams.stream("network/placement");
        names
            .into_iter()
            .map(|name| NodeInfo {
                name,
                position: Position {
                    x: rng.random::<f64>() * r.width_m,
                    y: rng.random::<f64>() * r.height_m,
                },
                router: true,
                bridge: false,
                radio: true,
            })
            .collect()
    } else {
        spec.nodes
            .iter()
            .map(|n| NodeInfo {
                name: n.name.clone(),
                position: Position { x: n.x, y: n.y },
                router: n.role != Role::Host,
                bridge: n.role == Role::AccessPoint,
                radio: n.radio,
            })
            .collect()
    };
    let mut mac = match spec.mac {
        MacProfile::Ns2 => DcfConfig::ns2_wavelan(),
        MacProfile::Dsss => DcfConfig::dsss(spec.rate_bps()),
    };
    if let Some(t) = spec.rts_threshold {
        mac.rts_threshold = u32::try_from(t.0).unwrap_or(u32::MAX);
    }
    if let Some(q) = spec.queue_packets {
        mac.queue_packets = q as usize;
    }
    if let Some(n) = spec.retry_limit {
        mac.short_attempts = n;
        mac.long_attempts = n;
    }
    let mobility = match &spec.mobility {
        Some(m) => {
            let layout: Vec<Position> = nodes.iter().map(|n| n.position).collect();
            let mobility = movement(m, spec, &layout, streams.seed(), until_ns)
                .map_err(|e| format!("network.mobility: {e}"))?;
            for (i, n) in nodes.iter_mut().enumerate() {
                n.position = mobility.path(i).start();
            }
            Some(mobility)
        }
        None => None,
    };
    mac.rate_control = rate_control(spec.rate_control, mac.data_rate_bps);
    let (propagation, mut phy) = match &spec.signal {
        Some(s) => radio_of(s),
        None => (Propagation::wavelan(), PhyProfile::wavelan()),
    };
    if let Some(d) = spec.carrier_sense_m {
        phy.cs_threshold_w = propagation.received_w(phy.tx_power_w, d * d);
    }
    let mut wireless = Wireless::new(propagation, phy);
    if let Some(s) = &spec.signal {
        wireless.set_signal(signal_of(s, &spec.walls, streams));
    }
    for n in &nodes {
        let id = wireless.add_station(
            n.position,
            mac,
            streams.stream(&format!("node/{}/mac", n.name)),
        );
        if !n.radio {
            wireless.remove_radio(id);
        }
    }
    if let Some(m) = mobility {
        wireless.set_mobility(m);
    }
    let id = |name: &str| {
        nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as NodeId)
    };
    let mut wired = WiredLinks::default();
    for l in &spec.links {
        let (Some(a), Some(b)) = (id(&l.between[0]), id(&l.between[1])) else {
            return Err(format!("network.link: unknown node in {:?}", l.between));
        };
        let cfg = WiredConfig {
            rate_bps: l.rate.and_then(|r| r.0).unwrap_or(WIRED_RATE_BPS),
            delay_ns: l.delay.map_or(WIRED_DELAY_NS, |d| d.0),
            queue_packets: l.queue_packets.map_or(DEFAULT_QUEUE_PACKETS, |q| q) as usize,
        };
        wired.connect(a, b, cfg);
    }
    let mut routes = Routes::shortest_paths(nodes.len(), |a, b| {
        wired.connects(a, b) || wireless.decodes(a, b)
    });
    for r in &spec.routes {
        let (Some(node), Some(to), Some(via)) = (id(&r.node), id(&r.to), id(&r.via)) else {
            return Err(format!("network.route: unknown node in {r:?}"));
        };
        routes.set(node, to, via);
    }
    let arp = match spec.arp {
        ArpProfile::Bsd => ArpConfig::bsd(),
        ArpProfile::Ns2 => ArpConfig::ns2(),
        ArpProfile::Prefilled => ArpConfig {
            prefill: true,
            ..ArpConfig::bsd()
        },
    };
    let routers: Vec<bool> = nodes.iter().map(|n| n.router).collect();
    let bridges: Vec<bool> = nodes.iter().map(|n| n.bridge).collect();
    let mut network = airtrace_net::Network::new(wireless, routes, arp, routers)
        .with_wired(wired)
        .with_bridges(bridges);
    if spec.routing == RoutingProfile::Dsr {
        let streams = nodes
            .iter()
            .map(|n| streams.stream(&format!("node/{}/dsr", n.name)))
            .collect();
        let mut cfg = DsrConfig::ns2();
        if let Some(d) = &spec.dsr {
            if d.reply_from_cache == Some(false) {
                // ns-2: both off, or neighbours still answer the ring-zero search.
                cfg.reply_from_cache = false;
                cfg.ring_zero_search = false;
            }
            cfg.salvage = d.salvage.unwrap_or(cfg.salvage);
            cfg.promiscuous = d.promiscuous.unwrap_or(cfg.promiscuous);
            cfg.cache_timeout_ns = d.cache_timeout.map(|t| t.0).or(cfg.cache_timeout_ns);
            cfg.negative_cache_ns = d.negative_cache.map(|t| t.0).or(cfg.negative_cache_ns);
            cfg.send_timeout_ns = d.send_buffer_timeout.map_or(cfg.send_timeout_ns, |t| t.0);
            cfg.send_buffer_packets = d
                .send_buffer_packets
                .map_or(cfg.send_buffer_packets, |n| n as usize);
        }
        network = network.with_dsr(cfg, streams);
    }
    if let Some(r) = &spec.roaming {
        let (aps, stations) = spec.roaming_nodes(r);
        let ids = |names: Vec<String>| -> Result<Vec<NodeId>, String> {
            names
                .iter()
                .map(|name| id(name).ok_or_else(|| format!("network.roaming: no node {name:?}")))
                .collect()
        };
        let stations = ids(stations)?;
        network = network.with_roaming(roam_config(r), &ids(aps)?, &stations);
        if let Some(m) = &spec.mobile_ip {
            let one = |name: &String| ids(vec![name.clone()]).map(|v| v[0]);
            let mobiles = match &m.mobiles {
                Some(names) => ids(names.clone())?,
                None => stations,
            };
            let d = MipConfig::default();
            let cfg = MipConfig {
                advertisement_interval_ns: m
                    .advertisement_interval
                    .map_or(d.advertisement_interval_ns, |t| t.0),
                solicit: m.solicit.unwrap_or(d.solicit),
                lifetime_s: m
                    .lifetime
                    .map_or(d.lifetime_s, |t| (t.0 / 1_000_000_000) as u16),
            };
            let fas = ids(m.foreign_agents.clone())?;
            network = network.with_mobile_ip(cfg, one(&m.home_agent)?, &fas, &mobiles);
        }
    }
    Ok((network, nodes))
}

/// The roaming settings of `[network.roaming]`, defaults where it gives none.
fn roam_config(r: &RoamingSpec) -> RoamConfig {
    let d = RoamConfig::default();
    RoamConfig {
        beacon_interval_ns: r.beacon_interval.map_or(d.beacon_interval_ns, |t| t.0),
        handoff_gap_ns: r.handoff_gap.map_or(d.handoff_gap_ns, |t| t.0),
        hysteresis_db: r.hysteresis_db.unwrap_or(d.hysteresis_db),
        beacon_loss: r.beacon_loss.unwrap_or(d.beacon_loss),
    }
}

/// The rate controller of `network.rate_control`, up to `max_rate_bps`.
fn rate_control(spec: RateControlSpec, max_rate_bps: u64) -> Option<RateConfig> {
    let algorithm = match spec {
        RateControlSpec::Fixed => return None,
        RateControlSpec::Arf => RateAlgorithm::Arf,
        RateControlSpec::Aarf => RateAlgorithm::Aarf,
        RateControlSpec::Mimd => RateAlgorithm::Mimd,
        RateControlSpec::Minstrel => RateAlgorithm::Minstrel,
    };
    Some(RateConfig {
        algorithm,
        max_rate_bps,
    })
}

/// Log-distance propagation and the radios' thresholds of `[network.signal]`.
fn radio_of(s: &SignalSpec) -> (Propagation, PhyProfile) {
    let propagation = Propagation::LogDistance {
        frequency_hz: s.frequency_hz(),
        exponent: s.exponent(),
        reference_m: s.reference_m(),
    };
    let threshold_w = dbm_to_w(s.threshold_dbm());
    let phy = PhyProfile {
        tx_power_w: dbm_to_w(s.tx_power_dbm()),
        rx_threshold_w: threshold_w,
        cs_threshold_w: threshold_w,
        noise_w: dbm_to_w(s.noise_dbm()),
        ..PhyProfile::wavelan()
    };
    (propagation, phy)
}

/// Walls, shadowing and frame errors of `[network.signal]`, with their random streams
/// `network/signal/shadowing` and `network/signal/errors`.
fn signal_of(s: &SignalSpec, walls: &[WallSpec], streams: &Streams) -> SignalModel {
    let at = |p: [f64; 2]| Position { x: p[0], y: p[1] };
    let cfg = SignalConfig {
        walls: walls
            .iter()
            .map(|w| Wall {
                a: at(w.from),
                b: at(w.to),
                loss_db: w.loss_db,
            })
            .collect(),
        shadowing_db: s.shadowing_db.unwrap_or(0.0),
        coherence_ns: s.shadowing_time.map_or(0, |t| t.0),
        frame_errors: s.frame_errors.unwrap_or(true),
    };
    SignalModel::new(
        cfg,
        streams.stream("network/signal/shadowing"),
        streams.stream("network/signal/errors"),
    )
}

/// The movement of `[network.mobility]` for nodes standing at `layout`, up to
/// `until_ns`: a random waypoint movement in `network.random`'s rectangle (pattern: the
/// one given, else `seed`), or an ns-2 movement file.
fn movement(
    spec: &MobilitySpec,
    net: &NetworkSpec,
    layout: &[Position],
    seed: u64,
    until_ns: i64,
) -> Result<Mobility, String> {
    if let Some(file) = &spec.file {
        let file = MovementFile::load(file).map_err(|e| e.to_string())?;
        return file.mobility(layout).map_err(|e| e.to_string());
    }
    let (Some(MobilityModel::RandomWaypoint), Some(area), Some(speed_mps)) =
        (spec.model, &net.random, spec.speed_mps)
    else {
        return Err("random_waypoint needs network.random and speed_mps".into());
    };
    let rwp = RandomWaypoint {
        width_m: area.width_m,
        height_m: area.height_m,
        speed_mps,
        pause_ns: (spec.pause_s.unwrap_or(0.0) * 1e9).round() as i64,
        pattern: spec.pattern.unwrap_or(seed),
    };
    rwp.mobility(layout.len(), until_ns)
        .map_err(|e| e.to_string())
}

/// Builds the link: two plain directions, or a two-way ARQ link. Returns it with the
/// IP MTU of each direction (for writing fragments in the captures).
pub fn link(spec: &LinkSpec, streams: &Streams) -> Result<(Link, [u32; 2]), String> {
    let forward = spec.resolve(scenario::Direction::Forward);
    let reverse = spec.resolve(scenario::Direction::Reverse);
    let mtu = |d: &DirSpec| d.mtu.map_or(DEFAULT_MTU, |m| m.0 as u32);
    let mtus = [mtu(&forward), mtu(&reverse)];
    // Bursts set for the whole link share one schedule (see `loss_process`).
    let shared =
        [&spec.forward, &spec.reverse].map(|o| o.as_ref().is_none_or(|o| o.loss.is_none()));
    let loss = |d: &DirSpec, name: &str, shared: bool| {
        loss_process(d, name, shared, streams).map_err(|e| format!("link.{name}.loss: {e}"))
    };
    let link = match &spec.arq {
        None => {
            let f = direction(
                &forward,
                "forward",
                loss(&forward, "forward", shared[0])?,
                streams,
            )?;
            let r = direction(
                &reverse,
                "reverse",
                loss(&reverse, "reverse", shared[1])?,
                streams,
            )?;
            Link::Plain(Box::new([f, r]))
        }
        Some(ArqSpec::GsmRlp {
            n2,
            frame,
            frame_payload,
            one_way_delay,
            buffer_packets,
            flow_control,
            reset,
        }) => {
            let base = RlpConfig::default();
            let rate = flow_control
                .and_then(|r| r.0)
                .map_or(base.rate_bytes_per_s, |bps| [bps / 8; 2]);
            let config = RlpConfig {
                frame_ns: frame.map_or(base.frame_ns, |d| d.0),
                frame_payload_bytes: frame_payload.map_or(base.frame_payload_bytes, |b| b as usize),
                one_way_delay_ns: one_way_delay.map_or(base.one_way_delay_ns, |d| d.0),
                n2: n2.unwrap_or(base.n2),
                buffer_packets: buffer_packets.map_or(base.buffer_packets, |b| b as usize),
                rate_bytes_per_s: rate,
                reset_ns: reset.map_or(base.reset_ns, |d| d.0),
            };
            let losses = [
                loss(&forward, "forward", shared[0])?,
                loss(&reverse, "reverse", shared[1])?,
            ];
            Link::Rlp(Box::new(GsmRlp::new(config, losses)))
        }
        Some(ArqSpec::StopAndWait {
            retry_limit,
            ack,
            backoff,
            medium,
            rates,
            rate_loss,
        }) => {
            let base = StopAndWaitConfig::default();
            let queue = match (forward.queue_packets, forward.queue_bytes) {
                (_, Some(bytes)) => QueueLimit::Bytes(bytes.0 as usize),
                (Some(packets), None) => QueueLimit::Packets(packets as usize),
                (None, None) => base.queue,
            };
            let config = StopAndWaitConfig {
                rate_bps: forward.rate.map_or(base.rate_bps, |r| r.0),
                delay_ns: forward.delay.map_or(base.delay_ns, |d| d.0),
                ack_ns: ack.map_or(base.ack_ns, |d| d.0),
                retry_limit: retry_limit.unwrap_or(base.retry_limit),
                backoff: match backoff.as_deref() {
                    Some("none") => Backoff::None,
                    _ => base.backoff,
                },
                queue,
                medium: match medium.as_deref() {
                    Some("shared") => Medium::Shared,
                    _ => Medium::Separate,
                },
            };
            let losses = [
                loss(&forward, "forward", shared[0])?,
                loss(&reverse, "reverse", shared[1])?,
            ];
            let rngs = [
                streams.stream("link/forward/backoff"),
                streams.stream("link/reverse/backoff"),
            ];
            let mut arq = StopAndWait::new(config, losses, rngs);
            if let (Some(rates), Some(loss)) = (rates, rate_loss) {
                let adaptation = RateAdaptation {
                    rates: rates
                        .iter()
                        .zip(loss)
                        .map(|(r, &p)| (r.0.unwrap_or(u64::MAX), p))
                        .collect(),
                    up_after: 10,
                    down_after: 2,
                };
                let rngs = [
                    streams.stream("link/forward/rate_loss"),
                    streams.stream("link/reverse/rate_loss"),
                ];
                arq = arq.with_rate_adaptation(adaptation, rngs);
            }
            Link::StopAndWait(Box::new(arq))
        }
    };
    Ok((link, mtus))
}

/// The loss process of one direction.
///
/// Bursts in time set for the whole link (`shared_bursts`) draw their schedule from one
/// stream, `link/loss`, in both directions, so that a burst on the radio channel hits
/// data and ACKs alike; every other loss process has its own stream per direction.
fn loss_process(
    spec: &DirSpec,
    name: &str,
    shared_bursts: bool,
    streams: &Streams,
) -> Result<LossProcess, String> {
    let model = match &spec.loss {
        Some(loss) => loss.model()?,
        None => LossModel::None,
    };
    let stream = if shared_bursts && matches!(model, LossModel::Bursts { .. }) {
        streams.stream("link/loss")
    } else {
        streams.stream(&format!("link/{name}/loss"))
    };
    LossProcess::new(model, stream).map_err(|e| e.to_string())
}

/// One plain direction: rate or trace, delay, queue limit and discipline, MTU.
fn direction(
    spec: &DirSpec,
    name: &str,
    loss: LossProcess,
    streams: &Streams,
) -> Result<Direction<PacketId>, String> {
    let limit = match (spec.queue_packets, spec.queue_bytes) {
        (_, Some(bytes)) => QueueLimit::Bytes(bytes.0 as usize),
        (Some(packets), None) => QueueLimit::Packets(packets as usize),
        (None, None) => QueueLimit::Packets(DEFAULT_QUEUE_PACKETS as usize),
    };
    let delay = spec.delay.map_or(0, |d| d.0);
    let dir = match (&spec.trace, spec.rate) {
        (Some(path), _) => {
            let trace = DeliveryTrace::load(path).map_err(|e| e.to_string())?;
            Direction::with_trace(trace, delay, limit, loss)
        }
        (None, Some(rate)) => Direction::new(rate.0, delay, limit, loss),
        (None, None) => return Err(format!("link.{name}: needs a rate or a trace")),
    };
    let discipline = match &spec.aqm {
        Some(aqm) => aqm
            .discipline()
            .map_err(|e| format!("link.{name}.aqm: {e}"))?,
        None => QueueDiscipline::DropTail,
    };
    let dir = dir
        .with_queue(discipline, streams.stream(&format!("link/{name}/aqm")))
        .map_err(|e| format!("link.{name}.aqm: {e}"))?;
    Ok(dir.with_mtu(Some(spec.mtu.map_or(DEFAULT_MTU, |m| m.0 as u32) as usize)))
}

/// The TCP configuration the simulator gives a flow: [`tcp_config`] with the
/// congestion control `cc` names (`reno`, `cubic` or `bbr`; any other name is refused,
/// in one line). Absent, Reno's AIMD, as before `cc` selected anything in the simulator,
/// whatever the kernel's default (the emulator's: cubic unless `variant` is given).
pub fn sim_tcp_config(spec: Option<&TcpSpec>) -> Result<Config, String> {
    let mut c = tcp_config(spec)?;
    if let Some(name) = spec.and_then(|s| s.cc.as_deref()) {
        c.cc = CcAlgorithm::from_name(name).ok_or_else(|| {
            format!(
                "unknown congestion control {name:?} for the simulator ({})",
                CcAlgorithm::NAMES
            )
        })?;
        c.validate()?;
    }
    Ok(c)
}

/// The TCP configuration of a flow: its profile (default `linux`) with the
/// scenario's overrides applied, checked. `cc` is not read here (the emulator, which
/// calls this too, hands any kernel name to the kernel): the simulator's congestion
/// control is [`sim_tcp_config`]'s.
pub fn tcp_config(spec: Option<&TcpSpec>) -> Result<Config, String> {
    let default = TcpSpec::default();
    let spec = spec.unwrap_or(&default);
    let mut c = match spec.profile.as_deref() {
        None | Some("linux") => Config::linux(),
        Some("bsd") => Config::bsd(),
        Some(other) => return Err(format!("unknown TCP profile {other:?}")),
    };
    if let Some(v) = spec.variant.as_deref() {
        c.variant = match v {
            "tahoe" => Variant::Tahoe,
            "reno" => Variant::Reno,
            "newreno" => Variant::NewReno,
            "sack" => Variant::Sack,
            other => return Err(format!("unknown TCP variant {other:?}")),
        };
    }
    let size = |s: crate::units::Size| {
        u32::try_from(s.0).map_err(|_| format!("{} bytes is too large", s.0))
    };
    if let Some(v) = spec.mss {
        c.mss = v;
    }
    if let Some(v) = spec.initial_cwnd {
        c.initial_cwnd_segments = v;
    }
    if let Some(v) = spec.sndbuf {
        c.sndbuf = size(v)?;
    }
    if let Some(v) = spec.rcvbuf {
        c.rcvbuf = size(v)?;
    }
    if let Some(v) = spec.timestamps {
        c.timestamps = v;
    }
    if let Some(v) = spec.window_scaling {
        c.window_scaling = v;
    }
    if let Some(v) = spec.delayed_ack {
        c.delayed_ack.enabled = v;
    }
    if let Some(v) = spec.ack_every {
        c.delayed_ack.every = v;
    }
    if let Some(v) = spec.delayed_ack_timeout {
        c.delayed_ack.timeout_ns = v.0;
    }
    if let Some(v) = spec.initial_rto {
        c.rto.initial_ns = v.0;
    }
    if let Some(v) = spec.min_rto {
        c.rto.min_ns = v.0;
    }
    if let Some(v) = spec.max_rto {
        c.rto.max_ns = v.0;
    }
    if let Some(v) = spec.granularity {
        c.rto.granularity_ns = v.0;
    }
    if let Some(v) = spec.max_backoff_shift {
        c.rto.max_backoff_shift = v;
    }
    if let Some(v) = spec.dupack_threshold {
        c.dupack_threshold = v;
    }
    if let Some(v) = spec.limited_transmit {
        c.limited_transmit = v;
    }
    if let Some(v) = spec.byte_counting {
        c.byte_counting = v;
    }
    if let Some(v) = spec.ssthresh_from_pipe {
        c.ssthresh_from_pipe = v;
    }
    if let Some(v) = spec.ecn {
        c.ecn = v;
    }
    if let Some(v) = spec.elfn_probe {
        c.elfn_probe_ns = Some(v.0);
    }
    if let Some(v) = spec.prr {
        c.prr = v;
    }
    if let Some(v) = spec.hystart {
        c.hystart = v;
    }
    if let Some(v) = spec.rack_tlp {
        c.rack_tlp = v;
    }
    if let Some(v) = spec.spurious_rto {
        c.spurious_rto = v;
    }
    if let Some(v) = spec.autotune {
        c.autotune = v;
    }
    if let Some(v) = spec.ssthresh_from_cwnd {
        c.ssthresh_from_cwnd = v;
    }
    if let Some(v) = spec.rto_rule {
        c.rto_rule = v;
    }
    if let Some(v) = spec.undo {
        c.undo = v;
    }
    if let Some(v) = spec.hystart_linux {
        c.hystart_linux = v;
    }
    c.validate().map_err(|e| e.to_string())?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtrace_tcp::SpuriousRtoDetection;

    #[test]
    fn prr_hystart_rack_tlp_and_spurious_rto_default_off_and_are_set_by_their_keys() {
        let c = sim_tcp_config(None).unwrap();
        assert!(!c.prr && !c.hystart && !c.rack_tlp);
        assert_eq!(c.spurious_rto, SpuriousRtoDetection::Off);
        let c = sim_tcp_config(Some(&TcpSpec {
            prr: Some(true),
            hystart: Some(true),
            rack_tlp: Some(true),
            spurious_rto: Some(SpuriousRtoDetection::Frto),
            ..TcpSpec::default()
        }))
        .unwrap();
        assert!(c.prr && c.hystart && c.rack_tlp);
        assert_eq!(c.spurious_rto, SpuriousRtoDetection::Frto);
    }

    #[test]
    fn autotune_and_ssthresh_from_cwnd_default_off_and_are_set_by_their_keys() {
        let c = sim_tcp_config(None).unwrap();
        assert!(!c.autotune && !c.ssthresh_from_cwnd);
        let on = TcpSpec {
            autotune: Some(true),
            ssthresh_from_cwnd: Some(true),
            ..TcpSpec::default()
        };
        let c = sim_tcp_config(Some(&on)).unwrap();
        assert!(c.autotune && c.ssthresh_from_cwnd);
    }

    #[test]
    fn rto_rule_undo_and_hystart_linux_default_off_and_are_set_by_their_keys() {
        use airtrace_tcp::{RtoRule, UndoRule};
        let c = sim_tcp_config(None).unwrap();
        assert_eq!((c.rto_rule, c.undo), (RtoRule::Rfc6298, UndoRule::Rfc4015));
        assert!(!c.hystart_linux);
        let on = TcpSpec {
            rto_rule: Some(RtoRule::Linux),
            undo: Some(UndoRule::Linux),
            hystart_linux: Some(true),
            ..TcpSpec::default()
        };
        let c = sim_tcp_config(Some(&on)).unwrap();
        assert_eq!((c.rto_rule, c.undo), (RtoRule::Linux, UndoRule::Linux));
        assert!(c.hystart_linux);
        let both = TcpSpec {
            hystart: Some(true),
            hystart_linux: Some(true),
            ..TcpSpec::default()
        };
        assert!(sim_tcp_config(Some(&both)).unwrap_err().contains("exclude"));
    }

    fn with_cc(cc: Option<&str>) -> Result<Config, String> {
        sim_tcp_config(Some(&TcpSpec {
            cc: cc.map(str::to_string),
            ..TcpSpec::default()
        }))
    }

    #[test]
    fn cc_selects_the_simulated_congestion_control() {
        assert_eq!(with_cc(None).unwrap().cc, CcAlgorithm::Reno);
        assert_eq!(sim_tcp_config(None).unwrap().cc, CcAlgorithm::Reno);
        // The emulator's reading passes any kernel name through.
        let bbr = TcpSpec {
            cc: Some("bbr".into()),
            ..TcpSpec::default()
        };
        assert_eq!(tcp_config(Some(&bbr)).unwrap().cc, CcAlgorithm::Reno);
        assert_eq!(with_cc(Some("reno")).unwrap().cc, CcAlgorithm::Reno);
        assert_eq!(with_cc(Some("cubic")).unwrap().cc, CcAlgorithm::Cubic);
        assert_eq!(with_cc(Some("bbr")).unwrap().cc, CcAlgorithm::Bbr);
        let bbr_reno = TcpSpec {
            cc: Some("bbr".into()),
            variant: Some("newreno".into()),
            ..TcpSpec::default()
        };
        assert_eq!(
            sim_tcp_config(Some(&bbr_reno)).unwrap_err(),
            "cc = bbr needs variant = sack"
        );
        let e = with_cc(Some("vegas")).unwrap_err();
        assert_eq!(
            e,
            "unknown congestion control \"vegas\" for the simulator (reno, cubic, bbr)"
        );
        assert!(!e.contains('\n'));
    }
}
