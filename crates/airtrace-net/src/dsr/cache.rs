//! A node's DSR route cache, organised as ns-2's `MobiCache` (a path cache, RFC 4728
//! §4.1): a primary bank of 30 routes the node learned from replies it received or
//! sent, and a secondary bank of 64 routes it saw in packets it forwarded. Every route
//! starts at the node itself.
//!
//! - Adding a route that extends a cached one extends it in place; one already
//!   contained in a cached route is not added again; otherwise it takes a free line,
//!   or the next line round-robin.
//! - A route to a destination is the shortest prefix ending there over both banks
//!   (the primary bank wins ties); a route found in the secondary bank and used is
//!   moved to the primary one.
//! - A broken link truncates every route using it just before the link (the whole
//!   route when the link is its first).
//!
//! With a timeout set (one of Holland & Vaidya's proposed fixes; ns-2's `MobiCache`
//! has none) a route not learned or used for that long is forgotten. With a negative
//! cache (their other one) a broken link is remembered for a while, and a route learned
//! meanwhile is kept only up to the node before that link.

use super::path::Path;
use crate::frame::NodeId;

#[derive(Debug, Clone, Copy)]
struct Line {
    path: Path,
    /// When the route was last learned or used, ns.
    fresh_ns: i64,
}

#[derive(Debug, Clone)]
struct Bank {
    lines: Vec<Line>,
    victim: usize,
}

impl Bank {
    fn new(size: usize) -> Self {
        Bank {
            lines: vec![
                Line {
                    path: Path::EMPTY,
                    fresh_ns: 0
                };
                size
            ],
            victim: 0,
        }
    }

    /// Adds `path` (ns-2's `Cache::addRoute`); returns its line.
    fn add(&mut self, path: &Path, now: i64) -> usize {
        for (i, line) in self.lines.iter_mut().enumerate() {
            let cached = line.path.as_slice();
            let common = cached
                .iter()
                .zip(path.as_slice())
                .take_while(|(a, b)| a == b)
                .count();
            if common == cached.len() && !cached.is_empty() {
                // The new route extends this one (suffix rule).
                line.path = *path;
                line.fresh_ns = now;
                return i;
            }
            if common == path.len() {
                // Already contained (prefix rule).
                line.fresh_ns = now;
                return i;
            }
        }
        let victim = match self.lines.iter().position(|l| l.path.is_empty()) {
            Some(free) => free,
            None => {
                let v = self.victim;
                self.victim = (self.victim + 1) % self.lines.len();
                v
            }
        };
        self.lines[victim] = Line {
            path: *path,
            fresh_ns: now,
        };
        victim
    }

    /// The shortest cached route to `dst` that is fresh at `now`: (line, nodes).
    fn find(&self, dst: NodeId, now: i64, timeout: Option<i64>) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (i, line) in self.lines.iter().enumerate() {
            if timeout.is_some_and(|t| now - line.fresh_ns > t) {
                continue;
            }
            if let Some(pos) = line.path.position(dst) {
                if best.is_none_or(|(_, len)| pos + 1 < len) {
                    best = Some((i, pos + 1));
                }
            }
        }
        best
    }

    fn cut_link(&mut self, from: NodeId, to: NodeId) -> bool {
        let mut cut = false;
        for line in &mut self.lines {
            if let Some(i) = line
                .path
                .as_slice()
                .windows(2)
                .position(|w| w == [from, to])
            {
                line.path.truncate(if i == 0 { 0 } else { i + 1 });
                cut = true;
            }
        }
        cut
    }
}

/// One node's route cache (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct PathCache {
    me: NodeId,
    primary: Bank,
    secondary: Bank,
    timeout_ns: Option<i64>,
    /// How long a broken link is remembered, and the links remembered with the time
    /// they are forgotten.
    negative_ns: Option<i64>,
    dead_links: Vec<(NodeId, NodeId, i64)>,
}

impl PathCache {
    /// The empty cache of node `me`, its routes expiring after `timeout_ns` and broken
    /// links remembered for `negative_ns` (`None`: never, and not at all).
    pub fn new(me: NodeId, timeout_ns: Option<i64>, negative_ns: Option<i64>) -> Self {
        PathCache {
            me,
            primary: Bank::new(30),
            secondary: Bank::new(64),
            timeout_ns,
            negative_ns,
            dead_links: Vec::new(),
        }
    }

    /// `route` cut before the first link the negative cache holds at `now`.
    fn without_dead_links(&mut self, route: &Path, now: i64) -> Path {
        self.dead_links.retain(|&(.., until)| until > now);
        let mut route = *route;
        if let Some(i) = route
            .as_slice()
            .windows(2)
            .position(|w| self.dead_links.iter().any(|&(a, b, _)| w == [a, b]))
        {
            route.truncate(i + 1);
        }
        route
    }

    /// Learns `route` (which starts here) from a reply received or sent.
    pub fn add_route(&mut self, route: &Path, now: i64) {
        let route = self.without_dead_links(route, now);
        if route.len() >= 2 && route.first() == Some(self.me) {
            self.primary.add(&route, now);
        }
    }

    /// Learns the rest of a source route this node forwards a packet on.
    pub fn notice_route_used(&mut self, route: &Path, now: i64) {
        let Some(at) = route.position(self.me) else {
            return;
        };
        if at + 1 >= route.len() {
            return;
        }
        let stub = self.without_dead_links(&Path::of(&route.as_slice()[at..]), now);
        if stub.len() >= 2 {
            self.secondary.add(&stub, now);
        }
    }

