//! Recognising packets the capture saw twice, and 802.11 MAC retries.
//!
//! A switch mirror port or capture hardware can deliver the same frame twice; an
//! 802.11 sniffer sees every link-layer retry. Both repeat a TCP segment without the
//! sender having retransmitted anything, and both fool tshark into reporting
//! retransmissions and duplicate ACKs. airtrace flags them `capture_duplicate` and
//! `mac_retry` and keeps them out of the TCP analysis.

use rustc_hash::FxHashMap;

use airtrace_wire::{tcp_flags, Ip, Tcp, Wlan};

/// How many recent packets of a direction a new packet is compared with.
const RECENT: usize = 8;
/// Identical pure ACKs without an IP ID (IPv6, or IPv4 ID 0) count as copies only this
/// close together: a receiver sends identical duplicate ACKs microseconds apart.
const PURE_ACK_WINDOW_NS: i64 = 50_000;
/// Copies that carry something a resent packet would change (an IP ID, a TCP
/// timestamp) count up to this far apart: the smallest retransmission timeout of common
/// stacks (Linux's 200 ms `TCP_RTO_MIN`). Capture hardware and mirror ports deliver
/// their copies within milliseconds (5 ms in tcptrace's hardware_dups); a server that
/// resends a FIN with its old IP ID does so after an RTO (0.31 s and more, issue 18).
const MARKED_WINDOW_NS: i64 = 200_000_000;

/// How far apart two identical packets may be and still be one packet captured twice
/// (issue 18, class 2). `marked`: the packet carries an IP ID or a TCP timestamp.
/// Unmarked data counts as copied within half the connection's round-trip time
/// (`rtt_ns`, the handshake's, the whole path's at any capture point): a sender cannot
/// resend before it could learn of a loss; router and span-port copies come 30–117 µs
/// apart. Without a known RTT, or for pure ACKs, 50 µs.
fn copy_window(marked: bool, pure_ack: bool, rtt_ns: Option<i64>) -> i64 {
    match rtt_ns {
        _ if pure_ack && !marked => PURE_ACK_WINDOW_NS,
        _ if marked => MARKED_WINDOW_NS,
        Some(rtt) => (rtt / 2).clamp(PURE_ACK_WINDOW_NS, MARKED_WINDOW_NS),
        None => PURE_ACK_WINDOW_NS,
    }
}

/// The last few packets of one direction, to recognise repeats. Each packet is
/// remembered as a 64-bit hash of (sequence number, IP ID, ACK, segment length,
/// TSval, flags, window, TCP checksum, first SACK block) and its time. The checksum
/// stands for the payload: it covers every byte, even those a short snapshot length or a
/// copy cut short did not capture (issue 18: `ivre_telnet-raw` repeats frames 1.3 ms
/// later two bytes short, which a comparison of the captured bytes took for new
/// segments, then for timeouts).
#[derive(Clone, Debug, Default)]
pub(crate) struct RecentPackets {
    hashes: [u64; RECENT],
    ts: [i64; RECENT],
    /// Slots filled so far (at most RECENT), and the next one to overwrite.
    len: u8,
    next: u8,
}

