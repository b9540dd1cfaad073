//! One node's DSR agent, following ns-2's CMU `DSRAgent` (`dsragent.cc`) where RFC 4728
//! leaves a choice:
//!
//! - **Discovery** (RFC 4728 §3.1, §8.2): a packet with no cached route waits in the
//!   send buffer while the node asks its neighbours (a request with
//!   `max_propagation` 0, answered from their caches); if no reply came within
//!   [`DsrConfig::ring_zero_timeout_ns`], the next attempt floods a propagating
//!   request. Requests for one target are backed off 0.5, 2, 8, then 10 s apart.
//!   Requests are broadcast after a random jitter; a node forwards each request
//!   (initiator, id) once, appending itself to the route record.
//! - **Replies** (§3.1.4, §8.2.4): the target answers every copy it receives along the
//!   reversed route record (after a jitter); an intermediate node with a cached route
//!   answers at once with the joined route. The initiator caches the route and lets
//!   the buffered packets go, spaced so that ARP can finish.
//! - **Maintenance** (§3.3, §8.3): when the MAC gives up on a packet the node forgets
//!   routes over that link, sends a route error back to the packet's first node, and
//!   salvages the packet and every queued packet for that neighbour with another
//!   cached route, or drops it. Its own packets go back through discovery. The last
//!   error a node received rides on its next propagating request (gratuitous route
//!   error propagation) for up to a second.
//!
//! - **Promiscuous listening** (ns-2's `tap`, [`DsrAgent::overhear`]): a node learns
//!   routes from the packets it overhears, takes in the route errors they carry, and,
//!   hearing a packet that will reach it later on its route, tells the source of the
//!   shorter route (a gratuitous reply, at most once a second per route).
//!
//! Not modelled: flow state, and the negative cache.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use super::cache::PathCache;
use super::path::{DsrHeader, LinkError, Path, RouteRequest, MAX_SR_LEN};
use super::DsrConfig;
use crate::frame::{NodeId, BROADCAST};
use crate::ip::{DropReason, IpPacket, NO_PACKET};

/// Length of an IPv4 header without options, bytes.
const IP_HEADER: u32 = 20;

/// A routing event, for the route log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteEvent {
    /// A route request went out.
    RequestSent {
        /// The node sought.
        target: NodeId,
        /// Its identification.
        id: u16,
        /// Flooded (false: neighbours only).
        propagating: bool,
    },
    /// A route reply went out.
    ReplySent {
        /// The initiator it answers.
        to: NodeId,
        /// The route returned.
        route: Path,
        /// Who answered and why.
        by: ReplyBy,
    },
    /// A route reply reached its initiator, which now has this route.
    RouteLearned {
        /// The route.
        route: Path,
    },
    /// The MAC gave up on the link to a neighbour.
    LinkBroken {
        /// The neighbour.
        to: NodeId,
    },
    /// A route error went out.
    ErrorSent {
        /// The broken link and the node told.
        link: LinkError,
    },
    /// A route error reached the node it was for.
    ErrorReceived {
        /// The broken link.
        link: LinkError,
        /// The transport packet whose failed delivery it reports, which names the
        /// connection (ELFN), if it reports one.
        about: Option<u64>,
    },
    /// A packet from another node was sent on by another route.
    Salvaged {
        /// Its source.
        src: NodeId,
        /// Its destination.
        dst: NodeId,
        /// The new route.
        route: Path,
    },
}

/// Why a node sent a route reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyBy {
    /// The target of the request answered.
    Target,
    /// An intermediate node answered from its cache.
    Cache,
    /// Unasked: a node that overheard a packet ahead of its turn tells its source of the
    /// shorter route (promiscuous listening).
    Shortening,
}

impl ReplyBy {
    /// The name used in logs.
    pub fn name(self) -> &'static str {
        match self {
            ReplyBy::Target => "target",
            ReplyBy::Cache => "cache",
            ReplyBy::Shortening => "shortening",
        }
    }
}

