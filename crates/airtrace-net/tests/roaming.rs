//! A mobile node walks from its home agent's cell into a foreign agent's, told as the
//! network's events tell it: association at the start, beacons heard, a handoff for
//! signal, the association after the gap, the foreign agent's advertisement, a
//! registration request and its reply, then the home agent's tunnel.

use airtrace_net::arp::ArpConfig;
use airtrace_net::dcf::DcfConfig;
use airtrace_net::mobile_ip::{Mip, MipConfig, MipEvent};
use airtrace_net::mobility::Path;
use airtrace_net::network::{IpPacket, NetEvent, Network};
use airtrace_net::radio::{PhyProfile, Position, Propagation};
use airtrace_net::roam::{HandoffReason, RoamConfig, RoamEvent};
use airtrace_net::wired::{WiredConfig, WiredLinks};
use airtrace_net::{Mobility, NodeId, Routes, Wireless};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;
/// Node ids: the home agent, the foreign agent (access points 400 m apart), the router
/// wired to both, the mobile node.
const HA: NodeId = 0;
const FA: NodeId = 1;
const ROUTER: NodeId = 2;
const MN: NodeId = 3;

/// The network: ns-2's WaveLAN (250 m range), the mobile node walking from 50 m to
/// 350 m at 20 m/s from 1 s, 100 ms beacons, 6 dB of hysteresis, a 50 ms gap; Mobile
/// IP with 1 s advertisements.
fn walk() -> Network {
    let at = |x| Position { x, y: 0.0 };
    let mut w = Wireless::new(Propagation::wavelan(), PhyProfile::wavelan());
    for (i, x) in [0.0, 400.0, 200.0, 50.0].into_iter().enumerate() {
        w.add_station(
            at(x),
            DcfConfig::ns2_wavelan(),
            ChaCha8Rng::seed_from_u64(i as u64),
        );
    }
    w.remove_radio(ROUTER);
    let mut paths: Vec<Path> = [0.0, 400.0, 200.0, 50.0].map(|x| Path::new(at(x))).into();
    paths[MN as usize].set_destination(S, at(350.0), 20.0);
    w.set_mobility(Mobility::new(paths));
    let mut wired = WiredLinks::default();
    let wire = WiredConfig {
        rate_bps: 100_000_000,
        delay_ns: 1_000,
        queue_packets: 100,
    };
    wired.connect(ROUTER, HA, wire);
    wired.connect(ROUTER, FA, wire);
    let routes = Routes::shortest_paths(4, |a, b| wired.connects(a, b) || w.decodes(a, b));
    let roam = RoamConfig {
        beacon_interval_ns: 100 * MS,
        handoff_gap_ns: 50 * MS,
        hysteresis_db: 6.0,
        beacon_loss: 3,
    };
    Network::new(w, routes, ArpConfig::bsd(), vec![true, true, true, false])
        .with_wired(wired)
        .with_roaming(roam, &[HA, FA], &[MN])
        .with_mobile_ip(MipConfig::default(), HA, &[FA], &[MN])
}

fn run_until(net: &mut Network, end: i64, out: &mut Vec<NetEvent>) {
    while let Some(t) = net.next_deadline().filter(|&t| t <= end) {
        net.poll_into(t, out);
    }
}

#[test]
fn a_walk_into_a_foreign_cell_hands_off_registers_and_is_tunnelled_to() {
    let mut net = walk();
    let mut events = Vec::new();
    run_until(&mut net, 20 * S, &mut events);
    let roam: Vec<(i64, RoamEvent)> = events
        .iter()
        .filter_map(|e| match *e {
            NetEvent::Roam {
                at_ns,
                node: MN,
                event,
            } => Some((at_ns, event)),
            _ => None,
        })
        .collect();
    // Associated with its home agent's access point from the start.
    assert_eq!(roam[0], (0, RoamEvent::Associated { ap: HA }));
    // Then one handoff for signal, past the midpoint (200 m, at 8.5 s), and the
    // association one gap later.
    let (t_h, handoff) = roam[1];
    assert_eq!(
        handoff,
        RoamEvent::Handoff {
            from: Some(HA),
            to: Some(FA),
            reason: HandoffReason::Signal
        }
    );
    assert!((8 * S..12 * S).contains(&t_h), "handed off at {t_h} ns");
    assert_eq!(roam[2], (t_h + 50 * MS, RoamEvent::Associated { ap: FA }));
    assert_eq!(roam.len(), 3, "{roam:?}");
    assert_eq!(net.associated_ap(MN), Some(FA));
    // The foreign agent's next advertisement (1 s apart) starts the registration; the
    // reply comes back through it.
    let mip: Vec<(i64, MipEvent)> = events
        .iter()
        .filter_map(|e| match *e {
            NetEvent::MobileIp {
                at_ns,
                node: MN,
                event,
            } => Some((at_ns, event)),
            _ => None,
        })
        .collect();
    let [(
        t_req,
        MipEvent::RequestSent {
            registration: r,
            attempt: 1,
        },
    ), (
        t_rep,
        MipEvent::ReplyReceived {
            registration,
            accepted: true,
        },
    )] = mip[..]
    else {
        panic!("{mip:?}")
    };
    assert_eq!(
        (r.mobile, r.home_agent, r.via, r.care_of),
        (MN, HA, FA, Some(FA))
    );
    assert_eq!(registration, r);
    assert!(
        t_req > t_h + 50 * MS && t_req < t_h + 50 * MS + S,
        "requested at {t_req}"
    );
    assert!(
        t_rep > t_req && t_rep < t_req + 100 * MS,
        "answered at {t_rep}"
    );

    // A packet for the mobile node from the router goes home, into the tunnel to the
    // foreign agent, and out of it to the node.
    let mut events = Vec::new();
    let packet = IpPacket {
        src: ROUTER,
        dst: MN,
        ttl: 64,
        len: 1000,
        user: 7,
        dsr: None,
        mip: None,
        frag: None,
    };
    net.send(20 * S, packet, &mut events);
    run_until(&mut net, 21 * S, &mut events);
    let tunnelled = events.iter().any(|e| {
        matches!(e, NetEvent::Out { node: HA, packet: p, .. }
            if p.user == 7 && p.len == 1020 && p.mip == Some(Mip::Tunnel { from: HA, to: FA, inner_ttl: 63 }))
    });
    assert!(tunnelled, "{events:?}");
    let delivered = events.iter().any(|e| {
        matches!(e, NetEvent::Local { node: MN, packet: p, .. } if p.user == 7 && p.len == 1000 && p.mip.is_none())
    });
    assert!(delivered, "{events:?}");

    // A datagram longer than the MTU leaves the router in fragments; each goes through
    // the tunnel as it is (not cut again), out of it at the foreign agent, and the
    // mobile node, the datagram's destination, puts them together.
    let mut events = Vec::new();
    net.send(
        22 * S,
        IpPacket {
            len: 2076,
            user: 8,
            ..packet
        },
        &mut events,
    );
    run_until(&mut net, 23 * S, &mut events);
    let tunnel: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Out {
                node: HA,
                packet: p,
                ..
            } if p.user == 8 => Some((p.len, p.frag.map(|f| f.offset))),
            _ => None,
        })
        .collect();
    assert_eq!(tunnel, [(1520, Some(0)), (616, Some(1480))], "{events:?}");
    let local: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            NetEvent::Local {
                node, packet: p, ..
            } if p.user == 8 => Some((*node, p.len, p.frag)),
            _ => None,
        })
        .collect();
    assert_eq!(local, [(MN, 2076, None)], "{events:?}");
}
