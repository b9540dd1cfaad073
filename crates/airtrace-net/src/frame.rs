//! 802.11 frames as the MAC and the PHY see them, and how long each is on the air.

use serde::{Deserialize, Serialize};

/// A node's number, also its MAC address in the simulation.
pub type NodeId = u16;

/// The broadcast address.
pub const BROADCAST: NodeId = NodeId::MAX;

/// Which frame (IEEE 802.11-2020 §9.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameKind {
    /// A data frame carrying one packet.
    Data,
    /// Request to send (§9.3.1.2).
    Rts,
    /// Clear to send (§9.3.1.3).
    Cts,
    /// Acknowledgement (§9.3.1.4).
    Ack,
}

/// EtherType of IPv4 (in the LLC/SNAP header of a data frame).
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;

/// The payload type of an access point's beacon, not an EtherType: the frame is a
/// management frame (IEEE 802.11-2020 §9.3.3.2), its token the beacon interval in TU.
pub const ETHERTYPE_BEACON: u16 = 0x0000;
/// Length of a beacon's MSDU as the DCF counts it: the beacon body (timestamp,
/// interval, capability, an 8-byte SSID, four rates, the DS parameter: 31 bytes) less
/// the 8 bytes of LLC/SNAP header the DCF adds to every data frame's MSDU, so the frame
/// is the beacon's 59 bytes on the air.
pub const BEACON_MSDU_BYTES: u32 = 23;

/// What a data frame carries: the upper layer's token for its packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payload {
    /// The upper layer's packet.
    pub token: u64,
    /// The packet's length, bytes (the MSDU).
    pub len: u32,
    /// Its protocol: [`ETHERTYPE_IPV4`] or [`ETHERTYPE_ARP`]; [`ETHERTYPE_BEACON`] for
    /// a beacon.
    pub ethertype: u16,
}

/// One frame on the air.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Which frame.
    pub kind: FrameKind,
    /// Transmitter.
    pub src: NodeId,
    /// Receiver, or [`BROADCAST`].
    pub dst: NodeId,
    /// The Duration field: how long after this frame's end the exchange keeps the
    /// medium (what the NAV of a third station is set to), ns.
    pub nav_ns: i64,
    /// Sequence number (data frames).
    pub seq: u16,
    /// The Retry bit: a retransmission of this data frame or RTS.
    pub retry: bool,
    /// The packet, for data frames.
    pub payload: Option<Payload>,
    /// MAC frame length including the FCS (and, in the ns-2 profile, its PHY header),
    /// bytes.
    pub bytes: u32,
    /// Rate of the MAC frame after the PLCP, bit/s.
    pub rate_bps: u64,
    /// Time on the air, PLCP included, ns.
    pub airtime_ns: i64,
}

impl Frame {
    /// The Duration field as the frame carries it: `nav_ns` in whole microseconds,
    /// a fraction rounded up (IEEE 802.11-2020 §9.2.5.1), at most 32767 (§9.2.4.2:
    /// bit 15 clear means a duration).
    pub fn duration_us(&self) -> u16 {
        let us = (self.nav_ns.max(0) as u64).div_ceil(1000);
        us.min(32_767) as u16
    }
}

/// The time the PLCP preamble and header take, and how the rest of a frame is timed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plcp {
    /// Preamble and PLCP header, ns (long DSSS preamble: 192 µs; short: 96 µs; ns-2 of
    /// 1999 sent its 24 B at the data rate: 96 µs at 2 Mbit/s).
    pub overhead_ns: i64,
    /// Round the MAC frame's time up to a whole microsecond, as the DSSS/CCK LENGTH field
    /// counts microseconds (IEEE 802.11-2020 §16.2.3.5, §17.2.3.5).
    pub whole_microseconds: bool,
}

impl Plcp {
    /// Time on the air of `bytes` at `rate_bps`, ns.
    pub fn airtime_ns(&self, bytes: u32, rate_bps: u64) -> i64 {
        let bits = u128::from(bytes) * 8;
        let rate = u128::from(rate_bps.max(1));
        let body = if self.whole_microseconds {
            bits.saturating_mul(1_000_000).div_ceil(rate) as i64 * 1000
        } else {
            bits.saturating_mul(1_000_000_000).div_ceil(rate) as i64
        };
        self.overhead_ns + body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_field_rounds_up_to_whole_microseconds() {
        let frame = |nav_ns| Frame {
            kind: FrameKind::Cts,
            src: 0,
            dst: 1,
            nav_ns,
            seq: 0,
            retry: false,
            payload: None,
            bytes: 14,
            rate_bps: 2_000_000,
            airtime_ns: 152_000,
        };
        assert_eq!(frame(0).duration_us(), 0);
        assert_eq!(frame(314_000).duration_us(), 314);
        assert_eq!(frame(314_001).duration_us(), 315);
        assert_eq!(frame(1 << 40).duration_us(), 32_767, "bit 15 stays clear");
    }

    #[test]
    fn airtime_of_a_1500_byte_packet_at_2_and_11_mbit() {
        let long = Plcp {
            overhead_ns: 192_000,
            whole_microseconds: true,
        };
        // 1500 B IP + 24 header + 4 FCS + 8 LLC/SNAP = 1536 B: 6144 µs at 2 Mbit/s.
        assert_eq!(long.airtime_ns(1536, 2_000_000), (192 + 6144) * 1000);
        // At 11 Mbit/s: 12288 bits / 11 = 1117.09 µs, rounded up to 1118.
        assert_eq!(long.airtime_ns(1536, 11_000_000), (192 + 1118) * 1000);
    }
}
