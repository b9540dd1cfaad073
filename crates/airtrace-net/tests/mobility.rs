//! Moving nodes: an ns-2 movement file read as ns-2 would move its nodes, and a
//! receiver that walks out of range.

use std::path::PathBuf;

use airtrace_net::dcf::DcfConfig;
use airtrace_net::mobility::setdest::MovementFile;
use airtrace_net::radio::{PhyProfile, Position, Propagation};
use airtrace_net::{NodeId, Payload, Sdu, Wireless, WirelessEvent};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

fn movement(name: &str) -> MovementFile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/mobility")
        .join(name);
    MovementFile::load(path).unwrap_or_else(|e| panic!("{e}"))
}

fn at(x: f64, y: f64) -> Position {
    Position { x, y }
}

/// testdata/mobility/setdest-3.scen, worked out as ns-2's `MobileNode` moves: node 0
/// heads 500 m north-east (3-4-5) at 10 m/s from 2 s, arrives at 52 s, rests to 54 s
/// (the file's speed-0 setdest), then 400 m south at 20 m/s; node 1 heads west at
/// 5 m/s from 2 s and at 32 s, at (250, 100), turns back east at 15 m/s, arriving at
/// 42 s; node 2 stays.
#[test]
fn a_setdest_file_moves_the_nodes_as_ns2_does() {
    let file = movement("setdest-3.scen");
    assert_eq!(file.nodes(), 3);
    let mut m = file.mobility(&[Position::default(); 3]).unwrap();
    let expected = [
        (0, [at(100.0, 100.0), at(400.0, 100.0), at(250.0, 250.0)]),
        (
            27 * S,
            [at(250.0, 300.0), at(275.0, 100.0), at(250.0, 250.0)],
        ),
        (
            37 * S,
            [at(310.0, 380.0), at(325.0, 100.0), at(250.0, 250.0)],
        ),
        (
            45 * S,
            [at(358.0, 444.0), at(400.0, 100.0), at(250.0, 250.0)],
        ),
        (
            53 * S,
            [at(400.0, 500.0), at(400.0, 100.0), at(250.0, 250.0)],
        ),
        (
            64 * S,
            [at(400.0, 300.0), at(400.0, 100.0), at(250.0, 250.0)],
        ),
        (
            100 * S,
            [at(400.0, 100.0), at(400.0, 100.0), at(250.0, 250.0)],
        ),
    ];
    for (t, places) in expected {
        for (node, want) in places.into_iter().enumerate() {
            let got = m.position(node, t);
            assert!(got.dist2(want) < 1e-12, "node {node} at {t} ns: {got:?}");
        }
    }
    let turned = m.path(1).legs()[0];
    assert_eq!((turned.end_ns, turned.stop), (32 * S, at(250.0, 100.0)));
    assert_eq!(turned.towards, at(100.0, 100.0), "where it was heading");
}

/// Places the file does not give come from the network's own layout.
#[test]
fn places_the_file_leaves_out_come_from_the_layout() {
    let file = MovementFile::parse("m", "$node_(1) set Y_ 7\n").unwrap();
    let m = file.mobility(&[at(1.0, 2.0), at(3.0, 4.0)]).unwrap();
    assert_eq!(
        (m.path(0).start(), m.path(1).start()),
        (at(1.0, 2.0), at(3.0, 7.0))
    );
}

/// Sends one 1000-byte frame from node 0 to node 1 at `t` and says whether it got
/// through (else the MAC gave up).
fn delivered_at(w: &mut Wireless, t: i64) -> bool {
    let sdu = Sdu {
        payload: Payload {
            token: t as u64,
            len: 1000,
            ethertype: airtrace_net::frame::ETHERTYPE_IPV4,
        },
        next_hop: 1 as NodeId,
        priority: false,
    };
    w.send(t, 0, sdu);
    let mut events = Vec::new();
    while let Some(next) = w.next_deadline() {
        w.poll_into(next, &mut events);
    }
    match events.last() {
        Some(WirelessEvent::Sent { .. }) => true,
        Some(WirelessEvent::Failed { .. }) => false,
        other => panic!("{other:?}"),
    }
}

/// testdata/mobility/walk-away.scen: node 1 is 250 m from node 0 at 15 s, the edge of
/// the WaveLAN radio's decoding range. A frame 100 ms before gets through, one 100 ms
/// after does not; without the movement it still would.
#[test]
fn a_receiver_walking_out_of_range_stops_decoding_at_the_edge() {
    let channel = |moving: bool| {
        let mut w = Wireless::new(Propagation::wavelan(), PhyProfile::wavelan());
        for (i, x) in [0.0, 100.0].into_iter().enumerate() {
            let rng = ChaCha8Rng::seed_from_u64(i as u64);
            w.add_station(at(x, 0.0), DcfConfig::ns2_wavelan(), rng);
        }
        if moving {
            let layout = [w.position(0), w.position(1)];
            w.set_mobility(movement("walk-away.scen").mobility(&layout).unwrap());
        }
        w
    };
    let mut w = channel(true);
    assert!(delivered_at(&mut w, 10 * S));
    // Where it was at the last transmission: its ACK, a few ms after 10 s.
    let x = w.position(1).x;
    assert!((200.0..200.1).contains(&x), "moved on to {x} m");
    assert!(delivered_at(&mut w, 15 * S - 100 * MS));
    assert!(!delivered_at(&mut w, 15 * S + 100 * MS));
    assert!(!delivered_at(&mut w, 20 * S));
    let mut still = channel(false);
    assert!(delivered_at(&mut still, 15 * S + 100 * MS));
    assert_eq!(still.position(1), at(100.0, 0.0));
}
