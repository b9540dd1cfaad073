//! Split-TCP in a network of nodes (Kopparty, Krishnamurthy, Faloutsos & Tripathi,
//! "Split TCP for Mobile Ad Hoc Networks", IEEE Globecom 2002; Holland & Vaidya's
//! slides summarise it).
//!
//! Proxies on a flow's route cut it into zones. Each zone is a TCP connection of its
//! own between two consecutive proxies (the source and the destination at the ends):
//! its receiver acknowledges locally (the LACKs of the paper) and its sender keeps
//! its own congestion window and retransmission timer, so a loss or a stall in one
//! zone is repaired there. A proxy hands what its zone delivered, in order, to the
//! next zone's sender (its buffer). The destination also acknowledges end to end: a
//! pure TCP ACK, in the source's sequence space, after every `ack_every` full
//! segments delivered. The source keeps every byte until that acknowledgement covers
//! it (purges it then), and never has more than `window` bytes sent beyond it: the
//! end-to-end window, of which each zone's congestion window is a sub-window.
//!
//! Proxies fixed at the start stay between the same two nodes whatever route carries
//! a zone. With `follow` (DSR), the source chooses them again from each new route it
//! hears of, the reverse of the route an end-to-end acknowledgement came by: when a
//! proxy is no longer on it, the zones are closed and new ones opened along the new
//! route, and the source sends again everything not yet acknowledged end to end (it
//! holds it for that: the paper's reliability stays end to end, so bytes a proxy held
//! are resent from the source). The destination skips what it already has. A
//! following source that hears nothing probes the destination, whose answer brings a
//! route ([`PROBE_AFTER_NS`]).
//!
//! A flow whose route has no room for a proxy (with `follow`: while its route is no
//! longer than `every` hops) has a single zone, from the source to the destination:
//! that zone's ACKs are end-to-end acknowledgements already, so the destination sends
//! none of its own (it answers a probe): the source purges what the zone's ACKs
//! cover, reads its route from them, and probes only when they stop
//! ([`Split::single_zone`]).
//!
//! This module keeps the accounting; [`crate::netsim`] moves the bytes and packets.

use airtrace_net::routing::Routes;
use airtrace_net::NodeId;
use serde::Serialize;

/// The destination repeats its last end-to-end acknowledgement after this long
/// without a new one (the acknowledgement may have been lost while the source waits
/// on its window).
pub const ACK_REPEAT_NS: i64 = 1_000_000_000;

/// With `follow`, the source probes the destination (a keep-alive, RFC 1122
/// §4.2.3.6) after this long without an end-to-end acknowledgement while it holds
/// bytes: the answer comes by the destination's route to it, which the zones then
/// follow (twice the destination's repeat, so one lost repeat is not enough).
pub const PROBE_AFTER_NS: i64 = 2 * ACK_REPEAT_NS;

/// Default full segments between two end-to-end acknowledgements (TCP's delayed
/// ACK, RFC 1122 §4.2.3.2).
pub const DEFAULT_ACK_EVERY: u32 = 2;

/// Default end-to-end window, bytes.
pub const DEFAULT_WINDOW: u64 = 64 * 1024;

/// The nodes of a split flow along `route` (source first, destination last): the
/// source, a proxy every `every` hops, and the destination.
pub fn proxies_along(route: &[NodeId], every: u32) -> Vec<NodeId> {
    let last = route.len().saturating_sub(1);
    let every = every.max(1) as usize;
    route
        .iter()
        .enumerate()
        .filter(|&(hops, _)| hops == 0 || hops == last || hops % every == 0)
        .map(|(_, &n)| n)
        .collect()
}

/// The nodes of a split flow: the source, a proxy every `every` hops along the static
/// route, and the destination. `None` when the route breaks off.
pub fn proxies_every(routes: &Routes, src: NodeId, dst: NodeId, every: u32) -> Option<Vec<NodeId>> {
    let mut route = vec![src];
    while *route.last()? != dst {
        route.push(routes.next_hop(*route.last()?, dst)?);
        if route.len() > routes.nodes() + 1 {
            return None;
        }
    }
    Some(proxies_along(&route, every))
}

