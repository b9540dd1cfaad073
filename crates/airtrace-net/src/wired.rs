//! Wired point-to-point links between nodes of a network (an access point's Ethernet
//! to the server behind it): each direction is `airtrace-link`'s [`Direction`], the
//! model of the one-link simulator and the emulator (a rate, a propagation delay, a
//! drop-tail queue), carrying IP packets. No ARP: a point-to-point link has one
//! neighbour.

use airtrace_link::link::{Direction, Event, Sent};
use airtrace_link::loss::{LossModel, LossProcess};
use airtrace_link::queue::QueueLimit;
use rand::SeedableRng;

use crate::frame::NodeId;
use crate::ip::IpPacket;

/// One wired link's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WiredConfig {
    /// Bits per second each way.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: i64,
    /// Packets each direction's queue holds.
    pub queue_packets: usize,
}

/// A packet that came off a wire, or was refused by a full queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireEvent {
    /// `packet` arrived at `node` from `from`.
    Arrived {
        /// When, ns.
        at_ns: i64,
        /// The receiving node.
        node: NodeId,
        /// The sending node.
        from: NodeId,
        /// The packet.
        packet: IpPacket,
    },
    /// `node`'s queue towards its neighbour was full.
    QueueFull {
        /// When, ns.
        at_ns: i64,
        /// The sending node.
        node: NodeId,
        /// The packet.
        packet: IpPacket,
    },
}

/// One direction: from `from` to `to`.
#[derive(Debug)]
struct Wire {
    from: NodeId,
    to: NodeId,
    direction: Direction<IpPacket>,
}

/// The wired links of a network.
#[derive(Debug, Default)]
pub struct WiredLinks {
    wires: Vec<Wire>,
    events: Vec<Event<IpPacket>>,
}

impl WiredLinks {
    /// Adds a link between `a` and `b`.
    pub fn connect(&mut self, a: NodeId, b: NodeId, cfg: WiredConfig) {
        for (from, to) in [(a, b), (b, a)] {
            // A lossless wire draws nothing from its stream.
            let loss = LossProcess::new(LossModel::None, rand_chacha::ChaCha8Rng::seed_from_u64(0))
                .expect("no loss is a valid loss model");
            let direction = Direction::new(
                Some(cfg.rate_bps),
                cfg.delay_ns,
                QueueLimit::Packets(cfg.queue_packets),
                loss,
            );
            self.wires.push(Wire {
                from,
                to,
                direction,
            });
        }
    }

    /// True when a wire runs from `from` to `to`.
    pub fn connects(&self, from: NodeId, to: NodeId) -> bool {
        self.wire(from, to).is_some()
    }

    fn wire(&self, from: NodeId, to: NodeId) -> Option<usize> {
        self.wires.iter().position(|w| w.from == from && w.to == to)
    }

    /// `from` sends `packet` down its wire to `to` (which [`WiredLinks::connects`]);
    /// false when the queue was full and refused it.
    pub fn send(&mut self, now: i64, from: NodeId, to: NodeId, packet: IpPacket) -> bool {
        let i = self.wire(from, to).expect("a wire between the two nodes");
        matches!(
            self.wires[i]
                .direction
                .send(now, packet, packet.len as usize),
            Sent::Queued
        )
    }

    /// When a wire next has something to hand out.
    pub fn next_deadline(&self) -> Option<i64> {
        self.wires
            .iter()
            .filter_map(|w| w.direction.next_deadline())
            .min()
    }

    /// Appends what the wires did up to `now` to `out`, wire by wire.
    pub fn poll_into(&mut self, now: i64, out: &mut Vec<WireEvent>) {
        for w in &mut self.wires {
            w.direction.poll_into(now, &mut self.events);
            for e in self.events.drain(..) {
                out.push(match e {
                    Event::Delivered { at_ns, item, .. } => WireEvent::Arrived {
                        at_ns,
                        node: w.to,
                        from: w.from,
                        packet: item,
                    },
                    // Lossless, drop-tail: refusals come back from `send`.
                    Event::Lost { at_ns, item, .. } | Event::Dropped { at_ns, item, .. } => {
                        WireEvent::QueueFull {
                            at_ns,
                            node: w.from,
                            packet: item,
                        }
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(user: u64, len: u32) -> IpPacket {
        IpPacket {
            src: 0,
            dst: 1,
            ttl: 64,
            len,
            user,
            dsr: None,
            mip: None,
            frag: None,
        }
    }

    #[test]
    fn a_wire_serialises_delays_and_drops_at_a_full_queue() {
        let mut links = WiredLinks::default();
        let cfg = WiredConfig {
            rate_bps: 8_000_000,
            delay_ns: 100_000,
            queue_packets: 1,
        };
        links.connect(0, 1, cfg);
        assert!(links.connects(1, 0) && !links.connects(0, 2));
        assert!(links.send(0, 0, 1, packet(1, 1000)));
        assert!(links.send(0, 0, 1, packet(2, 1000)), "queued");
        assert!(!links.send(0, 0, 1, packet(3, 1000)), "the queue is full");
        // 1000 B at 8 Mbit/s: 1 ms each (the transmitter frees at 1 ms), then 0.1 ms
        // on the wire.
        assert_eq!(links.next_deadline(), Some(1_000_000));
        let mut out = Vec::new();
        links.poll_into(2_100_000, &mut out);
        let at: Vec<_> = out
            .iter()
            .map(|e| match e {
                WireEvent::Arrived {
                    at_ns,
                    node: 1,
                    from: 0,
                    ..
                } => *at_ns,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(at, [1_100_000, 2_100_000]);
    }
}
