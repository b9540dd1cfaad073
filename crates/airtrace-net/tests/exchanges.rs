//! Frame exchanges on the shared channel, read off the air as a sniffer would.

use airtrace_net::dcf::DcfConfig;
use airtrace_net::radio::{PhyProfile, Position, Propagation};
use airtrace_net::{AirRecord, FrameKind, NodeId, Payload, Sdu, Wireless, WirelessEvent};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const US: i64 = 1000;

fn channel(phy: PhyProfile, mac: DcfConfig, xs: &[f64]) -> Wireless {
    let mut w = Wireless::new(Propagation::wavelan(), phy);
    for (i, &x) in xs.iter().enumerate() {
        w.add_station(
            Position { x, y: 0.0 },
            mac,
            ChaCha8Rng::seed_from_u64(i as u64),
        );
    }
    let all: Vec<NodeId> = (0..xs.len() as NodeId).collect();
    w.enable_air(&all);
    w
}

fn sdu(token: u64, len: u32, next_hop: NodeId) -> Sdu {
    Sdu {
        payload: Payload {
            token,
            len,
            ethertype: airtrace_net::frame::ETHERTYPE_IPV4,
        },
        next_hop,
        priority: false,
    }
}

/// Runs until nothing is left to do (or `limit`), returning the events and what each
/// station's radio recorded.
fn run(w: &mut Wireless, limit: i64) -> (Vec<WirelessEvent>, Vec<AirRecord>) {
    let mut events = Vec::new();
    while let Some(t) = w.next_deadline() {
        if t > limit {
            break;
        }
        w.poll_into(t, &mut events);
    }
    let mut air = Vec::new();
    w.drain_air(&mut air);
    (events, air)
}

/// Frames as node `node` recorded them: (start, kind, from, intact).
fn seen_by(air: &[AirRecord], node: NodeId) -> Vec<(i64, FrameKind, NodeId, bool)> {
    let mut v: Vec<_> = air
        .iter()
        .filter(|r| r.node == node)
        .map(|r| (r.start_ns, r.frame.kind, r.frame.src, r.intact))
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

/// An idle medium: DATA after DIFS, the ACK one SIFS (and the propagation delay)
/// after the data's last bit, the packet delivered once and reported sent.
#[test]
fn data_sifs_ack() {
    let mac = DcfConfig::dsss(2_000_000);
    let mut w = channel(PhyProfile::wavelan(), mac, &[0.0, 100.0]);
    w.send(0, 0, sdu(7, 1000, 1));
    let (events, air) = run(&mut w, i64::MAX);
    let at0 = seen_by(&air, 0);
    assert_eq!(at0.len(), 2, "{at0:?}");
    let (data_start, kind, src, _) = at0[0];
    assert_eq!((kind, src, data_start), (FrameKind::Data, 0, 50 * US));
    let data_air = mac.plcp.airtime_ns(1000 + mac.data_overhead, 2_000_000);
    let delay = 334; // 100 m at the speed of light, rounded to the ns
    let (ack_start, kind, src, intact) = at0[1];
    assert_eq!((kind, src, intact), (FrameKind::Ack, 1, true));
    // The ACK leaves node 1 SIFS after the data's last bit reached it, and reaches
    // node 0 a propagation delay later.
    assert_eq!(ack_start, data_start + data_air + delay + 10 * US + delay);
    let delivered: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            WirelessEvent::Delivered {
                node,
                from,
                payload,
                ..
            } => Some((*node, *from, payload.token)),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, [(1, 0, 7)]);
    assert!(events
        .iter()
        .any(|e| matches!(e, WirelessEvent::Sent { node: 0, .. })));
}

/// Two stations with packets when the medium has been idle: both wait DIFS and
/// transmit in the same slot; the station between them hears a collision (a bad
/// frame), neither gets an ACK, and each retries with the Retry bit.
#[test]
fn two_stations_drawing_the_same_slot_collide() {
    let mac = DcfConfig::dsss(2_000_000);
    let mut w = channel(PhyProfile::wavelan(), mac, &[0.0, 100.0, 200.0]);
    w.send(0, 0, sdu(1, 500, 1));
    w.send(0, 2, sdu(2, 500, 1));
    let (events, air) = run(&mut w, i64::MAX);
    let at1 = seen_by(&air, 1);
    assert_eq!(at1[0].1, FrameKind::Data);
    assert!(
        !at1[0].3,
        "the first frame at the middle station is lost: {at1:?}"
    );
    let starts: Vec<_> = air
        .iter()
        .filter(|r| r.node == r.frame.src && r.frame.kind == FrameKind::Data)
        .map(|r| (r.frame.src, r.start_ns, r.frame.retry))
        .collect();
    assert_eq!(starts[0], (0, 50 * US, false));
    assert_eq!(starts[1], (2, 50 * US, false));
    assert!(
        starts[2..].iter().all(|s| s.2),
        "retries carry the Retry bit: {starts:?}"
    );
    let delivered = events
        .iter()
        .filter(|e| matches!(e, WirelessEvent::Delivered { .. }))
        .count();
    assert_eq!(delivered, 2, "both get through in the end");
}

