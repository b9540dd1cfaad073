//! The `air` vantage: what a monitor-mode sniffer beside an 802.11-like link captures.
//!
//! Each [`AirFrame`] the link records becomes one record of a
//! LINKTYPE_IEEE802_11_RADIOTAP capture: a radiotap header (flags, rate, channel), an
//! 802.11 frame and its FCS. Data frames carry the IPv4 packet behind an LLC/SNAP
//! header, with the Retry flag on every attempt after the first and the same sequence
//! number on all of them (IEEE 802.11-2020 §10.3.2.14), so that analyzers see MAC
//! retries as Wireshark shows them. Attempts lost to the channel or to a collision keep
//! their contents but have a wrong FCS and radiotap's "bad FCS" flag, as a sniffer
//! configured to keep failed frames writes them. Each frame received intact is followed
//! by the receiver's ACK, a control frame at the 1 Mbit/s basic rate.
//!
//! The forward direction (host a → host b) is the access point sending to the station
//! (From DS); the reverse one the station sending to the access point (To DS). Host a
//! sits behind the access point on the wired side.
//!
//! The radiotap header and the 802.11 fields are written by [`crate::wlan`].

use airtrace_link::arq::{AirFate, AirFrame, AirKind};

use crate::wlan::{Radiotap, Record, FC_FROM_DS, FC_RETRY, FC_TO_DS, SUBTYPE_ACK, SUBTYPE_DATA};

/// The access point (BSSID).
pub const MAC_AP: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
/// The station, host b.
pub const MAC_STATION: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
/// Host a, on the wired side of the access point.
pub const MAC_HOST_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x03];

/// EtherType of IPv4, in the LLC/SNAP header.
const ETHERTYPE_IPV4: u16 = 0x0800;
/// The basic rate that control frames use, in radiotap's 500 kbit/s units.
const BASIC_RATE: u8 = 2;

/// Builds radiotap records; keeps each transmitter's 802.11 sequence numbers.
#[derive(Debug, Default)]
pub struct AirEncoder {
    /// Per direction: the next sequence number, and the packet and first sequence
    /// number of the latest packet sent (its retries reuse them).
    seq: [(u16, Option<(u64, u16)>); 2],
    record: Record,
}

impl AirEncoder {
    /// The record for `frame`. `ip` are the IPv4 packets (one, or the fragments) of
    /// a data frame's packet, empty for an ACK; `nav_us` the Duration field of data
    /// frames (SIFS + ACK). Calls `write` once per 802.11 frame.
    pub fn encode<'a>(
        &mut self,
        frame: &AirFrame,
        ip: impl Iterator<Item = &'a [u8]>,
        nav_us: u16,
        mut write: impl FnMut(&[u8]),
    ) {
        let d = frame.dir.index();
        let forward = d == 0;
        match frame.kind {
            AirKind::Ack => {
                // The receiver acknowledges the transmitter of the data.
                let ra = if forward { MAC_AP } else { MAC_STATION };
                self.record.begin(&radiotap(BASIC_RATE, false));
                self.record.header(SUBTYPE_ACK, 0, 0, &[ra]);
                write(self.record.finish(false));
            }
            AirKind::Data {
                packet,
                attempt,
                rate_bps,
                fate,
                ..
            } => {
                let rate = rate_bps.map_or(BASIC_RATE, |r| (r / 500_000).clamp(1, 255) as u8);
                let bad = fate != AirFate::Received;
                let retry_of = match self.seq[d].1 {
                    Some((p, first)) if p == packet && attempt > 1 => Some(first),
                    _ => None,
                };
                let first = retry_of.unwrap_or(self.seq[d].0);
                let mut n = 0u16;
                for ip in ip {
                    let seq = (first + n) & 0x0fff;
                    n += 1;
                    self.record.begin(&radiotap(rate, bad));
                    let flags = if forward { FC_FROM_DS } else { FC_TO_DS }
                        | if attempt > 1 { FC_RETRY } else { 0 };
                    let addresses = if forward {
                        [MAC_STATION, MAC_AP, MAC_HOST_A]
                    } else {
                        [MAC_AP, MAC_STATION, MAC_HOST_A]
                    };
                    self.record.header(SUBTYPE_DATA, flags, nav_us, &addresses);
                    self.record.sequence(seq);
                    self.record.llc_snap(ETHERTYPE_IPV4);
                    self.record.extend(ip);
                    write(self.record.finish(bad));
                }
                if retry_of.is_none() {
                    self.seq[d] = ((first + n) & 0x0fff, Some((packet, first)));
                }
            }
        }
    }
}

