//! The `[network]` table of a scenario: nodes on a radio channel (a chain, a random
//! placement, or listed one by one), how they move, their PHY and MAC profile, ARP,
//! static routes and where captures are taken. docs/scenarios.md is the reference.

use std::path::PathBuf;

use airtrace_net::mobility::MAX_SPEED_MPS;
use serde::Deserialize;

use super::signal::{RateControlSpec, SignalSpec, WallSpec};
use super::{invalid, AppKind, FlowSpec, Invalid, Key, Scenario};
use crate::units::{Duration, Rate, Size};

/// The nodes of a network scenario and their radios.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// The 802.11 MAC: `ns2` (ns-2's CMU 802.11 at 2 Mbit/s, as Holland & Vaidya ran it;
    /// default) or `dsss` (IEEE 802.11b DSSS/CCK).
    #[serde(default)]
    pub mac: MacProfile,
    /// Data rate of a `dsss` MAC: 1, 2, 5.5 or 11 Mbit/s. Default 11 Mbit/s.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Data frames longer than this go after RTS/CTS (`"0 B"`: every unicast frame,
    /// ns-2's default; omit for the profile's own).
    #[serde(default)]
    pub rts_threshold: Option<Size>,
    /// How far a frame is sensed (makes the medium busy and interferes), m: the
    /// carrier-sense threshold set to the power received at this distance. Default: the
    /// WaveLAN radio's 550 m; 250 m (its reception range) makes hidden terminals of
    /// nodes more than 250 m apart.
    #[serde(default)]
    pub carrier_sense_m: Option<f64>,
    /// How stations pick the rate of their data frames (`dsss` only): `fixed`
    /// (default: `rate`), `arf`, `aarf` or `mimd`; `rate` is then the fastest.
    #[serde(default)]
    pub rate_control: RateControlSpec,
    /// Log-distance propagation against a noise floor, shadowing and frame errors by
    /// SNR (`[network.signal]`); without it, the WaveLAN profile's thresholds alone.
    #[serde(default)]
    pub signal: Option<SignalSpec>,
    /// Walls, each a `[[network.wall]]` (with `[network.signal]`).
    #[serde(default, rename = "wall")]
    pub walls: Vec<WallSpec>,
    /// Interface queue, packets. Default 50.
    #[serde(default)]
    pub queue_packets: Option<u64>,
    /// Transmission attempts of a frame before the MAC gives up (both the short and
    /// the long retry limit, IEEE 802.11-2020 §10.3.4.4); 1: no MAC retransmission.
    /// Default: the profile's (7 short, 4 long).
    #[serde(default)]
    pub retry_limit: Option<u32>,
    /// ARP: `bsd` (4.4BSD: a request at most once a second, 5 tries; default), `ns2`
    /// (a request per packet, 3 tries) or `prefilled` (every table full from the
    /// start). Both hold one packet per unresolved neighbour.
    #[serde(default)]
    pub arp: ArpProfile,
    /// Nodes n0 … nN on a line, `spacing_m` apart.
    #[serde(default)]
    pub chain: Option<ChainSpec>,
    /// Nodes n0 … placed uniformly at random in a rectangle.
    #[serde(default)]
    pub random: Option<RandomSpec>,
    /// Nodes one by one, each a `[[network.node]]` table.
    #[serde(default, rename = "node")]
    pub nodes: Vec<NodeSpec>,
    /// How routes are found: `static` (default: given by hand or shortest paths) or
    /// `dsr` (Dynamic Source Routing, RFC 4728, as ns-2's CMU code ran it).
    #[serde(default)]
    pub routing: RoutingProfile,
    /// DSR's settings (`[network.dsr]`), with `routing = "dsr"`.
    #[serde(default)]
    pub dsr: Option<DsrSpec>,
    /// Wired point-to-point links, each a `[[network.link]]`.
    #[serde(default, rename = "link")]
    pub links: Vec<WiredSpec>,
    /// Routes given by hand, each a `[[network.route]]`; every other route is the
    /// shortest path in hops over the wires and the radio links whose frames are
    /// decoded both ways.
    #[serde(default, rename = "route")]
    pub routes: Vec<RouteSpec>,
    /// Nodes at which an IP-layer capture `<node>.pcap` is taken.
    #[serde(default)]
    pub captures: Vec<String>,
    /// How the nodes move (`[network.mobility]`); without it they stand still.
    #[serde(default)]
    pub mobility: Option<MobilitySpec>,
    /// Nodes at which an air capture `air-<node>.pcap` is taken: the 802.11 frames
    /// their radio sent and received, behind radiotap headers.
    #[serde(default)]
    pub air_captures: Vec<String>,
    /// Beacons and handoffs between access points (`[network.roaming]`); without it
    /// associations are static and the routes decide.
    #[serde(default)]
    pub roaming: Option<RoamingSpec>,
    /// Mobile IP between the roaming access points (`[network.mobile_ip]`).
    #[serde(default)]
    pub mobile_ip: Option<MobileIpSpec>,
}

