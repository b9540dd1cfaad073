//! What the radios of a [`Network`](crate::Network) saw, with what each data frame
//! carried: the material of air captures at its nodes.
//!
//! A data frame on the channel carries only a token ([`Payload`](crate::Payload)); for
//! an IPv4 packet it is the key of the packet's hop in the network, valid until the
//! sending MAC is done with the hop. [`AirLog`] turns each [`AirRecord`] into an
//! [`AirFrame`] while that key is still valid (right after every poll of the channel),
//! and says when the network holds no hop of a packet any more
//! ([`Network::drain_air`](crate::Network::drain_air)'s `released`), after which no
//! frame of it can appear: the layer above keeps a packet's contents until then, since
//! a frame can be sent again, or heard by a farther radio, after its packet reached its
//! destination.
//!
//! Off unless [`Network::enable_air`](crate::Network::enable_air) is called; a
//! network without it does none of this work.

use rustc_hash::FxHashMap;

use crate::frame::{NodeId, ETHERTYPE_ARP, ETHERTYPE_BEACON, ETHERTYPE_IPV4};
use crate::network::{arp_fields, IpPacket};
use crate::wireless::AirRecord;

/// What a data frame carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carried {
    /// Nothing: a control frame (RTS, CTS, ACK).
    Nothing,
    /// An IPv4 packet, with the TTL it has on this hop.
    Ip(IpPacket),
    /// An ARP packet (RFC 826).
    Arp {
        /// Operation: 1 request, 2 reply.
        op: u16,
        /// The node asking (request) or answering (reply).
        sender: NodeId,
        /// The node asked for (request) or answered (reply).
        target: NodeId,
    },
    /// An access point's beacon (a management frame; the sender is the access point).
    Beacon {
        /// The beacon interval, TU (1.024 ms).
        interval_tu: u16,
    },
}

/// A frame as one radio saw it, with what it carried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AirFrame {
    /// The radio's record.
    pub record: AirRecord,
    /// What the frame carried.
    pub carried: Carried,
}

/// The network's air records under way (see the [module documentation](self)).
#[derive(Debug, Default)]
pub(crate) struct AirLog {
    /// Hops in the network per packet (by [`IpPacket::user`]), plus one while the
    /// packet is being routed.
    live: FxHashMap<u64, u32>,
    /// Records taken from the channel, not resolved yet.
    records: Vec<AirRecord>,
    frames: Vec<AirFrame>,
    released: Vec<u64>,
}

impl AirLog {
    /// One more hop (or routing step) of packet `user`.
    pub(crate) fn hold(&mut self, user: u64) {
        *self.live.entry(user).or_default() += 1;
    }

    /// One hop (or routing step) of packet `user` fewer; at none, it is released.
    pub(crate) fn let_go(&mut self, user: u64) {
        let Some(n) = self.live.get_mut(&user) else {
            debug_assert!(false, "a hop let go of that was never held");
            return;
        };
        *n -= 1;
        if *n == 0 {
            self.live.remove(&user);
            self.released.push(user);
        }
    }

    /// The buffer the channel's records go to before [`AirLog::resolve`].
    pub(crate) fn records(&mut self) -> &mut Vec<AirRecord> {
        &mut self.records
    }

    /// Resolves the records taken so far; `hop` looks up a data frame's IPv4 token.
    pub(crate) fn resolve(&mut self, hop: impl Fn(u64) -> Option<IpPacket>) {
        for record in self.records.drain(..) {
            let carried = match record.frame.payload {
                None => Carried::Nothing,
                Some(p) if p.ethertype == ETHERTYPE_ARP => {
                    let (op, sender, target) = arp_fields(p.token);
                    Carried::Arp { op, sender, target }
                }
                Some(p) if p.ethertype == ETHERTYPE_BEACON => Carried::Beacon {
                    interval_tu: p.token as u16,
                },
                Some(p) => {
                    debug_assert_eq!(p.ethertype, ETHERTYPE_IPV4);
                    let Some(packet) = hop(p.token) else {
                        debug_assert!(false, "a frame's packet outlives its hop");
                        continue;
                    };
                    Carried::Ip(packet)
                }
            };
            self.frames.push(AirFrame { record, carried });
        }
    }

    /// Moves the resolved frames to `frames` and the released packets to `released`.
    pub(crate) fn drain(&mut self, frames: &mut Vec<AirFrame>, released: &mut Vec<u64>) {
        frames.append(&mut self.frames);
        released.append(&mut self.released);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_released_when_its_last_hop_ends() {
        let mut log = AirLog::default();
        log.hold(7); // routing at the source
        log.hold(7); // hop 1
        log.let_go(7); // routing done
        log.hold(7); // hop 2, forwarded before hop 1's ACK
        log.let_go(7); // hop 1 acknowledged
        let (mut frames, mut released) = (Vec::new(), Vec::new());
        log.drain(&mut frames, &mut released);
        assert!(released.is_empty());
        log.let_go(7); // hop 2 acknowledged
        log.drain(&mut frames, &mut released);
        assert_eq!(released, [7]);
        assert!(log.live.is_empty());
    }
}
