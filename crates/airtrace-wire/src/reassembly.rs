//! IPv4 fragment reassembly (RFC 791 section 3.2, "Fragmentation and Reassembly";
//! RFC 815 for the hole bookkeeping idea), for captures: bounded memory, expiry by
//! capture time, and tolerant of snap-length-truncated fragments.
//!
//! [`decode`](crate::decode) reports a fragment's IP fields and, for the first fragment,
//! the transport header as far as that fragment goes (with a segment length from the
//! fragment's own IP length). Feed every decoded frame to [`Reassembler::push`]: when a
//! datagram's last missing fragment arrives, `push` decodes the transport header of the
//! whole datagram into the same [`Decoded`] (with `ip.reassembled` set), and
//! [`Reassembler::datagram`] holds the captured bytes it was decoded from.
//!
//! Completion is judged by the fragments' IP lengths, not by the captured bytes, so a
//! header-only capture still completes its datagrams: the transport header then comes
//! from the captured prefix of the datagram (normally the first fragment), and payload
//! lengths from the IP lengths.
//!
//! etherparse's `defrag` module was considered: its `IpDefragPool` is unbounded (its
//! own documentation warns about memory exhaustion) and its `IpDefragBuf` needs every
//! fragment's bytes in full, which snap-length-truncated captures do not have.
//!
//! IPv6 fragments (RFC 8200 section 4.5) are not reassembled: `push` passes them by.

use std::net::{IpAddr, Ipv4Addr};
use std::ops::Range;

use crate::decoder::decode_payload;
use crate::packet::{Decoded, Ip, Transport};

/// Fragments of one datagram are told apart by these (RFC 791 section 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    protocol: u8,
    id: u32,
}

/// A datagram waiting for fragments.
#[derive(Debug)]
struct Pending {
    key: Key,
    /// Capture time of the latest fragment.
    last_ns: i64,
    /// Byte ranges of the datagram's payload covered by fragments, by their IP lengths
    /// (sorted, merged).
    have: Vec<Range<u32>>,
    /// Captured byte ranges (sorted, merged); `data` holds them at their offsets.
    captured: Vec<Range<u32>>,
    data: Vec<u8>,
    /// Payload length of the whole datagram, once the last fragment (MF clear) is seen.
    total: Option<u32>,
    /// The first fragment's IP header.
    first: Option<Ip>,
}

/// What [`Reassembler::push`] did with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Push {
    /// Not an IPv4 fragment (or already reassembled): nothing to do.
    NotFragment,
    /// Stored; the datagram still misses fragments.
    Held,
    /// This fragment completed its datagram: the `Decoded` now describes the whole
    /// datagram, and [`Reassembler::datagram`] holds its captured bytes.
    Complete,
    /// The fragment contradicts its datagram (overlapping ends, longer than 65535
    /// bytes, unaligned, too many pieces); the datagram was dropped.
    Dropped,
}

/// Reassembles IPv4 datagrams from decoded fragments, holding at most `max_pending`
/// incomplete datagrams (the oldest is dropped to make room) of at most 65535 bytes,
/// each forgotten once no fragment of it was seen for `timeout_ns`.
#[derive(Debug)]
pub struct Reassembler {
    max_pending: usize,
    timeout_ns: i64,
    pending: Vec<Pending>,
    datagram: Vec<u8>,
}

/// Largest IPv4 datagram payload: the 16-bit total length less a 20-byte header is the
/// real bound, but fragment offsets can address up to 65535 bytes.
const MAX_DATAGRAM: u32 = 65535;
/// A datagram arriving in more disjoint pieces than this is dropped (a real one has a
/// few: fragments arrive in order or nearly so, and adjacent pieces merge).
const MAX_PIECES: usize = 64;

impl Default for Reassembler {
    /// 64 pending datagrams, 30 s timeout (Linux's default `ipfrag_time`).
    fn default() -> Self {
        Reassembler::new(64, 30_000_000_000)
    }
}