/// One split flow's state (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct Split {
    /// The scenario's flow it is.
    pub origin: usize,
    /// The flow index of each zone, from the source: zone 0 is the scenario's flow
    /// until the zones are first chosen again.
    pub zones: Vec<usize>,
    /// The source, the proxies and the destination, in route order.
    pub nodes: Vec<NodeId>,
    /// End-to-end window, bytes.
    pub window: u64,
    /// With `follow`: a proxy every this many hops along each new route.
    pub follow: Option<u32>,
    /// Where the current zones start in the source's byte stream (0 until the zones
    /// are chosen again).
    pub base: u64,
    /// Each zone 0 the source has had, oldest first.
    pub sources: Vec<usize>,
    /// Bytes the destination has in order, and when it last got new ones.
    pub delivered: u64,
    pub delivered_at: Option<i64>,
    /// Bytes delivered between two end-to-end acknowledgements.
    ack_bytes: u64,
    /// Bytes each zone has handed on (to the next zone, or the last to the
    /// destination's application).
    forwarded: Vec<u64>,
    /// Bytes the destination has acknowledged end to end, and when it last did.
    acked_by_destination: u64,
    last_ack_ns: Option<i64>,
    /// Bytes the source has heard acknowledged end to end (it purges them).
    pub acked_at_source: u64,
    /// Bytes the source has written in all.
    written: u64,
    /// When the source last heard an end-to-end acknowledgement or probed.
    pub quiet_since: i64,
    /// End-to-end acknowledgements the destination sent.
    pub acks_sent: u64,
    /// Most bytes the source held at once (sent or queued, not yet acknowledged end to
    /// end).
    pub peak_held: u64,
}

impl Split {
    /// A split flow through `nodes`, its zones carried by the flows `zones`.
    pub fn new(zones: Vec<usize>, nodes: Vec<NodeId>, window: u64, ack_bytes: u64) -> Self {
        Split {
            origin: zones[0],
            follow: None,
            base: 0,
            sources: vec![zones[0]],
            delivered: 0,
            delivered_at: None,
            forwarded: vec![0; zones.len()],
            zones,
            nodes,
            window,
            ack_bytes,
            acked_by_destination: 0,
            last_ack_ns: None,
            acked_at_source: 0,
            written: 0,
            quiet_since: 0,
            acks_sent: 0,
            peak_held: 0,
        }
    }

    /// True while the flow has one zone, from the source to the destination (no proxy):
    /// its ACKs are the end-to-end acknowledgements, and no other is sent.
    pub fn single_zone(&self) -> bool {
        self.zones.len() == 1
    }

    /// A single zone's sender has had `acked` bytes acknowledged in all by the
    /// destination: the source purges them as on an end-to-end acknowledgement
    /// (returns the new limit on what the zone may have written, as [`Split::on_ack`]).
    pub fn on_zone_ack(&mut self, now: i64, acked: u64) -> u64 {
        if self.base + acked > self.acked_at_source {
            self.quiet_since = now;
        }
        self.on_ack(self.base + acked)
    }

    /// Zone `pos` has delivered `delivered` bytes in all at its receiving end:
    /// returns the bytes that are new since the last call, to hand on.
    /// The last zone's bytes are the destination's, after those it already has.
    pub fn take_new(&mut self, pos: usize, delivered: u64) -> u64 {
        let new = delivered.saturating_sub(self.forwarded[pos]);
        self.forwarded[pos] = delivered.max(self.forwarded[pos]);
        if pos + 1 == self.zones.len() {
            self.delivered = self.delivered.max(self.base + self.forwarded[pos]);
        }
        new
    }

    /// With `follow`, the source has heard of `route` to the destination (source
    /// first): the nodes of the zones to open along it, when a proxy of the current
    /// ones is not on it (or there are none and it has room for some). `None`: keep
    /// the current zones.
    pub fn choose_again(&self, route: &[NodeId]) -> Option<Vec<NodeId>> {
        let every = self.follow?;
        let (first, last) = (*route.first()?, *route.last()?);
        if first != self.nodes[0] || last != self.nodes[self.nodes.len() - 1] {
            return None;
        }
        let chosen = proxies_along(route, every);
        let current = &self.nodes[1..self.nodes.len() - 1];
        let mut on_route = route.iter();
        let all_on = current.iter().all(|p| on_route.any(|n| n == p));
        let keep = all_on && !(current.is_empty() && chosen.len() > 2);
        (!keep && chosen != self.nodes).then_some(chosen)
    }

