//! The nodes' IP layer over one radio channel: static routes with a TTL, ARP, and
//! forwarding hop by hop through each node's 802.11 MAC.
//!
//! Like [`Wireless`] it reads no clock: a node's transport hands it a packet with
//! [`Network::send`], [`Network::next_deadline`] says when it next needs a poll, and
//! [`Network::poll_into`] runs it up to a time and hands out what happened
//! ([`NetEvent`]): packets going out of and coming into each node's interface (what an
//! IP-layer capture there shows), packets reaching their destination, and drops with
//! their reason.
//!
//! Each hop of a packet has its own entry in a generation-checked slab, created when
//! the packet is handed to (or held for) that hop's MAC and removed when the MAC is
//! done with it (acknowledged, given up, or refused by a full queue). The receiving
//! node reads the entry when the frame arrives, which is always before the sender's
//! MAC hears the ACK; a broadcast's entry is kept a little longer, until every
//! neighbour has had it. ARP packets need no entry: the frame's token says all of it.
//!
//! Routes are static ([`Routes`]) or found by DSR ([`Network::with_dsr`]): then each
//! node's [`DsrAgent`] decides where its packets go, hears of every link its MAC gives
//! up on, and asks for sends after a delay (jitter) and for its send-buffer checks,
//! which the network keeps in its own timer heap beside the radio's events.
//!
//! With [`Network::enable_air`], what every radio sees comes out too, each data frame
//! with its packet ([`crate::air`]).
//!
//! Nodes may also be joined by wires ([`Network::with_wired`]; [`crate::wired`]): a
//! hop to a wired neighbour goes down the wire, with no ARP. An access point
//! ([`Network::with_bridges`]) passes packets between its radio and its wire as a
//! layer-2 bridge does, leaving the TTL as it is. With [`Network::with_roaming`] the
//! access points send beacons and stations hand off between them (`roaming.rs`).
//!
//! A datagram longer than the interface MTU ([`Network::with_mtu`], 1500 bytes unless
//! set) leaves as IPv4 fragments, each its own hop and frame, and is put together again
//! at its destination, or lost there with any of its fragments ([`crate::frag`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand_chacha::ChaCha8Rng;
use slotmap::{DefaultKey, Key, KeyData, SlotMap};

use crate::air::{AirFrame, AirLog};
use crate::arp::{Arp, ArpConfig, Resolution};
use crate::dcf::Sdu;
use crate::dsr::agent::{Action, RouteEvent};
use crate::dsr::{DsrAgent, DsrConfig};
use crate::frag::{Arrival, Fragment, Gone, Reassembly, REASSEMBLY_TIMEOUT_NS};
use crate::frame::{NodeId, Payload, BROADCAST, ETHERTYPE_ARP, ETHERTYPE_BEACON, ETHERTYPE_IPV4};
pub use crate::ip::{DropReason, IpPacket};
use crate::mobile_ip::MipEvent;
use crate::roam::RoamEvent;
use crate::routing::Routes;
use crate::wired::{WireEvent, WiredLinks};
use crate::wireless::{Wireless, WirelessEvent};

mod mobile_ip;
mod roaming;

/// Length of an ARP packet for IPv4 over 802 networks, bytes (RFC 826).
pub const ARP_BYTES: u32 = 28;

/// The interface MTU unless set: IP over Ethernet (RFC 894) and over 802.11 (RFC 1042).
pub const DEFAULT_MTU: u32 = 1500;

