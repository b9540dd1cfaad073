//! IPv4 fragmentation and reassembly in a network of nodes (RFC 791 §2.3, §3.2).
//!
//! A node whose interface MTU is smaller than a datagram cuts the datagram into
//! fragments ([`split`]): each carries a piece of the payload, a multiple of 8 bytes but
//! the last, its offset in 8-byte units, the more-fragments flag on all but the last,
//! and its own 20-byte header; all carry the datagram's identification (here the
//! network's number for the datagram, [`Fragment::datagram`]). Only the destination
//! puts them together again ([`Reassembly`]): the datagram goes on when every fragment
//! has arrived; a fragment lost is the datagram lost. RFC 791 lets the receiver give up
//! on a datagram whose fragments do not all come ("the current recommendation for the
//! initial timer setting is 15 seconds"): [`REASSEMBLY_TIMEOUT_NS`].
//!
//! The table also knows what the receiver cannot: how many fragments are still on
//! their way. When the last of them is dropped before any reached the destination the
//! datagram is lost at once ([`Gone::Lost`]), so that the simulator hears of every
//! datagram's end.
//!
//! Not here: fragments of fragments (the network has one MTU, so a fragment never
//! meets a smaller one), overlapping or duplicated fragments (a fragment arriving twice
//! counts once).
//!
//! ```
//! use airtrace_net::frag::split;
//! use airtrace_net::IpPacket;
//! let whole = IpPacket { src: 0, dst: 2, ttl: 64, len: 2076, user: 1, dsr: None, mip: None, frag: None };
//! let pieces = split(whole, 1500, 9);
//! assert_eq!(pieces.iter().map(|p| p.len).collect::<Vec<_>>(), [1500, 596]);
//! ```

use std::collections::BTreeMap;

use crate::ip::IpPacket;

/// Bytes of an IPv4 header without options, repeated in every fragment.
pub const HEADER_BYTES: u32 = 20;

/// How long a destination keeps the fragments of an incomplete datagram, ns (RFC 791
/// §3.2: 15 s).
pub const REASSEMBLY_TIMEOUT_NS: i64 = 15_000_000_000;

/// What a fragment says of its place in its datagram (RFC 791 §3.1: identification,
/// flags, fragment offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// The network's number for the datagram, the same in all its fragments.
    pub datagram: u32,
    /// Where its piece starts in the datagram's payload, bytes (a multiple of 8).
    pub offset: u32,
    /// More fragments follow (MF).
    pub more: bool,
    /// Which fragment, from 0, of `count`.
    pub index: u16,
    /// How many fragments the datagram was cut into.
    pub count: u16,
    /// The whole datagram's total length, bytes.
    pub whole_len: u32,
}

/// The fragments of `whole` for an interface of `mtu` bytes (RFC 791 §3.2, "An Example
/// Fragmentation Procedure"), numbered `datagram`. A datagram that fits, or an MTU too
/// small for 8 bytes of payload, gives the datagram itself.
pub fn split(whole: IpPacket, mtu: u32, datagram: u32) -> Vec<IpPacket> {
    let per = mtu.saturating_sub(HEADER_BYTES) & !7;
    let payload = whole.len.saturating_sub(HEADER_BYTES);
    if whole.len <= mtu || per == 0 || whole.frag.is_some() {
        return vec![whole];
    }
    let count = payload.div_ceil(per);
    let Ok(count16) = u16::try_from(count) else {
        return vec![whole];
    };
    (0..count)
        .map(|i| {
            let offset = i * per;
            let piece = per.min(payload - offset);
            IpPacket {
                len: HEADER_BYTES + piece,
                frag: Some(Fragment {
                    datagram,
                    offset,
                    more: i + 1 < count,
                    index: i as u16,
                    count: count16,
                    whole_len: whole.len,
                }),
                ..whole
            }
        })
        .collect()
}

/// The whole datagram a fragment belongs to.
pub fn whole_of(fragment: IpPacket) -> IpPacket {
    match fragment.frag {
        Some(f) => IpPacket {
            len: f.whole_len,
            frag: None,
            ..fragment
        },
        None => fragment,
    }
}

