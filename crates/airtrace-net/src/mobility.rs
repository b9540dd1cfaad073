//! Moving nodes: each node's movement as a piecewise-linear path, and where it is at any
//! time, computed when asked (no event per step of movement).
//!
//! A [`Path`] is a start place and a list of [`Leg`]s in time order. A leg starts at a
//! time and a place, heads in a straight line towards a destination at a constant
//! speed, and ends when it gets there or when the next leg starts, whichever comes
//! first; between the end of one leg and the start of the next the node rests where
//! the leg ended. This is ns-2's `MobileNode::set_destination` (common/mobilenode.cc):
//! a `setdest` replaces the leg under way, starting from where the node is then, and
//! the node stops at its destination ([`Path::set_destination`]).
//!
//! Two sources of paths:
//!
//! - [`random_waypoint`]: the random waypoint model (Johnson & Maltz, "Dynamic Source
//!   Routing in Ad Hoc Wireless Networks", 1996; Broch et al., "A Performance Comparison
//!   of Multi-Hop Wireless Ad Hoc Network Routing Protocols", MobiCom 1998), with
//!   Holland & Vaidya's per-trip speeds (MobiCom 1999) and movement patterns that keep
//!   their waypoints at every mean speed.
//! - [`setdest`]: ns-2 movement files (`setdest`'s output), read as ns-2 reads them.
//!
//! [`Mobility`] holds every node's path and answers [`Mobility::position`] in O(1)
//! amortised time when time only moves forward (a cursor per node; a binary search
//! when it goes back).
//!
//! ```
//! use airtrace_net::mobility::{Mobility, Path};
//! use airtrace_net::Position;
//!
//! const S: i64 = 1_000_000_000;
//! let mut path = Path::new(Position { x: 0.0, y: 0.0 });
//! path.set_destination(10 * S, Position { x: 100.0, y: 0.0 }, 5.0); // 20 s at 5 m/s
//! let mut mobility = Mobility::new(vec![path]);
//! assert_eq!(mobility.position(0, 5 * S).x, 0.0); // not moving yet
//! assert_eq!(mobility.position(0, 20 * S).x, 50.0); // halfway
//! assert_eq!(mobility.position(0, 99 * S).x, 100.0); // arrived, resting
//! ```

pub mod random_waypoint;
pub mod setdest;

use crate::radio::Position;

/// The fastest a node may move, m/s: far above any vehicle a MANET study models, low
/// enough that a trip's time in ns stays meaningful.
pub const MAX_SPEED_MPS: f64 = 1000.0;

/// The most legs a [`Mobility`] may hold over all its nodes (a bound on memory: a leg
/// is 72 bytes; Holland & Vaidya's 30 nodes over 900 s at 30 m/s need about 1,400).
pub const MAX_LEGS: usize = 1_000_000;

/// One straight stretch of a node's movement (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leg {
    /// When it starts, ns.
    pub start_ns: i64,
    /// Where the node is then.
    pub from: Position,
    /// The destination it heads for.
    pub towards: Position,
    /// Its speed, m/s (0: it stays where it is).
    pub speed_mps: f64,
    /// When it stops moving, ns: at its destination, or where the next leg took over.
    pub end_ns: i64,
    /// Where it stops (the destination unless the next leg took over first).
    pub stop: Position,
}

impl Leg {
    /// Where the node is at `t_ns` on this leg: `from` up to the start, then the straight
    /// line at the leg's speed, then `stop`.
    pub fn position(&self, t_ns: i64) -> Position {
        if t_ns >= self.end_ns {
            return self.stop;
        }
        if t_ns <= self.start_ns {
            return self.from;
        }
        let f = (t_ns - self.start_ns) as f64 / (self.end_ns - self.start_ns) as f64;
        Position {
            x: self.from.x + (self.stop.x - self.from.x) * f,
            y: self.from.y + (self.stop.y - self.from.y) * f,
        }
    }
}

/// One node's movement: where it starts, and its legs in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    start: Position,
    legs: Vec<Leg>,
}

impl Path {
    /// A node resting at `start` until told to move.
    pub fn new(start: Position) -> Self {
        Path {
            start,
            legs: Vec::new(),
        }
    }

    /// Where the node is at time 0.
    pub fn start(&self) -> Position {
        self.start
    }

    /// Its legs, in time order.
    pub fn legs(&self) -> &[Leg] {
        &self.legs
    }

    /// ns-2's `setdest`: at `t_ns` the node heads from where it is then towards `to` at
    /// `speed_mps` and stops there; a leg still under way at `t_ns` ends there. A speed
    /// of 0, or a destination where the node already is, makes it rest. `t_ns` must not
    /// be before the last leg's start (movements are given in time order).
    pub fn set_destination(&mut self, t_ns: i64, to: Position, speed_mps: f64) {
        let here = self.position(t_ns);
        if let Some(last) = self.legs.last_mut() {
            assert!(t_ns >= last.start_ns, "legs are given in time order");
            if last.end_ns > t_ns {
                last.end_ns = t_ns;
                last.stop = here;
            }
        }
        let d2 = here.dist2(to);
        let (end_ns, stop) = if speed_mps > 0.0 && d2 > 0.0 {
            // `as` saturates: a crawl that would outlast i64 ends at i64::MAX.
            let trip_ns = (d2.sqrt() / speed_mps * 1e9).round() as i64;
            (t_ns.saturating_add(trip_ns), to)
        } else {
            (t_ns, here)
        };
        self.legs.push(Leg {
            start_ns: t_ns,
            from: here,
            towards: to,
            speed_mps,
            end_ns,
            stop,
        });
    }

