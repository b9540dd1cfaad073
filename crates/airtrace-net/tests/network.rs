//! Packets through the IP layer of a chain of radio nodes: ARP on each hop, the TTL
//! decremented at each router, ARP's one-packet hold queue, drops with their reason;
//! what the radios saw, with the packets their frames carried.

mod common;

use airtrace_net::arp::ArpConfig;
use airtrace_net::dcf::DcfConfig;
use airtrace_net::network::{DropReason, IpPacket, NetEvent, Network};
use airtrace_net::radio::{PhyProfile, Position, Propagation};
use airtrace_net::{AirFrame, Carried, FrameKind, NodeId, Routes, Wireless};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use common::{datagram, line, run};

/// `n` nodes 200 m apart on a line, ns-2's WaveLAN and MAC, shortest-path routes.
fn chain(n: usize, arp: ArpConfig) -> Network {
    let xs: Vec<f64> = (0..n).map(|i| 200.0 * i as f64).collect();
    line(&xs, arp, |w, a, b| w.decodes(a, b))
}

/// A 1000-byte datagram from `src` to `dst`, tagged `user`.
fn packet(src: NodeId, dst: NodeId, user: u64) -> IpPacket {
    datagram(src, dst, 1000, user)
}

#[test]
fn a_packet_crosses_three_hops_resolving_each_with_arp() {
    let mut net = chain(4, ArpConfig::bsd());
    let mut events = Vec::new();
    net.send(0, packet(0, 3, 7), &mut events);
    // Held for ARP: nothing goes out yet.
    assert!(events.is_empty(), "{events:?}");
    run(&mut net, &mut events);
    let outs: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Out {
                node,
                next_hop,
                packet,
                ..
            } => Some((*node, *next_hop, packet.ttl)),
            _ => None,
        })
        .collect();
    assert_eq!(outs, [(0, 1, 64), (1, 2, 63), (2, 3, 62)]);
    let local: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Local { node, packet, .. } => Some((*node, packet.user, packet.ttl)),
            _ => None,
        })
        .collect();
    assert_eq!(local, [(3, 7, 62)]);
    // Every node learnt its neighbours; 0 and 3 never exchanged ARP.
    for (a, b) in [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)] {
        assert!(net.arp(a).knows(b), "{a} knows {b}");
    }
    assert!(!net.arp(0).knows(3));
}

#[test]
fn arp_holds_one_packet_and_drops_the_older() {
    let mut net = chain(2, ArpConfig::bsd());
    let mut events = Vec::new();
    net.send(0, packet(0, 1, 1), &mut events);
    net.send(10, packet(0, 1, 2), &mut events);
    assert_eq!(
        events,
        [NetEvent::Dropped {
            at_ns: 10,
            node: 0,
            packet: packet(0, 1, 1),
            reason: DropReason::ArpHold
        }]
    );
    run(&mut net, &mut events);
    let delivered: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Local { packet, .. } => Some(packet.user),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, [2], "the newer packet is the one sent");
}

#[test]
fn prefilled_tables_send_at_once_and_no_route_is_a_drop() {
    let mut net = chain(
        3,
        ArpConfig {
            prefill: true,
            ..ArpConfig::bsd()
        },
    );
    let mut events = Vec::new();
    net.send(0, packet(0, 2, 1), &mut events);
    assert!(matches!(
        events[..],
        [NetEvent::Out {
            node: 0,
            next_hop: 1,
            ..
        }]
    ));
    // Two nodes 1 km apart: no route between them.
    let mut events = Vec::new();
    let mut w = Wireless::new(Propagation::wavelan(), PhyProfile::wavelan());
    for x in [0.0, 1000.0] {
        w.add_station(
            Position { x, y: 0.0 },
            DcfConfig::ns2_wavelan(),
            ChaCha8Rng::seed_from_u64(1),
        );
    }
    let routes = Routes::shortest_paths(2, |a, b| w.decodes(a, b));
    let mut apart = Network::new(w, routes, ArpConfig::bsd(), vec![false; 2]);
    apart.send(0, packet(0, 1, 5), &mut events);
    assert_eq!(
        events,
        [NetEvent::Dropped {
            at_ns: 0,
            node: 0,
            packet: packet(0, 1, 5),
            reason: DropReason::NoRoute
        }]
    );
}

