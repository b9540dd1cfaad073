//! The random waypoint model, with movement patterns that keep their waypoints at
//! every mean speed.
//!
//! Each node starts at a place drawn uniformly in the rectangle, rests `pause`, then
//! draws a waypoint uniformly in the rectangle and a speed, goes there in a straight
//! line, rests `pause`, and so on (Johnson & Maltz 1996, §4; Broch et al. 1998, §4.1;
//! ns-2's `setdest` version 1, indep-utils/cmu-scen-gen/setdest/setdest.cc, which also
//! starts with a pause and draws the start place and the waypoints alike).
//!
//! The speed of each trip is uniform in [0.9 v, 1.1 v] for a mean speed v, as Holland
//! & Vaidya ran it ("Analysis of TCP Performance over Mobile Ad Hoc Networks", MobiCom
//! 1999, §3), rather than setdest's [0, max], whose mean speed decays over a run.
//!
//! # Patterns
//!
//! Holland & Vaidya average over 50 *patterns*, and run each pattern at every mean
//! speed, "so that for a given pattern the same sequence of movements (and link
//! failures) occur" at every speed, only sooner or later. Here a pattern is a number
//! that plays the part of the seed for the movement alone: the streams are
//! `Streams::new(pattern)`'s `mobility/node/<i>/waypoints` (node `i`'s start place,
//! then its waypoints) and `mobility/node/<i>/speeds` (one draw per trip, scaled by
//! the mean speed). So
//!
//! - a pattern's places do not depend on the speed: trip k goes to the same waypoint at
//!   2 m/s and at 30 m/s, and with no pause it takes 15 times longer at 2 m/s;
//! - they do not depend on the scenario's seed either, which keeps moving the MAC's
//!   backoffs and the other random processes; pattern K is the same movement in every
//!   scenario with the same rectangle and node count (a node's path does not even
//!   depend on how many others there are);
//! - one stream per node keeps each node's path apart from the others' timing.

use airtrace_link::rng::Streams;
use rand::RngExt;

use super::{Mobility, Path, MAX_LEGS};
use crate::radio::Position;

/// Each trip's speed is uniform within this fraction of the mean speed either side.
pub const SPEED_SPREAD: f64 = 0.1;

/// A random waypoint movement (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomWaypoint {
    /// The rectangle's width (x), m; it spans 0 … width.
    pub width_m: f64,
    /// Its height (y), m.
    pub height_m: f64,
    /// The mean speed v, m/s; each trip's is uniform in [0.9 v, 1.1 v].
    pub speed_mps: f64,
    /// The rest at the start and at each waypoint, ns.
    pub pause_ns: i64,
    /// The movement pattern: the seed of the waypoint and speed streams.
    pub pattern: u64,
}

/// A movement needs more than [`MAX_LEGS`] legs to cover the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the movement needs more than {MAX_LEGS} legs to cover {until_ns} ns: use fewer nodes, a lower speed, a longer pause or a shorter run")]
pub struct TooManyLegs {
    /// The time it was to cover, ns.
    pub until_ns: i64,
}