    /// Where the node is at `t_ns` (binary search over the legs; see
    /// [`Mobility::position`] for the amortised O(1) way).
    pub fn position(&self, t_ns: i64) -> Position {
        self.position_after(self.legs.partition_point(|l| l.start_ns <= t_ns), t_ns)
    }

    /// Where the node is at `t_ns`, given that `started` legs have started by then.
    fn position_after(&self, started: usize, t_ns: i64) -> Position {
        match started {
            0 => self.start,
            k => self.legs[k - 1].position(t_ns),
        }
    }
}

/// Every node's path, and a cursor per node for positions asked in time order (see the
/// [module documentation](self)).
#[derive(Debug, Clone)]
pub struct Mobility {
    paths: Vec<Path>,
    /// Per node: how many of its legs had started at the last time asked.
    cursors: Vec<usize>,
}

impl Mobility {
    /// The movement of nodes `0 … paths.len() - 1`, node `i` along `paths[i]`.
    pub fn new(paths: Vec<Path>) -> Self {
        let cursors = vec![0; paths.len()];
        Mobility { paths, cursors }
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.paths.len()
    }

    /// Node `node`'s path.
    pub fn path(&self, node: usize) -> &Path {
        &self.paths[node]
    }

    /// Where `node` is at `t_ns`: O(1) amortised while the times asked for a node do not
    /// go back, O(log legs) when they do.
    pub fn position(&mut self, node: usize, t_ns: i64) -> Position {
        let path = &self.paths[node];
        let cursor = &mut self.cursors[node];
        let legs = &path.legs;
        if *cursor > 0 && legs[*cursor - 1].start_ns > t_ns {
            *cursor = legs.partition_point(|l| l.start_ns <= t_ns);
        } else {
            while *cursor < legs.len() && legs[*cursor].start_ns <= t_ns {
                *cursor += 1;
            }
        }
        path.position_after(*cursor, t_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn at(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    /// Straight-line interpolation written out: `from` plus the unit vector towards
    /// `to` times the distance covered at `speed` after `dt_s` seconds.
    fn straight_line(from: Position, to: Position, speed: f64, dt_s: f64) -> Position {
        let d = from.dist2(to).sqrt();
        let covered = (speed * dt_s).min(d);
        at(
            from.x + (to.x - from.x) / d * covered,
            from.y + (to.y - from.y) / d * covered,
        )
    }

    #[test]
    fn position_on_demand_is_the_straight_line() {
        let (a, b, c) = (at(10.0, 20.0), at(310.0, 420.0), at(0.0, 0.0));
        let mut path = Path::new(a);
        path.set_destination(2 * S, b, 7.0); // 500 m: 71.43 s
        path.set_destination(80 * S, c, 13.0);
        let mut m = Mobility::new(vec![path.clone()]);
        let end_b = 2 * S + (500.0 / 7.0 * 1e9f64).round() as i64;
        for step in 0..2000i64 {
            let t = step * 97_531_357; // irregular, ~0.1 s apart, to 195 s
            let want = if t <= 2 * S {
                a
            } else if t < 80 * S {
                straight_line(a, b, 7.0, (t - 2 * S) as f64 / 1e9)
            } else {
                straight_line(b, c, 13.0, (t - 80 * S) as f64 / 1e9)
            };
            let got = m.position(0, t);
            assert!(got.dist2(want) < 1e-12, "t {t}: {got:?} vs {want:?}");
            assert_eq!(path.position(t), got, "binary search and cursor agree");
        }
        assert_eq!(
            m.position(0, end_b),
            b,
            "exactly at the waypoint on arrival"
        );
        assert_eq!(m.position(0, 79 * S), b, "resting there");
        // Back in time: the cursor finds its way.
        assert_eq!(m.position(0, S), a);
        assert_eq!(m.position(0, 300 * S), c);
    }

    #[test]
    fn a_new_destination_replaces_the_leg_under_way_from_where_the_node_is() {
        let mut path = Path::new(at(0.0, 0.0));
        path.set_destination(0, at(100.0, 0.0), 10.0);
        path.set_destination(4 * S, at(40.0, 30.0), 5.0); // from (40, 0): 30 m north
        let legs = path.legs();
        assert_eq!((legs[0].end_ns, legs[0].stop), (4 * S, at(40.0, 0.0)));
        assert_eq!(legs[0].towards, at(100.0, 0.0));
        assert_eq!((legs[1].from, legs[1].end_ns), (at(40.0, 0.0), 10 * S));
        assert_eq!(path.position(7 * S), at(40.0, 15.0));
        // Speed 0 stops it where it is.
        path.set_destination(8 * S, at(500.0, 500.0), 0.0);
        assert_eq!(path.position(8 * S), at(40.0, 20.0));
        assert_eq!(path.position(60 * S), at(40.0, 20.0));
    }

    #[test]
    fn before_its_first_leg_a_node_is_at_its_start() {
        let mut m = Mobility::new(vec![Path::new(at(3.0, 4.0))]);
        assert_eq!(m.position(0, 0), at(3.0, 4.0));
        assert_eq!(m.position(0, i64::MAX), at(3.0, 4.0));
        assert_eq!(m.nodes(), 1);
    }
}