/// What became of a datagram when one of its fragments reached its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// The last missing fragment: the datagram, whole, goes on.
    Complete(IpPacket),
    /// The first fragment to arrive: start the reassembly timer.
    First,
    /// Another fragment; the datagram is still incomplete.
    Waiting,
    /// The datagram is unknown here (given up already): the fragment is dropped.
    Unknown,
}

/// What became of a datagram when one of its fragments was dropped on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// Other fragments are still on their way, or some reached the destination (whose
    /// timer will end it).
    Pending,
    /// None of its fragments reached the destination and none is left: the datagram
    /// is lost.
    Lost(IpPacket),
}

#[derive(Debug, Clone)]
struct Partial {
    whole: IpPacket,
    /// Fragments neither at the destination nor dropped.
    on_the_way: u32,
    received: Vec<bool>,
    arrived: u32,
    /// A fragment was dropped: the datagram cannot be put together.
    broken: bool,
}

/// The fragmented datagrams of a network, from their cutting to their end (see the
/// [module documentation](self)).
#[derive(Debug, Default)]
pub struct Reassembly {
    partial: BTreeMap<u32, Partial>,
    next: u32,
}

impl Reassembly {
    /// Cuts `whole` for an interface of `mtu` bytes, recording its fragments as on
    /// their way; gives the datagram itself when it fits.
    pub fn fragment(&mut self, whole: IpPacket, mtu: u32) -> Vec<IpPacket> {
        let pieces = split(whole, mtu, self.next);
        if let [IpPacket { frag: Some(f), .. }, ..] = pieces.as_slice() {
            self.partial.insert(
                f.datagram,
                Partial {
                    whole,
                    on_the_way: pieces.len() as u32,
                    received: vec![false; usize::from(f.count)],
                    arrived: 0,
                    broken: false,
                },
            );
            self.next = self.next.wrapping_add(1);
        }
        pieces
    }

    /// `fragment` reached its datagram's destination; the datagram put together has
    /// the header of the fragment that completed it (its TTL).
    pub fn arrived(&mut self, fragment: IpPacket) -> Arrival {
        let Some(f) = fragment.frag else {
            return Arrival::Complete(fragment);
        };
        let Some(p) = self.partial.get_mut(&f.datagram) else {
            return Arrival::Unknown;
        };
        let Some(seen) = p.received.get_mut(usize::from(f.index)) else {
            return Arrival::Unknown;
        };
        if *seen {
            return Arrival::Waiting;
        }
        *seen = true;
        p.arrived += 1;
        p.on_the_way = p.on_the_way.saturating_sub(1);
        if p.arrived as usize == p.received.len() {
            self.partial.remove(&f.datagram);
            Arrival::Complete(whole_of(fragment))
        } else if p.arrived == 1 {
            Arrival::First
        } else {
            Arrival::Waiting
        }
    }

    /// Fragment `f` was dropped before it reached the destination.
    pub fn dropped(&mut self, f: Fragment) -> Gone {
        let Some(p) = self.partial.get_mut(&f.datagram) else {
            return Gone::Pending;
        };
        p.on_the_way = p.on_the_way.saturating_sub(1);
        p.broken = true;
        if p.on_the_way == 0 && p.arrived == 0 {
            let whole = p.whole;
            self.partial.remove(&f.datagram);
            return Gone::Lost(whole);
        }
        Gone::Pending
    }

    /// The reassembly timer of `datagram` ran out (RFC 791 §3.2): the datagram, if
    /// still incomplete, is given up.
    pub fn timed_out(&mut self, datagram: u32) -> Option<IpPacket> {
        self.partial.remove(&datagram).map(|p| p.whole)
    }

    /// True when another fragment of `f`'s datagram was dropped: `f` cannot help.
    pub fn doomed(&self, f: Fragment) -> bool {
        self.partial.get(&f.datagram).is_some_and(|p| p.broken)
    }

