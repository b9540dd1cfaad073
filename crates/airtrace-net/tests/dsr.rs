//! DSR exchanges at the level of one node's agent: what it sends for what it hears.

use airtrace_net::dsr::agent::{Action, ReplyBy, RouteEvent};
use airtrace_net::dsr::{DsrAgent, DsrConfig, DsrHeader, Path, RouteRequest};
use airtrace_net::{DropReason, IpPacket, NodeId, BROADCAST};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn agent(me: NodeId) -> DsrAgent {
    DsrAgent::new(
        me,
        DsrConfig::ns2(),
        ChaCha8Rng::seed_from_u64(u64::from(me)),
    )
}

fn data(src: NodeId, dst: NodeId, user: u64) -> IpPacket {
    IpPacket {
        src,
        dst,
        ttl: 64,
        len: 1500,
        user,
        dsr: None,
        mip: None,
        frag: None,
    }
}

/// `packet` as it arrives at the node at `index` of `route`.
fn on_route(packet: IpPacket, route: &[NodeId], index: u8) -> IpPacket {
    let mut h = DsrHeader::source_route(Path::of(route));
    h.index = index;
    packet.with_dsr(h)
}

fn request(from: NodeId, record: &[NodeId], id: u16, target: NodeId, max: u8) -> IpPacket {
    let mut h = DsrHeader::source_route(Path::of(record));
    h.control = true;
    h.request = Some(RouteRequest {
        id,
        target,
        max_propagation: max,
    });
    IpPacket {
        src: from,
        dst: BROADCAST,
        ttl: 255,
        len: 20 + h.wire_len(),
        user: 0,
        dsr: Some(h),
        mip: None,
        frag: None,
    }
}

fn logs(out: &[Action]) -> Vec<RouteEvent> {
    out.iter()
        .filter_map(|a| match a {
            Action::Log(e) => Some(*e),
            _ => None,
        })
        .collect()
}

#[test]
fn a_packet_without_a_route_waits_while_a_neighbour_search_then_a_flood_go_out() {
    let mut n0 = agent(0);
    let mut out = Vec::new();
    n0.originate(0, data(0, 4, 1), &mut out);
    assert_eq!(n0.buffered(), 1);
    assert!(matches!(
        logs(&out)[..],
        [RouteEvent::RequestSent {
            target: 4,
            propagating: false,
            ..
        }]
    ));
    let Some(Action::Broadcast { packet, .. }) =
        out.iter().find(|a| matches!(a, Action::Broadcast { .. }))
    else {
        panic!("no request broadcast: {out:?}");
    };
    assert_eq!(packet.ttl, 1, "a neighbour search goes one hop");
    let check = out
        .iter()
        .find_map(|a| match a {
            Action::CheckBufferAt(t) => Some(*t),
            _ => None,
        })
        .expect("the send buffer is checked");
    assert!((30_000_000..=60_000_000).contains(&check));
    out.clear();
    n0.check_buffer(check, &mut out);
    assert!(matches!(
        logs(&out)[..],
        [RouteEvent::RequestSent {
            propagating: true,
            ..
        }]
    ));
}

#[test]
fn the_target_replies_along_the_reversed_record_and_the_initiator_sends_the_buffered_packet() {
    let mut n3 = agent(3);
    let mut out = Vec::new();
    n3.receive(0, request(0, &[0, 1, 2], 7, 3, 16), &mut out);
    let Some(&Action::Unicast {
        packet, next_hop, ..
    }) = out.iter().find(|a| matches!(a, Action::Unicast { .. }))
    else {
        panic!("no reply: {out:?}");
    };
    assert_eq!(next_hop, 2);
    let reply = packet.dsr.unwrap();
    assert_eq!(reply.reply.unwrap().as_slice(), &[0, 1, 2, 3]);
    assert_eq!(reply.route.as_slice(), &[3, 2, 1, 0]);

    let mut n0 = agent(0);
    out.clear();
    n0.originate(0, data(0, 3, 42), &mut out);
    out.clear();
    let mut arrived = packet;
    arrived.dsr.as_mut().unwrap().index = 3;
    n0.receive(50_000_000, arrived, &mut out);
    assert_eq!(n0.buffered(), 0);
    let sent: Vec<_> = out
        .iter()
        .filter_map(|a| match a {
            Action::Unicast {
                packet, next_hop, ..
            } => Some((packet.user, *next_hop, packet.dsr.unwrap().route)),
            _ => None,
        })
        .collect();
    assert_eq!(sent, vec![(42, 1, Path::of(&[0, 1, 2, 3]))]);
}

#[test]
fn a_neighbour_that_forwarded_for_the_target_replies_from_its_cache() {
    let mut n1 = agent(1);
    let mut out = Vec::new();
    n1.receive(0, on_route(data(0, 4, 1), &[0, 1, 2, 3, 4], 0), &mut out);
    assert!(matches!(out[..], [Action::Unicast { next_hop: 2, .. }]));
    out.clear();
    n1.receive(1_000, request(0, &[0], 9, 4, 0), &mut out);
    assert!(
        logs(&out).iter().any(|e| matches!(
            e,
            RouteEvent::ReplySent { by: ReplyBy::Cache, route, .. } if route.as_slice() == [0, 1, 2, 3, 4]
        )),
        "{out:?}"
    );
}