/// `[network.mobile_ip]`: Mobile IP (RFC 5944, `airtrace_net::mobile_ip`) whose agents
/// are access points of `[network.roaming]`, each one's cell a subnet of its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MobileIpSpec {
    /// The mobile nodes' home agent (an access point).
    pub home_agent: String,
    /// The foreign agents (access points).
    pub foreign_agents: Vec<String>,
    /// The mobile nodes. Default: the roaming stations.
    #[serde(default)]
    pub mobiles: Option<Vec<String>>,
    /// Time between an agent's advertisements. Default 1 s.
    #[serde(default)]
    pub advertisement_interval: Option<Duration>,
    /// A mobile node solicits an advertisement as soon as it is associated. Default
    /// false.
    #[serde(default)]
    pub solicit: Option<bool>,
    /// Registration lifetime asked for. Default 1800 s.
    #[serde(default)]
    pub lifetime: Option<Duration>,
}

/// `[network.roaming]`: access points that send beacons, stations that hand off
/// between them (`airtrace_net::roam`). All access points are in one IP subnet: a
/// handoff is at layer 2.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoamingSpec {
    /// The access points. Default: every node with `role = "access_point"`.
    #[serde(default)]
    pub access_points: Option<Vec<String>>,
    /// The roaming stations. Default: every host with a radio.
    #[serde(default)]
    pub stations: Option<Vec<String>>,
    /// Time between an access point's beacons. Default 102.4 ms (100 TU).
    #[serde(default)]
    pub beacon_interval: Option<Duration>,
    /// How long a handoff keeps a station off the air (probe, authentication,
    /// reassociation). Default 50 ms.
    #[serde(default)]
    pub handoff_gap: Option<Duration>,
    /// How much stronger another access point's beacons must be heard, smoothed, for
    /// a station to hand off to it, dB. Default 6.
    #[serde(default)]
    pub hysteresis_db: Option<f64>,
    /// Beacons of its access point a station misses before it leaves it. Default 3.
    #[serde(default)]
    pub beacon_loss: Option<u32>,
}

impl NetworkSpec {
    /// The access points and stations of `[network.roaming]`, by name.
    pub fn roaming_nodes(&self, r: &RoamingSpec) -> (Vec<String>, Vec<String>) {
        let pick = |given: &Option<Vec<String>>, f: fn(&NodeSpec) -> bool| match given {
            Some(names) => names.clone(),
            None => self
                .nodes
                .iter()
                .filter(|n| f(n))
                .map(|n| n.name.clone())
                .collect(),
        };
        (
            pick(&r.access_points, |n| n.role == Role::AccessPoint),
            pick(&r.stations, |n| n.role == Role::Host && n.radio),
        )
    }
}

/// `[network.mobility]`: a movement model, or an ns-2 movement file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MobilitySpec {
    /// The model: `random_waypoint` (in the rectangle of `network.random`).
    #[serde(default)]
    pub model: Option<MobilityModel>,
    /// Random waypoint: the mean speed v, m/s; each trip's is uniform in
    /// [0.9 v, 1.1 v].
    #[serde(default)]
    pub speed_mps: Option<f64>,
    /// Random waypoint: the rest at the start and at each waypoint, s. Default 0.
    #[serde(default)]
    pub pause_s: Option<f64>,
    /// Random waypoint: the movement pattern (start places, waypoints and speed draws),
    /// apart from the seed. Default: the run's seed.
    #[serde(default)]
    pub pattern: Option<u64>,
    /// An ns-2 movement file (setdest's output), relative to the scenario file.
    #[serde(default)]
    pub file: Option<PathBuf>,
}

/// A movement model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MobilityModel {
    /// Random waypoint (`airtrace_net::mobility::random_waypoint`).
    RandomWaypoint,
}

/// The longest pause of a random waypoint movement, s (a day).
const MAX_PAUSE_S: f64 = 86_400.0;

/// Which 802.11 MAC the nodes run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MacProfile {
    /// ns-2's CMU 802.11 (`airtrace_net::DcfConfig::ns2_wavelan`).
    #[default]
    Ns2,
    /// IEEE 802.11b (`airtrace_net::DcfConfig::dsss`).
    Dsss,
}

/// How the nodes find routes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutingProfile {
    /// Routes fixed at the start (`[[network.route]]`, else shortest paths).
    #[default]
    Static,
    /// DSR (`airtrace_net::DsrConfig::ns2`).
    Dsr,
}

