//! How many hops apart two nodes are as the nodes move: the shortest path over the
//! links a quiet channel decodes both ways, sampled in time. Holland & Vaidya measure
//! TCP over a moving network against the "expected throughput" this gives: the chain
//! throughput of the current hop count, weighted by the time spent at it.

use std::collections::{BTreeMap, VecDeque};

use crate::frame::NodeId;
use crate::mobility::Mobility;
use crate::radio::Position;

/// Time spent at each shortest-path hop count between `from` and `to` over
/// `[0, end_ns)`, sampled every `step_ns` (each sample stands for the step that starts
/// at it): `Some(h)` h hops, `None` no path. `linked(a, b)` says whether nodes at
/// positions `a` and `b` decode each other's frames.
pub fn hops_over_time(
    mobility: &Mobility,
    linked: impl Fn(Position, Position) -> bool,
    (from, to): (NodeId, NodeId),
    end_ns: i64,
    step_ns: i64,
) -> BTreeMap<Option<u32>, i64> {
    let n = mobility.nodes();
    let mut spent = BTreeMap::new();
    let mut places = vec![Position { x: 0.0, y: 0.0 }; n];
    let mut hops = vec![u32::MAX; n];
    let mut queue = VecDeque::with_capacity(n);
    let step_ns = step_ns.max(1);
    let mut t = 0;
    while t < end_ns {
        for (i, p) in places.iter_mut().enumerate() {
            *p = mobility.path(i).position(t);
        }
        hops.fill(u32::MAX);
        queue.clear();
        hops[from as usize] = 0;
        queue.push_back(from as usize);
        while let Some(a) = queue.pop_front() {
            if a == to as usize {
                break;
            }
            for b in 0..n {
                if hops[b] == u32::MAX && linked(places[a], places[b]) {
                    hops[b] = hops[a] + 1;
                    queue.push_back(b);
                }
            }
        }
        let h = hops[to as usize];
        let span = step_ns.min(end_ns - t);
        *spent.entry((h != u32::MAX).then_some(h)).or_insert(0) += span;
        t += step_ns;
    }
    spent
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mobility::Path;

    /// Node 1 walks away from node 0 along a line of relays 200 m apart: 1 hop, then
    /// 2, then no path once it passes the last relay's reach.
    #[test]
    fn the_hop_count_follows_a_walk_along_a_line_of_relays() {
        let mut walker = Path::new(Position { x: 100.0, y: 0.0 });
        walker.set_destination(0, Position { x: 1000.0, y: 0.0 }, 10.0);
        let relay = Path::new(Position { x: 200.0, y: 0.0 });
        let mobility = Mobility::new(vec![Path::new(Position { x: 0.0, y: 0.0 }), walker, relay]);
        let linked = |a: Position, b: Position| a.dist2(b) <= 250.0 * 250.0;
        let s = 1_000_000_000;
        let spent = hops_over_time(&mobility, linked, (0, 1), 100 * s, s / 10);
        // In reach of node 0 until x = 250 (15 s), of the relay until x = 450 (35 s).
        assert_eq!(spent.get(&Some(1)), Some(&(15 * s + s / 10)));
        assert_eq!(spent.get(&Some(2)), Some(&(20 * s)));
        assert_eq!(spent.get(&None), Some(&(65 * s - s / 10)));
    }
}