#[test]
fn a_broken_link_sends_a_route_error_to_the_source_and_drops_what_cannot_be_salvaged() {
    let mut n2 = agent(2);
    let mut out = Vec::new();
    let failed = on_route(data(0, 4, 5), &[0, 1, 2, 3, 4], 2);
    let queued = on_route(data(0, 4, 6), &[0, 1, 2, 3, 4], 2);
    n2.link_failed(0, failed, 3, &[queued], &mut out);
    let drops: Vec<_> = out
        .iter()
        .filter_map(|a| match a {
            Action::Drop { packet, reason } => Some((packet.user, *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        drops,
        vec![(5, DropReason::NoRoute), (6, DropReason::NoRoute)]
    );
    let Some(Action::Unicast {
        packet, next_hop, ..
    }) = out.iter().find(|a| matches!(a, Action::Unicast { .. }))
    else {
        panic!("no route error: {out:?}");
    };
    assert_eq!((*next_hop, packet.dst), (1, 0));
    let h = packet.dsr.unwrap();
    assert!(h.control);
    assert_eq!(h.route.as_slice(), &[2, 1, 0]);
    let e = h.route_errors().next().unwrap();
    assert_eq!((e.from, e.to, e.tell), (2, 3, 0));
    assert_eq!(
        packet.user, 5,
        "the error names the packet that caused it (ELFN)"
    );
}

#[test]
fn a_packet_is_salvaged_on_another_cached_route() {
    let mut n2 = agent(2);
    let mut out = Vec::new();
    // n2 learned 2 → 5 → 4 from a reply it sent.
    n2.receive(0, request(5, &[5], 1, 2, 16), &mut out);
    n2.receive(0, on_route(data(7, 4, 0), &[7, 2, 5, 4], 0), &mut out);
    out.clear();
    n2.link_failed(
        1,
        on_route(data(0, 4, 5), &[0, 1, 2, 3, 4], 2),
        3,
        &[],
        &mut out,
    );
    assert!(out.iter().any(|a| matches!(
        a,
        Action::Unicast { packet, next_hop: 5, .. } if packet.user == 5 && packet.dsr.unwrap().salvaged == 1
    )), "{out:?}");
}

#[test]
fn a_packet_waiting_longer_than_the_send_timeout_is_dropped() {
    let mut n0 = agent(0);
    let mut out = Vec::new();
    n0.originate(0, data(0, 9, 3), &mut out);
    out.clear();
    n0.check_buffer(30_000_000_001, &mut out);
    assert!(out.iter().any(|a| matches!(
        a,
        Action::Drop {
            reason: DropReason::SendBufferTimeout,
            ..
        }
    )));
    assert_eq!(n0.buffered(), 0);
}

#[test]
fn an_overheard_packet_teaches_a_route_through_its_sender() {
    // Node 9 hears node 1 send 0's packet on to 2, along 0 → 1 → 2 → 3.
    let mut n9 = agent(9);
    let mut out = Vec::new();
    n9.overhear(0, on_route(data(0, 3, 1), &[0, 1, 2, 3], 1), 1, &mut out);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(
        n9.cache().find(3, 0, false).unwrap().as_slice(),
        &[9, 1, 2, 3]
    );
    assert!(
        n9.cache().find(0, 0, false).is_none(),
        "only what lies ahead of the sender"
    );
}

#[test]
fn a_node_further_down_the_route_tells_the_source_of_the_shortcut_once_a_second() {
    // Node 3 hears node 1 send 0's packet to 2 on 0 → 1 → 2 → 3 → 4: node 2 is not
    // needed. The gratuitous reply goes back to 0 through 1 with 0 → 1 → 3 → 4.
    let mut n3 = agent(3);
    let mut out = Vec::new();
    let packet = on_route(data(0, 4, 1), &[0, 1, 2, 3, 4], 1);
    n3.overhear(0, packet, 1, &mut out);
    let Some(&Action::Unicast {
        packet: reply,
        next_hop,
        ..
    }) = out.iter().find(|a| matches!(a, Action::Unicast { .. }))
    else {
        panic!("no gratuitous reply: {out:?}");
    };
    assert_eq!((reply.dst, next_hop), (0, 1));
    let h = reply.dsr.unwrap();
    assert_eq!(h.reply.unwrap().as_slice(), &[0, 1, 3, 4]);
    assert_eq!(h.route.as_slice(), &[3, 1, 0]);
    assert!(logs(&out).iter().any(|e| matches!(
        e,
        RouteEvent::ReplySent {
            by: ReplyBy::Shortening,
            ..
        }
    )));
    out.clear();
    n3.overhear(500_000_000, packet, 1, &mut out);
    assert!(out.is_empty(), "held down for a second: {out:?}");
    n3.overhear(1_500_000_000, packet, 1, &mut out);
    assert!(!out.is_empty(), "a second later, again");
}