/// `[network.dsr]`: DSR's settings that differ from ns-2's (see
/// `airtrace_net::DsrConfig::ns2`); the study's proposed fixes among them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsrSpec {
    /// Intermediate nodes answer route requests from their caches (default true; false
    /// also drops the neighbour search that starts each discovery, which only caches
    /// answer, as ns-2 requires to turn replies from caches off).
    #[serde(default)]
    pub reply_from_cache: Option<bool>,
    /// A node whose link broke sends the packet on by another cached route (default true).
    #[serde(default)]
    pub salvage: Option<bool>,
    /// Routes not learned or used for this long are forgotten (default: never).
    #[serde(default)]
    pub cache_timeout: Option<Duration>,
    /// A broken link is remembered this long, no route over it learned meanwhile (a
    /// negative cache; default: none).
    #[serde(default)]
    pub negative_cache: Option<Duration>,
    /// How long a packet may wait for a route (default 30 s).
    #[serde(default)]
    pub send_buffer_timeout: Option<Duration>,
    /// Packets the send buffer holds (default 64).
    #[serde(default)]
    pub send_buffer_packets: Option<u64>,
    /// Promiscuous listening: learn from overheard packets, shorten routes (default
    /// true, as ns-2).
    #[serde(default)]
    pub promiscuous: Option<bool>,
}

/// `[flow.split]`: Split-TCP (Kopparty, Krishnamurthy, Faloutsos & Tripathi, "Split
/// TCP for Mobile Ad Hoc Networks", Globecom 2002): proxies on the flow's route cut it
/// into zones, each its own TCP connection with its own congestion window; the
/// receiver's end-to-end acknowledgements bound what the source has outstanding.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitSpec {
    /// A proxy every this many hops along the route: the static route, or with DSR
    /// the shortest path when the run starts (none if the ends have no path then);
    /// 0: none, plain end-to-end TCP (to compare: `--set flow[N].split.every=0`).
    #[serde(default)]
    pub every: Option<u32>,
    /// Or the proxies by name, in route order.
    #[serde(default)]
    pub proxies: Vec<String>,
    /// Bytes the source may have sent beyond the last end-to-end acknowledgement.
    /// Default 64 KiB.
    #[serde(default)]
    pub window: Option<Size>,
    /// The receiver acknowledges end to end after this many full segments delivered.
    /// Default 2 (as TCP's delayed ACK, RFC 1122 §4.2.3.2).
    #[serde(default)]
    pub ack_every: Option<u32>,
    /// With DSR: the source chooses the proxies again (a proxy every `every` hops)
    /// from each new route it hears of, and resends from its last end-to-end
    /// acknowledgement what the zones it closes held. Default false: the proxies
    /// chosen at the start stay.
    #[serde(default)]
    pub follow: Option<bool>,
}

/// How ARP behaves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArpProfile {
    /// 4.4BSD.
    #[default]
    Bsd,
    /// ns-2's CMU ARP.
    Ns2,
    /// Tables full from the start.
    Prefilled,
}

/// A chain of nodes on a line.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSpec {
    /// Hops from the first node to the last (nodes: hops + 1).
    pub hops: u32,
    /// Distance between neighbours, m. Default 200 (Holland & Vaidya).
    #[serde(default = "default_spacing")]
    pub spacing_m: f64,
}

fn default_spacing() -> f64 {
    200.0
}

/// Nodes placed uniformly at random (stream `network/placement`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomSpec {
    /// How many.
    pub nodes: u32,
    /// The rectangle's width (x), m.
    pub width_m: f64,
    /// Its height (y), m.
    pub height_m: f64,
}

/// What a node does with packets for others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Forwards packets (every node of an ad hoc network does).
    #[default]
    Router,
    /// Only sends and receives its own.
    Host,
    /// Bridges its stations to its wire: forwards without touching the TTL (static
    /// association: routes decide which stations it serves).
    AccessPoint,
}

/// `[[network.link]]`: a wired point-to-point link between two nodes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WiredSpec {
    /// The two nodes.
    pub between: [String; 2],
    /// Bits per second each way. Default 100 Mbit/s (Fast Ethernet).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Propagation delay. Default 1 us.
    #[serde(default)]
    pub delay: Option<Duration>,
    /// Each direction's drop-tail queue, packets. Default 100.
    #[serde(default)]
    pub queue_packets: Option<u64>,
}

/// One node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Its name (in flows, routes, captures and file names).
    pub name: String,
    /// Position east, m.
    pub x: f64,
    /// Position north, m.
    #[serde(default)]
    pub y: f64,
    /// `router` (default), `host` or `access_point`.
    #[serde(default)]
    pub role: Role,
    /// False for a node on wires only (no radio). Default true.
    #[serde(default = "yes")]
    pub radio: bool,
}

fn yes() -> bool {
    true
}

/// A route given by hand.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    /// The node whose table it is in.
    pub node: String,
    /// The destination.
    pub to: String,
    /// The neighbour to send to.
    pub via: String,
}

/// Largest network: node ids are 16-bit, and the last one is the broadcast address.
const MAX_NODES: u64 = 10_000;