impl Reassembler {
    /// A reassembler holding at most `max_pending` incomplete datagrams (at least 1),
    /// each for at most `timeout_ns` nanoseconds after its latest fragment.
    pub fn new(max_pending: usize, timeout_ns: i64) -> Self {
        Reassembler {
            max_pending: max_pending.max(1),
            timeout_ns,
            pending: Vec::new(),
            datagram: Vec::new(),
        }
    }

    /// Number of incomplete datagrams held.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The captured bytes of the last datagram completed by [`push`](Self::push): its
    /// IP payload from offset 0, as far as the captured fragments reach contiguously.
    /// `Decoded::payload` indexes into this after a [`Push::Complete`].
    pub fn datagram(&self) -> &[u8] {
        &self.datagram
    }

    /// Offer a decoded frame captured at `now_ns` (`out` as filled by
    /// [`decode`](crate::decode) from `frame`). On [`Push::Complete`], `out` is
    /// rewritten to describe the whole datagram.
    pub fn push(&mut self, now_ns: i64, frame: &[u8], out: &mut Decoded) -> Push {
        let Some(ip) = out.ip else {
            return Push::NotFragment;
        };
        let (IpAddr::V4(src), IpAddr::V4(dst)) = (ip.src, ip.dst) else {
            return Push::NotFragment;
        };
        if !ip.is_fragment() || ip.reassembled {
            return Push::NotFragment;
        }
        self.pending
            .retain(|p| now_ns.saturating_sub(p.last_ns) <= self.timeout_ns);
        let key = Key {
            src,
            dst,
            protocol: ip.protocol,
            id: ip.id,
        };
        let at = match self.pending.iter().position(|p| p.key == key) {
            Some(at) => at,
            None => {
                if self.pending.len() == self.max_pending {
                    let oldest = (0..self.pending.len()).min_by_key(|&i| self.pending[i].last_ns);
                    if let Some(oldest) = oldest {
                        self.pending.swap_remove(oldest);
                    }
                }
                self.pending.push(Pending {
                    key,
                    last_ns: now_ns,
                    have: Vec::new(),
                    captured: Vec::new(),
                    data: Vec::new(),
                    total: None,
                    first: None,
                });
                self.pending.len() - 1
            }
        };
        let bytes = frame.get(out.ip_payload.clone()).unwrap_or_default();
        if !self.pending[at].add(now_ns, &ip, bytes) {
            self.pending.swap_remove(at);
            return Push::Dropped;
        }
        let p = &self.pending[at];
        let (Some(total), Some(first)) = (p.total, p.first) else {
            return Push::Held;
        };
        if p.have.first() != Some(&(0..total)) {
            return Push::Held;
        }
        let p = self.pending.swap_remove(at);
        let prefix = p
            .captured
            .first()
            .filter(|r| r.start == 0)
            .map_or(0, |r| r.end as usize);
        self.datagram = p.data;
        self.datagram.truncate(prefix);
        *out = Decoded {
            radiotap: out.radiotap,
            wlan: out.wlan,
            tunnel_depth: out.tunnel_depth,
            ip: Some(Ip {
                total_len: u32::from(first.header_len) + total,
                payload_len: total,
                more_fragments: false,
                fragment_offset: 0,
                reassembled: true,
                ..first
            }),
            transport: Transport::None,
            ip_payload: 0..self.datagram.len(),
            ..Decoded::default()
        };
        decode_payload(first.protocol, &self.datagram, total as usize, out);
        Push::Complete
    }
}

