//! Static routes: at every node, the next hop towards every destination.
//!
//! Routes are either given one by one ([`Routes::set`]) or computed as shortest paths
//! in hops over the links a node can decode ([`Routes::shortest_paths`]), which is
//! what ns-2 scenarios with fixed routes and Holland & Vaidya's chain use. Ties between
//! equally short paths go to the neighbour with the lowest id, so routes are a function
//! of the topology alone.

use std::collections::VecDeque;

use crate::frame::NodeId;

/// The routing tables of all nodes (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routes {
    nodes: usize,
    /// `next[node * nodes + dst]`: the next hop from `node` towards `dst`.
    next: Vec<Option<NodeId>>,
}

impl Routes {
    /// Tables for `nodes` nodes, with no routes.
    pub fn new(nodes: usize) -> Self {
        Routes {
            nodes,
            next: vec![None; nodes * nodes],
        }
    }

    /// How many nodes the tables are for.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Sends `node`'s packets for `dst` to neighbour `via`.
    pub fn set(&mut self, node: NodeId, dst: NodeId, via: NodeId) {
        self.next[node as usize * self.nodes + dst as usize] = Some(via);
    }

    /// The next hop from `node` towards `dst` (`dst` itself for a neighbour); `None`
    /// when there is no route.
    pub fn next_hop(&self, node: NodeId, dst: NodeId) -> Option<NodeId> {
        self.next[node as usize * self.nodes + dst as usize]
    }

    /// Shortest paths in hops where `linked(a, b)` says `b` decodes `a`'s frames (and,
    /// for a route to be usable, `a` decodes `b`'s: the link must carry the 802.11 ACK
    /// back). One breadth-first search per destination: O(nodes³) link tests, fine up
    /// to a few hundred nodes.
    pub fn shortest_paths(nodes: usize, linked: impl Fn(NodeId, NodeId) -> bool) -> Self {
        let mut routes = Routes::new(nodes);
        let n = nodes as NodeId;
        let both = |a: NodeId, b: NodeId| linked(a, b) && linked(b, a);
        let mut hops = vec![u32::MAX; nodes];
        let mut queue = VecDeque::new();
        for dst in 0..n {
            hops.fill(u32::MAX);
            hops[dst as usize] = 0;
            queue.push_back(dst);
            while let Some(v) = queue.pop_front() {
                for u in 0..n {
                    if hops[u as usize] == u32::MAX && both(u, v) {
                        hops[u as usize] = hops[v as usize] + 1;
                        // Visited in id order from a node one hop nearer: the lowest-id
                        // neighbour on a shortest path is the first to claim `u`.
                        routes.set(u, dst, v);
                        queue.push_back(u);
                    }
                }
            }
        }
        routes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_routes_hop_by_hop() {
        let linked = |a: NodeId, b: NodeId| a.abs_diff(b) == 1;
        let r = Routes::shortest_paths(4, linked);
        assert_eq!(r.next_hop(0, 3), Some(1));
        assert_eq!(r.next_hop(1, 3), Some(2));
        assert_eq!(r.next_hop(3, 0), Some(2));
        assert_eq!(r.next_hop(2, 2), None);
    }

    #[test]
    fn ties_go_to_the_lowest_id_and_one_way_links_are_not_used() {
        // A square 0-1-3 and 0-2-3; 0 → 3 directly heard by 3 only.
        let linked = |a: NodeId, b: NodeId| {
            matches!(
                (a, b),
                (0, 1) | (1, 0) | (0, 2) | (2, 0) | (1, 3) | (3, 1) | (2, 3) | (3, 2) | (0, 3)
            )
        };
        let r = Routes::shortest_paths(4, linked);
        assert_eq!(r.next_hop(0, 3), Some(1));
        assert_eq!(r.next_hop(3, 0), Some(1));
    }
}