impl NetworkSpec {
    /// The nodes' names, in id order (n0 … for a chain or a random placement).
    pub fn node_names(&self) -> Vec<String> {
        let generated = |n: u64| (0..n).map(|i| format!("n{i}")).collect();
        match (&self.chain, &self.random) {
            (Some(c), _) => generated(u64::from(c.hops) + 1),
            (None, Some(r)) => generated(u64::from(r.nodes)),
            (None, None) => self.nodes.iter().map(|n| n.name.clone()).collect(),
        }
    }

    /// The names of a flow's two nodes: as given, or in a chain the first and the last
    /// node, so that changing the hop count moves the flow's end with it.
    pub fn flow_ends(&self, flow: &FlowSpec) -> (Option<String>, Option<String>) {
        let end = |given: &Option<String>, default: u32| {
            given
                .clone()
                .or_else(|| self.chain.map(|_| format!("n{default}")))
        };
        let last = self.chain.map_or(0, |c| c.hops);
        (end(&flow.from, 0), end(&flow.to, last))
    }

    /// The 802.11 data rate, bit/s.
    pub fn rate_bps(&self) -> u64 {
        match self.mac {
            MacProfile::Ns2 => 2_000_000,
            MacProfile::Dsss => self.rate.and_then(|r| r.0).unwrap_or(11_000_000),
        }
    }
}