impl Pending {
    /// Record fragment `ip` with captured data `bytes`; false if it contradicts the
    /// datagram so far.
    fn add(&mut self, now_ns: i64, ip: &Ip, bytes: &[u8]) -> bool {
        self.last_ns = now_ns;
        let start = ip.fragment_offset;
        let end = start + ip.payload_len;
        // RFC 791: every fragment but the last carries a multiple of 8 bytes.
        if end > MAX_DATAGRAM || (ip.more_fragments && ip.payload_len & 7 != 0) {
            return false;
        }
        if !ip.more_fragments {
            if self.total.is_some_and(|t| t != end) {
                return false;
            }
            self.total = Some(end);
        }
        if self.total.is_some_and(|t| end > t)
            || self
                .have
                .last()
                .is_some_and(|r| self.total.is_some_and(|t| r.end > t))
        {
            return false;
        }
        if start == 0 {
            self.first = Some(*ip);
        }
        add_range(&mut self.have, start..end);
        let n = bytes.len().min(ip.payload_len as usize);
        if n > 0 {
            let (s, e) = (start as usize, start as usize + n);
            if self.data.len() < e {
                self.data.resize(e, 0);
            }
            self.data[s..e].copy_from_slice(&bytes[..n]);
            add_range(&mut self.captured, start..start + n as u32);
        }
        self.have.len() <= MAX_PIECES && self.captured.len() <= MAX_PIECES
    }
}