/// The sniffer's radiotap fields: flags, rate and channel only (14 bytes).
fn radiotap(rate_500kbps: u8, bad_fcs: bool) -> Radiotap {
    Radiotap {
        rate_500kbps,
        bad_fcs,
        ..Radiotap::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtrace_link::record::LinkDir;

    fn data(dir: LinkDir, packet: u64, attempt: u32, fate: AirFate) -> AirFrame {
        AirFrame {
            t_ns: 0,
            dir,
            kind: AirKind::Data {
                packet,
                attempt,
                bytes: 40,
                rate_bps: Some(11_000_000),
                fate,
            },
        }
    }

    fn records(enc: &mut AirEncoder, frame: AirFrame, ip: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let ips: Vec<&[u8]> = if frame.kind == AirKind::Ack {
            vec![]
        } else {
            vec![ip]
        };
        enc.encode(&frame, ips.into_iter(), 314, |r| out.push(r.to_vec()));
        out
    }

    #[test]
    fn retries_keep_the_sequence_number_and_set_the_retry_flag() {
        let mut enc = AirEncoder::default();
        let ip = [0x45u8; 40];
        let a = records(&mut enc, data(LinkDir::Down, 7, 1, AirFate::Collided), &ip).remove(0);
        let b = records(&mut enc, data(LinkDir::Down, 7, 2, AirFate::Received), &ip).remove(0);
        let c = records(&mut enc, data(LinkDir::Down, 8, 1, AirFate::Received), &ip).remove(0);
        let seq = |r: &[u8]| u16::from_le_bytes([r[14 + 22], r[14 + 23]]) >> 4;
        assert_eq!((seq(&a), seq(&b), seq(&c)), (0, 0, 1));
        let fc_flags = |r: &[u8]| r[14 + 1];
        assert_eq!(
            (fc_flags(&a), fc_flags(&b)),
            (0x02, 0x0a),
            "From DS; Retry on the second"
        );
        // Radiotap flags: FCS at end, bad FCS on the collided attempt only.
        assert_eq!((a[8], b[8]), (0x50, 0x10));
        assert_eq!(b[9], 22, "11 Mbit/s in 500 kbit/s units");
        let fcs_ok = |r: &[u8]| {
            let n = r.len();
            crc32fast::hash(&r[14..n - 4]).to_le_bytes() == r[n - 4..]
        };
        assert!(!fcs_ok(&a) && fcs_ok(&b));
        assert_eq!(
            &b[14 + 24..14 + 32],
            &[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]
        );
        assert_eq!(b.len(), 14 + 24 + 8 + 40 + 4);
        // The other direction counts its own sequence numbers, To DS.
        let up = records(&mut enc, data(LinkDir::Up, 9, 1, AirFate::Received), &ip).remove(0);
        assert_eq!((seq(&up), fc_flags(&up)), (0, 0x01));
    }

    #[test]
    fn ack_goes_to_the_transmitter_at_the_basic_rate() {
        let mut enc = AirEncoder::default();
        let ack = AirFrame {
            t_ns: 0,
            dir: LinkDir::Up,
            kind: AirKind::Ack,
        };
        let r = records(&mut enc, ack, &[]).remove(0);
        assert_eq!(r.len(), 14 + 10 + 4);
        assert_eq!(&r[14..16], &[0xd4, 0x00]);
        assert_eq!(&r[18..24], &MAC_STATION);
        assert_eq!(r[9], 2);
    }
}