    /// The source closed its zones and opened `zones` through `nodes`: they start
    /// at the last byte acknowledged end to end (returned), which it sends again.
    pub fn restart(&mut self, zones: Vec<usize>, nodes: Vec<NodeId>) -> u64 {
        self.base = self.acked_at_source;
        self.forwarded = vec![0; zones.len()];
        self.sources.push(zones[0]);
        self.zones = zones;
        self.nodes = nodes;
        self.base
    }

    /// The end-to-end acknowledgement the destination sends now, if one is due, as
    /// the bytes it covers: after `ack_every` full segments, when the last zone is
    /// complete (`all_in`), or again after [`ACK_REPEAT_NS`] without one.
    pub fn ack_due(&mut self, now: i64, all_in: bool) -> Option<u64> {
        if self.single_zone() {
            return None;
        }
        let delivered = self.delivered;
        let new = delivered - self.acked_by_destination;
        let repeat = self
            .last_ack_ns
            .is_some_and(|t| now - t >= ACK_REPEAT_NS && !all_in);
        if new >= self.ack_bytes || (all_in && new > 0) || repeat {
            self.acked_by_destination = delivered;
            self.last_ack_ns = Some(now);
            self.acks_sent += 1;
            return Some(delivered);
        }
        None
    }

    /// The destination answers a probe: acknowledges what it has now.
    pub fn ack_now(&mut self, now: i64) -> u64 {
        self.acked_by_destination = self.delivered;
        self.last_ack_ns = Some(now);
        self.acks_sent += 1;
        self.delivered
    }

    /// With `follow`: whether the source probes the destination now (see
    /// [`PROBE_AFTER_NS`]); then the quiet time starts again.
    pub fn probe_due(&mut self, now: i64) -> bool {
        let holds = self.written > self.acked_at_source;
        let due = self.follow.is_some() && holds && now - self.quiet_since >= PROBE_AFTER_NS;
        if due {
            self.quiet_since = now;
        }
        due
    }

    /// With `follow`: when the source next probes, if it still hears nothing.
    pub fn probe_at(&self) -> Option<i64> {
        self.follow.map(|_| self.quiet_since + PROBE_AFTER_NS)
    }

    /// When the destination next repeats its acknowledgement (never while the flow
    /// has a single zone).
    pub fn repeat_at(&self) -> Option<i64> {
        let multi = !self.single_zone();
        self.last_ack_ns
            .filter(|_| multi)
            .map(|t| t + ACK_REPEAT_NS)
    }

    /// The source heard an end-to-end acknowledgement of `acked` bytes: returns the
    /// new limit on the bytes its current zone 0 may have written in all.
    pub fn on_ack(&mut self, acked: u64) -> u64 {
        self.acked_at_source = self.acked_at_source.max(acked);
        self.acked_at_source + self.window - self.base
    }

    /// The source's current zone 0 has written `written` bytes in all: notes how much
    /// it holds.
    pub fn note_written(&mut self, written: u64) {
        let written = self.base + written;
        self.written = self.written.max(written);
        self.peak_held = self
            .peak_held
            .max(written - self.acked_at_source.min(written));
    }
}

/// What summary.json reports of a split flow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitSummary {
    /// The proxies, in route order.
    pub proxies: Vec<String>,
    /// End-to-end window, bytes.
    pub window: u64,
    /// End-to-end acknowledgements the destination sent.
    pub e2e_acks: u64,
    /// Most bytes the source held waiting for an end-to-end acknowledgement.
    pub peak_source_held_bytes: u64,
    /// Each zone's connection, from the source (the last ones chosen).
    pub zones: Vec<ZoneSummary>,
    /// With `follow`: how many times the source chose its zones again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zones_chosen_again: Option<u64>,
}

