//! Per-packet annotations: the flags Wireshark calls `tcp.analysis.*`, and airtrace's own.
//!
//! Flag names are a stable interface: users script against them in the packets
//! table, the JSON and the Parquet output. Add new flags at the end; never rename.

/// A set of per-packet analysis flags (bit set; see the constants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(pub u32);

macro_rules! flags {
    ($( $(#[$doc:meta])* $name:ident = $bit:expr, $text:literal; )*) => {
        impl Flags {
            $( $(#[$doc])* pub const $name: Flags = Flags(1 << $bit); )*
            /// Every flag with its stable column name, in column order.
            pub const ALL: &'static [(Flags, &'static str)] = &[ $( (Flags::$name, $text), )* ];
        }
    };
}

flags! {
    /// Data (or SYN/FIN) that does not advance the sequence number: sent before.
    /// Includes fast and spurious retransmissions, as in Wireshark.
    RETRANSMISSION = 0, "retransmission";
    /// A retransmission right after two or more duplicate ACKs asking for it.
    FAST_RETRANSMISSION = 1, "fast_retransmission";
    /// A retransmission of data the receiver had already acknowledged.
    SPURIOUS_RETRANSMISSION = 2, "spurious_retransmission";
    /// Data never seen before arriving below the highest sequence number seen.
    OUT_OF_ORDER = 3, "out_of_order";
    /// A gap before this segment: the previous segment was not captured.
    LOST_SEGMENT = 4, "lost_segment";
    /// This ACK acknowledges data that was never captured.
    ACK_LOST_SEGMENT = 5, "ack_lost_segment";
    /// Same ACK, window and sequence number as before, no data (see `dupack_num`).
    DUPLICATE_ACK = 6, "duplicate_ack";
    /// The sender of this packet advertises a zero receive window.
    ZERO_WINDOW = 7, "zero_window";
    /// One byte sent into a peer's zero window.
    ZERO_WINDOW_PROBE = 8, "zero_window_probe";
    /// The reply to a zero-window probe.
    ZERO_WINDOW_PROBE_ACK = 9, "zero_window_probe_ack";
    /// This segment fills the peer's advertised window exactly.
    WINDOW_FULL = 10, "window_full";
    /// An ACK whose only news is a changed window.
    WINDOW_UPDATE = 11, "window_update";
    /// A 0- or 1-byte segment one byte below the next expected sequence number.
    KEEP_ALIVE = 12, "keep_alive";
    /// The reply to a keep-alive.
    KEEP_ALIVE_ACK = 13, "keep_alive_ack";
    /// A SYN reusing the ports of an earlier connection: starts a new connection.
    REUSED_PORTS = 14, "reused_ports";
    /// An 802.11 retry copy of a frame already captured (same transmitter and
    /// 802.11 sequence number, retry bit set): a link-layer duplicate, not TCP loss.
    MAC_RETRY = 15, "mac_retry";
    /// The same packet captured twice (same IP ID, sequence, ACK and payload), as
    /// switches and capture hardware produce: a capture artifact, not TCP loss.
    CAPTURE_DUPLICATE = 16, "capture_duplicate";
    /// The frame is dated more than a day away from the frames around it: it was
    /// analysed at the time of the frames around it (see `clock.rs`).
    TIME_ANOMALY = 17, "time_anomaly";
}

impl Flags {
    #[inline]
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    #[inline]
    pub fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Names of the flags set, in column order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Flags::ALL
            .iter()
            .filter(move |(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
    }
}

/// Why a retransmission was sent, as far as the capture shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RetransKind {
    /// Not a retransmission.
    #[default]
    None = 0,
    /// The retransmission timer expired (RFC 6298 section 5): the first segment sent
    /// after the silence (its `backoff` is 1, 2, ...), or one of the go-back-N
    /// segments retransmitted after it in the same recovery (`backoff` 0).
    Timeout = 1,
    /// Fast retransmit (RFC 5681 section 3.2) or a NewReno partial-ACK retransmission
    /// (RFC 6582 section 3.2): driven by duplicate or partial ACKs.
    FastRetransmit = 2,
    /// SACK-based loss recovery (RFC 6675): the receiver reported data above the hole.
    Sack = 3,
    /// A tail loss probe (RFC 8985 section 7.3): the highest segment sent, resent with
    /// no duplicate ACK or SACK behind it, either above the cumulative ACK (a timeout
    /// resends the first unacknowledged segment, RFC 6298 section 5.4) or sooner than any
    /// retransmission timer. Not a timeout: no backoff, no window collapse.
    TailLossProbe = 4,
}

impl RetransKind {
    pub fn name(self) -> &'static str {
        match self {
            RetransKind::None => "",
            RetransKind::Timeout => "timeout",
            RetransKind::FastRetransmit => "fast_retransmit",
            RetransKind::Sack => "sack",
            RetransKind::TailLossProbe => "tail_loss_probe",
        }
    }
}

/// Marks an integer field as absent in [`Annotation`].
pub const NONE_I64: i64 = i64::MIN;

/// Everything airtrace says about one captured packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// Connection index (0-based, in order of first packet, as tshark's tcp.stream),
    /// or `u32::MAX` for a packet that is not TCP.
    pub conn: u32,
    /// 0: from the connection's first endpoint (its client, when the SYN was seen); 1: reverse.
    pub dir: u8,
    pub flags: Flags,
    /// For a duplicate ACK, its number in the run (1 for the first duplicate).
    pub dupack_num: u32,
    /// Sequence and ACK numbers relative to each direction's initial sequence number.
    pub seq_rel: u32,
    pub ack_rel: u32,
    /// TCP segment length (from the IP length, captured or not).
    pub seglen: u32,
    /// Receive window advertised, scaled when the scale is known.
    pub window: u32,
    /// For an ACK: the round-trip time of the segment it acknowledges, in ns, honouring
    /// Karn's rule (absent when that segment was retransmitted). [`NONE_I64`] if none.
    pub ack_rtt_ns: i64,
    /// Unacknowledged bytes in this direction after this segment; -1 if unknown.
    pub bytes_in_flight: i64,
    pub retrans_kind: RetransKind,
    /// For the retransmission that a timer expiry sent: 1 for the first timeout of
    /// this data, 2 for the second consecutive one (the RTO doubled), ...; 0 otherwise.
    pub backoff: u8,
    /// For a retransmission: ns since the previous packet sent in this direction.
    pub idle_gap_ns: i64,
    /// For a retransmission: ns since the first transmission of this data
    /// (Wireshark's tcp.analysis.rto).
    pub since_first_tx_ns: i64,
    /// The time the frame was analysed at, ns since 1970: its own, or for a
    /// [`Flags::TIME_ANOMALY`] the time of the frames around it. Sinks time the frame
    /// by this, not by the record's time.
    pub ts_ns: i64,
}

impl Default for Annotation {
    fn default() -> Self {
        Annotation {
            conn: u32::MAX,
            dir: 0,
            ts_ns: 0,
            flags: Flags::default(),
            dupack_num: 0,
            seq_rel: 0,
            ack_rel: 0,
            seglen: 0,
            window: 0,
            ack_rtt_ns: NONE_I64,
            bytes_in_flight: -1,
            retrans_kind: RetransKind::None,
            backoff: 0,
            idle_gap_ns: NONE_I64,
            since_first_tx_ns: NONE_I64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_names_are_unique_and_in_bit_order() {
        for (i, (f, _)) in Flags::ALL.iter().enumerate() {
            assert_eq!(f.0, 1 << i);
        }
        let mut names: Vec<_> = Flags::ALL.iter().map(|(_, n)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Flags::ALL.len());
    }

    #[test]
    fn names_lists_set_flags() {
        let mut f = Flags::RETRANSMISSION;
        f.insert(Flags::FAST_RETRANSMISSION);
        assert_eq!(
            f.names().collect::<Vec<_>>(),
            ["retransmission", "fast_retransmission"]
        );
    }
}
