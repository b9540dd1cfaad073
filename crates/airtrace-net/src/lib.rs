//! Networks of nodes for the airtrace simulator: a shared radio channel, each
//! station's PHY and 802.11 MAC; like `airtrace-link` it reads no clock and does no
//! I/O, so the simulator (and, later, the emulator) drive it in their own time.
//!
//! # Map of the code
//!
//! - [`radio`]: positions, propagation (two-ray ground, log-distance) and the PHY
//!   profile (thresholds, capture ratio, how receivers synchronise and how
//!   interference adds). Start here for "what reaches whom".
//! - [`frame`]: 802.11 frames and their air time (PLCP, rates).
//! - [`mobility`]: moving nodes: piecewise-linear paths, positions on demand, the
//!   random waypoint model and ns-2 movement (`setdest`) files.
//! - [`phy`]: one receiver: the signals present, the frame locked onto, capture.
//! - [`signal`]: walls, slow shadowing and SNR-driven frame errors (opt-in), with the
//!   802.11b DSSS/CCK error curves in [`dsss`].
//! - [`rate`]: per-neighbour rate controllers (ARF, AARF, MIMD probing, a
//!   Minstrel-like sampler).
//! - [`roam`]: a station's roaming between access points (beacons heard, hysteresis,
//!   handoff gap); the network sends the beacons and moves the routes
//!   ([`Network::with_roaming`]).
//! - [`mobile_ip`]: Mobile IP (RFC 5944): agent advertisements, a mobile node's
//!   movement detection and registration, IP-in-IP tunnels ([`Network::with_mobile_ip`]).
//! - [`dcf`]: one station's 802.11 DCF (IEEE 802.11-2020 §10.3), sans-IO, with the
//!   standard's settings and ns-2's.
//! - [`wireless`]: the stations on one channel and the events between them; the
//!   `send` / `next_deadline` / `poll_into` shape of `airtrace-link`'s links.
//! - [`arp`]: one node's ARP table and its one-packet hold queue.
//! - [`routing`]: static routes, given or computed as shortest paths.
//! - [`connectivity`]: hop counts between two moving nodes over time.
//! - [`dsr`]: Dynamic Source Routing (RFC 4728) as ns-2's CMU code ran it.
//! - [`ip`]: the IP packet as the network layer sees it, and drop reasons.
//! - [`frag`]: IPv4 fragmentation at the interface, reassembly at the destination.
//! - [`network`]: the nodes' IP layer on the channel: routes, TTL, ARP, forwarding;
//!   what a simulation drives.
//! - [`air`]: what every radio saw, each data frame with its packet (for air
//!   captures).
//!
//! Time is an `i64` count of nanoseconds, as everywhere in airtrace.

pub mod air;
pub mod arp;
pub mod connectivity;
pub mod dcf;
pub mod dsr;
pub mod dsss;
pub mod frag;
pub mod frame;
pub mod ip;
pub mod mobile_ip;
pub mod mobility;
pub mod network;
pub mod phy;
pub mod radio;
pub mod rate;
pub mod roam;
pub mod routing;
pub mod signal;
pub mod wired;
pub mod wireless;

pub use air::{AirFrame, Carried};
pub use arp::ArpConfig;
pub use dcf::{DcfConfig, MacOut, Sdu};
pub use dsr::DsrConfig;
pub use frame::{Frame, FrameKind, NodeId, Payload, BROADCAST};
pub use ip::{DropReason, IpPacket};
pub use mobility::Mobility;
pub use network::{NetEvent, Network};
pub use radio::{PhyProfile, Position, Propagation};
pub use routing::Routes;
pub use signal::{SignalConfig, SignalModel, Wall};
pub use wireless::{AirRecord, TxCounters, Wireless, WirelessEvent};
