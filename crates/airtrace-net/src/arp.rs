//! ARP (RFC 826) at one node: which neighbours' hardware addresses it knows, and the
//! packets waiting for one.
//!
//! As in 4.4BSD's `arpresolve` and ns-2's CMU `ARPTable`, a node holds **one** packet
//! per unresolved neighbour: a newer packet takes the place of the held one, which is
//! dropped. Holland & Vaidya blame this hold queue for part of TCP's losses after a
//! route change. Requests are sent only when a packet needs one (neither BSD nor ns-2
//! has a retransmission timer), at most once per `retry_interval`; after
//! `max_requests` unanswered requests the next packet gives up: it and the held packet
//! are dropped and the count starts again (ns-2's `ARP_MAX_REQUEST_COUNT` rule; BSD
//! instead marks the entry down for 20 s). Under DSR the network hands the two to DSR
//! as a failed link instead, as ns-2's `arpresolve` calls the packets' `xmit_failure_`
//! (DSR's link-layer feedback, RFC 4728 §8.3): `crate::network`. Entries never expire (ns-2; BSD keeps them
//! 20 minutes, longer than any run here). A node learns the sender of every ARP packet
//! it decodes, request or reply, as RFC 826's "merge" step does.

use crate::frame::NodeId;

/// ARP settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArpConfig {
    /// Least time between two requests for one neighbour, ns.
    pub retry_interval_ns: i64,
    /// Requests sent for a neighbour before packets for it are given up.
    pub max_requests: u32,
    /// Every node starts knowing every other (no ARP exchange at all).
    pub prefill: bool,
}

impl ArpConfig {
    /// 4.4BSD (`arpresolve`, `arp_maxtries` = 5): a request at most once a second.
    pub fn bsd() -> Self {
        ArpConfig {
            retry_interval_ns: 1_000_000_000,
            max_requests: 5,
            prefill: false,
        }
    }

    /// ns-2's CMU `ARPTable` (`arp.cc`): a request for every packet that finds the entry
    /// unresolved, at most 3.
    pub fn ns2() -> Self {
        ArpConfig {
            retry_interval_ns: 0,
            max_requests: 3,
            prefill: false,
        }
    }
}

/// What to do with a packet for a neighbour (see [`Arp::resolve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution<K> {
    /// The address is known: send the packet now.
    Send,
    /// The packet is held; `request` says whether to broadcast a request now, and
    /// `dropped` is the packet it displaced.
    Held {
        /// Broadcast an ARP request for the neighbour.
        request: bool,
        /// The older packet, dropped.
        dropped: Option<K>,
    },
    /// The neighbour never answered: this packet and `dropped` (the held one) are
    /// given up.
    GaveUp {
        /// The held packet, dropped with this one.
        dropped: Option<K>,
    },
}

#[derive(Debug, Clone, Copy)]
struct Pending<K> {
    held: Option<K>,
    requests: u32,
    last_request_ns: i64,
}

/// One node's ARP table and hold queue (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct Arp<K> {
    cfg: ArpConfig,
    /// Known neighbours, by node id.
    known: Vec<bool>,
    /// Unresolved neighbours with a packet or a request outstanding, by node id.
    pending: Vec<Option<Pending<K>>>,
}

impl<K: Copy> Arp<K> {
    /// A table for a network of `nodes` nodes: empty, or full with `prefill`.
    pub fn new(cfg: ArpConfig, nodes: usize) -> Self {
        Arp {
            cfg,
            known: vec![cfg.prefill; nodes],
            pending: vec![None; nodes],
        }
    }

    /// True when `node`'s hardware address is known.
    pub fn knows(&self, node: NodeId) -> bool {
        self.known[node as usize]
    }

    /// A packet `key` is to go to neighbour `next_hop` at `now`.
    pub fn resolve(&mut self, now: i64, next_hop: NodeId, key: K) -> Resolution<K> {
        if self.known[next_hop as usize] {
            return Resolution::Send;
        }
        let p = self.pending[next_hop as usize].get_or_insert(Pending {
            held: None,
            requests: 0,
            last_request_ns: i64::MIN,
        });
        if p.requests >= self.cfg.max_requests {
            let dropped = p.held.take();
            p.requests = 0;
            p.last_request_ns = i64::MIN;
            return Resolution::GaveUp { dropped };
        }
        let dropped = p.held.replace(key);
        let request =
            p.requests == 0 || now.saturating_sub(p.last_request_ns) >= self.cfg.retry_interval_ns;
        if request {
            p.requests += 1;
            p.last_request_ns = now;
        }
        Resolution::Held { request, dropped }
    }

    /// `node`'s address was learnt (an ARP packet from it was decoded); returns the
    /// packet held for it, to send now.
    pub fn learn(&mut self, node: NodeId) -> Option<K> {
        self.known[node as usize] = true;
        self.pending[node as usize].take().and_then(|p| p.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_one_packet_drops_the_older_and_releases_the_newest() {
        let mut arp: Arp<u32> = Arp::new(ArpConfig::bsd(), 3);
        assert_eq!(
            arp.resolve(0, 2, 10),
            Resolution::Held {
                request: true,
                dropped: None
            }
        );
        // Within the second: no new request, the older packet is dropped.
        assert_eq!(
            arp.resolve(5_000_000, 2, 11),
            Resolution::Held {
                request: false,
                dropped: Some(10)
            }
        );
        assert_eq!(arp.learn(2), Some(11));
        assert_eq!(arp.resolve(6_000_000, 2, 12), Resolution::Send);
        assert_eq!(arp.learn(1), None);
    }

    #[test]
    fn gives_up_after_the_last_request() {
        let mut arp: Arp<u32> = Arp::new(ArpConfig::ns2(), 2);
        for k in 0..3 {
            let r = arp.resolve(k, 1, k as u32);
            assert!(matches!(r, Resolution::Held { request: true, .. }), "{r:?}");
        }
        assert_eq!(
            arp.resolve(3, 1, 3),
            Resolution::GaveUp { dropped: Some(2) }
        );
        // Counting starts again.
        assert_eq!(
            arp.resolve(4, 1, 4),
            Resolution::Held {
                request: true,
                dropped: None
            }
        );
    }

    #[test]
    fn prefilled_tables_send_at_once() {
        let mut arp: Arp<u32> = Arp::new(
            ArpConfig {
                prefill: true,
                ..ArpConfig::bsd()
            },
            2,
        );
        assert_eq!(arp.resolve(0, 1, 1), Resolution::Send);
    }
}