/// What the agent asks of the network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Send `packet` to the neighbour `next_hop`, `delay_ns` from now.
    Unicast {
        /// The packet, its DSR header set.
        packet: IpPacket,
        /// The neighbour.
        next_hop: NodeId,
        /// Delay, ns.
        delay_ns: i64,
    },
    /// Broadcast `packet` to the neighbours, `delay_ns` from now.
    Broadcast {
        /// The packet.
        packet: IpPacket,
        /// Delay, ns.
        delay_ns: i64,
    },
    /// `packet` reached its destination: hand it to the transport.
    Deliver(IpPacket),
    /// The packet is dropped.
    Drop {
        /// The packet.
        packet: IpPacket,
        /// Why.
        reason: DropReason,
    },
    /// Something for the route log.
    Log(RouteEvent),
    /// Call [`DsrAgent::check_buffer`] at this time.
    CheckBufferAt(i64),
}

/// This node's discovery state for one target (half of ns-2's request table).
#[derive(Debug, Clone, Copy)]
struct Discovery {
    /// Requests sent since the last reply (drives the back-off).
    outstanding: u32,
    last_request_ns: i64,
    /// The last request was a neighbour search, sent at this time.
    ring_zero_at: Option<i64>,
}

/// One node's DSR (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct DsrAgent {
    me: NodeId,
    cfg: DsrConfig,
    rng: ChaCha8Rng,
    cache: PathCache,
    /// The last request id processed from each initiator.
    seen: FxHashMap<NodeId, u16>,
    discoveries: FxHashMap<NodeId, Discovery>,
    next_request_id: u16,
    /// Packets waiting for a route, with the time they came in.
    send_buffer: std::collections::VecDeque<(i64, IpPacket)>,
    check_pending: bool,
    /// The last route error received, and when, for the next propagating request.
    held_error: Option<(LinkError, i64)>,
    /// Routes a gratuitous reply was sent for lately, and when (ns-2 keeps 10).
    gratuitous: Vec<(Path, i64)>,
}

impl DsrAgent {
    /// Node `me`'s agent, with its own random stream (for jitter).
    pub fn new(me: NodeId, cfg: DsrConfig, rng: ChaCha8Rng) -> Self {
        DsrAgent {
            me,
            cfg,
            rng,
            cache: PathCache::new(me, cfg.cache_timeout_ns, cfg.negative_cache_ns),
            seen: FxHashMap::default(),
            discoveries: FxHashMap::default(),
            next_request_id: 0,
            send_buffer: std::collections::VecDeque::new(),
            check_pending: false,
            held_error: None,
            gratuitous: Vec::new(),
        }
    }

    /// The route cache.
    pub fn cache(&mut self) -> &mut PathCache {
        &mut self.cache
    }

    /// Packets waiting for a route.
    pub fn buffered(&self) -> usize {
        self.send_buffer.len()
    }

    fn jitter(&mut self) -> i64 {
        self.rng.random_range(0..=self.cfg.jitter_ns)
    }

    /// This node sends `packet` (its own, or one it must route again from here).
    pub fn originate(&mut self, now: i64, packet: IpPacket, out: &mut Vec<Action>) {
        if packet.dst == self.me {
            out.push(Action::Deliver(packet));
            return;
        }
        match self.cache.find(packet.dst, now, true) {
            Some(route) => self.send_on(packet, route, 0, out),
            None => {
                self.buffer(now, packet, out);
                self.discover(now, packet.dst, out);
            }
        }
    }

    /// Sends `packet` from here along `route` (which starts here).
    fn send_on(&mut self, packet: IpPacket, route: Path, delay_ns: i64, out: &mut Vec<Action>) {
        let header = match packet.dsr {
            Some(h) => DsrHeader {
                route,
                index: 0,
                request: None,
                ..h
            },
            None => DsrHeader::source_route(route),
        };
        unicast(packet.with_dsr(header), delay_ns, out);
    }