/// Nobody answers: the frame goes out `short_attempts` times, the Retry bit set
/// from the second, and is given up.
#[test]
fn retry_limit_reached_and_the_frame_dropped() {
    let mac = DcfConfig::dsss(2_000_000);
    let mut w = channel(PhyProfile::wavelan(), mac, &[0.0, 1000.0]);
    w.send(0, 0, sdu(9, 200, 1));
    let (events, air) = run(&mut w, i64::MAX);
    assert_eq!(seen_by(&air, 0).len(), 7, "seven attempts");
    let retry: Vec<bool> = air.iter().map(|r| r.frame.retry).collect();
    assert_eq!(retry, [false, true, true, true, true, true, true]);
    assert!(matches!(
        events.last(),
        Some(WirelessEvent::Failed { node: 0, sdu, .. }) if sdu.payload.token == 9
    ));
}

/// RTS/CTS (ns-2's MAC): node 2 sits 230 m beyond node 1, decodes node 1's CTS but
/// not node 0's RTS or data (460 m away: sensed, undecodable). It gets a packet during
/// the exchange and must keep quiet until the NAV the CTS set runs out, at the end of
/// node 1's ACK.
#[test]
fn nav_set_by_cts_defers_a_station_that_cannot_hear_the_sender() {
    let mac = DcfConfig::ns2_wavelan();
    let phy = PhyProfile::wavelan();
    let mut w = channel(phy, mac, &[0.0, 230.0, 460.0]);
    w.send(0, 0, sdu(1, 1000, 1));
    // Node 2 gets its packet while node 0's data is on the air.
    let mut events = Vec::new();
    w.poll_into(2_000 * US, &mut events);
    w.send(2_000 * US, 2, sdu(2, 100, 1));
    let (_, air) = run(&mut w, i64::MAX);
    let at2 = seen_by(&air, 2);
    let cts = at2
        .iter()
        .find(|x| x.1 == FrameKind::Cts && x.3)
        .expect("node 2 decodes the CTS");
    let ack_end_at_1: i64 = air
        .iter()
        .filter(|r| r.node == 1 && r.frame.kind == FrameKind::Ack)
        .map(|r| r.start_ns + r.frame.airtime_ns)
        .next()
        .expect("node 1 sends the ACK");
    let rts2 = air
        .iter()
        .find(|r| r.node == 2 && r.frame.src == 2 && r.frame.kind == FrameKind::Rts)
        .expect("node 2 sends in the end");
    assert!(cts.0 < 2_000 * US);
    assert!(
        rts2.start_ns >= ack_end_at_1,
        "node 2 sent at {} before the exchange's end {}",
        rts2.start_ns,
        ack_end_at_1
    );
}

/// Hidden terminals: carrier sense reaches no farther than decoding (250 m), nodes 0
/// and 2 are 400 m apart and both send to node 1 between them, which hears their
/// frames collide. RTS/CTS leaves the long data frames alone: fewer data frames are
/// lost and fewer packets given up.
#[test]
fn hidden_terminals_with_and_without_rts_cts() {
    let phy = PhyProfile {
        cs_threshold_w: PhyProfile::wavelan().rx_threshold_w,
        ..PhyProfile::wavelan()
    };
    let mut lost_data = Vec::new();
    for rts_threshold in [u32::MAX, 0] {
        let mac = DcfConfig {
            rts_threshold,
            ..DcfConfig::dsss(2_000_000)
        };
        let mut w = channel(phy, mac, &[0.0, 200.0, 400.0]);
        let mut events = Vec::new();
        let mut token = 0;
        for step in 0..400i64 {
            let now = step * 5_000 * US;
            w.poll_into(now, &mut events);
            for node in [0, 2] {
                if w.mac(node).queued() < 2 {
                    token += 1;
                    w.send(now, node, sdu(token, 1460, 1));
                }
            }
        }
        let (_, air) = run(&mut w, 2_100_000 * US);
        let lost = air
            .iter()
            .filter(|r| r.node == 1 && r.frame.kind == FrameKind::Data && !r.intact)
            .count();
        let got = air
            .iter()
            .filter(|r| r.node == 1 && r.frame.kind == FrameKind::Data && r.intact)
            .count();
        lost_data.push((lost, got));
    }
    let (without, with) = (lost_data[0], lost_data[1]);
    assert!(without.0 > 10 * with.0.max(1), "{lost_data:?}");
    assert!(with.1 > without.1, "{lost_data:?}");
}