#[test]
fn a_routing_loop_ends_when_the_ttl_does() {
    let mut w = Wireless::new(Propagation::wavelan(), PhyProfile::wavelan());
    for x in [0.0, 200.0, 400.0] {
        w.add_station(
            Position { x, y: 0.0 },
            DcfConfig::ns2_wavelan(),
            ChaCha8Rng::seed_from_u64(x as u64),
        );
    }
    let mut routes = Routes::new(3);
    // 0 and 1 each think the other is the way to 2.
    routes.set(0, 2, 1);
    routes.set(1, 2, 0);
    let mut net = Network::new(
        w,
        routes,
        ArpConfig {
            prefill: true,
            ..ArpConfig::bsd()
        },
        vec![true; 3],
    );
    let mut events = Vec::new();
    net.send(
        0,
        IpPacket {
            ttl: 5,
            ..packet(0, 2, 9)
        },
        &mut events,
    );
    run(&mut net, &mut events);
    let hops = events
        .iter()
        .filter(|e| matches!(e, NetEvent::Out { .. }))
        .count();
    assert_eq!(hops, 5, "sent with TTL 5, forwarded with 4, 3, 2, 1");
    assert!(matches!(
        events.last(),
        Some(NetEvent::Dropped {
            reason: DropReason::TtlExpired,
            packet: IpPacket { ttl: 1, .. },
            ..
        })
    ));
}

fn dsr_chain(n: usize) -> Network {
    let streams = (0..n)
        .map(|i| ChaCha8Rng::seed_from_u64(100 + i as u64))
        .collect();
    chain(n, ArpConfig::bsd()).with_dsr(airtrace_net::DsrConfig::ns2(), streams)
}

/// DSR over four nodes: a neighbour search finds nothing, the flood reaches node 3,
/// whose reply comes back along the reversed record; the held packet then crosses
/// with a four-node source route (16 bytes of DSR header), and a second packet goes
/// at once on the cached route.
#[test]
fn dsr_discovers_a_route_then_sends_on_it() {
    let mut net = dsr_chain(4);
    let mut events = Vec::new();
    net.send(0, packet(0, 3, 7), &mut events);
    run(&mut net, &mut events);
    let routing: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Route { node, event, .. } => Some((*node, *event)),
            _ => None,
        })
        .collect();
    use airtrace_net::dsr::agent::RouteEvent as R;
    assert!(
        matches!(
            routing[..],
            [
                (
                    0,
                    R::RequestSent {
                        propagating: false,
                        ..
                    }
                ),
                (
                    0,
                    R::RequestSent {
                        propagating: true,
                        ..
                    }
                ),
                (
                    3,
                    R::ReplySent {
                        by: airtrace_net::dsr::agent::ReplyBy::Target,
                        ..
                    }
                ),
                (0, R::RouteLearned { .. }),
                ..
            ]
        ),
        "{routing:?}"
    );
    let local: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Local { node, packet, .. } => Some((*node, packet.user, packet.len)),
            _ => None,
        })
        .collect();
    assert_eq!(local, [(3, 7, 1016)]);
    events.clear();
    let t = 10_000_000_000;
    net.send(t, packet(0, 3, 8), &mut events);
    run(&mut net, &mut events);
    assert!(
        events.iter().all(|e| !matches!(e, NetEvent::Route { .. })),
        "{events:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, NetEvent::Local { node: 3, packet, .. } if packet.user == 8)));
}