    /// Datagrams cut and not yet ended.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(len: u32) -> IpPacket {
        IpPacket {
            src: 0,
            dst: 2,
            ttl: 64,
            len,
            user: 5,
            dsr: None,
            mip: None,
            frag: None,
        }
    }

    fn f(p: &IpPacket) -> Fragment {
        p.frag.expect("a fragment")
    }

    // RFC 791 §3.2: offsets in 8-byte units, MF on all but the last, same id.
    #[test]
    fn a_4000_byte_datagram_is_three_fragments_of_1480_byte_pieces() {
        let pieces = split(datagram(4000), 1500, 3);
        let shape: Vec<_> = pieces
            .iter()
            .map(|p| {
                (
                    p.len,
                    f(p).offset,
                    f(p).offset / 8,
                    f(p).more,
                    f(p).datagram,
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (1500, 0, 0, true, 3),
                (1500, 1480, 185, true, 3),
                (1040, 2960, 370, false, 3)
            ]
        );
        let carried: u32 = pieces.iter().map(|p| p.len - HEADER_BYTES).sum();
        assert_eq!(carried, 4000 - HEADER_BYTES);
        assert!(pieces.iter().all(|p| whole_of(*p) == datagram(4000)));
    }

    #[test]
    fn a_datagram_of_exactly_the_mtu_is_not_cut_and_one_byte_more_is() {
        assert_eq!(split(datagram(1500), 1500, 0), [datagram(1500)]);
        let pieces = split(datagram(1501), 1500, 0);
        assert_eq!(pieces.iter().map(|p| p.len).collect::<Vec<_>>(), [1500, 21]);
    }

    #[test]
    fn an_mtu_without_room_for_eight_bytes_sends_the_datagram_whole() {
        assert_eq!(split(datagram(100), 27, 0), [datagram(100)]);
    }

    #[test]
    fn fragments_arriving_out_of_order_give_the_datagram_at_the_last() {
        let mut r = Reassembly::default();
        let pieces = r.fragment(datagram(4000), 1500);
        assert_eq!(r.arrived(pieces[2]), Arrival::First);
        assert_eq!(r.arrived(pieces[2]), Arrival::Waiting, "a duplicate");
        assert_eq!(r.arrived(pieces[0]), Arrival::Waiting);
        assert_eq!(r.arrived(pieces[1]), Arrival::Complete(datagram(4000)));
        assert_eq!(r.pending(), 0);
        assert_eq!(
            r.timed_out(f(&pieces[0]).datagram),
            None,
            "timer finds nothing"
        );
    }

    #[test]
    fn a_lost_fragment_leaves_the_rest_to_the_reassembly_timer() {
        let mut r = Reassembly::default();
        let pieces = r.fragment(datagram(2076), 1500);
        assert_eq!(r.arrived(pieces[0]), Arrival::First);
        assert!(!r.doomed(f(&pieces[1])));
        assert_eq!(r.dropped(f(&pieces[1])), Gone::Pending);
        assert!(r.doomed(f(&pieces[0])), "nothing can complete it now");
        assert_eq!(r.timed_out(f(&pieces[0]).datagram), Some(datagram(2076)));
        assert_eq!(r.arrived(pieces[1]), Arrival::Unknown, "too late");
    }

    #[test]
    fn every_fragment_dropped_on_the_way_loses_the_datagram_at_the_last_drop() {
        let mut r = Reassembly::default();
        let pieces = r.fragment(datagram(2076), 1500);
        assert_eq!(r.dropped(f(&pieces[0])), Gone::Pending);
        assert_eq!(r.dropped(f(&pieces[1])), Gone::Lost(datagram(2076)));
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn each_datagram_cut_gets_its_own_number() {
        let mut r = Reassembly::default();
        let a = r.fragment(datagram(2076), 1500);
        let small = r.fragment(datagram(500), 1500);
        let b = r.fragment(datagram(2076), 1500);
        assert_eq!(small, [datagram(500)]);
        assert_ne!(f(&a[0]).datagram, f(&b[0]).datagram);
    }
}
