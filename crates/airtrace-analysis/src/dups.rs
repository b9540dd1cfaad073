//! Recognising packets the capture saw twice, and 802.11 MAC retries.
//!
//! A switch mirror port or capture hardware can deliver the same frame twice; an
//! 802.11 sniffer sees every link-layer retry. Both repeat a TCP segment without the
//! sender having retransmitted anything, and both fool tshark into reporting
//! retransmissions and duplicate ACKs. airtrace flags them `capture_duplicate` and
//! `mac_retry` and keeps them out of the TCP analysis.

use rustc_hash::FxHashMap;

use airtrace_wire::{Ip, Tcp, Wlan};

/// How many recent packets of a direction a new packet is compared with.
const RECENT: usize = 8;
/// Copies of a packet without an IP ID (IPv6, or IPv4 ID 0) count as duplicates
/// only this close together: otherwise identical pure ACKs would be taken for copies.
const NO_ID_WINDOW_NS: i64 = 50_000;
/// Copies with an IP ID count as duplicates up to this far apart.
const ID_WINDOW_NS: i64 = 2_000_000_000;

/// What identifies one transmission of a TCP segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Fingerprint {
    ip_id: u32,
    seq: u32,
    ack: u32,
    seglen: u32,
    flags: u16,
    window: u16,
    tsval: u32,
    /// The first SACK block, if any.
    sack: (u32, u32),
    /// The first and last eight captured payload bytes.
    payload_head: u64,
    payload_tail: u64,
}

/// The last few packets of one direction, to recognise repeats.
#[derive(Clone, Debug, Default)]
pub(crate) struct RecentPackets {
    /// Sequence number and IP ID of each remembered packet: a quick first filter.
    keys: [u64; RECENT],
    prints: [(Fingerprint, i64); RECENT],
    len: usize,
    next: usize,
}

impl RecentPackets {
    /// True if this packet repeats one of the recent packets of the same direction;
    /// otherwise remembers it.
    pub(crate) fn is_capture_duplicate(&mut self, ip: &Ip, tcp: &Tcp, payload: &[u8], ts: i64) -> bool {
        let key = (tcp.seq as u64) << 32 | ip.id as u64;
        let fp = Fingerprint {
            ip_id: ip.id,
            seq: tcp.seq,
            ack: tcp.ack,
            seglen: tcp.payload_len,
            flags: tcp.flags,
            window: tcp.window,
            tsval: tcp.timestamps.map_or(0, |t| t.0),
            sack: if tcp.sack_count > 0 { tcp.sack[0] } else { (0, 0) },
            payload_head: eight_bytes(payload.get(..8.min(payload.len())).unwrap_or(&[])),
            payload_tail: eight_bytes(payload.get(payload.len().saturating_sub(8)..).unwrap_or(&[])),
        };
        let window = if ip.id != 0 { ID_WINDOW_NS } else { NO_ID_WINDOW_NS };
        let seen = (0..self.len).any(|i| {
            self.keys[i] == key && self.prints[i].0 == fp && ts - self.prints[i].1 <= window
        });
        if !seen {
            self.keys[self.next] = key;
            self.prints[self.next] = (fp, ts);
            self.next = (self.next + 1) % RECENT;
            self.len = (self.len + 1).min(RECENT);
        }
        seen
    }
}

/// Up to eight bytes as a number (zero-padded).
fn eight_bytes(b: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(buf)
}

/// The last 802.11 sequence number seen from each transmitter.
#[derive(Debug, Default)]
pub(crate) struct MacRetries {
    last_seq: FxHashMap<[u8; 6], u16>,
}

impl MacRetries {
    /// True if this frame is a MAC-layer retry of the previous frame from the same
    /// transmitter (IEEE 802.11-2020 10.3.2.14: a retry keeps the sequence number
    /// and sets the Retry bit).
    pub(crate) fn is_retry(&mut self, wlan: &Wlan) -> bool {
        let (Some(seq), Some(tx)) = (wlan.seq, wlan.transmitter) else { return false };
        let previous = self.last_seq.insert(tx, seq);
        wlan.retry && previous == Some(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(seq: u32, ack: u32, len: u32) -> Tcp {
        Tcp { seq, ack, payload_len: len, flags: 0x10, window: 100, ..Default::default() }
    }

    #[test]
    fn same_id_same_segment_is_a_duplicate() {
        let mut r = RecentPackets::default();
        let ip = Ip { id: 77, ..Default::default() };
        assert!(!r.is_capture_duplicate(&ip, &tcp(1, 1, 10), b"0123456789", 0));
        assert!(r.is_capture_duplicate(&ip, &tcp(1, 1, 10), b"0123456789", 2_000));
    }

    #[test]
    fn a_new_ip_id_is_a_real_retransmission() {
        let mut r = RecentPackets::default();
        assert!(!r.is_capture_duplicate(&Ip { id: 77, ..Default::default() }, &tcp(1, 1, 10), b"x", 0));
        assert!(!r.is_capture_duplicate(&Ip { id: 78, ..Default::default() }, &tcp(1, 1, 10), b"x", 200_000_000));
    }

    #[test]
    fn identical_acks_without_ip_id_are_duplicates_only_when_close() {
        let mut r = RecentPackets::default();
        let ip = Ip::default();
        assert!(!r.is_capture_duplicate(&ip, &tcp(1, 5, 0), b"", 0));
        assert!(r.is_capture_duplicate(&ip, &tcp(1, 5, 0), b"", 10_000));
        assert!(!r.is_capture_duplicate(&ip, &tcp(1, 5, 0), b"", 1_000_000));
    }

    #[test]
    fn mac_retry_needs_the_retry_bit_and_the_same_sequence_number() {
        let mut m = MacRetries::default();
        let tx = Some([1, 2, 3, 4, 5, 6]);
        let w = |seq, retry| Wlan { seq: Some(seq), retry, transmitter: tx, frame_type: 2, ..Default::default() };
        assert!(!m.is_retry(&w(10, false)));
        assert!(m.is_retry(&w(10, true)));
        assert!(!m.is_retry(&w(11, true)), "a retry whose original was not captured is the first copy");
        assert!(!m.is_retry(&w(12, false)));
    }
}