    fn buffer(&mut self, now: i64, packet: IpPacket, out: &mut Vec<Action>) {
        if self.send_buffer.len() >= self.cfg.send_buffer_packets {
            if let Some((_, old)) = self.send_buffer.pop_front() {
                out.push(Action::Drop {
                    packet: old,
                    reason: DropReason::SendBufferFull,
                });
            }
        }
        self.send_buffer.push_back((now, packet));
        self.schedule_check(now, out);
    }

    fn schedule_check(&mut self, now: i64, out: &mut Vec<Action>) {
        if !self.check_pending && !self.send_buffer.is_empty() {
            self.check_pending = true;
            let wait =
                self.cfg.buffer_check_ns + self.rng.random_range(0..=self.cfg.buffer_check_ns);
            out.push(Action::CheckBufferAt(now + wait));
        }
    }

    /// The periodic send-buffer check: packets past their timeout are dropped, those
    /// with a route now go, and the others may start another request.
    pub fn check_buffer(&mut self, now: i64, out: &mut Vec<Action>) {
        self.check_pending = false;
        let waiting = std::mem::take(&mut self.send_buffer);
        for (since, packet) in waiting {
            if now - since > self.cfg.send_timeout_ns {
                out.push(Action::Drop {
                    packet,
                    reason: DropReason::SendBufferTimeout,
                });
            } else if let Some(route) = self.cache.find(packet.dst, now, true) {
                self.send_on(packet, route, 0, out);
            } else {
                self.send_buffer.push_back((since, packet));
                self.discover(now, packet.dst, out);
            }
        }
        self.schedule_check(now, out);
    }

    /// Starts or continues the discovery of a route to `target` (ns-2's
    /// `getRouteForPacket`).
    fn discover(&mut self, now: i64, target: NodeId, out: &mut Vec<Action>) {
        let cfg = self.cfg;
        let d = self.discoveries.entry(target).or_insert(Discovery {
            outstanding: 0,
            last_request_ns: -(cfg.request_period_ns + 1_000_000_000),
            ring_zero_at: None,
        });
        let wait =
            (cfg.request_period_ns << (2 * d.outstanding.min(15))).min(cfg.request_max_period_ns);
        let propagating = if d.last_request_ns + wait <= now {
            d.outstanding = (d.outstanding + 1).min(15);
            d.last_request_ns = now;
            !cfg.ring_zero_search
        } else if d
            .ring_zero_at
            .is_some_and(|t| now - t > cfg.ring_zero_timeout_ns)
        {
            true
        } else {
            return;
        };
        d.ring_zero_at = (!propagating).then_some(now);
        self.send_request(now, target, propagating, out);
    }