impl RecentPackets {
    /// True if this packet repeats one of the recent packets of the same direction
    /// within [`copy_window`] (`rtt_ns`: the connection's round-trip time, if known);
    /// otherwise remembers it. `may_repeat` false (the packet brings new data or a new
    /// acknowledgment) skips the comparison.
    #[inline]
    pub(crate) fn is_capture_duplicate(
        &mut self,
        ip: &Ip,
        tcp: &Tcp,
        ts: i64,
        may_repeat: bool,
        rtt_ns: Option<i64>,
    ) -> bool {
        let sack = if tcp.sack_count > 0 {
            (tcp.sack[0].0 as u64) << 32 | tcp.sack[0].1 as u64
        } else {
            0
        };
        let words = [
            (tcp.seq as u64) << 32 | ip.id as u64,
            (tcp.ack as u64) << 32 | tcp.payload_len as u64,
            (tcp.timestamps.map_or(0, |t| t.0) as u64) << 32
                | (tcp.flags as u64) << 16
                | tcp.window as u64,
            tcp.checksum as u64,
            sack,
        ];
        // FxHash's step (rustc-hash): rotate, xor, multiply by an odd constant.
        let hash = words.iter().fold(0u64, |h, &w| {
            (h.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
        });
        let pure_ack = tcp.payload_len == 0
            && tcp.flags & (tcp_flags::SYN | tcp_flags::FIN | tcp_flags::RST) == 0;
        let window = copy_window(
            ip.id != 0 || (tcp.timestamps.is_some() && !pure_ack),
            pure_ack,
            rtt_ns,
        );
        if may_repeat {
            for i in 0..self.len as usize {
                if self.hashes[i] == hash && ts - self.ts[i] <= window {
                    return true;
                }
            }
        }
        let slot = self.next as usize;
        self.hashes[slot] = hash;
        self.ts[slot] = ts;
        self.next = ((slot + 1) % RECENT) as u8;
        self.len = (self.len + 1).min(RECENT as u8);
        false
    }
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
        let (Some(seq), Some(tx)) = (wlan.seq, wlan.transmitter) else {
            return false;
        };
        let previous = self.last_seq.insert(tx, seq);
        wlan.retry && previous == Some(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(seq: u32, ack: u32, len: u32) -> Tcp {
        Tcp {
            seq,
            ack,
            payload_len: len,
            flags: 0x10,
            window: 100,
            ..Default::default()
        }
    }

    #[test]
    fn same_id_same_segment_is_a_duplicate() {
        let mut r = RecentPackets::default();
        let ip = Ip {
            id: 77,
            ..Default::default()
        };
        assert!(!r.is_capture_duplicate(&ip, &tcp(1, 1, 10), 0, true, None));
        assert!(r.is_capture_duplicate(&ip, &tcp(1, 1, 10), 2_000, true, None));
    }

    #[test]
    fn the_checksum_stands_for_the_payload() {
        // The same segment captured again cut short has the same checksum: a copy.
        // Another payload at the same sequence number would have another one.
        let mut r = RecentPackets::default();
        let ip = Ip {
            id: 5840,
            ..Default::default()
        };
        let sent = Tcp {
            checksum: 0xe0b0,
            ..tcp(218, 715, 2)
        };
        assert!(!r.is_capture_duplicate(&ip, &sent, 0, true, None));
        assert!(r.is_capture_duplicate(&ip, &sent, 1_325_000, true, None));
        let other = Tcp {
            checksum: 0x1234,
            ..sent
        };
        assert!(!r.is_capture_duplicate(&ip, &other, 1_400_000, true, None));
    }

    #[test]
    fn a_new_ip_id_is_a_real_retransmission() {
        let mut r = RecentPackets::default();
        assert!(!r.is_capture_duplicate(
            &Ip {
                id: 77,
                ..Default::default()
            },
            &tcp(1, 1, 10),
            0,
            true,
            None
        ));
        assert!(!r.is_capture_duplicate(
            &Ip {
                id: 78,
                ..Default::default()
            },
            &tcp(1, 1, 10),
            200_000_000,
            true,
            None
        ));
    }

    #[test]
    fn identical_acks_without_ip_id_are_duplicates_only_when_close() {
        let mut r = RecentPackets::default();
        let ip = Ip::default();
        assert!(!r.is_capture_duplicate(&ip, &tcp(1, 5, 0), 0, true, None));
        assert!(r.is_capture_duplicate(&ip, &tcp(1, 5, 0), 10_000, true, None));
        assert!(!r.is_capture_duplicate(&ip, &tcp(1, 5, 0), 1_000_000, true, None));
    }

    #[test]
    fn a_resent_fin_that_keeps_its_ip_id_is_no_copy() {
        // A server resending its FIN with the original IP ID, no timestamps, after
        // 0.31, 0.61, 1.21 s (issue 18): the RTT is 20 ms, the window 10 ms.
        let mut r = RecentPackets::default();
        let ip = Ip {
            id: 4242,
            ..Default::default()
        };
        let fin = Tcp {
            flags: 0x11,
            ..tcp(9, 9, 0)
        };
        let rtt = Some(20_000_000);
        assert!(!r.is_capture_duplicate(&ip, &fin, 0, true, rtt));
        for t in [310_000_000, 610_000_000, 1_210_000_000] {
            assert!(!r.is_capture_duplicate(&ip, &fin, t, true, rtt), "{t}");
        }
        assert!(
            !r.is_capture_duplicate(&ip, &fin, 1_500_000_000, true, None),
            "200 ms without an RTT"
        );
    }

    #[test]
    fn span_port_copies_without_ip_id_are_caught_within_half_an_rtt() {
        // Router or span-port copies 30-117 µs apart, IP ID 0 (issue 18).
        let mut r = RecentPackets::default();
        let ip = Ip::default();
        let rtt = Some(5_000_000);
        assert!(!r.is_capture_duplicate(&ip, &tcp(1, 1, 100), 0, true, rtt));
        assert!(r.is_capture_duplicate(&ip, &tcp(1, 1, 100), 117_000, true, rtt));
        assert!(
            !r.is_capture_duplicate(&ip, &tcp(1, 1, 100), 3_000_000, true, rtt),
            "a retransmission"
        );
    }

    #[test]
    fn mac_retry_needs_the_retry_bit_and_the_same_sequence_number() {
        let mut m = MacRetries::default();
        let tx = Some([1, 2, 3, 4, 5, 6]);
        let w = |seq, retry| Wlan {
            seq: Some(seq),
            retry,
            transmitter: tx,
            frame_type: 2,
            ..Default::default()
        };
        assert!(!m.is_retry(&w(10, false)));
        assert!(m.is_retry(&w(10, true)));
        assert!(
            !m.is_retry(&w(11, true)),
            "a retry whose original was not captured is the first copy"
        );
        assert!(!m.is_retry(&w(12, false)));
    }
}
