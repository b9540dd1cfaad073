//! Signal-driven losses and rate adaptation on the shared channel: a station behind a
//! wall, its frames read off the air as a sniffer would.

use airtrace_net::dcf::DcfConfig;
use airtrace_net::radio::{dbm_to_w, PhyProfile, Position, Propagation};
use airtrace_net::rate::{RateAlgorithm, RateConfig};
use airtrace_net::{
    AirRecord, FrameKind, NodeId, Payload, Sdu, SignalConfig, SignalModel, Wall, Wireless,
    WirelessEvent,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const M: u64 = 1_000_000;

/// An access point at 0 and a station 20 m away behind a 21 dB wall: log-distance with
/// exponent 3 at 2.437 GHz, 15 dBm, noise at −90 dBm: a mean SNR of 4.8 dB.
fn cell(rate_control: Option<RateConfig>, signal: bool) -> Wireless {
    let phy = PhyProfile {
        tx_power_w: dbm_to_w(15.0),
        rx_threshold_w: dbm_to_w(-100.0),
        cs_threshold_w: dbm_to_w(-100.0),
        noise_w: dbm_to_w(-90.0),
        ..PhyProfile::wavelan()
    };
    let propagation = Propagation::LogDistance {
        frequency_hz: 2.437e9,
        exponent: 3.0,
        reference_m: 1.0,
    };
    let mut w = Wireless::new(propagation, phy);
    let mac = DcfConfig {
        rate_control,
        ..DcfConfig::dsss(11 * M)
    };
    for (i, x) in [0.0, 20.0].into_iter().enumerate() {
        w.add_station(
            Position { x, y: 0.0 },
            mac,
            ChaCha8Rng::seed_from_u64(i as u64),
        );
    }
    if signal {
        let wall = Wall {
            a: Position { x: 10.0, y: -5.0 },
            b: Position { x: 10.0, y: 5.0 },
            loss_db: 21.0,
        };
        w.set_signal(SignalModel::new(
            SignalConfig {
                walls: vec![wall],
                frame_errors: true,
                ..SignalConfig::default()
            },
            ChaCha8Rng::seed_from_u64(10),
            ChaCha8Rng::seed_from_u64(11),
        ));
    }
    w.enable_air(&[1]);
    w
}

/// Offers `n` 1000-byte packets from the access point, one after the other, and runs
/// until all are sent or given up.
fn offer(w: &mut Wireless, n: u64) -> (Vec<WirelessEvent>, Vec<AirRecord>) {
    let mut events = Vec::new();
    for token in 0..n {
        w.send(
            0,
            0,
            Sdu {
                payload: Payload {
                    token,
                    len: 1000,
                    ethertype: airtrace_net::frame::ETHERTYPE_IPV4,
                },
                next_hop: 1,
                priority: false,
            },
        );
    }
    while let Some(t) = w.next_deadline() {
        w.poll_into(t, &mut events);
    }
    let mut air = Vec::new();
    w.drain_air(&mut air);
    (events, air)
}

/// The data frames the station heard: (rate, intact), in order.
fn data_heard(air: &[AirRecord]) -> Vec<(u64, bool)> {
    air.iter()
        .filter(|r| r.node == 1 && r.frame.kind == FrameKind::Data)
        .map(|r| (r.frame.rate_bps, r.intact))
        .collect()
}

fn count(events: &[WirelessEvent], pick: fn(&WirelessEvent) -> bool) -> usize {
    events.iter().filter(|e| pick(e)).count()
}

#[test]
fn the_wall_leaves_a_mean_snr_of_five_db() {
    let w = cell(None, true);
    let snr = w.mean_snr_db(0, 1);
    assert!((snr - 4.8).abs() < 0.1, "{snr}");
    // Without the signal model the wall is not there.
    assert!((cell(None, false).mean_snr_db(0, 1) - 25.8).abs() < 0.1);
}

/// Without the signal model, distance alone decides: every frame arrives. With it, at
/// 11 Mbit/s and 5 dB most frames arrive with a bad FCS, the MAC retries each up to
/// its limit, and packets are given up.
#[test]
fn at_five_db_fixed_eleven_mbit_frames_mostly_fail() {
    let (events, air) = offer(&mut cell(None, false), 20);
    assert_eq!(
        count(&events, |e| matches!(e, WirelessEvent::Sent { .. })),
        20
    );
    assert!(data_heard(&air).iter().all(|&(_, ok)| ok));

    let (events, air) = offer(&mut cell(None, true), 20);
    let heard = data_heard(&air);
    let bad = heard.iter().filter(|&&(_, ok)| !ok).count();
    assert!(bad * 10 > heard.len() * 7, "{bad} of {}", heard.len());
    assert!(heard.iter().all(|&(rate, _)| rate == 11 * M));
    assert!(count(&events, |e| matches!(e, WirelessEvent::Failed { .. })) > 5);
}

/// ARF: two bad frames in a row and the access point falls to 5.5 Mbit/s (a rate
/// change in its events), where the frames get through; every packet is delivered.
#[test]
fn arf_falls_to_five_and_a_half_after_two_failures_and_delivers() {
    let arf = RateConfig {
        algorithm: RateAlgorithm::Arf,
        max_rate_bps: 11 * M,
    };
    let (events, air) = offer(&mut cell(Some(arf), true), 20);
    let heard = data_heard(&air);
    assert_eq!(&heard[..2], &[(11 * M, false), (11 * M, false)]);
    assert_eq!(heard[2].0, 5_500_000);
    let first_change = events.iter().find_map(|e| match *e {
        WirelessEvent::RateChanged {
            node,
            neighbour,
            from_bps,
            to_bps,
            ..
        } => Some((node, neighbour, from_bps, to_bps)),
        _ => None,
    });
    assert_eq!(first_change, Some((0, 1 as NodeId, 11 * M, 5_500_000)));
    assert_eq!(
        count(&events, |e| matches!(e, WirelessEvent::Sent { .. })),
        20
    );
    let at_55 = heard.iter().filter(|&&(r, _)| r == 5_500_000);
    let bad_55 = at_55.clone().filter(|&&(_, ok)| !ok).count();
    assert!(bad_55 * 4 < at_55.count(), "{heard:?}");
}