    fn send_request(&mut self, now: i64, target: NodeId, propagating: bool, out: &mut Vec<Action>) {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1);
        let mut header = DsrHeader::source_route(Path::of(&[self.me]));
        header.control = true;
        header.request = Some(RouteRequest {
            id,
            target,
            max_propagation: if propagating { MAX_SR_LEN as u8 } else { 0 },
        });
        if let Some((e, at)) = self.held_error {
            if self.cfg.propagate_last_error && now - at < self.cfg.max_error_hold_ns {
                header.push_error(LinkError {
                    tell: BROADCAST,
                    ..e
                });
                if propagating {
                    self.held_error = None;
                }
            }
        }
        let packet = control_packet(
            self.me,
            BROADCAST,
            if propagating { 255 } else { 1 },
            header,
        );
        out.push(Action::Log(RouteEvent::RequestSent {
            target,
            id,
            propagating,
        }));
        let delay_ns = self.jitter();
        out.push(Action::Broadcast { packet, delay_ns });
    }

    /// A packet for this node, broadcast or on its source route, arrived from `from`.
    pub fn receive(&mut self, now: i64, packet: IpPacket, out: &mut Vec<Action>) {
        let Some(mut header) = packet.dsr else {
            out.push(Action::Deliver(packet));
            return;
        };
        for e in header.route_errors() {
            self.cache.notice_dead_link(e.from, e.to, now);
        }
        if let Some(request) = header.request {
            if request.target == self.me {
                self.reply_as_target(now, packet.src, header, out);
            } else {
                self.on_request(now, packet, header, request, out);
            }
            return;
        }
        if packet.dst == self.me {
            if let Some(route) = header.reply {
                self.accept_reply(now, route, out);
            }
            if header.error_count() > 0 {
                self.on_route_error(now, packet, header, out);
            }
            if !header.control {
                out.push(Action::Deliver(packet));
            }
            return;
        }
        // Forward along the source route.
        header.index += 1;
        if header.route.as_slice().get(header.index as usize) != Some(&self.me) {
            out.push(Action::Drop {
                packet,
                reason: DropReason::NoRoute,
            });
            return;
        }
        self.cache.notice_route_used(&header.route, now);
        if packet.ttl <= 1 {
            out.push(Action::Drop {
                packet,
                reason: DropReason::TtlExpired,
            });
            return;
        }
        let forwarded = IpPacket {
            ttl: packet.ttl - 1,
            ..packet.with_dsr(header)
        };
        unicast(forwarded, 0, out);
    }

    /// A packet for another node was overheard as `from` sent it (ns-2's `tap`).
    pub fn overhear(&mut self, now: i64, packet: IpPacket, from: NodeId, out: &mut Vec<Action>) {
        let Some(header) = packet.dsr else { return };
        if !self.cfg.promiscuous || header.next_hop() == Some(self.me) || packet.src == self.me {
            return;
        }
        for e in header.route_errors() {
            self.cache.notice_dead_link(e.from, e.to, now);
        }
        if header.request.is_some() {
            return;
        }
        if let Some(reply) = &header.reply {
            self.cache.notice_route_used(reply, now);
        }
        let at = header.index as usize;
        if header.route.as_slice().get(at) != Some(&from) {
            return;
        }
        self.cache.notice_overheard(&header.route, at, now);
        if header.control {
            return;
        }
        if let Some(mine) = header.route.position(self.me).filter(|&i| i > at + 1) {
            self.shorten(now, &header.route, at, mine, out);
        }
    }

    /// Tells the source of `route` that this node, at `mine` on it, heard its packet
    /// sent from `at`: the nodes between are not needed (ns-2's
    /// `sendRouteShortening`).
    fn shorten(&mut self, now: i64, route: &Path, at: usize, mine: usize, out: &mut Vec<Action>) {
        let hold = self.cfg.gratuitous_hold_ns;
        match self.gratuitous.iter_mut().find(|(p, _)| p == route) {
            Some((_, t)) if now - *t < hold => return,
            Some((_, t)) => *t = now,
            None => {
                if self.gratuitous.len() == 10 {
                    self.gratuitous.remove(0);
                }
                self.gratuitous.push((*route, now));
            }
        }
        let nodes = route.as_slice();
        let mut shorter = Path::of(&nodes[..=at]);
        for &n in &nodes[mine..] {
            shorter.push(n);
        }
        let mut back = Path::of(&[self.me]);
        for &n in nodes[..=at].iter().rev() {
            back.push(n);
        }
        let Some(source) = route.first() else { return };
        self.send_reply(now, source, back, shorter, ReplyBy::Shortening, 0, out);
    }

    /// A request for another node (ns-2's `handleRouteRequest`).
    fn on_request(
        &mut self,
        now: i64,
        packet: IpPacket,
        mut header: DsrHeader,
        request: RouteRequest,
        out: &mut Vec<Action>,
    ) {
        let seen = self
            .seen
            .get(&packet.src)
            .is_some_and(|&last| request.id.wrapping_sub(last) >= 0x8000 || request.id == last);
        if seen || header.route.contains(self.me) || header.route.is_full() {
            return;
        }
        self.seen.insert(packet.src, request.id);
        if (request.max_propagation == 0 || self.cfg.reply_from_cache)
            && self.reply_from_cache(now, packet.src, &header, request, out)
        {
            return;
        }
        if header.route.len() > request.max_propagation as usize || packet.ttl <= 1 {
            return;
        }
        header.route.push(self.me);
        let delay_ns = self.jitter();
        out.push(Action::Broadcast {
            packet: IpPacket {
                ttl: packet.ttl - 1,
                ..packet.with_dsr(header)
            },
            delay_ns,
        });
    }

    /// Answers a request from the cache when it holds a route to the target that,
    /// joined to the route record, still passes here.
    fn reply_from_cache(
        &mut self,
        now: i64,
        initiator: NodeId,
        header: &DsrHeader,
        request: RouteRequest,
        out: &mut Vec<Action>,
    ) -> bool {
        let Some(rest) = self.cache.find(request.target, now, false) else {
            return false;
        };
        let Some(complete) = header.route.joined(&rest) else {
            return false;
        };
        if !complete.contains(self.me) {
            return false;
        }
        let mut record = header.route;
        record.push(self.me);
        self.send_reply(
            now,
            initiator,
            record.reversed(),
            complete,
            ReplyBy::Cache,
            0,
            out,
        );
        true
    }

    /// The target answers along the reversed route record (ns-2's
    /// `returnSrcRouteToRequestor`).
    fn reply_as_target(
        &mut self,
        now: i64,
        initiator: NodeId,
        header: DsrHeader,
        out: &mut Vec<Action>,
    ) {
        let mut route = header.route;
        if !route.push(self.me) {
            return;
        }
        let delay = self.jitter();
        self.send_reply(
            now,
            initiator,
            route.reversed(),
            route,
            ReplyBy::Target,
            delay,
            out,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn send_reply(
        &mut self,
        now: i64,
        initiator: NodeId,
        back: Path,
        found: Path,
        by: ReplyBy,
        delay_ns: i64,
        out: &mut Vec<Action>,
    ) {
        self.cache.add_route(&back, now);
        let mut header = DsrHeader::source_route(back);
        header.control = true;
        header.reply = Some(found);
        let packet = control_packet(self.me, initiator, 255, header);
        out.push(Action::Log(RouteEvent::ReplySent {
            to: initiator,
            route: found,
            by,
        }));
        unicast(packet, delay_ns, out);
    }

    /// A reply reached this node, the initiator (ns-2's `acceptRouteReply`).
    fn accept_reply(&mut self, now: i64, route: Path, out: &mut Vec<Action>) {
        if route.first() != Some(self.me) {
            return;
        }
        self.cache.add_route(&route, now);
        out.push(Action::Log(RouteEvent::RouteLearned { route }));
        if let Some(target) = route.last() {
            if let Some(d) = self.discoveries.get_mut(&target) {
                d.outstanding = 0;
                d.last_request_ns = 0;
                d.ring_zero_at = None;
            }
        }
        let mut delay_ns = 0;
        let waiting = std::mem::take(&mut self.send_buffer);
        for (since, packet) in waiting {
            match self.cache.find(packet.dst, now, true) {
                Some(route) => {
                    self.send_on(packet, route, delay_ns, out);
                    delay_ns += self.cfg.release_spacing_ns;
                }
                None => self.send_buffer.push_back((since, packet)),
            }
        }
    }

    /// A route error reached the node it was sent to.
    fn on_route_error(
        &mut self,
        now: i64,
        packet: IpPacket,
        header: DsrHeader,
        out: &mut Vec<Action>,
    ) {
        let errors: Vec<LinkError> = header.route_errors().collect();
        let about = (packet.user != NO_PACKET).then_some(packet.user);
        for &link in &errors {
            out.push(Action::Log(RouteEvent::ErrorReceived { link, about }));
        }
        let Some(&last) = errors.last() else { return };
        if last.tell != self.me {
            return;
        }
        self.held_error = Some((last, now));
        if let [.., inner, _] = errors[..] {
            // A nested error (one raised while an error was being delivered): send
            // the rest on to the node the inner one is for.
            let mut rest = DsrHeader::source_route(Path::EMPTY);
            rest.control = true;
            for e in &errors[..errors.len() - 1] {
                rest.push_error(*e);
            }
            let forward = IpPacket {
                user: packet.user,
                ..control_packet(self.me, inner.tell, 255, rest)
            };
            self.originate(now, forward, out);
        }
    }

    /// The MAC gave up sending `packet` to `next_hop`; `queued` are the packets that
    /// were waiting in the interface queue for the same neighbour (ns-2's
    /// `xmitFailed`).
    pub fn link_failed(
        &mut self,
        now: i64,
        packet: IpPacket,
        next_hop: NodeId,
        queued: &[IpPacket],
        out: &mut Vec<Action>,
    ) {
        self.cache.notice_dead_link(self.me, next_hop, now);
        out.push(Action::Log(RouteEvent::LinkBroken { to: next_hop }));
        self.undeliverable(now, packet, next_hop, out);
        for &q in queued {
            self.undeliverable(now, q, next_hop, out);
        }
        let Some(header) = packet.dsr else { return };
        let Some(tell) = header.route.first() else {
            return;
        };
        if tell == self.me || header.request.is_some() {
            return;
        }
        let mut error = DsrHeader::source_route(Path::EMPTY);
        error.control = true;
        error.errors = header.errors;
        let link = LinkError {
            from: self.me,
            to: next_hop,
            tell,
        };
        if !error.push_error(link) {
            return;
        }
        let mut back = header.route;
        back.truncate(header.index as usize + 1);
        error.route = back.reversed();
        let report = IpPacket {
            user: packet.user,
            ..control_packet(self.me, tell, 255, error)
        };
        out.push(Action::Log(RouteEvent::ErrorSent { link }));
        unicast(report, 0, out);
    }

    /// A packet that could not go to `dead` (ns-2's `undeliverablePkt`): this node's
    /// own goes back through route discovery; another node's is salvaged with a
    /// cached route, or dropped.
    fn undeliverable(&mut self, now: i64, packet: IpPacket, dead: NodeId, out: &mut Vec<Action>) {
        let Some(mut header) = packet.dsr else { return };
        if packet.src == self.me {
            self.originate(now, packet, out);
            return;
        }
        if header
            .reply
            .is_some_and(|r| r.has_link(self.me, dead) || r.has_link(dead, self.me))
        {
            // Do not pass on a reply that holds the link just found broken.
            header.reply = None;
            if header.control && header.error_count() == 0 {
                out.push(Action::Drop {
                    packet,
                    reason: DropReason::NoRoute,
                });
                return;
            }
        }
        let salvage = if self.cfg.salvage {
            self.cache.find(packet.dst, now, false)
        } else {
            None
        };
        let Some(route) = salvage else {
            out.push(Action::Drop {
                packet,
                reason: DropReason::NoRoute,
            });
            return;
        };
        header.salvaged = header.salvaged.saturating_add(1);
        out.push(Action::Log(RouteEvent::Salvaged {
            src: packet.src,
            dst: packet.dst,
            route,
        }));
        self.send_on(packet.with_dsr(header), route, 0, out);
    }
}

/// Sends `packet` to the next node on its source route, `delay_ns` from now; dropped
/// (no route) when the route ends here.
fn unicast(packet: IpPacket, delay_ns: i64, out: &mut Vec<Action>) {
    match packet.dsr.and_then(|h| h.next_hop()) {
        Some(next_hop) => out.push(Action::Unicast {
            packet,
            next_hop,
            delay_ns,
        }),
        None => out.push(Action::Drop {
            packet,
            reason: DropReason::NoRoute,
        }),
    }
}

/// A packet of routing only from `src` to `dst`.
fn control_packet(src: NodeId, dst: NodeId, ttl: u8, header: DsrHeader) -> IpPacket {
    IpPacket {
        src,
        dst,
        ttl,
        len: IP_HEADER + header.wire_len(),
        user: NO_PACKET,
        dsr: Some(header),
        mip: None,
        frag: None,
    }
}