/// What happened in the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetEvent {
    /// `node` handed `packet` to its interface for `next_hop`.
    Out {
        /// When, ns.
        at_ns: i64,
        /// The node.
        node: NodeId,
        /// The neighbour it goes to.
        next_hop: NodeId,
        /// The packet, with the TTL it leaves with.
        packet: IpPacket,
    },
    /// `packet` came in at `node`'s interface from neighbour `from`.
    In {
        /// When, ns.
        at_ns: i64,
        /// The node.
        node: NodeId,
        /// The neighbour that sent it.
        from: NodeId,
        /// The packet, with the TTL it arrived with.
        packet: IpPacket,
    },
    /// `packet` reached its destination `node`: hand it to the transport.
    Local {
        /// When, ns.
        at_ns: i64,
        /// The node.
        node: NodeId,
        /// The packet.
        packet: IpPacket,
    },
    /// Something `node`'s routing did (DSR: requests, replies, errors, broken links).
    Route {
        /// When, ns.
        at_ns: i64,
        /// The node.
        node: NodeId,
        /// What.
        event: RouteEvent,
    },
    /// `node`'s rate adaptation changed the rate of its data frames to `neighbour`.
    RateChanged {
        /// When, ns.
        at_ns: i64,
        /// The node.
        node: NodeId,
        /// The neighbour.
        neighbour: NodeId,
        /// The old rate, bit/s.
        from_bps: u64,
        /// The new rate, bit/s.
        to_bps: u64,
    },
    /// Roaming station `node` handed off or associated.
    Roam {
        /// When, ns.
        at_ns: i64,
        /// The station.
        node: NodeId,
        /// What.
        event: RoamEvent,
    },
    /// Mobile node `node` sent a registration or heard its reply.
    MobileIp {
        /// When, ns.
        at_ns: i64,
        /// The mobile node.
        node: NodeId,
        /// What.
        event: MipEvent,
    },
    /// `node` dropped `packet`.
    Dropped {
        /// When, ns.
        at_ns: i64,
        /// The node.
        node: NodeId,
        /// The packet.
        packet: IpPacket,
        /// Why.
        reason: DropReason,
    },
}

/// ARP operation codes (RFC 826).
const ARP_REQUEST: u64 = 1;
const ARP_REPLY: u64 = 2;

/// An ARP packet's frame token: operation, sender and target.
fn arp_token(op: u64, sender: NodeId, target: NodeId) -> u64 {
    (op << 32) | (u64::from(sender) << 16) | u64::from(target)
}

/// The operation, sender and target of an ARP frame's token.
pub fn arp_fields(token: u64) -> (u16, NodeId, NodeId) {
    (
        (token >> 32) as u16,
        (token >> 16) as NodeId,
        token as NodeId,
    )
}

fn key_of(token: u64) -> DefaultKey {
    KeyData::from_ffi(token).into()
}

/// How long a broadcast's hop entry outlives its transmission, ns: longer than any
/// propagation delay on the channel.
const BROADCAST_GRACE_NS: i64 = 1_000_000;