/// Issue 13: a relay whose next hop on a stale cached route is out of range and has
/// never been resolved gets no ARP reply, and no MAC failure either (ARP requests are
/// broadcast, unacknowledged). As ns-2's `ARPTable::arpresolve` does through the
/// packet's `xmit_failure_` callback, the packet that finds the last request
/// unanswered and the one held go back to DSR as a failed link: the relay forgets the
/// link and tells the source with a route error, rather than dropping them unseen and
/// keeping the route.
#[test]
fn an_unanswered_arp_at_a_relay_is_a_broken_link_for_dsr() {
    // 0 and 1 are 200 m apart; 2 is 400 m beyond 1, out of its range.
    let mut w = Wireless::new(Propagation::wavelan(), PhyProfile::wavelan());
    for (i, x) in [0.0, 200.0, 600.0].into_iter().enumerate() {
        w.add_station(
            Position { x, y: 0.0 },
            DcfConfig::ns2_wavelan(),
            ChaCha8Rng::seed_from_u64(i as u64),
        );
    }
    let routes = Routes::shortest_paths(3, |a, b| w.decodes(a, b));
    let streams = (0..3).map(|i| ChaCha8Rng::seed_from_u64(100 + i)).collect();
    let mut net = Network::new(w, routes, ArpConfig::ns2(), vec![true; 3])
        .with_dsr(airtrace_net::DsrConfig::ns2(), streams);
    net.dsr_mut(0)
        .unwrap()
        .cache()
        .add_route(&airtrace_net::dsr::Path::of(&[0, 1, 2]), 0);
    let mut events = Vec::new();
    // ns-2 asks once per packet, three times; the fourth packet gives up.
    for user in 0..4u64 {
        let t = user as i64 * 200_000_000;
        net.poll_into(t, &mut events);
        net.send(t, packet(0, 2, user), &mut events);
    }
    run(&mut net, &mut events);
    use airtrace_net::dsr::agent::RouteEvent as R;
    use airtrace_net::dsr::LinkError;
    let routing: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Route { node, event, .. } => Some((*node, *event)),
            _ => None,
        })
        .collect();
    let dead = LinkError {
        from: 1,
        to: 2,
        tell: 0,
    };
    assert!(
        routing[..3]
            == [
                (1, R::LinkBroken { to: 2 }),
                (1, R::ErrorSent { link: dead }),
                (1, R::LinkBroken { to: 2 }),
            ],
        "{routing:?}"
    );
    assert!(
        routing.contains(&(
            0,
            R::ErrorReceived {
                link: dead,
                about: Some(2)
            }
        )),
        "{routing:?}"
    );
    let drops: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Dropped {
                node: 1,
                packet,
                reason,
                ..
            } => Some((packet.user, *reason)),
            _ => None,
        })
        .collect();
    // Three held in turn and displaced (two), then the last two given back to DSR,
    // which has no other route from 1.
    assert_eq!(
        drops,
        [
            (0, DropReason::ArpHold),
            (1, DropReason::ArpHold),
            (2, DropReason::NoRoute),
            (3, DropReason::NoRoute),
        ]
    );
}

/// The same seeds give the same events, to the nanosecond.
#[test]
fn dsr_runs_are_repeatable() {
    let once = || {
        let mut net = dsr_chain(5);
        let mut events = Vec::new();
        for i in 0..20 {
            net.send(i * 3_000_000, packet(0, 4, i as u64), &mut events);
            net.poll_into(i * 3_000_000, &mut events);
        }
        run(&mut net, &mut events);
        format!("{events:?}")
    };
    assert_eq!(once(), once());
}

/// What came out of [`Network::drain_air`] after each poll, in order: a frame, or the
/// release of a packet.
#[derive(Debug)]
enum Air {
    Frame(Box<AirFrame>),
    Released(u64),
}

fn run_air(net: &mut Network, events: &mut Vec<NetEvent>, air: &mut Vec<Air>) {
    let (mut frames, mut released) = (Vec::new(), Vec::new());
    let mut drain = |net: &mut Network, air: &mut Vec<Air>| {
        net.drain_air(&mut frames, &mut released);
        air.extend(frames.drain(..).map(|f| Air::Frame(Box::new(f))));
        air.extend(released.drain(..).map(Air::Released));
    };
    drain(net, air);
    while let Some(t) = net.next_deadline() {
        net.poll_into(t, events);
        drain(net, air);
    }
}