impl Scenario {
    /// The checks of a network scenario.
    pub(super) fn validate_network(&self, net: &NetworkSpec) -> Result<(), Invalid> {
        use Key::{Index, Name};
        let at = |key: &'static str| vec![Name("network"), Name(key)];
        if self.captures.is_some() {
            return Err(invalid(
                &[Name("captures")],
                "a network names its capture points (nodes) in network.captures",
            ));
        }
        let layouts = [
            net.chain.is_some(),
            net.random.is_some(),
            !net.nodes.is_empty(),
        ];
        if layouts.iter().filter(|&&b| b).count() != 1 {
            return Err(invalid(
                &[Name("network")],
                "give the nodes one way: network.chain, network.random or [[network.node]]",
            ));
        }
        if let Some(c) = &net.chain {
            if c.hops == 0 || u64::from(c.hops) >= MAX_NODES {
                return Err(invalid(
                    &[Name("network"), Name("chain"), Name("hops")],
                    format!("must be between 1 and {}", MAX_NODES - 1),
                ));
            }
            if !(c.spacing_m.is_finite() && c.spacing_m > 0.0) {
                return Err(invalid(
                    &[Name("network"), Name("chain"), Name("spacing_m")],
                    "must be a distance above 0 m",
                ));
            }
        }
        if let Some(r) = &net.random {
            if !(2..=MAX_NODES).contains(&u64::from(r.nodes)) {
                return Err(invalid(
                    &[Name("network"), Name("random"), Name("nodes")],
                    format!("must be between 2 and {MAX_NODES}"),
                ));
            }
            for (key, v) in [("width_m", r.width_m), ("height_m", r.height_m)] {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(invalid(
                        &[Name("network"), Name("random"), Name(key)],
                        "must be a distance of 0 m or more",
                    ));
                }
            }
        }
        if net.nodes.len() as u64 > MAX_NODES {
            return Err(invalid(&at("node"), format!("at most {MAX_NODES} nodes")));
        }
        for (i, n) in net.nodes.iter().enumerate() {
            let here = |key| vec![Name("network"), Name("node"), Index(i), Name(key)];
            if n.name.is_empty()
                || !n
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(invalid(
                    &here("name"),
                    "a node name is letters, digits, '_' and '-' (it names files)",
                ));
            }
            if net.nodes[..i].iter().any(|m| m.name == n.name) {
                return Err(invalid(
                    &here("name"),
                    format!("{:?} is named twice", n.name),
                ));
            }
            if !(n.x.is_finite() && n.y.is_finite()) {
                return Err(invalid(
                    &here("x"),
                    "a position is a finite number of metres",
                ));
            }
        }
        let names = net.node_names();
        let known = |name: &str| names.iter().any(|n| n == name);
        let unknown = |name: &str| format!("no node is named {name:?}");
        if let Some(d) = &net.dsr {
            let here = |key: &'static str| vec![Name("network"), Name("dsr"), Name(key)];
            if net.routing != RoutingProfile::Dsr {
                return Err(invalid(
                    &at("dsr"),
                    "[network.dsr] sets DSR; add routing = \"dsr\"",
                ));
            }
            for (key, v) in [
                ("cache_timeout", d.cache_timeout),
                ("negative_cache", d.negative_cache),
                ("send_buffer_timeout", d.send_buffer_timeout),
            ] {
                if v.is_some_and(|v| !(1_000_000..=86_400_000_000_000).contains(&v.0)) {
                    return Err(invalid(&here(key), "must be between 1 ms and 1 day"));
                }
            }
            if d.send_buffer_packets
                .is_some_and(|n| !(1..=100_000).contains(&n))
            {
                return Err(invalid(
                    &here("send_buffer_packets"),
                    "must be between 1 and 100000",
                ));
            }
        }
        if net.routing == RoutingProfile::Dsr && !net.routes.is_empty() {
            return Err(invalid(
                &at("route"),
                "with routing = \"dsr\" routes are discovered; remove the [[network.route]] tables",
            ));
        }
        for (i, r) in net.routes.iter().enumerate() {
            for (key, name) in [("node", &r.node), ("to", &r.to), ("via", &r.via)] {
                if !known(name) {
                    return Err(invalid(
                        &[Name("network"), Name("route"), Index(i), Name(key)],
                        unknown(name),
                    ));
                }
            }
            if r.via == r.node {
                return Err(invalid(
                    &[Name("network"), Name("route"), Index(i), Name("via")],
                    "a node cannot be its own next hop",
                ));
            }
        }
        for (i, l) in net.links.iter().enumerate() {
            let here = |key| vec![Name("network"), Name("link"), Index(i), Name(key)];
            for name in &l.between {
                if !known(name) {
                    return Err(invalid(&here("between"), unknown(name)));
                }
            }
            if l.between[0] == l.between[1] {
                return Err(invalid(
                    &here("between"),
                    "a wire joins two different nodes",
                ));
            }
            if net.links[..i].iter().any(|o| {
                o.between == l.between || o.between == [l.between[1].clone(), l.between[0].clone()]
            }) {
                return Err(invalid(
                    &here("between"),
                    "these two nodes are already wired",
                ));
            }
            if l.rate.is_some_and(|r| r.0.is_none_or(|b| b == 0)) {
                return Err(invalid(
                    &here("rate"),
                    "a wire's rate must be finite and above 0",
                ));
            }
            if l.queue_packets == Some(0) {
                return Err(invalid(&here("queue_packets"), "must be at least 1 packet"));
            }
        }
        if net.routing == RoutingProfile::Dsr && !net.links.is_empty() {
            return Err(invalid(
                &at("link"),
                "DSR routes over the radio only; wired links need routing = \"static\"",
            ));
        }
        if net.retry_limit == Some(0) {
            return Err(invalid(&at("retry_limit"), "must be at least 1 attempt"));
        }
        for (key, list) in [
            ("captures", &net.captures),
            ("air_captures", &net.air_captures),
        ] {
            for (i, c) in list.iter().enumerate() {
                let here = vec![Name("network"), Name(key), Index(i)];
                if !known(c) {
                    return Err(invalid(&here, unknown(c)));
                }
                if list[..i].contains(c) {
                    return Err(invalid(&here, format!("{c:?} is listed twice")));
                }
            }
        }
        for (i, c) in net.air_captures.iter().enumerate() {
            if net.nodes.iter().any(|n| n.name == *c && !n.radio) {
                return Err(invalid(
                    &[Name("network"), Name("air_captures"), Index(i)],
                    format!("{c:?} has no radio"),
                ));
            }
            let file = format!("air-{c}");
            if net.captures.contains(&file) {
                return Err(invalid(
                    &[Name("network"), Name("air_captures"), Index(i)],
                    format!("{file}.pcap is also node {file:?}'s capture"),
                ));
            }
        }
        if let Some(m) = &net.mobility {
            validate_mobility(net, m)?;
        }
        if let Some(r) = &net.roaming {
            validate_roaming(net, r)?;
        }
        if let Some(m) = &net.mobile_ip {
            validate_mobile_ip(net, m)?;
        }
        super::signal::validate(
            net.signal.as_ref(),
            &net.walls,
            net.rate_control,
            net.mac == MacProfile::Dsss,
        )?;
        match net.mac {
            MacProfile::Ns2 => {
                if net.rate.is_some_and(|r| r.0 != Some(2_000_000)) {
                    return Err(invalid(
                        &at("rate"),
                        "ns-2's 802.11 runs at 2 Mbit/s; for other rates use mac = \"dsss\"",
                    ));
                }
            }
            MacProfile::Dsss => {
                let ok = [1_000_000, 2_000_000, 5_500_000, 11_000_000];
                if net
                    .rate
                    .is_some_and(|r| !r.0.is_some_and(|b| ok.contains(&b)))
                {
                    return Err(invalid(
                        &at("rate"),
                        "802.11b rates are 1, 2, 5.5 and 11 Mbit/s (IEEE 802.11-2020 §16, §17)",
                    ));
                }
            }
        }
        if let Some(d) = net.carrier_sense_m {
            if !(d.is_finite() && (250.0..=100_000.0).contains(&d)) {
                return Err(invalid(
                    &at("carrier_sense_m"),
                    "must be between 250 m (the radio's reception range: a frame that can be decoded is sensed) and 100 km",
                ));
            }
        }
        if net.queue_packets == Some(0) {
            return Err(invalid(&at("queue_packets"), "must be at least 1 packet"));
        }
        for (i, flow) in self.flows.iter().enumerate() {
            let here = |key| vec![Name("flow"), Index(i), Name(key)];
            let (Some(from), Some(to)) = net.flow_ends(flow) else {
                return Err(invalid(
                    &[Name("flow"), Index(i)],
                    "a flow in a network needs `from` and `to` (node names; in a chain they default to its two ends)",
                ));
            };
            for (key, name) in [("from", &from), ("to", &to)] {
                if !known(name) {
                    return Err(invalid(&here(key), unknown(name)));
                }
            }
            if from == to {
                return Err(invalid(
                    &here("to"),
                    "a flow goes between two different nodes",
                ));
            }
            if let Some(split) = &flow.split {
                validate_split(net, flow, split, (&from, &to), |key| {
                    vec![Name("flow"), Index(i), Name("split"), Name(key)]
                })?;
            }
        }
        Ok(())
    }
}