    /// Learns from a source route overheard as `transmitter_at`'s node sent it on: the
    /// rest of it when this node is on it, else this node, the transmitter and the rest
    /// (a link to the transmitter assumed, as ns-2's `pre_noticeRouteUsed` does).
    pub fn notice_overheard(&mut self, route: &Path, transmitter_at: usize, now: i64) {
        if route.contains(self.me) {
            self.notice_route_used(route, now);
            return;
        }
        let rest = route.as_slice().get(transmitter_at..).unwrap_or(&[]);
        if rest.is_empty() {
            return;
        }
        let mut stub = Path::of(&[self.me]);
        for &n in rest {
            if !stub.push(n) {
                break;
            }
        }
        let stub = self.without_dead_links(&stub, now);
        if stub.len() >= 2 {
            self.secondary.add(&stub, now);
        }
    }

    /// The shortest cached route from here to `dst`; when `for_use`, a route found
    /// among the overheard ones is promoted to the primary bank.
    pub fn find(&mut self, dst: NodeId, now: i64, for_use: bool) -> Option<Path> {
        let p = self.primary.find(dst, now, self.timeout_ns);
        let s = self.secondary.find(dst, now, self.timeout_ns);
        match (p, s) {
            (Some((i, len)), s) if s.is_none_or(|(_, l)| len <= l) => {
                let line = &mut self.primary.lines[i];
                if for_use {
                    line.fresh_ns = now;
                }
                let mut route = line.path;
                route.truncate(len);
                Some(route)
            }
            (_, Some((i, len))) => {
                let whole = self.secondary.lines[i].path;
                let mut route = whole;
                route.truncate(len);
                if for_use {
                    self.primary.add(&whole, now);
                    self.secondary.lines[i].path = Path::EMPTY;
                }
                Some(route)
            }
            _ => None,
        }
    }

    /// Forgets every route over the link `from` → `to` (and, with a negative cache,
    /// refuses new ones over it for a while from `now`); true when one used it.
    pub fn notice_dead_link(&mut self, from: NodeId, to: NodeId, now: i64) -> bool {
        if let Some(keep) = self.negative_ns {
            self.dead_links.retain(|&(a, b, _)| (a, b) != (from, to));
            self.dead_links.push((from, to, now + keep));
        }
        let a = self.primary.cut_link(from, to);
        let b = self.secondary.cut_link(from, to);
        a || b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_prefix_to_a_destination_is_returned() {
        let mut c = PathCache::new(0, None, None);
        c.add_route(&Path::of(&[0, 1, 2, 3, 4]), 0);
        c.add_route(&Path::of(&[0, 5, 4]), 0);
        assert_eq!(c.find(4, 0, true).unwrap().as_slice(), &[0, 5, 4]);
        assert_eq!(c.find(2, 0, true).unwrap().as_slice(), &[0, 1, 2]);
        assert!(c.find(9, 0, true).is_none());
    }

    #[test]
    fn a_broken_link_truncates_the_routes_over_it() {
        let mut c = PathCache::new(0, None, None);
        c.add_route(&Path::of(&[0, 1, 2, 3]), 0);
        assert!(c.notice_dead_link(2, 3, 0));
        assert!(c.find(3, 0, true).is_none());
        assert_eq!(c.find(2, 0, true).unwrap().as_slice(), &[0, 1, 2]);
        assert!(c.notice_dead_link(0, 1, 0));
        assert!(c.find(1, 0, true).is_none());
    }

    #[test]
    fn an_extending_route_replaces_its_prefix() {
        let mut c = PathCache::new(0, None, None);
        c.add_route(&Path::of(&[0, 1]), 0);
        c.add_route(&Path::of(&[0, 1, 2]), 0);
        c.add_route(&Path::of(&[0, 1]), 0);
        assert_eq!(
            c.primary
                .lines
                .iter()
                .filter(|l| !l.path.is_empty())
                .count(),
            1
        );
    }

    #[test]
    fn overheard_routes_are_promoted_when_used_and_expire_with_a_timeout() {
        let mut c = PathCache::new(2, Some(5), None);
        c.notice_route_used(&Path::of(&[0, 1, 2, 3, 4]), 0);
        assert_eq!(c.find(4, 3, true).unwrap().as_slice(), &[2, 3, 4]);
        assert!(c.secondary.find(4, 3, None).is_none());
        assert!(c.find(4, 9, true).is_none(), "6 ns after its last use");
    }

    #[test]
    fn a_negative_cache_refuses_routes_over_a_broken_link_for_a_while() {
        let mut c = PathCache::new(0, None, Some(10));
        c.notice_dead_link(2, 3, 100);
        // A stale reply still carrying the dead link: learned only up to it.
        c.add_route(&Path::of(&[0, 1, 2, 3, 4]), 105);
        assert!(c.find(4, 105, true).is_none());
        assert_eq!(c.find(2, 105, true).unwrap().as_slice(), &[0, 1, 2]);
        c.notice_route_used(&Path::of(&[5, 0, 2, 3]), 106);
        assert!(c.find(3, 106, true).is_none(), "forwarded routes too");
        // Forgotten after 10 ns.
        c.add_route(&Path::of(&[0, 1, 2, 3, 4]), 110);
        assert_eq!(c.find(4, 110, true).unwrap().as_slice(), &[0, 1, 2, 3, 4]);
        let mut plain = PathCache::new(0, None, None);
        plain.notice_dead_link(2, 3, 100);
        plain.add_route(&Path::of(&[0, 1, 2, 3, 4]), 105);
        assert!(
            plain.find(4, 105, true).is_some(),
            "without one, ns-2's cache"
        );
    }
}