/// One zone's connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZoneSummary {
    /// Its sending node.
    pub from: String,
    /// Its receiving node.
    pub to: String,
    /// Bytes its receiver delivered (handed to the next zone, or the application).
    pub bytes_delivered: u64,
    /// Segments its sender sent again.
    pub retransmissions: u64,
    /// Its retransmission timeouts.
    pub timeouts: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_sit_every_k_hops_on_the_route() {
        // A chain 0-1-...-7.
        let routes = Routes::shortest_paths(8, |a, b| a.abs_diff(b) == 1);
        assert_eq!(proxies_every(&routes, 0, 7, 3), Some(vec![0, 3, 6, 7]));
        assert_eq!(proxies_every(&routes, 7, 1, 2), Some(vec![7, 5, 3, 1]));
        assert_eq!(proxies_every(&routes, 0, 2, 5), Some(vec![0, 2]));
        let cut = Routes::shortest_paths(4, |a, b| a.abs_diff(b) == 1 && a.max(b) != 3);
        assert_eq!(proxies_every(&cut, 0, 3, 1), None);
    }

    #[test]
    fn proxies_follow_a_new_route_only_when_one_left_it() {
        let mut s = Split::new(vec![0, 1, 2], vec![0, 2, 4], 8 * 1460, 2 * 1460);
        assert_eq!(s.choose_again(&[0, 1, 2, 3, 4]), None, "fixed proxies");
        s.follow = Some(2);
        assert_eq!(s.choose_again(&[0, 1, 2, 3, 4]), None, "the same route");
        assert_eq!(
            s.choose_again(&[0, 5, 6, 2, 4]),
            None,
            "the proxy is still on it"
        );
        assert_eq!(s.choose_again(&[0, 5, 6, 7, 4]), Some(vec![0, 6, 4]));
        assert_eq!(s.choose_again(&[0, 4]), Some(vec![0, 4]), "one hop: none");
        assert_eq!(s.choose_again(&[3, 2, 4]), None, "not from the source");
        // No proxies yet (no path at the start): a long enough route gets some.
        let mut bare = Split::new(vec![0], vec![0, 4], 8 * 1460, 2 * 1460);
        bare.follow = Some(2);
        assert_eq!(bare.choose_again(&[0, 7, 4]), None, "two hops: no room");
        assert_eq!(bare.choose_again(&[0, 7, 8, 4]), Some(vec![0, 8, 4]));
        assert_eq!(bare.choose_again(&[0, 4]), None);
    }

    #[test]
    fn new_zones_start_at_the_end_to_end_ack_and_the_destination_skips_what_it_has() {
        let seg = 1460;
        let mut s = Split::new(vec![0, 1], vec![0, 2, 4], 8 * seg, 2 * seg);
        s.take_new(1, 5 * seg);
        assert_eq!(s.ack_due(0, false), Some(5 * seg));
        s.on_ack(4 * seg); // one acknowledgement is still on its way
        assert_eq!(s.restart(vec![7, 8], vec![0, 3, 4]), 4 * seg);
        assert_eq!(
            s.on_ack(4 * seg),
            8 * seg,
            "a full window from the new start"
        );
        s.note_written(8 * seg);
        assert_eq!(s.peak_held, 8 * seg);
        // The new last zone delivers the fifth segment again, then the sixth.
        assert_eq!(s.take_new(1, seg), seg);
        assert_eq!(s.ack_due(10, false), None, "nothing new at the destination");
        s.take_new(1, 2 * seg);
        assert_eq!(s.delivered, 6 * seg);
        assert_eq!(s.sources, vec![0, 7]);
    }

    #[test]
    fn a_source_that_hears_nothing_probes_when_following_the_route() {
        let mut s = Split::new(vec![0, 1], vec![0, 2, 4], 8 * 1460, 2 * 1460);
        assert_eq!(s.probe_at(), None);
        s.note_written(1460);
        assert!(!s.probe_due(PROBE_AFTER_NS), "fixed proxies never probe");
        s.follow = Some(2);
        assert!(!s.probe_due(PROBE_AFTER_NS - 1));
        assert!(s.probe_due(PROBE_AFTER_NS));
        assert_eq!(s.probe_at(), Some(2 * PROBE_AFTER_NS));
        s.on_ack(1460);
        assert!(!s.probe_due(3 * PROBE_AFTER_NS), "nothing held");
        // The destination has two segments: its answer says so, and counts.
        s.take_new(1, 2 * 1460);
        assert_eq!(s.ack_now(7), 2 * 1460);
        assert_eq!((s.acks_sent, s.repeat_at()), (1, Some(7 + ACK_REPEAT_NS)));
    }

    #[test]
    fn the_destination_acknowledges_every_k_segments_and_at_the_end() {
        let mut s = Split::new(vec![0, 1], vec![0, 2, 4], 8 * 1460, 2 * 1460);
        assert_eq!(s.take_new(1, 1460), 1460);
        assert_eq!(s.ack_due(10, false), None, "one segment: not yet");
        assert_eq!(s.take_new(1, 2920), 1460);
        assert_eq!(s.ack_due(20, false), Some(2920));
        assert_eq!(s.take_new(1, 3000), 80);
        assert_eq!(s.ack_due(30, false), None);
        assert_eq!(s.ack_due(40, true), Some(3000), "the rest once all is in");
        assert_eq!(s.acks_sent, 2);
    }

    #[test]
    fn a_single_zone_is_acknowledged_end_to_end_by_its_own_acks() {
        let seg = 1460;
        // Two hops with a proxy every 2: no room for one.
        let mut s = Split::new(vec![0], vec![0, 2], 8 * seg, 2 * seg);
        s.follow = Some(2);
        s.note_written(4 * seg);
        assert_eq!(s.take_new(0, 4 * seg), 4 * seg);
        assert_eq!(s.ack_due(0, false), None, "no end-to-end ACK of its own");
        assert_eq!(s.ack_due(ACK_REPEAT_NS, true), None, "nor at the end");
        // The zone's ACK of the four segments purges them at the source.
        assert_eq!(s.on_zone_ack(5, 4 * seg), 12 * seg);
        assert_eq!((s.acked_at_source, s.quiet_since), (4 * seg, 5));
        assert_eq!(s.on_zone_ack(9, 3 * seg), 12 * seg, "an older ACK");
        assert_eq!(s.quiet_since, 5);
        s.note_written(6 * seg);
        assert_eq!((s.repeat_at(), s.acks_sent), (None, 0));
        assert!(!s.probe_due(4 + PROBE_AFTER_NS), "its ACKs are news");
        assert!(s.probe_due(5 + PROBE_AFTER_NS), "they stopped: it probes");
        // The route grows to 4 hops: two zones, from what the zone had acknowledged,
        // and the destination acknowledges end to end again.
        assert_eq!(s.restart(vec![3, 4], vec![0, 2, 4]), 4 * seg);
        s.take_new(1, 2 * seg);
        assert_eq!(s.ack_due(20, false), Some(6 * seg));
        assert_eq!(s.repeat_at(), Some(20 + ACK_REPEAT_NS));
    }

    #[test]
    fn a_lost_acknowledgement_is_repeated_after_a_second() {
        let mut s = Split::new(vec![0, 1], vec![0, 1, 2], 4 * 1460, 1460);
        s.take_new(1, 1460);
        assert_eq!(s.ack_due(0, false), Some(1460));
        assert_eq!(s.repeat_at(), Some(ACK_REPEAT_NS));
        assert_eq!(s.ack_due(ACK_REPEAT_NS - 1, false), None);
        assert_eq!(s.ack_due(ACK_REPEAT_NS, false), Some(1460));
    }

    #[test]
    fn the_source_purges_only_on_the_end_to_end_acknowledgement() {
        let mut s = Split::new(vec![0, 1], vec![0, 1, 2], 4 * 1460, 1460);
        // The first proxy has acknowledged (LACKed) all four segments; the source
        // still holds them: its limit stays where the window put it.
        s.note_written(4 * 1460);
        assert_eq!(s.peak_held, 4 * 1460);
        assert_eq!(
            s.on_ack(1460),
            5 * 1460,
            "one segment purged: one more may go"
        );
        s.note_written(5 * 1460);
        assert_eq!(s.peak_held, 4 * 1460);
        assert_eq!(
            s.on_ack(1000),
            5 * 1460,
            "an older acknowledgement changes nothing"
        );
    }
}
