//! The 802.11 layer of a connection, from a radiotap capture: collisions between TCP
//! data and TCP ACKs, and frames corrupted on the channel.
//!
//! Kuang, Xiao and Williamson found TCP's MAC retry rate five times UDP's between a
//! laptop and an access point a metre apart: the access point sending data and the
//! laptop sending ACKs contend for one channel, and their backoffs end in the same slot
//! (the "TCP data/ACK collision problem"). A sniffer that keeps frames with a bad FCS
//! sees such a collision directly: two frames of the connection, one in each direction,
//! on the air at once. Under CSMA/CA one transmitter holds the channel at a time, so
//! two frames whose time stamps are closer than the shorter one's air time overlapped.
//! The retry that follows an overlapped frame is a collision retry; one that follows a
//! frame with a bad FCS and no overlap is a retry after channel corruption.
//!
//! [`AirState`] is fed each frame of the connection in capture order ([`AirState::frame`]),
//! keeps a few numbers per direction, and [`findings`] turns them into the
//! `data_ack_collisions` and `bad_fcs` findings.

use std::collections::BTreeMap;

use airtrace_wire::Decoded;

use crate::detect::Builder;

/// Fewest collisions that make a `data_ack_collisions` finding.
const MIN_COLLISIONS: u64 = 3;
/// Smallest share of a direction's frames with a bad FCS (collisions aside) that makes a
/// `bad_fcs` finding, and the fewest such frames.
const MIN_BAD_FCS_SHARE: f64 = 0.01;
const MIN_BAD_FCS_FRAMES: u64 = 5;

/// The latest frame of one direction.
#[derive(Debug, Clone, Copy)]
struct Seen {
    t_ns: i64,
    airtime_ns: i64,
    seq: u16,
    bad_fcs: bool,
    collided: bool,
}

/// What was gathered about a connection's 802.11 frames (see the [module documentation](self)).
#[derive(Debug, Clone, Default)]
pub struct AirState {
    /// Per direction: 802.11 frames of the connection with a radiotap header.
    pub frames: [u64; 2],
    /// Per direction: frames with the Retry flag.
    pub retries: [u64; 2],
    /// Per direction: frames with a bad FCS that did not overlap another frame.
    pub bad_fcs: [u64; 2],
    /// Per direction: their frame numbers (at most [`crate::MAX_EVIDENCE`]).
    pub bad_fcs_frames: [Vec<u64>; 2],
    /// Per direction: time from a corrupted frame to its retry, summed, ns.
    pub bad_fcs_cost_ns: [i64; 2],
    /// Pairs of frames, one each way, on the air at once.
    pub collisions: u64,
    /// Retries of a frame that collided, both directions.
    pub collision_retries: u64,
    /// Time from a collided frame to its retry, summed, ns.
    pub collision_cost_ns: i64,
    /// Frames of the first collisions.
    pub collision_frames: Vec<u64>,
    /// First and last collision, ns.
    pub collision_span: Option<(i64, i64)>,
    last: [Option<(Seen, u64)>; 2],
}