/// The checks of a flow's `[flow.split]`; `at` names one of its keys.
fn validate_split(
    net: &NetworkSpec,
    flow: &FlowSpec,
    split: &SplitSpec,
    (from, to): (&str, &str),
    at: impl Fn(&'static str) -> Vec<Key>,
) -> Result<(), Invalid> {
    if !flow.app.is_tcp() {
        return Err(invalid(
            &at("every"),
            "Split-TCP splits TCP flows (bulk, stream, onoff)",
        ));
    }
    match (split.every, split.proxies.is_empty()) {
        (Some(_), false) | (None, true) => {
            return Err(invalid(
                &at("every"),
                "give the proxies one way: every = K (hops) or proxies = [\"node\", ...]",
            ))
        }
        _ => {}
    }
    let names = net.node_names();
    for (i, p) in split.proxies.iter().enumerate() {
        let here = {
            let mut k = at("proxies");
            k.push(Key::Index(i));
            k
        };
        if !names.contains(p) {
            return Err(invalid(&here, format!("no node is named {p:?}")));
        }
        if p == from || p == to || split.proxies[..i].contains(p) {
            return Err(invalid(
                &here,
                format!(
                    "{p:?} is an end of the flow or listed twice; proxies sit between the ends"
                ),
            ));
        }
    }
    if split.ack_every == Some(0) {
        return Err(invalid(&at("ack_every"), "must be at least 1 segment"));
    }
    let routed = net.routing == RoutingProfile::Dsr && split.every.is_some();
    if split.follow == Some(true) && !(routed && flow.app == AppKind::Bulk) {
        return Err(invalid(
            &at("follow"),
            "proxies follow the route of a bulk flow with routing = \"dsr\" and every = K",
        ));
    }
    let mss = flow.tcp.as_ref().and_then(|t| t.mss).unwrap_or(1460);
    let ack_every = split.ack_every.unwrap_or(crate::split::DEFAULT_ACK_EVERY);
    let least = 2 * u64::from(ack_every) * u64::from(mss);
    if split.window.is_some_and(|w| w.0 < least) {
        return Err(invalid(
            &at("window"),
            format!("must hold at least two end-to-end acknowledgements' worth: {least} B (2 x ack_every x mss)"),
        ));
    }
    Ok(())
}

/// The checks of `[network.mobility]`.
fn validate_mobility(net: &NetworkSpec, m: &MobilitySpec) -> Result<(), Invalid> {
    use Key::Name;
    let at = |key: &'static str| vec![Name("network"), Name("mobility"), Name(key)];
    match (m.model, &m.file) {
        (Some(_), Some(_)) | (None, None) => Err(invalid(
            &[Name("network"), Name("mobility")],
            "give a model (model = \"random_waypoint\") or an ns-2 movement file (file = \"...\"), one of them",
        )),
        (None, Some(_)) => {
            let given = [
                ("speed_mps", m.speed_mps.is_some()),
                ("pause_s", m.pause_s.is_some()),
                ("pattern", m.pattern.is_some()),
            ];
            match given.iter().find(|(_, g)| *g) {
                Some((key, _)) => Err(invalid(
                    &at(key),
                    "speed_mps, pause_s and pattern are random_waypoint's; a movement file gives every place and speed",
                )),
                None => Ok(()),
            }
        }
        (Some(MobilityModel::RandomWaypoint), None) => {
            let Some(r) = &net.random else {
                return Err(invalid(
                    &at("model"),
                    "random_waypoint moves the nodes in the rectangle of network.random = { nodes, width_m, height_m }",
                ));
            };
            for (key, v) in [("width_m", r.width_m), ("height_m", r.height_m)] {
                if v <= 0.0 {
                    return Err(invalid(
                        &[Name("network"), Name("random"), Name(key)],
                        "random_waypoint needs a rectangle wider and higher than 0 m",
                    ));
                }
            }
            let Some(v) = m.speed_mps else {
                return Err(invalid(
                    &at("model"),
                    "random_waypoint needs speed_mps, the mean speed (each trip's is within 10% of it)",
                ));
            };
            if !(v > 0.0 && v <= MAX_SPEED_MPS) {
                return Err(invalid(
                    &at("speed_mps"),
                    format!("must be above 0 and at most {MAX_SPEED_MPS} m/s"),
                ));
            }
            if m.pause_s.is_some_and(|p| !(0.0..=MAX_PAUSE_S).contains(&p)) {
                return Err(invalid(
                    &at("pause_s"),
                    format!("must be 0 to {MAX_PAUSE_S} s"),
                ));
            }
            Ok(())
        }
    }
}

/// Checks `[network.mobile_ip]`: with roaming, its agents among the access points
/// and once each, its mobile nodes among the stations, settings in range.
fn validate_mobile_ip(net: &NetworkSpec, m: &MobileIpSpec) -> Result<(), Invalid> {
    use Key::*;
    let at = |key| vec![Name("network"), Name("mobile_ip"), Name(key)];
    let Some(r) = &net.roaming else {
        return Err(invalid(
            &at("home_agent"),
            "Mobile IP's agents are access points: add [network.roaming]",
        ));
    };
    let (aps, stations) = net.roaming_nodes(r);
    if !aps.contains(&m.home_agent) {
        return Err(invalid(
            &at("home_agent"),
            format!(
                "{:?} is not an access point of [network.roaming]",
                m.home_agent
            ),
        ));
    }
    for (i, fa) in m.foreign_agents.iter().enumerate() {
        let here = vec![
            Name("network"),
            Name("mobile_ip"),
            Name("foreign_agents"),
            Index(i),
        ];
        if !aps.contains(fa) {
            return Err(invalid(
                &here,
                format!("{fa:?} is not an access point of [network.roaming]"),
            ));
        }
        if *fa == m.home_agent || m.foreign_agents[..i].contains(fa) {
            return Err(invalid(&here, format!("{fa:?} is named twice")));
        }
    }
    for (i, mn) in m.mobiles.iter().flatten().enumerate() {
        if !stations.contains(mn) {
            return Err(invalid(
                &[
                    Name("network"),
                    Name("mobile_ip"),
                    Name("mobiles"),
                    Index(i),
                ],
                format!("{mn:?} is not a station of [network.roaming]"),
            ));
        }
    }
    if m.advertisement_interval
        .is_some_and(|d| !(1_000_000..=60_000_000_000).contains(&d.0))
    {
        return Err(invalid(
            &at("advertisement_interval"),
            "must be between 1 ms and 60 s",
        ));
    }
    if m.lifetime
        .is_some_and(|d| !(1_000_000_000..=65_534_000_000_000).contains(&d.0))
    {
        return Err(invalid(&at("lifetime"), "must be between 1 s and 65534 s"));
    }
    Ok(())
}

/// Checks `[network.roaming]`: named nodes with radios, at least one access point, no
/// node both, static routes, settings in range.
fn validate_roaming(net: &NetworkSpec, r: &RoamingSpec) -> Result<(), Invalid> {
    use Key::*;
    let at = |key| vec![Name("network"), Name("roaming"), Name(key)];
    if net.routing != RoutingProfile::Static {
        return Err(invalid(
            &at("access_points"),
            "roaming moves static routes; it needs routing = \"static\"",
        ));
    }
    let (aps, stations) = net.roaming_nodes(r);
    if aps.is_empty() {
        return Err(invalid(
            &at("access_points"),
            "no access point: name them, or give nodes role = \"access_point\"",
        ));
    }
    let names = net.node_names();
    for (key, list) in [("access_points", &aps), ("stations", &stations)] {
        for (i, name) in list.iter().enumerate() {
            let here = vec![Name("network"), Name("roaming"), Name(key), Index(i)];
            if !names.contains(name) {
                return Err(invalid(&here, format!("no node is named {name:?}")));
            }
            if list[..i].contains(name) {
                return Err(invalid(&here, format!("{name:?} is listed twice")));
            }
            if net.nodes.iter().any(|n| n.name == *name && !n.radio) {
                return Err(invalid(&here, format!("{name:?} has no radio")));
            }
        }
    }
    if let Some(both) = stations.iter().find(|s| aps.contains(s)) {
        return Err(invalid(
            &at("stations"),
            format!("{both:?} is both an access point and a station"),
        ));
    }
    if r.beacon_interval
        .is_some_and(|d| !(1_000_000..=10_000_000_000).contains(&d.0))
    {
        return Err(invalid(
            &at("beacon_interval"),
            "must be between 1 ms and 10 s",
        ));
    }
    if r.handoff_gap
        .is_some_and(|d| !(0..=60_000_000_000).contains(&d.0))
    {
        return Err(invalid(&at("handoff_gap"), "must be between 0 s and 60 s"));
    }
    if r.hysteresis_db
        .is_some_and(|h| !(h.is_finite() && (0.0..=100.0).contains(&h)))
    {
        return Err(invalid(
            &at("hysteresis_db"),
            "must be between 0 and 100 dB",
        ));
    }
    if r.beacon_loss.is_some_and(|n| !(1..=1000).contains(&n)) {
        return Err(invalid(
            &at("beacon_loss"),
            "must be between 1 and 1000 beacons",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::Scenario;

    const NODES: &str = r#"
[network]
captures = ["a"]
air_captures = ["a", "b"]

[[network.node]]
name = "a"
x = 0

[[network.node]]
name = "b"
x = 200

[[flow]]
app = "bulk"
bytes = "1 MB"
from = "a"
to = "b"
"#;

    fn error(text: &str) -> String {
        Scenario::parse(Path::new("s.toml"), text)
            .map(|_| String::new())
            .unwrap_or_else(|e| e.message)
    }

    #[test]
    fn air_captures_name_known_nodes_once_and_their_files_are_their_own() {
        assert_eq!(error(NODES), "");
        let unknown = NODES.replace(r#"["a", "b"]"#, r#"["a", "c"]"#);
        assert_eq!(
            error(&unknown),
            r#"network.air_captures[2]: no node is named "c""#
        );
        let twice = NODES.replace(r#"["a", "b"]"#, r#"["b", "b"]"#);
        assert_eq!(
            error(&twice),
            r#"network.air_captures[2]: "b" is listed twice"#
        );
        let clash = NODES
            .replace(r#"captures = ["a"]"#, r#"captures = ["air-b"]"#)
            .replace(r#"name = "a""#, r#"name = "air-b""#)
            .replace(r#"["a", "b"]"#, r#"["b"]"#)
            .replace(r#"from = "a""#, r#"from = "air-b""#);
        assert_eq!(
            error(&clash),
            r#"network.air_captures[1]: air-b.pcap is also node "air-b"'s capture"#
        );
    }

    #[test]
    fn wires_join_two_known_nodes_once_and_need_static_routes() {
        let wire = |table: &str| error(&format!("{NODES}\n[[network.link]]\n{table}\n"));
        assert_eq!(wire(r#"between = ["a", "b"]"#), "");
        assert_eq!(
            wire(r#"between = ["a", "c"]"#),
            r#"network.link[1].between: no node is named "c""#
        );
        assert!(wire(r#"between = ["a", "a"]"#).contains("two different nodes"));
        assert!(
            wire("between = [\"a\", \"b\"]\n[[network.link]]\nbetween = [\"b\", \"a\"]")
                .contains("already wired")
        );
        let dsr = NODES.replace("[network]", "[network]\nrouting = \"dsr\"");
        let dsr = error(&format!(
            "{dsr}\n[[network.link]]\nbetween = [\"a\", \"b\"]\n"
        ));
        assert!(dsr.contains("routing = \"static\""), "{dsr}");
        let deaf = NODES.replace("x = 200", "x = 200\nradio = false");
        assert_eq!(error(&deaf), r#"network.air_captures[2]: "b" has no radio"#);
    }

    #[test]
    fn split_tcp_proxies_are_given_one_way_between_the_ends() {
        let split = |table: &str| error(&format!("{NODES}\n[flow.split]\n{table}\n"));
        assert_eq!(split("every = 2"), "");
        assert_eq!(
            split("proxies = []").split(':').next(),
            Some("flow[1].split.every")
        );
        assert_eq!(
            split(r#"proxies = ["c"]"#),
            r#"flow[1].split.proxies[1]: no node is named "c""#
        );
        assert!(split(r#"proxies = ["a"]"#).contains("an end of the flow"));
        assert!(split("every = 2\nwindow = \"2 KiB\"").contains("at least two"));
        assert!(split("every = 1\nack_every = 0").contains("at least 1 segment"));
    }

    #[test]
    fn split_tcp_proxies_follow_only_dsr_routes_of_bulk_flows() {
        let dsr = NODES.replace("[network]", "[network]\nrouting = \"dsr\"");
        let split = |nodes: &str, table: &str| error(&format!("{nodes}\n[flow.split]\n{table}\n"));
        assert_eq!(split(&dsr, "every = 2\nfollow = true"), "");
        let no = "flow[1].split.follow: proxies follow the route";
        assert!(split(NODES, "every = 2\nfollow = true").starts_with(no));
        let three = dsr.replace(
            "[[flow]]",
            "[[network.node]]\nname = \"c\"\nx = 100\n\n[[flow]]",
        );
        assert!(split(&three, "proxies = [\"c\"]\nfollow = true").starts_with(no));
        let stream = dsr.replace("app = \"bulk\"", "app = \"stream\"\nrate = \"1 Mbit/s\"");
        assert!(split(&stream, "every = 2\nfollow = true").starts_with(no));
    }
}