/// Insert `r` into the sorted, disjoint `ranges`, merging what it overlaps or touches.
fn add_range(ranges: &mut Vec<Range<u32>>, r: Range<u32>) {
    if r.is_empty() {
        return;
    }
    let mut merged = r;
    ranges.retain(|x| {
        if x.end < merged.start || x.start > merged.end {
            return true;
        }
        merged = merged.start.min(x.start)..merged.end.max(x.end);
        false
    });
    let at = ranges.partition_point(|x| x.start < merged.start);
    ranges.insert(at, merged);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use crate::{decode, LinkType};

    const SECOND: i64 = 1_000_000_000;

    /// Cut an IPv4 datagram (no options) into fragments of `size` payload bytes (a
    /// multiple of 8), as RFC 791 section 3.2 describes: same ID, offsets in 8-octet
    /// units, MF on all but the last.
    fn fragments(datagram: &[u8], size: usize) -> Vec<Vec<u8>> {
        let payload = &datagram[20..];
        payload
            .chunks(size)
            .enumerate()
            .map(|(i, chunk)| {
                let mut h = datagram[..20].to_vec();
                h[2..4].copy_from_slice(&((20 + chunk.len()) as u16).to_be_bytes());
                let more = (i + 1) * size < payload.len();
                let field = ((i * size / 8) as u16) | if more { 0x2000 } else { 0 };
                h[6..8].copy_from_slice(&field.to_be_bytes());
                cat(&[&h, chunk])
            })
            .collect()
    }

    /// Push `frames` (raw IPv4) at one-second steps; the result of each push.
    fn push_all(r: &mut Reassembler, frames: &[Vec<u8>], snap: usize) -> (Vec<Push>, Decoded) {
        let mut d = Decoded::default();
        let results = frames
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let cut = &f[..snap.min(f.len())];
                decode(LinkType::IPV4, cut, f.len() as u32, &mut d);
                r.push(i as i64 * SECOND, cut, &mut d)
            })
            .collect();
        (results, d)
    }

    /// An 8 KB NFS-style UDP datagram.
    fn big_udp() -> Vec<u8> {
        let payload: Vec<u8> = (0..8192u32).map(|i| i as u8).collect();
        ipv4(17, &udp(800, 2049, &payload))
    }

    #[test]
    fn in_order_fragments_complete_the_datagram() {
        let mut r = Reassembler::default();
        let (results, d) = push_all(&mut r, &fragments(&big_udp(), 1480), usize::MAX);
        assert_eq!(results[..5], [Push::Held; 5]);
        assert_eq!(results[5], Push::Complete);
        let ip = d.ip.unwrap();
        assert!(ip.reassembled && !ip.is_fragment());
        assert_eq!((ip.payload_len, ip.total_len), (8200, 8220));
        let u = *d.udp().unwrap();
        assert_eq!((u.src_port, u.dst_port, u.payload_len), (800, 2049, 8192));
        assert_eq!(d.payload, 8..8200);
        assert_eq!(r.datagram()[d.payload.clone()][..4], [0, 1, 2, 3]);
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn out_of_order_and_duplicate_fragments() {
        let mut frags = fragments(&big_udp(), 1024);
        frags.reverse();
        frags.insert(3, frags[2].clone());
        let mut r = Reassembler::default();
        let (results, d) = push_all(&mut r, &frags, usize::MAX);
        assert_eq!(results.last(), Some(&Push::Complete));
        assert_eq!(results.iter().filter(|&&p| p == Push::Complete).count(), 1);
        assert_eq!(d.udp().unwrap().payload_len, 8192);
        assert_eq!(r.datagram().len(), 8200);
    }

    #[test]
    fn header_only_capture_still_completes() {
        // snap length 68 on raw IP: each fragment keeps 48 bytes of its data.
        let datagram = ipv4(6, &tcp(&[1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 6], &[0; 4000]));
        let mut r = Reassembler::default();
        let (results, d) = push_all(&mut r, &fragments(&datagram, 1480), 68);
        assert_eq!(results.last(), Some(&Push::Complete));
        let t = *d.tcp().unwrap();
        assert_eq!(
            (t.payload_len, t.timestamps, t.dst_port),
            (4000, Some((5, 6)), 80)
        );
        assert_eq!(d.stop, None);
        assert_eq!(r.datagram().len(), 48);
        assert_eq!(d.payload, 32..48);
    }

    #[test]
    fn unfragmented_and_ipv6_packets_pass_by() {
        let mut r = Reassembler::default();
        let (results, _) = push_all(&mut r, &[ipv4_tcp(10), ipv6(6, &tcp(&[], &[]))], usize::MAX);
        assert_eq!(results, [Push::NotFragment; 2]);
        let mut d = Decoded::default();
        assert_eq!(r.push(0, &[], &mut d), Push::NotFragment);
    }

    #[test]
    fn expiry_and_the_pending_limit() {
        let mut r = Reassembler::new(2, 5 * SECOND);
        let mut d = Decoded::default();
        let mut first_of = |id: u8, at: i64, r: &mut Reassembler| {
            let mut f = fragments(&big_udp(), 1480).remove(0);
            f[5] = id;
            decode(LinkType::IPV4, &f, f.len() as u32, &mut d);
            r.push(at, &f, &mut d)
        };
        assert_eq!(first_of(1, 0, &mut r), Push::Held);
        assert_eq!(first_of(2, SECOND, &mut r), Push::Held);
        assert_eq!(first_of(3, 2 * SECOND, &mut r), Push::Held);
        assert_eq!(r.pending(), 2, "the oldest made room");
        assert_eq!(first_of(4, 20 * SECOND, &mut r), Push::Held);
        assert_eq!(r.pending(), 1, "the others expired");
    }

    #[test]
    fn contradicting_fragments_drop_the_datagram() {
        let frags = fragments(&big_udp(), 1480);
        let mut r = Reassembler::default();
        let mut d = Decoded::default();
        let mut push = |f: &[u8], r: &mut Reassembler| {
            decode(LinkType::IPV4, f, f.len() as u32, &mut d);
            r.push(0, f, &mut d)
        };
        assert_eq!(push(&frags[5], &mut r), Push::Held);
        // A second "last" fragment ending elsewhere.
        let mut other_end = frags[5].clone();
        other_end[7] -= 1;
        assert_eq!(push(&other_end, &mut r), Push::Dropped);
        assert_eq!(r.pending(), 0);
        // A middle fragment whose length is not a multiple of 8.
        let mut odd = frags[1].clone();
        odd.pop();
        odd[3] -= 1;
        assert_eq!(push(&odd, &mut r), Push::Dropped);
    }

    #[test]
    fn add_range_merges() {
        let mut v = Vec::new();
        for r in [10..20, 30..40, 0..5, 20..30, 5..6, 50..50] {
            add_range(&mut v, r);
        }
        assert_eq!(v, [0..6, 10..40]);
    }
}
