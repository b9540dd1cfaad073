//! The fields of Linux's `struct tcp_info` (include/uapi/linux/tcp.h) the TCP state
//! log uses, read from the raw bytes at their fixed offsets, and one
//! tcpstate.jsonl line in the simulator's schema (docs/bundle.md).

use std::io::Write;

/// One sample of a sender's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// `tcpi_ca_state`: 0 open, 1 disorder, 2 cwr, 3 recovery, 4 loss.
    pub ca_state: u8,
    /// `tcpi_backoff`: RTO doublings.
    pub backoff: u8,
    /// `tcpi_rto`, µs.
    pub rto_us: u32,
    /// `tcpi_snd_mss`, bytes.
    pub snd_mss: u32,
    /// Segments sent, not yet acknowledged.
    pub unacked: u32,
    /// Segments SACKed.
    pub sacked: u32,
    /// Segments deemed lost.
    pub lost: u32,
    /// Segments retransmitted and not yet acknowledged.
    pub retrans: u32,
    /// Smoothed RTT, µs.
    pub rtt_us: u32,
    /// RTT variance, µs.
    pub rttvar_us: u32,
    /// Slow-start threshold, segments (`0x7fffffff`: infinite).
    pub snd_ssthresh: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    /// Segments retransmitted in all.
    pub total_retrans: u32,
    /// Bytes acknowledged.
    pub bytes_acked: u64,
    /// Delivery rate estimate, bytes/s.
    pub delivery_rate: u64,
    /// `tcpi_total_rto`: retransmission timer expiries, SYN's and repeated ones
    /// included (Linux 6.7 and later; `None` on older kernels).
    pub total_rto: Option<u16>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(x)
}

impl TcpInfo {
    /// Decodes the raw `struct tcp_info` bytes, of which the kernel filled `len`.
    pub fn parse(b: &[u8; crate::sys::TCP_INFO_LEN], len: usize) -> TcpInfo {
        TcpInfo {
            ca_state: b[1],
            backoff: b[4],
            rto_us: u32_at(b, 8),
            snd_mss: u32_at(b, 16),
            unacked: u32_at(b, 24),
            sacked: u32_at(b, 28),
            lost: u32_at(b, 32),
            retrans: u32_at(b, 36),
            rtt_us: u32_at(b, 68),
            rttvar_us: u32_at(b, 72),
            snd_ssthresh: u32_at(b, 76),
            snd_cwnd: u32_at(b, 80),
            total_retrans: u32_at(b, 100),
            bytes_acked: u64_at(b, 120),
            delivery_rate: u64_at(b, 160),
            total_rto: (len >= 242).then(|| u16::from_ne_bytes([b[240], b[241]])),
        }
    }

    /// Reads the socket's state now.
    pub fn read(fd: &impl std::os::fd::AsRawFd) -> std::io::Result<TcpInfo> {
        crate::sys::tcp_info(fd).map(|(b, len)| TcpInfo::parse(&b, len))
    }

    /// The phase name the simulator uses (Linux's `tcp_ca_state`).
    pub fn phase(&self) -> &'static str {
        match self.ca_state {
            0 => "open",
            1 => "disorder",
            2 => "cwr",
            3 => "recovery",
            _ => "loss",
        }
    }

    /// Appends one tcpstate.jsonl line: the simulator's fields (bytes and ns), then
    /// what only the kernel reports (`delivery_rate_bps`, `bytes_acked`).
    pub fn write_line(&self, out: &mut Vec<u8>, t_ns: i64, flow: usize) {
        let mss = u64::from(self.snd_mss.max(1));
        let ssthresh = if self.snd_ssthresh >= 0x7fff_ffff {
            u64::from(u32::MAX)
        } else {
            u64::from(self.snd_ssthresh) * mss
        };
        let in_flight = (u64::from(self.unacked) + u64::from(self.retrans))
            .saturating_sub(u64::from(self.sacked) + u64::from(self.lost))
            * mss;
        let _ = writeln!(
            out,
            r#"{{"t_ns":{t_ns},"flow":{flow},"cwnd":{},"ssthresh":{ssthresh},"srtt_ns":{},"rttvar_ns":{},"rto_ns":{},"phase":"{}","in_flight":{in_flight},"backoff":{},"retransmits":{},"delivery_rate_bps":{},"bytes_acked":{}}}"#,
            u64::from(self.snd_cwnd) * mss,
            u64::from(self.rtt_us) * 1000,
            u64::from(self.rttvar_us) * 1000,
            u64::from(self.rto_us) * 1000,
            self.phase(),
            self.backoff,
            self.total_retrans,
            self.delivery_rate * 8,
            self.bytes_acked,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::TCP_INFO_LEN;

    #[test]
    fn total_rto_only_where_the_kernel_filled_it() {
        let mut b = [0u8; TCP_INFO_LEN];
        b[4] = 3; // tcpi_backoff
        b[240..242].copy_from_slice(&7u16.to_ne_bytes());
        assert_eq!(TcpInfo::parse(&b, TCP_INFO_LEN).total_rto, Some(7));
        let older = TcpInfo::parse(&b, 232); // Linux 5.4 to 6.6
        assert_eq!((older.total_rto, older.backoff), (None, 3));
    }
}
