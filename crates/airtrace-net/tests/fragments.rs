//! Datagrams longer than the MTU through a chain of radio nodes (RFC 791 §3.2): cut
//! into fragments at the sender, forwarded as they are, put together at the
//! destination; a fragment lost is the datagram lost (frag.rs's tests hold the
//! destination's reassembly timer), and an interface queue keeps a datagram's fragments
//! together.

mod common;

use airtrace_net::arp::ArpConfig;
use airtrace_net::frag::Fragment;
use airtrace_net::network::{DropReason, NetEvent};
use airtrace_net::NodeId;
use common::{datagram, line, run};

fn prefilled() -> ArpConfig {
    ArpConfig {
        prefill: true,
        ..ArpConfig::bsd()
    }
}

/// (node, next hop, length, offset in 8-byte units, MF) of each packet handed to an
/// interface.
fn outs(events: &[NetEvent]) -> Vec<(NodeId, NodeId, u32, u32, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Out {
                node,
                next_hop,
                packet,
                ..
            } => {
                let (offset, more) = packet.frag.map_or((0, false), |f| (f.offset / 8, f.more));
                Some((*node, *next_hop, packet.len, offset, more))
            }
            _ => None,
        })
        .collect()
}

fn drops(events: &[NetEvent]) -> Vec<(i64, NodeId, u32, Option<Fragment>, DropReason)> {
    events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Dropped {
                at_ns,
                node,
                packet,
                reason,
            } => Some((*at_ns, *node, packet.len, packet.frag, *reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_2076_byte_datagram_crosses_two_hops_as_two_fragments_and_arrives_whole() {
    let mut net = line(&[0.0, 200.0, 400.0], prefilled(), |w, a, b| w.decodes(a, b));
    let mut events = Vec::new();
    net.send(0, datagram(0, 2, 2076, 7), &mut events);
    run(&mut net, &mut events);
    // 1480 + 576 payload bytes: offsets 0 and 185 (× 8 = 1480), MF on the first.
    assert_eq!(
        outs(&events),
        [
            (0, 1, 1500, 0, true),
            (0, 1, 596, 185, false),
            (1, 2, 1500, 0, true),
            (1, 2, 596, 185, false)
        ]
    );
    let last_in = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::In { node: 2, at_ns, .. } => Some(*at_ns),
            _ => None,
        })
        .max();
    let local: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Local {
                at_ns,
                node,
                packet,
            } => Some((*at_ns, *node, *packet)),
            _ => None,
        })
        .collect();
    let mut whole = datagram(0, 2, 2076, 7);
    whole.ttl = 63;
    assert_eq!(
        local,
        [(last_in.unwrap(), 2, whole)],
        "once, at the last fragment"
    );
    assert_eq!(net.fragmented_pending(), 0);
}

#[test]
fn a_datagram_of_the_mtu_leaves_whole_and_a_smaller_mtu_cuts_it() {
    let mut net = line(&[0.0, 200.0], prefilled(), |w, a, b| w.decodes(a, b));
    let mut events = Vec::new();
    net.send(0, datagram(0, 1, 1500, 7), &mut events);
    assert_eq!(outs(&events), [(0, 1, 1500, 0, false)]);
    let mut net = line(&[0.0, 200.0], prefilled(), |w, a, b| w.decodes(a, b)).with_mtu(576);
    let mut events = Vec::new();
    net.send(0, datagram(0, 1, 1500, 7), &mut events);
    assert_eq!(
        outs(&events),
        [
            (0, 1, 572, 0, true),
            (0, 1, 572, 69, true),
            (0, 1, 396, 138, false)
        ]
    );
}

#[test]
fn a_fragment_lost_at_the_arp_queue_takes_its_datagram_and_the_rest_stays_off_the_air() {
    // ARP holds one packet: the second fragment displaces the first; when ARP is
    // answered the second is dropped rather than sent for nothing (partial packet
    // discard), and the datagram is lost with it.
    let mut net = line(&[0.0, 200.0], ArpConfig::bsd(), |w, a, b| w.decodes(a, b));
    let mut events = Vec::new();
    net.send(0, datagram(0, 1, 2076, 7), &mut events);
    run(&mut net, &mut events);
    assert!(outs(&events).is_empty(), "{events:?}");
    let d = drops(&events);
    let reasons: Vec<_> = d.iter().map(|d| (d.1, d.2, d.3.is_some(), d.4)).collect();
    assert_eq!(
        reasons,
        [
            (0, 1500, true, DropReason::ArpHold),
            (0, 596, true, DropReason::PartialDatagram),
            (0, 2076, false, DropReason::FragmentsLost)
        ]
    );
    assert!(d[1].0 > 0, "when ARP was answered");
    assert_eq!(net.fragmented_pending(), 0);
}

/// The events of `frames` one-frame datagrams queued at once on a two-node line, then
/// one datagram of two fragments behind them.
fn queue_then_two_fragments(frames: u64) -> Vec<NetEvent> {
    let mut net = line(&[0.0, 200.0], prefilled(), |w, a, b| w.decodes(a, b));
    let mut events = Vec::new();
    for user in 0..frames {
        net.send(0, datagram(0, 1, 1000, user), &mut events);
    }
    net.send(0, datagram(0, 1, 2076, 7), &mut events);
    events
}

#[test]
fn a_full_queue_turns_away_a_datagram_whose_fragments_do_not_all_fit() {
    // ns-2's queue of 50: 49 datagrams of one frame, then one of two fragments.
    let d = drops(&queue_then_two_fragments(50));
    let reasons: Vec<_> = d.iter().map(|d| (d.2, d.3.map(|f| f.index), d.4)).collect();
    assert_eq!(
        reasons,
        [
            (1500, Some(0), DropReason::QueueFull),
            (596, Some(1), DropReason::PartialDatagram),
            (2076, None, DropReason::FragmentsLost)
        ]
    );
    // One frame fewer, and the datagram fits.
    let events = queue_then_two_fragments(49);
    assert!(drops(&events).is_empty(), "{events:?}");
}

#[test]
fn every_fragment_dropped_on_the_way_loses_the_datagram_at_the_last_drop() {
    // The route and the ARP table say node 1 is a neighbour, but it is 1 km away: the
    // MAC gives up on both fragments.
    let mut net = line(&[0.0, 1000.0], prefilled(), |_, _, _| true);
    let mut events = Vec::new();
    net.send(0, datagram(0, 1, 2076, 7), &mut events);
    run(&mut net, &mut events);
    let d = drops(&events);
    let reasons: Vec<_> = d.iter().map(|d| (d.2, d.3.is_some(), d.4)).collect();
    assert_eq!(
        reasons,
        [
            (1500, true, DropReason::RetryLimit),
            (596, true, DropReason::RetryLimit),
            (2076, false, DropReason::FragmentsLost)
        ]
    );
    assert_eq!(d[1].0, d[2].0, "lost with its last fragment");
    assert_eq!(net.fragmented_pending(), 0);
}