/// Something a node's routing asked for later.
#[derive(Debug, Clone, Copy)]
enum Deferred {
    /// Send a packet to a neighbour ([`BROADCAST`]: to all of them).
    Send { packet: IpPacket, next_hop: NodeId },
    /// Run the DSR send-buffer check.
    CheckBuffer,
    /// An access point sends its beacon.
    Beacon,
    /// A station is associated (at the start, or at the end of a handoff's gap).
    Associated,
    /// A station checks that it still hears its access point's beacons.
    BeaconCheck,
    /// A Mobile IP agent advertises.
    Advertise,
    /// A mobile node sends its registration `id` again if no reply came.
    RegistrationRetry { id: u64 },
    /// A destination's reassembly timer for fragmented datagram `datagram` runs out.
    Reassembly { datagram: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Timer {
    at: i64,
    order: u64,
    node: NodeId,
    what: Deferred,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timer {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

/// The nodes on one channel and their IP layer (see the [module documentation](self)).
#[derive(Debug)]
pub struct Network {
    wireless: Wireless,
    routes: Routes,
    /// Which nodes forward packets for others, by id.
    routers: Vec<bool>,
    arp: Vec<Arp<DefaultKey>>,
    hops: SlotMap<DefaultKey, IpPacket>,
    radio_events: Vec<WirelessEvent>,
    /// Each node's DSR agent (empty: static routes).
    dsr: Vec<DsrAgent>,
    dsr_actions: Vec<Action>,
    timers: BinaryHeap<Reverse<Timer>>,
    timer_order: u64,
    /// Broadcast hop entries to free, with the time they may go.
    spent_broadcasts: VecDeque<(i64, DefaultKey)>,
    air: Option<AirLog>,
    wired: WiredLinks,
    wire_events: Vec<WireEvent>,
    /// Which nodes forward as layer-2 bridges (access points), by id.
    bridges: Vec<bool>,
    /// Beacons and handoffs (`None`: associations are static, the routes decide).
    roaming: Option<Box<roaming::Roaming>>,
    /// Mobile IP's agents and mobile nodes (`None`: no Mobile IP).
    mobile_ip: Option<Box<mobile_ip::MobileIp>>,
    /// Every interface's MTU, bytes.
    mtu: u32,
    /// The fragmented datagrams not yet put together or lost.
    reassembly: Reassembly,
}

impl Network {
    /// The network of the stations of `wireless` (node `i` is station `i`), routing
    /// by `routes`, each node with an ARP table set by `arp`; `routers[i]` says
    /// whether node `i` forwards packets for others.
    pub fn new(wireless: Wireless, routes: Routes, arp: ArpConfig, routers: Vec<bool>) -> Self {
        let nodes = wireless.stations();
        assert_eq!(routers.len(), nodes, "one router flag per node");
        Network {
            wireless,
            routes,
            routers,
            arp: (0..nodes).map(|_| Arp::new(arp, nodes)).collect(),
            hops: SlotMap::new(),
            radio_events: Vec::new(),
            dsr: Vec::new(),
            dsr_actions: Vec::new(),
            timers: BinaryHeap::new(),
            timer_order: 0,
            spent_broadcasts: VecDeque::new(),
            air: None,
            wired: WiredLinks::default(),
            wire_events: Vec::new(),
            bridges: vec![false; nodes],
            roaming: None,
            mobile_ip: None,
            mtu: DEFAULT_MTU,
            reassembly: Reassembly::default(),
        }
    }

    /// The network whose interfaces have this MTU, bytes (see [`crate::frag`]).
    pub fn with_mtu(mut self, mtu: u32) -> Self {
        self.mtu = mtu;
        self
    }

    /// Fragmented datagrams the network holds: fragments on their way or waiting at
    /// their destination.
    pub fn fragmented_pending(&self) -> usize {
        self.reassembly.pending()
    }

    /// The network with these wires between its nodes (routes over them are the
    /// caller's: static routes; DSR does not use wires).
    pub fn with_wired(mut self, wired: WiredLinks) -> Self {
        self.wired = wired;
        self
    }

    /// The network whose nodes `bridges[i]` forward as access points do: between
    /// their radio and their wire, as a bridge, without touching the TTL.
    pub fn with_bridges(mut self, bridges: Vec<bool>) -> Self {
        assert_eq!(
            bridges.len(),
            self.routers.len(),
            "one bridge flag per node"
        );
        self.bridges = bridges;
        self
    }

    /// The network with DSR finding every route (the static routes are no longer
    /// used); `rngs[i]` is node `i`'s random stream for DSR's jitter.
    pub fn with_dsr(mut self, cfg: DsrConfig, rngs: Vec<ChaCha8Rng>) -> Self {
        assert_eq!(rngs.len(), self.routers.len(), "one DSR stream per node");
        self.wireless.set_promiscuous(cfg.promiscuous);
        self.dsr = rngs
            .into_iter()
            .enumerate()
            .map(|(i, rng)| DsrAgent::new(i as NodeId, cfg, rng))
            .collect();
        self
    }

    /// `node`'s DSR agent, when DSR routes.
    pub fn dsr(&self, node: NodeId) -> Option<&DsrAgent> {
        self.dsr.get(node as usize)
    }

    /// See [`Network::dsr`] (to seed a cache, as a test of a stale route does).
    pub fn dsr_mut(&mut self, node: NodeId) -> Option<&mut DsrAgent> {
        self.dsr.get_mut(node as usize)
    }

    /// Starts recording what the radios of `nodes` see ([`crate::air`]).
    pub fn enable_air(&mut self, nodes: &[NodeId]) {
        self.wireless.enable_air(nodes);
        self.air = Some(AirLog::default());
    }

    /// Moves the frames the radios saw since the last call to `frames`, each radio's
    /// in the order they ended there, and to `released` the packets
    /// ([`IpPacket::user`]) of which the network holds no hop any more: no later frame
    /// carries them.
    pub fn drain_air(&mut self, frames: &mut Vec<AirFrame>, released: &mut Vec<u64>) {
        if let Some(air) = self.air.as_mut() {
            air.drain(frames, released);
        }
    }

    /// Records the frames still being sent (at the end of a run), for
    /// [`Network::drain_air`] (see [`Wireless::flush_air`]).
    pub fn flush_air(&mut self) {
        self.wireless.flush_air();
        self.resolve_air();
    }

    /// Takes the channel's new air records and reads their packets while their hops
    /// are still there. Cold: kept out of the run loop's way when nothing is recorded.
    #[cold]
    fn resolve_air(&mut self) {
        if let Some(air) = self.air.as_mut() {
            self.wireless.drain_air(air.records());
            let hops = &self.hops;
            air.resolve(|token| hops.get(key_of(token)).copied());
        }
    }

    /// A new hop of `packet` (see [`crate::air`] for the count kept with air records).
    fn insert_hop(&mut self, packet: IpPacket) -> DefaultKey {
        if let Some(air) = self.air.as_mut() {
            air.hold(packet.user);
        }
        self.hops.insert(packet)
    }

    /// The hop `key` is over.
    fn remove_hop(&mut self, key: DefaultKey) -> Option<IpPacket> {
        let packet = self.hops.remove(key)?;
        if let Some(air) = self.air.as_mut() {
            air.let_go(packet.user);
        }
        Some(packet)
    }

    /// A transport packet goes into a DSR agent (its send buffer, a deferred send) or
    /// onto a wire: counted like a hop until it comes out, so that its air frames
    /// find it.
    fn hold_in_routing(&mut self, packet: &IpPacket) {
        if let (Some(air), false) = (self.air.as_mut(), packet.is_control()) {
            air.hold(packet.user);
        }
    }

    /// A transport packet came out of a DSR agent or off a wire.
    fn let_go_from_routing(&mut self, packet: &IpPacket) {
        if let (Some(air), false) = (self.air.as_mut(), packet.is_control()) {
            air.let_go(packet.user);
        }
    }

    /// The radio channel (for its MACs' counters and the air records).
    pub fn wireless(&self) -> &Wireless {
        &self.wireless
    }

    /// See [`Network::wireless`].
    pub fn wireless_mut(&mut self) -> &mut Wireless {
        &mut self.wireless
    }

    /// `node`'s ARP table.
    pub fn arp(&self, node: NodeId) -> &Arp<DefaultKey> {
        &self.arp[node as usize]
    }

    /// The routing tables.
    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// When the network next needs a poll.
    pub fn next_deadline(&self) -> Option<i64> {
        let timer = self.timers.peek().map(|Reverse(t)| t.at);
        [
            self.wireless.next_deadline(),
            timer,
            self.wired.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// `packet.src`'s transport sends `packet`; what follows at once is appended to
    /// `out`.
    pub fn send(&mut self, now: i64, packet: IpPacket, out: &mut Vec<NetEvent>) {
        // Held while routed, so that a packet that gets no hop is released too.
        if let Some(air) = self.air.as_mut() {
            air.hold(packet.user);
        }
        self.route(now, packet.src, packet, out);
        if let Some(air) = self.air.as_mut() {
            air.let_go(packet.user);
        }
        self.drain_radio(now, out);
    }

    /// Runs every event due up to `now` and appends what happened to `out`.
    pub fn poll_into(&mut self, now: i64, out: &mut Vec<NetEvent>) {
        loop {
            let due = self
                .timers
                .peek()
                .map(|Reverse(t)| t.at)
                .filter(|&at| at <= now);
            let wire_due = self.wired.next_deadline().filter(|&at| at <= now);
            if let Some(at) = wire_due.filter(|&w| due.is_none_or(|t| w <= t)) {
                self.drain_radio(at, out);
                self.drain_wires(at, out);
                continue;
            }
            self.drain_radio(due.unwrap_or(now), out);
            let Some(at) = due else { break };
            let Some(Reverse(timer)) = self.timers.pop() else {
                break;
            };
            match timer.what {
                Deferred::Send { packet, next_hop } => {
                    self.send_hop(at, timer.node, next_hop, packet, out);
                    self.let_go_from_routing(&packet);
                }
                Deferred::CheckBuffer => {
                    let mut actions = std::mem::take(&mut self.dsr_actions);
                    self.dsr[timer.node as usize].check_buffer(at, &mut actions);
                    self.run_actions(at, timer.node, &mut actions, out);
                    self.dsr_actions = actions;
                }
                what @ (Deferred::Beacon | Deferred::Associated | Deferred::BeaconCheck) => {
                    self.roam_timer(at, timer.node, what, out)
                }
                what @ (Deferred::Advertise | Deferred::RegistrationRetry { .. }) => {
                    self.mip_timer(at, timer.node, what, out)
                }
                Deferred::Reassembly { datagram } => {
                    if let Some(whole) = self.reassembly.timed_out(datagram) {
                        self.dropped(at, timer.node, whole, DropReason::ReassemblyTimeout, out);
                    }
                }
            }
        }
        while let Some(&(at, key)) = self.spent_broadcasts.front() {
            if at > now {
                break;
            }
            self.remove_hop(key);
            self.spent_broadcasts.pop_front();
        }
    }

    fn defer(&mut self, at: i64, node: NodeId, what: Deferred) {
        self.timer_order += 1;
        self.timers.push(Reverse(Timer {
            at,
            order: self.timer_order,
            node,
            what,
        }));
    }

    /// Carries out what `node`'s DSR agent asked for.
    fn run_actions(
        &mut self,
        now: i64,
        node: NodeId,
        actions: &mut Vec<Action>,
        out: &mut Vec<NetEvent>,
    ) {
        for action in actions.drain(..) {
            let leaving = match action {
                Action::Unicast {
                    packet,
                    next_hop,
                    delay_ns,
                } => self.send_later(now, node, next_hop, packet, delay_ns, out),
                Action::Broadcast { packet, delay_ns } => {
                    self.send_later(now, node, BROADCAST, packet, delay_ns, out)
                }
                Action::Deliver(packet) => {
                    out.push(NetEvent::Local {
                        at_ns: now,
                        node,
                        packet,
                    });
                    Some(packet)
                }
                Action::Drop { packet, reason } => {
                    self.dropped(now, node, packet, reason, out);
                    Some(packet)
                }
                Action::Log(event) => {
                    out.push(NetEvent::Route {
                        at_ns: now,
                        node,
                        event,
                    });
                    None
                }
                Action::CheckBufferAt(at) => {
                    self.defer(at, node, Deferred::CheckBuffer);
                    None
                }
            };
            if let Some(packet) = leaving {
                self.let_go_from_routing(&packet);
            }
        }
    }

    /// Sends `packet` now, or defers it; returns it when it left the agent now.
    fn send_later(
        &mut self,
        now: i64,
        node: NodeId,
        next_hop: NodeId,
        packet: IpPacket,
        delay_ns: i64,
        out: &mut Vec<NetEvent>,
    ) -> Option<IpPacket> {
        if delay_ns > 0 {
            self.defer(now + delay_ns, node, Deferred::Send { packet, next_hop });
            None
        } else {
            self.send_hop(now, node, next_hop, packet, out);
            Some(packet)
        }
    }

    fn drain_radio(&mut self, now: i64, out: &mut Vec<NetEvent>) {
        let mut events = std::mem::take(&mut self.radio_events);
        loop {
            self.wireless.poll_into(now, &mut events);
            if events.is_empty() {
                break;
            }
            // Before the events end hops (and free their packets).
            if self.air.is_some() {
                self.resolve_air();
            }
            for e in events.drain(..) {
                self.on_radio(e, out);
            }
        }
        self.radio_events = events;
        if self.air.is_some() {
            self.resolve_air();
        }
    }

    /// Hands out what the wires did up to `now`.
    fn drain_wires(&mut self, now: i64, out: &mut Vec<NetEvent>) {
        let mut events = std::mem::take(&mut self.wire_events);
        self.wired.poll_into(now, &mut events);
        for e in events.drain(..) {
            match e {
                WireEvent::Arrived {
                    at_ns,
                    node,
                    from,
                    packet,
                } => {
                    self.arrived(at_ns, node, from, packet, out);
                    self.let_go_from_routing(&packet);
                }
                WireEvent::QueueFull {
                    at_ns,
                    node,
                    packet,
                } => {
                    self.dropped(at_ns, node, packet, DropReason::QueueFull, out);
                    self.let_go_from_routing(&packet);
                }
            }
        }
        self.wire_events = events;
    }

    fn on_radio(&mut self, e: WirelessEvent, out: &mut Vec<NetEvent>) {
        match e {
            WirelessEvent::Delivered {
                at_ns,
                node,
                from,
                payload,
            } => {
                if payload.ethertype == ETHERTYPE_ARP {
                    self.on_arp(at_ns, node, payload.token, out);
                    return;
                }
                if payload.ethertype == ETHERTYPE_BEACON {
                    self.heard_beacon(at_ns, node, from, out);
                    return;
                }
                let Some(&packet) = self.hops.get(key_of(payload.token)) else {
                    debug_assert!(false, "a frame's packet outlives its hop");
                    return;
                };
                self.arrived(at_ns, node, from, packet, out);
            }
            WirelessEvent::Overheard {
                at_ns,
                node,
                from,
                payload,
            } => {
                if payload.ethertype != ETHERTYPE_IPV4 || self.dsr.is_empty() {
                    return;
                }
                let Some(&packet) = self.hops.get(key_of(payload.token)) else {
                    return;
                };
                let mut actions = std::mem::take(&mut self.dsr_actions);
                self.dsr[node as usize].overhear(at_ns, packet, from, &mut actions);
                self.run_actions(at_ns, node, &mut actions, out);
                self.dsr_actions = actions;
            }
            WirelessEvent::Sent { at_ns, sdu, .. } => {
                let key = key_of(sdu.payload.token);
                match (sdu.payload.ethertype, sdu.next_hop) {
                    (ETHERTYPE_IPV4, BROADCAST) => self
                        .spent_broadcasts
                        .push_back((at_ns + BROADCAST_GRACE_NS, key)),
                    (ETHERTYPE_IPV4, _) => {
                        self.remove_hop(key);
                    }
                    _ => {}
                }
            }
            WirelessEvent::Failed { at_ns, node, sdu } => {
                if self.dsr.is_empty() || sdu.payload.ethertype != ETHERTYPE_IPV4 {
                    self.hop_dropped(at_ns, node, sdu, DropReason::RetryLimit, out)
                } else {
                    self.link_failed(at_ns, node, sdu, out)
                }
            }
            WirelessEvent::QueueFull { at_ns, node, sdu } => {
                self.hop_dropped(at_ns, node, sdu, DropReason::QueueFull, out)
            }
            WirelessEvent::RateChanged {
                at_ns,
                node,
                neighbour,
                from_bps,
                to_bps,
            } => out.push(NetEvent::RateChanged {
                at_ns,
                node,
                neighbour,
                from_bps,
                to_bps,
            }),
        }
    }

    /// `packet` came in at `node` from neighbour `from` (by radio or wire): it is
    /// delivered, forwarded or dropped there.
    fn arrived(
        &mut self,
        at_ns: i64,
        node: NodeId,
        from: NodeId,
        packet: IpPacket,
        out: &mut Vec<NetEvent>,
    ) {
        out.push(NetEvent::In {
            at_ns,
            node,
            from,
            packet,
        });
        // A fragment in a tunnel goes on to its datagram's destination as it is.
        let packet = match packet.frag {
            Some(f) if packet.dst == node && packet.mip.is_none() => {
                match self.reassembly.arrived(packet) {
                    Arrival::Complete(whole) => whole,
                    Arrival::First => {
                        // RFC 791 §3.2: the timer starts with the first fragment.
                        let datagram = f.datagram;
                        let at = at_ns + REASSEMBLY_TIMEOUT_NS;
                        return self.defer(at, node, Deferred::Reassembly { datagram });
                    }
                    Arrival::Waiting => return,
                    Arrival::Unknown => {
                        let reason = DropReason::ReassemblyTimeout;
                        return self.dropped(at_ns, node, packet, reason, out);
                    }
                }
            }
            _ => packet,
        };
        if self.mobile_ip.is_some() && self.mip_arrived(at_ns, node, packet, out) {
            return;
        }
        if !self.dsr.is_empty() {
            self.hold_in_routing(&packet);
            let mut actions = std::mem::take(&mut self.dsr_actions);
            self.dsr[node as usize].receive(at_ns, packet, &mut actions);
            self.run_actions(at_ns, node, &mut actions, out);
            self.dsr_actions = actions;
            return;
        }
        let drop = if packet.dst == node {
            out.push(NetEvent::Local {
                at_ns,
                node,
                packet,
            });
            return;
        } else if self.bridges[node as usize] {
            // An access point bridges: the packet goes on as it came.
            return self.route(at_ns, node, packet, out);
        } else if !self.routers[node as usize] {
            DropReason::NotRouter
        } else if packet.ttl <= 1 {
            DropReason::TtlExpired
        } else {
            let forwarded = IpPacket {
                ttl: packet.ttl - 1,
                ..packet
            };
            return self.route(at_ns, node, forwarded, out);
        };
        self.dropped(at_ns, node, packet, drop, out);
    }

    /// `node` dropped `packet`; a fragment's datagram may be lost with it.
    fn dropped(
        &mut self,
        at_ns: i64,
        node: NodeId,
        packet: IpPacket,
        reason: DropReason,
        out: &mut Vec<NetEvent>,
    ) {
        out.push(NetEvent::Dropped {
            at_ns,
            node,
            packet,
            reason,
        });
        if let Some(f) = packet.frag {
            if let Gone::Lost(whole) = self.reassembly.dropped(f) {
                out.push(NetEvent::Dropped {
                    at_ns,
                    node,
                    packet: whole,
                    reason: DropReason::FragmentsLost,
                });
            }
        }
    }

    fn hop_dropped(
        &mut self,
        at_ns: i64,
        node: NodeId,
        sdu: Sdu,
        reason: DropReason,
        out: &mut Vec<NetEvent>,
    ) {
        if sdu.payload.ethertype != ETHERTYPE_IPV4 {
            return;
        }
        if let Some(packet) = self.remove_hop(key_of(sdu.payload.token)) {
            self.dropped(at_ns, node, packet, reason, out);
        }
    }

    /// DSR at `node` hears that its MAC gave up on `sdu`.
    fn link_failed(&mut self, now: i64, node: NodeId, sdu: Sdu, out: &mut Vec<NetEvent>) {
        self.hop_failed(now, node, key_of(sdu.payload.token), sdu.next_hop, out);
    }

    /// DSR at `node` hears that the hop `key` to `dead` failed (its MAC or its ARP gave
    /// up); the packets queued for `dead` come out of the interface queue with it.
    fn hop_failed(
        &mut self,
        now: i64,
        node: NodeId,
        key: DefaultKey,
        dead: NodeId,
        out: &mut Vec<NetEvent>,
    ) {
        // The hops end here, but their packets go on into the agent: their air count
        // passes from the hop to the agent (no `remove_hop`).
        let Some(packet) = self.hops.remove(key) else {
            return;
        };
        let queued: Vec<IpPacket> = self
            .wireless
            .take_queued(node, |q| {
                q.next_hop == dead && q.payload.ethertype == ETHERTYPE_IPV4
            })
            .into_iter()
            .filter_map(|q| self.hops.remove(key_of(q.payload.token)))
            .collect();
        let mut actions = std::mem::take(&mut self.dsr_actions);
        self.dsr[node as usize].link_failed(now, packet, dead, &queued, &mut actions);
        self.run_actions(now, node, &mut actions, out);
        self.dsr_actions = actions;
    }

    /// `node` sends `packet` on towards its destination.
    fn route(&mut self, now: i64, node: NodeId, packet: IpPacket, out: &mut Vec<NetEvent>) {
        if self.roaming.is_some() && self.roaming_takes(now, node, packet, out) {
            return;
        }
        if !self.dsr.is_empty() {
            self.hold_in_routing(&packet);
            let mut actions = std::mem::take(&mut self.dsr_actions);
            self.dsr[node as usize].originate(now, packet, &mut actions);
            self.run_actions(now, node, &mut actions, out);
            self.dsr_actions = actions;
            return;
        }
        let Some(next_hop) = self.routes.next_hop(node, packet.hop_dst()) else {
            self.dropped(now, node, packet, DropReason::NoRoute, out);
            return;
        };
        self.send_hop(now, node, next_hop, packet, out);
    }

    /// `node` hands `packet` to its interface for `next_hop` ([`BROADCAST`]: every
    /// neighbour, no ARP), through ARP.
    fn send_hop(
        &mut self,
        now: i64,
        node: NodeId,
        next_hop: NodeId,
        packet: IpPacket,
        out: &mut Vec<NetEvent>,
    ) {
        // RFC 791 §3.2: a datagram longer than the interface's MTU leaves in fragments.
        // Not in a tunnel (item 3 of issue 14), nor under DSR, whose options header
        // every fragment would need to repeat: those datagrams leave whole.
        if packet.len > self.mtu
            && packet.frag.is_none()
            && packet.mip.is_none()
            && packet.dsr.is_none()
            && next_hop != BROADCAST
        {
            let pieces = self.reassembly.fragment(packet, self.mtu);
            if pieces.len() > 1 {
                for piece in pieces {
                    self.send_hop(now, node, next_hop, piece, out);
                }
                return;
            }
        }
        if next_hop != BROADCAST && self.wired.connects(node, next_hop) {
            out.push(NetEvent::Out {
                at_ns: now,
                node,
                next_hop,
                packet,
            });
            if self.wired.send(now, node, next_hop, packet) {
                // Held while on the wire, for the air frames it may travel in next.
                self.hold_in_routing(&packet);
            } else {
                self.dropped(now, node, packet, DropReason::QueueFull, out);
            }
            return;
        }
        let key = self.insert_hop(packet);
        if next_hop == BROADCAST {
            self.transmit(now, node, next_hop, key, out);
            return;
        }
        match self.arp[node as usize].resolve(now, next_hop, key) {
            Resolution::Send => self.transmit(now, node, next_hop, key, out),
            Resolution::Held { request, dropped } => {
                if let Some(old) = dropped {
                    self.arp_dropped(now, node, old, DropReason::ArpHold, out);
                }
                if request {
                    let token = arp_token(ARP_REQUEST, node, next_hop);
                    self.send_arp(now, node, BROADCAST, token);
                }
            }
            Resolution::GaveUp { dropped } => {
                // Under DSR a neighbour that never answers is a broken link, as when
                // the MAC gives up: ns-2's `ARPTable::arpresolve` calls the packets'
                // `xmit_failure_` (DSR's `xmitFailed`) for the held and the new one.
                for k in dropped.into_iter().chain([key]) {
                    if self.dsr.is_empty() {
                        self.arp_dropped(now, node, k, DropReason::ArpUnanswered, out);
                    } else {
                        self.hop_failed(now, node, k, next_hop, out);
                    }
                }
            }
        }
    }

    fn arp_dropped(
        &mut self,
        now: i64,
        node: NodeId,
        key: DefaultKey,
        reason: DropReason,
        out: &mut Vec<NetEvent>,
    ) {
        if let Some(packet) = self.remove_hop(key) {
            self.dropped(now, node, packet, reason, out);
        }
    }

    /// Hands the hop `key` to `node`'s MAC for `next_hop`.
    fn transmit(
        &mut self,
        now: i64,
        node: NodeId,
        next_hop: NodeId,
        key: DefaultKey,
        out: &mut Vec<NetEvent>,
    ) {
        let packet = self.hops[key];
        if let Some(reason) = packet.frag.and_then(|f| self.discard_fragment(node, f)) {
            self.remove_hop(key);
            return self.dropped(now, node, packet, reason, out);
        }
        out.push(NetEvent::Out {
            at_ns: now,
            node,
            next_hop,
            packet,
        });
        let sdu = Sdu {
            payload: Payload {
                token: key.data().as_ffi(),
                len: packet.len,
                ethertype: ETHERTYPE_IPV4,
            },
            next_hop,
            priority: packet.is_control(),
        };
        self.wireless.send(now, node, sdu);
    }

    /// Whether `node`'s interface queue turns fragment `f` away, and why: it keeps a
    /// datagram's fragments together, as Romanow and Floyd's early and partial packet
    /// discard keep the cells of a packet ("Dynamics of TCP traffic over ATM networks",
    /// 1995): a first fragment goes in only with room for all of them, and a fragment
    /// whose datagram lost another is dropped rather than sent for nothing. A drop-tail
    /// queue dropping fragments one by one would lose most datagrams once full.
    fn discard_fragment(&self, node: NodeId, f: Fragment) -> Option<DropReason> {
        if self.reassembly.doomed(f) {
            return Some(DropReason::PartialDatagram);
        }
        let mac = self.wireless.mac(node);
        let room = mac.config().queue_packets.saturating_sub(mac.queued());
        (f.index == 0 && room < usize::from(f.count)).then_some(DropReason::QueueFull)
    }

    fn send_arp(&mut self, now: i64, node: NodeId, to: NodeId, token: u64) {
        let sdu = Sdu {
            payload: Payload {
                token,
                len: ARP_BYTES,
                ethertype: ETHERTYPE_ARP,
            },
            next_hop: to,
            priority: false,
        };
        self.wireless.send(now, node, sdu);
    }

    /// `node` decoded an ARP packet: it learns the sender, answers a request for itself,
    /// and sends the packet it held for the sender.
    fn on_arp(&mut self, now: i64, node: NodeId, token: u64, out: &mut Vec<NetEvent>) {
        let (op, sender, target) = arp_fields(token);
        if let Some(key) = self.arp[node as usize].learn(sender) {
            self.transmit(now, node, sender, key, out);
        }
        if u64::from(op) == ARP_REQUEST && target == node {
            self.send_arp(now, node, sender, arp_token(ARP_REPLY, node, sender));
        }
    }
}
