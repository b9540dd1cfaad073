//! Where the capture sat on a connection's path, from its timing alone: near the
//! sender of the data, near its receiver, or not known (issue 17 item 1: a capture
//! taken at the receiver was shown as if taken at the sender).
//!
//! Near either end the handshake (SYN, SYN/ACK, ACK) takes one whole round trip as
//! the capture sees it. The data's own round trip (data to its ACK) is the same at
//! the sender, but at the receiver it is only the receiver's turnaround: far shorter.

use serde::Serialize;

/// A handshake shorter than this says nothing: on a LAN every time is short.
const MIN_HANDSHAKE_NS: i64 = 1_000_000;

/// Where the capture sat, for the connection's main direction of data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapturePoint {
    /// The data's round trip is at least half the handshake's.
    Sender,
    /// The data's ACKs left within a tenth of the handshake's round trip.
    Receiver,
}

/// Where the capture sat, from the smallest data-to-ACK time of the data's direction
/// and the handshake's round trip (ns); `None` when either is unknown, the handshake
/// too short to tell, or the capture between the two ends.
pub fn capture_point(
    min_data_rtt_ns: Option<i64>,
    handshake_ns: Option<i64>,
) -> Option<CapturePoint> {
    let (min, h) = (min_data_rtt_ns?, handshake_ns?);
    if h < MIN_HANDSHAKE_NS {
        None
    } else if min.saturating_mul(10) < h {
        Some(CapturePoint::Receiver)
    } else if min.saturating_mul(2) >= h {
        Some(CapturePoint::Sender)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn the_data_round_trip_against_the_handshake() {
        assert_eq!(
            capture_point(Some(MS), Some(72 * MS)),
            Some(CapturePoint::Receiver)
        );
        assert_eq!(
            capture_point(Some(70 * MS), Some(72 * MS)),
            Some(CapturePoint::Sender)
        );
        assert_eq!(
            capture_point(Some(20 * MS), Some(72 * MS)),
            None,
            "in between"
        );
        assert_eq!(capture_point(Some(10_000), Some(500_000)), None, "a LAN");
        assert_eq!(capture_point(None, Some(72 * MS)), None);
        assert_eq!(capture_point(Some(MS), None), None);
    }
}