impl AirState {
    /// Takes in frame `frame` of the connection, travelling in direction `d` at `t_ns`,
    /// `len` bytes as captured on the air.
    pub fn frame(&mut self, t_ns: i64, frame: u64, len: u32, d: usize, decoded: &Decoded) {
        let (Some(wlan), Some(rt)) = (decoded.wlan.as_ref(), decoded.radiotap.as_ref()) else {
            return;
        };
        let Some(seq) = wlan.seq else { return };
        // Air time of the frame at its legacy rate (unknown for HT/VHT rates).
        let airtime_ns = rt
            .rate_500kbps
            .filter(|&r| r > 0)
            .map_or(0, |r| i64::from(len) * 8 * 2_000 / i64::from(r));
        let mut seen = Seen {
            t_ns,
            airtime_ns,
            seq,
            bad_fcs: rt.bad_fcs(),
            collided: false,
        };
        self.frames[d] += 1;
        if wlan.retry {
            self.retries[d] += 1;
            if let Some((prev, _)) = self.last[d].filter(|(p, _)| p.seq == seq) {
                let wait = t_ns - prev.t_ns;
                if prev.collided {
                    self.collision_retries += 1;
                    self.collision_cost_ns += wait;
                } else if prev.bad_fcs {
                    self.bad_fcs_cost_ns[d] += wait;
                }
            }
        }
        if let Some((other, other_frame)) = self.last[1 - d].as_mut() {
            let overlap = t_ns - other.t_ns < airtime_ns.min(other.airtime_ns);
            if overlap && !other.collided {
                other.collided = true;
                seen.collided = true;
                self.collisions += 1;
                if other.bad_fcs {
                    // Counted as corrupted when it came; it was a collision.
                    self.bad_fcs[1 - d] -= 1;
                    let frames = &mut self.bad_fcs_frames[1 - d];
                    if frames.last() == Some(other_frame) {
                        frames.pop();
                    }
                }
                let span = self.collision_span.get_or_insert((other.t_ns, t_ns));
                span.1 = t_ns;
                for f in [*other_frame, frame] {
                    if self.collision_frames.len() < crate::MAX_EVIDENCE {
                        self.collision_frames.push(f);
                    }
                }
            }
        }
        if seen.bad_fcs && !seen.collided {
            self.bad_fcs[d] += 1;
            if self.bad_fcs_frames[d].len() < crate::MAX_EVIDENCE {
                self.bad_fcs_frames[d].push(frame);
            }
        }
        self.last[d] = Some((seen, frame));
    }
}

/// The `data_ack_collisions` and `bad_fcs` findings of a connection whose data flows
/// in direction `data_dir`, spanning `span` (ns).
pub(crate) fn findings(b: &mut Builder, air: &AirState, data_dir: usize, span: (i64, i64)) {
    let retries = air.retries[0] + air.retries[1];
    if air.collisions >= MIN_COLLISIONS && air.collision_retries > 0 {
        let share = air.collision_retries as f64 / retries.max(1) as f64;
        let explanation = format!(
            "{} times a frame of TCP data and a frame of TCP ACKs were on the air at once: the two stations' \
backoffs ended in the same slot (TCP data/ACK collisions). {} of the {} MAC retries ({:.0} %) followed a \
collision. TCP's ACKs make the receiver contend with the sender for the channel; each collision costs both a \
timeout and a doubled backoff ({:.3} s of retry delay in all), and at the retry limit a TCP loss.",
            air.collisions,
            air.collision_retries,
            retries,
            100.0 * share,
            air.collision_cost_ns as f64 / 1e9
        );
        b.push(
            "data_ack_collisions",
            data_dir,
            air.collision_span.unwrap_or(span),
            air.collision_cost_ns,
            air.collision_frames.clone(),
            explanation,
            "Send fewer ACKs (delayed ACKs, ACK thinning), aggregate frames (802.11n A-MPDU with block ACKs), or \
give the access point priority (802.11e EDCA/TXOP) so that data and ACKs do not contend.",
            BTreeMap::from([
                ("collisions", air.collisions as f64),
                ("collision_retries", air.collision_retries as f64),
                ("mac_retries", retries as f64),
                ("collision_retry_share", share),
            ]),
        );
    }
    for d in 0..2 {
        let (bad, frames) = (air.bad_fcs[d], air.frames[d]);
        if bad < MIN_BAD_FCS_FRAMES || (bad as f64) < MIN_BAD_FCS_SHARE * frames as f64 {
            continue;
        }
        let share = bad as f64 / frames as f64;
        let explanation = format!(
            "{bad} of this direction's {frames} 802.11 frames ({:.1} %) failed their FCS check, collisions aside: \
the channel corrupted them (as the sniffer received them). Each costs a MAC retry ({:.3} s of retry delay in \
all) and, past the retry limit, a TCP loss.",
            100.0 * share,
            air.bad_fcs_cost_ns[d] as f64 / 1e9
        );
        b.push(
            "bad_fcs",
            d,
            span,
            air.bad_fcs_cost_ns[d],
            air.bad_fcs_frames[d].clone(),
            explanation,
            "Improve the radio path (distance, antennas, interference), or use a more robust rate.",
            BTreeMap::from([
                ("bad_fcs_frames", bad as f64),
                ("frames", frames as f64),
                ("bad_fcs_share", share),
            ]),
        );
    }
}