impl RandomWaypoint {
    /// The paths of `nodes` nodes, covering the time from 0 to `until_ns` (the last trip
    /// may end after it).
    pub fn mobility(&self, nodes: usize, until_ns: i64) -> Result<Mobility, TooManyLegs> {
        let streams = Streams::new(self.pattern);
        let mut legs = 0usize;
        let mut paths = Vec::with_capacity(nodes);
        for i in 0..nodes {
            let mut places = streams.stream(&format!("mobility/node/{i}/waypoints"));
            let mut speeds = streams.stream(&format!("mobility/node/{i}/speeds"));
            let mut place = || Position {
                x: places.random::<f64>() * self.width_m,
                y: places.random::<f64>() * self.height_m,
            };
            let mut path = Path::new(place());
            let mut t = self.pause_ns;
            while t <= until_ns {
                legs += 1;
                if legs > MAX_LEGS {
                    return Err(TooManyLegs { until_ns });
                }
                let spread = 1.0 - SPEED_SPREAD + 2.0 * SPEED_SPREAD * speeds.random::<f64>();
                path.set_destination(t, place(), self.speed_mps * spread);
                let arrived = path.legs().last().map_or(t, |l| l.end_ns);
                t = arrived.saturating_add(self.pause_ns);
            }
            paths.push(path);
        }
        Ok(Mobility::new(paths))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    /// Holland & Vaidya's field: 1500 m × 300 m, no pause.
    fn holland_vaidya(speed_mps: f64, pattern: u64) -> RandomWaypoint {
        RandomWaypoint {
            width_m: 1500.0,
            height_m: 300.0,
            speed_mps,
            pause_ns: 0,
            pattern,
        }
    }

    #[test]
    fn a_pattern_visits_the_same_waypoints_in_the_same_order_at_every_speed() {
        let slow = holland_vaidya(2.0, 7).mobility(30, 900 * S).unwrap();
        let fast = holland_vaidya(30.0, 7).mobility(30, 900 * S).unwrap();
        for node in 0..30 {
            let (s, f) = (slow.path(node), fast.path(node));
            assert_eq!(s.start(), f.start(), "node {node}: same start");
            assert!(s.legs().len() >= 2 && f.legs().len() > s.legs().len());
            for (a, b) in s.legs().iter().zip(f.legs()) {
                assert_eq!(a.towards, b.towards, "node {node}: same waypoint");
                // Same speed draw, scaled: trip k takes 15 times as long at 2 m/s.
                assert!((b.speed_mps / a.speed_mps - 15.0).abs() < 1e-9);
                let (ta, tb) = (a.end_ns - a.start_ns, b.end_ns - b.start_ns);
                assert!((ta as f64 / tb as f64 - 15.0).abs() < 1e-6, "{ta} {tb}");
            }
        }
        // Another pattern is another movement.
        let other = holland_vaidya(2.0, 8).mobility(30, 900 * S).unwrap();
        assert_ne!(other.path(0).start(), slow.path(0).start());
    }

    #[test]
    fn speeds_stay_within_ten_percent_and_waypoints_within_the_rectangle() {
        let rwp = holland_vaidya(20.0, 1);
        let m = rwp.mobility(30, 900 * S).unwrap();
        let (mut lo, mut hi, mut trips) = (f64::MAX, 0.0f64, 0);
        for node in 0..30 {
            let path = m.path(node);
            let mut previous_end = 0;
            for leg in path.legs() {
                assert!((18.0..=22.0).contains(&leg.speed_mps), "{}", leg.speed_mps);
                lo = lo.min(leg.speed_mps);
                hi = hi.max(leg.speed_mps);
                let p = leg.towards;
                assert!((0.0..=1500.0).contains(&p.x) && (0.0..=300.0).contains(&p.y));
                assert_eq!(
                    leg.start_ns, previous_end,
                    "no pause: the next trip at once"
                );
                assert_eq!(leg.stop, leg.towards, "every trip gets there");
                previous_end = leg.end_ns;
                trips += 1;
            }
            assert!(previous_end > 900 * S, "the run is covered");
        }
        // The whole interval is used, not a corner of it.
        assert!(lo < 18.2 && hi > 21.8 && trips > 500, "{lo} {hi} {trips}");
    }

    #[test]
    fn a_node_rests_at_the_start_and_at_each_waypoint() {
        let rwp = RandomWaypoint {
            pause_ns: 10 * S,
            ..holland_vaidya(10.0, 3)
        };
        let m = rwp.mobility(2, 600 * S).unwrap();
        let legs = m.path(1).legs();
        assert_eq!(legs[0].start_ns, 10 * S);
        assert_eq!(legs[0].from, m.path(1).start());
        for pair in legs.windows(2) {
            assert_eq!(pair[1].start_ns, pair[0].end_ns + 10 * S);
            assert_eq!(pair[1].from, pair[0].towards);
        }
    }

    #[test]
    fn a_movement_too_long_to_hold_is_refused() {
        let tiny = RandomWaypoint {
            width_m: 1.0,
            height_m: 1.0,
            ..holland_vaidya(1000.0, 1)
        };
        assert_eq!(
            tiny.mobility(100, 3600 * S).unwrap_err(),
            TooManyLegs { until_ns: 3600 * S }
        );
    }
}