#[test]
fn air_records_carry_each_hops_packet_until_the_packet_is_released() {
    let mut net = chain(4, ArpConfig::bsd());
    net.enable_air(&[0, 1, 2, 3]);
    let (mut events, mut air) = (Vec::new(), Vec::new());
    net.send(0, packet(0, 3, 7), &mut events);
    run_air(&mut net, &mut events, &mut air);
    let released_at = air
        .iter()
        .position(|a| matches!(a, Air::Released(7)))
        .expect("released");
    assert!(
        !air[released_at..]
            .iter()
            .any(|a| matches!(a, Air::Frame(f) if matches!(f.carried, Carried::Ip(_)))),
        "no frame carries the packet after its release (the last ACK may follow)"
    );
    let frames: Vec<_> = air
        .iter()
        .filter_map(|a| match a {
            Air::Frame(f) => Some(f),
            Air::Released(_) => None,
        })
        .collect();
    // Each IPv4 data frame carries the packet with the TTL of its hop; each radio
    // records its own frames and those it locked onto.
    let mut ip_hops = Vec::new();
    for f in &frames {
        let r = &f.record;
        match (r.frame.kind, f.carried) {
            (FrameKind::Data, Carried::Ip(p)) => {
                assert_eq!((p.user, p.ttl), (7, 64 - r.frame.src as u8));
                if r.node == r.frame.src {
                    ip_hops.push((r.frame.src, r.frame.dst));
                }
            }
            (FrameKind::Data, Carried::Arp { op, sender, .. }) => {
                assert!(op == 1 || op == 2);
                assert_eq!(sender, r.frame.src);
            }
            (_, carried) => assert_eq!(carried, Carried::Nothing),
        }
    }
    assert_eq!(ip_hops, [(0, 1), (1, 2), (2, 3)]);
    // Records come in the order their frames ended at each radio.
    for node in 0..4 {
        let ends: Vec<_> = frames
            .iter()
            .filter(|f| f.record.node == node)
            .map(|f| f.record.start_ns + f.record.frame.airtime_ns)
            .collect();
        assert!(
            ends.windows(2).all(|w| w[0] <= w[1]),
            "node {node}: {ends:?}"
        );
    }
}

#[test]
fn a_packet_that_gets_no_hop_is_released_at_once() {
    let mut w = Wireless::new(Propagation::wavelan(), PhyProfile::wavelan());
    for x in [0.0, 1000.0] {
        w.add_station(
            Position { x, y: 0.0 },
            DcfConfig::ns2_wavelan(),
            ChaCha8Rng::seed_from_u64(1),
        );
    }
    let routes = Routes::shortest_paths(2, |a, b| w.decodes(a, b));
    let mut apart = Network::new(w, routes, ArpConfig::bsd(), vec![false; 2]);
    apart.enable_air(&[0, 1]);
    let (mut events, mut air) = (Vec::new(), Vec::new());
    apart.send(0, packet(0, 1, 5), &mut events);
    run_air(&mut apart, &mut events, &mut air);
    assert!(matches!(air[..], [Air::Released(5)]), "{air:?}");
}

#[test]
fn only_the_radios_asked_for_are_recorded() {
    let mut net = chain(4, ArpConfig::bsd());
    net.enable_air(&[2]);
    let (mut events, mut air) = (Vec::new(), Vec::new());
    net.send(0, packet(0, 3, 7), &mut events);
    run_air(&mut net, &mut events, &mut air);
    let nodes: std::collections::BTreeSet<NodeId> = air
        .iter()
        .filter_map(|a| match a {
            Air::Frame(f) => Some(f.record.node),
            Air::Released(_) => None,
        })
        .collect();
    assert_eq!(nodes, [2].into());
    assert_eq!(
        air.iter().filter(|a| matches!(a, Air::Released(7))).count(),
        1,
        "released once"
    );
}
