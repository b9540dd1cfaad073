//! Air captures at the nodes of a network (`air-<node>.pcap`, the nodes
//! `network.air_captures` names): every 802.11 frame the node's radio sent, decoded or
//! locked onto and lost, as a monitor-mode capture at the node shows it.
//!
//! Each frame is one LINKTYPE_IEEE802_11_RADIOTAP record ([`crate::wlan`]), stamped
//! with the time its last bit was at the radio:
//!
//! - radiotap: TSFT (the simulated clock, µs, when the MPDU's first bit arrived: the
//!   frame's start plus the PLCP preamble and header), flags (FCS at the end; bad FCS
//!   for a frame the radio locked onto but lost), rate, channel, antenna signal (the
//!   received power; the transmit power for the node's own frames) and antenna noise
//!   (the radio's noise floor), in dBm;
//! - data frames as an IBSS sends them (To DS and From DS 0: Address 1 the receiver,
//!   2 the transmitter, 3 the BSSID; IEEE 802.11-2020 §9.3.2.1), with the Duration,
//!   sequence number (the same on every attempt) and Retry bit the MAC gave them, and
//!   an RFC 1042 LLC/SNAP header before the IPv4 packet (the bytes the node's
//!   `<node>.pcap` holds, with the TTL of this hop) or the ARP packet (RFC 826);
//! - RTS (§9.3.1.2), CTS (§9.3.1.3) and ACK (§9.3.1.4) frames with their Duration;
//! - an access point's beacons (§9.3.3.2, with `[network.roaming]`): to the broadcast
//!   address from the access point, which is also their BSSID, with the TSF timestamp,
//!   the beacon interval, the ESS capability, the SSID "airtrace", the four 802.11b
//!   rates and the DS parameter set (channel 1). Data frames keep the IBSS addressing
//!   above (an infrastructure BSS's To DS / From DS is not modelled).
//!
//! Node `i` has the MAC address 02:00:00:00:x:y, where 198.18.x.y is its IPv4 address
//! (x.y = i + 1; locally administered, as [`crate::air`]'s); the IBSS's BSSID is
//! 02:00:00:00:00:00 (§9.2.4.3.4: a locally administered address in an IBSS).
//!
//! A data frame carries only its packet's id: this module keeps each packet's contents
//! from when its flow sends it ([`AirCaptures::hold`]) until the network releases it
//! (`airtrace_net::air`), since the frame of a packet already delivered can still be
//! sent again (its ACK was lost) or heard by a farther radio. A datagram the network
//! cut into fragments (`airtrace_net::frag`) is one fragment per frame, as in
//! `<node>.pcap`.

use std::io;

use airtrace_net::network::IpPacket;
use airtrace_net::{AirFrame, Carried, FrameKind, Network, NodeId, BROADCAST};
use rustc_hash::FxHashMap;

use crate::bundle::{BundleWriter, EPOCH_NS};
use crate::mipwire::MipWriter;
use crate::netsim::{address, routing_hosts};
use crate::packet::{Encoder, Packet};
use crate::wlan::{
    self, Radiotap, Record, FC_RETRY, SUBTYPE_ACK, SUBTYPE_BEACON, SUBTYPE_CTS, SUBTYPE_DATA,
    SUBTYPE_RTS,
};

/// The IBSS's BSSID.
pub const BSSID: [u8; 6] = [0x02, 0, 0, 0, 0, 0];

/// Node `id`'s MAC address (the broadcast address for [`BROADCAST`]).
pub fn mac_address(id: NodeId) -> [u8; 6] {
    if id == BROADCAST {
        return wlan::BROADCAST;
    }
    let [_, _, x, y] = address(id);
    [0x02, 0, 0, 0, x, y]
}

/// `mac_address` as meta.json writes it.
pub fn mac_text(id: NodeId) -> String {
    let m = mac_address(id);
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// ARP operation code of a request (RFC 826).
const ARP_REQUEST: u16 = 1;

/// The ARP packet (RFC 826) of operation `op` from `sender` about `target`: hardware
/// type 1 (Ethernet, as hosts on 802.11 send it), IPv4; a request leaves the target's
/// hardware address zero.
fn arp_packet(op: u16, sender: NodeId, target: NodeId) -> [u8; 28] {
    let mut p = [0u8; 28];
    p[..8].copy_from_slice(&[0, 1, 0x08, 0x00, 6, 4, 0, 0]);
    p[6..8].copy_from_slice(&op.to_be_bytes());
    p[8..14].copy_from_slice(&mac_address(sender));
    p[14..18].copy_from_slice(&address(sender));
    if op != ARP_REQUEST {
        p[18..24].copy_from_slice(&mac_address(target));
    }
    p[24..28].copy_from_slice(&address(target));
    p
}

/// The SSID of every access point's beacons.
const SSID: &[u8; 8] = b"airtrace";

/// A beacon's body (IEEE 802.11-2020 §9.3.3.2): timestamp (TSF, µs), beacon interval
/// (TU), capability (ESS), then the SSID, Supported Rates (1, 2, 5.5, 11 Mbit/s, all
/// basic) and DS Parameter Set (channel 1) elements (§9.4.2).
fn beacon_body(tsf_us: u64, interval_tu: u16) -> [u8; 31] {
    let mut b = [0u8; 31];
    b[..8].copy_from_slice(&tsf_us.to_le_bytes());
    b[8..10].copy_from_slice(&interval_tu.to_le_bytes());
    b[10..12].copy_from_slice(&1u16.to_le_bytes());
    b[12..14].copy_from_slice(&[0, SSID.len() as u8]);
    b[14..22].copy_from_slice(SSID);
    b[22..28].copy_from_slice(&[1, 4, 0x82, 0x84, 0x8b, 0x96]);
    b[28..31].copy_from_slice(&[3, 1, 1]);
    b
}

/// What the radios share for their radiotap headers.
#[derive(Debug, Clone, Copy)]
pub struct Radio {
    /// PLCP preamble and header, ns (TSFT counts from the MPDU's first bit).
    pub plcp_ns: i64,
    /// The noise floor, dBm.
    pub noise_dbm: i8,
}

/// Writes the record of frame `f` into `record`; `body` is a data frame's packet.
pub fn encode<'a>(record: &'a mut Record, radio: Radio, f: &AirFrame, body: &[u8]) -> &'a [u8] {
    let r = &f.record;
    let frame = &r.frame;
    let tsft_us = ((r.start_ns + radio.plcp_ns).max(0) / 1000) as u64;
    record.begin(&Radiotap {
        tsft_us: Some(tsft_us),
        rate_500kbps: (frame.rate_bps / 500_000).clamp(1, 255) as u8,
        bad_fcs: !r.intact,
        signal_dbm: Some(wlan::dbm(r.signal_w)),
        noise_dbm: Some(radio.noise_dbm),
    });
    let (ra, ta) = (mac_address(frame.dst), mac_address(frame.src));
    let retry = if frame.retry { FC_RETRY } else { 0 };
    let duration = frame.duration_us();
    match (frame.kind, f.carried) {
        (FrameKind::Data, Carried::Beacon { interval_tu }) => {
            record.header(SUBTYPE_BEACON, 0, 0, &[ra, ta, ta]);
            record.sequence(frame.seq);
            record.extend(&beacon_body(tsft_us, interval_tu));
        }
        (FrameKind::Data, _) => {
            record.header(SUBTYPE_DATA, retry, duration, &[ra, ta, BSSID]);
            record.sequence(frame.seq);
            if let Some(p) = frame.payload {
                record.llc_snap(p.ethertype);
            }
            record.extend(body);
        }
        (FrameKind::Rts, _) => record.header(SUBTYPE_RTS, retry, duration, &[ra, ta]),
        (FrameKind::Cts, _) => record.header(SUBTYPE_CTS, 0, duration, &[ra]),
        (FrameKind::Ack, _) => record.header(SUBTYPE_ACK, 0, duration, &[ra]),
    }
    record.finish(!r.intact)
}

/// The air captures of a run (see the [module documentation](self)).
#[derive(Debug)]
pub(crate) struct AirCaptures {
    /// Each node's capture in the bundle, if it has one.
    capture: Vec<Option<usize>>,
    radio: Radio,
    /// Packets the network may still put on the air, by id, with the stream position
    /// of a TCP segment's payload.
    held: FxHashMap<u64, (Packet, u64)>,
    frames: Vec<AirFrame>,
    released: Vec<u64>,
    ip: Encoder,
    /// Scratch buffer for a packet's DSR header.
    dsr: Vec<u8>,
    mip: MipWriter,
    record: Record,
}

impl AirCaptures {
    /// Captures at the nodes `capture` gives an index; starts the network's air
    /// records there.
    pub(crate) fn new(capture: Vec<Option<usize>>, net: &mut Network) -> Self {
        let nodes: Vec<NodeId> = (0..capture.len() as NodeId)
            .filter(|&n| capture[n as usize].is_some())
            .collect();
        net.enable_air(&nodes);
        let w = net.wireless();
        let radio = Radio {
            plcp_ns: w.mac(0).config().plcp.overhead_ns,
            noise_dbm: wlan::dbm(w.phy().noise_w),
        };
        AirCaptures {
            capture,
            radio,
            held: FxHashMap::default(),
            frames: Vec::new(),
            released: Vec::new(),
            ip: Encoder::default(),
            dsr: Vec::new(),
            mip: MipWriter::default(),
            record: Record::default(),
        }
    }

    /// Keeps `packet`, just sent by its flow, until the network releases it.
    pub(crate) fn hold(&mut self, packet: &Packet, stream_offset: u64) {
        self.held.insert(packet.id, (*packet, stream_offset));
    }

    /// Writes what the network's radios saw since the last call.
    pub(crate) fn write(&mut self, net: &mut Network, bundle: &mut BundleWriter) -> io::Result<()> {
        net.drain_air(&mut self.frames, &mut self.released);
        for f in self.frames.drain(..) {
            let Some(index) = self.capture[f.record.node as usize] else {
                debug_assert!(false, "records only at captured nodes");
                continue;
            };
            let arp;
            let body: &[u8] = match f.carried {
                Carried::Nothing | Carried::Beacon { .. } => &[],
                Carried::Arp { op, sender, target } => {
                    arp = arp_packet(op, sender, target);
                    &arp
                }
                Carried::Ip(ip) => {
                    let bytes =
                        ip_bytes(&mut self.ip, &mut self.mip, &self.held, ip, &mut self.dsr);
                    let Some(bytes) = bytes else {
                        debug_assert!(false, "a packet on the air is held");
                        continue;
                    };
                    bytes
                }
            };
            let record = encode(&mut self.record, self.radio, &f, body);
            let end = f.record.start_ns + f.record.frame.airtime_ns;
            bundle
                .node_capture(index)
                .write_packet(EPOCH_NS + end, record, record.len() as u32)?;
        }
        for id in self.released.drain(..) {
            self.held.remove(&id);
        }
        Ok(())
    }

    /// Writes the frames still on the air at the end of the run (see
    /// `Network::flush_air`) and what is left.
    pub(crate) fn finish(
        &mut self,
        net: &mut Network,
        bundle: &mut BundleWriter,
    ) -> io::Result<()> {
        net.flush_air();
        self.write(net, bundle)
    }
}

/// The IPv4 packet `ip` with the TTL of its hop, whole or the fragment it is: a held
/// transport packet, with
/// its DSR header when it has one, or a DSR routing packet; a Mobile IP message or
/// tunnelled packet.
fn ip_bytes<'a>(
    encoder: &'a mut Encoder,
    mip: &mut MipWriter,
    held: &FxHashMap<u64, (Packet, u64)>,
    ip: IpPacket,
    dsr: &mut Vec<u8>,
) -> Option<&'a [u8]> {
    dsr.clear();
    if let Some(h) = &ip.dsr {
        h.write(0, address, dsr);
    }
    if ip.mip.is_some() {
        let inner = held.get(&ip.user).map(|(p, offset)| (p, *offset));
        return mip.packet(encoder, &ip, inner, dsr);
    }
    if ip.is_control() {
        return Some(encoder.encode_routing(ip.ttl, routing_hosts(&ip), dsr));
    }
    let &(packet, stream_offset) = held.get(&ip.user)?;
    let packet = Packet {
        ttl: ip.ttl,
        ..packet
    };
    if let Some(f) = ip.frag {
        let piece = (
            f.offset as usize,
            ip.len.saturating_sub(20) as usize,
            f.more,
        );
        return Some(encoder.encode_fragment(&packet, stream_offset, dsr, piece));
    }
    encoder
        .encode_routed(&packet, stream_offset, ip.len, dsr)
        .next()
}

#[cfg(test)]
mod tests {
    use airtrace_net::frame::{Payload, ETHERTYPE_IPV4};
    use airtrace_net::{AirRecord, Frame};

    use super::*;

    const RADIO: Radio = Radio {
        plcp_ns: 96_000,
        noise_dbm: -101,
    };

    fn frame(kind: FrameKind, src: NodeId, dst: NodeId, retry: bool) -> Frame {
        Frame {
            kind,
            src,
            dst,
            nav_ns: 1_500_500,
            seq: 77,
            retry,
            payload: (kind == FrameKind::Data).then_some(Payload {
                token: 1,
                len: 20,
                ethertype: ETHERTYPE_IPV4,
            }),
            bytes: 48,
            rate_bps: 2_000_000,
            airtime_ns: 288_000,
        }
    }

    fn record(frame: Frame, node: NodeId, intact: bool) -> Vec<u8> {
        let f = AirFrame {
            record: AirRecord {
                node,
                start_ns: 2_000_500,
                frame,
                signal_w: 3.652e-10,
                intact,
            },
            carried: Carried::Nothing,
        };
        let mut r = Record::default();
        encode(&mut r, RADIO, &f, &[0x45; 20]).to_vec()
    }

    /// The 802.11 frame after the 24-byte radiotap header, without its FCS.
    fn mac(r: &[u8]) -> &[u8] {
        &r[24..r.len() - 4]
    }

    fn fcs_ok(r: &[u8]) -> bool {
        let n = r.len();
        crc32fast::hash(&r[24..n - 4]).to_le_bytes() == r[n - 4..]
    }

    #[test]
    fn data_frame_of_an_ibss_with_its_retry_bit_sequence_and_duration() {
        let first = record(frame(FrameKind::Data, 0, 1, false), 1, true);
        let retry = record(frame(FrameKind::Data, 0, 1, true), 1, false);
        let m = mac(&first);
        assert_eq!(&m[..2], &[0x08, 0x00], "data, To DS and From DS 0");
        assert_eq!(&mac(&retry)[..2], &[0x08, 0x08], "the Retry bit");
        assert_eq!(
            u16::from_le_bytes([m[2], m[3]]),
            1501,
            "Duration rounded up"
        );
        assert_eq!(&m[4..10], &[2, 0, 0, 0, 0, 2], "receiver: node 1");
        assert_eq!(&m[10..16], &[2, 0, 0, 0, 0, 1], "transmitter: node 0");
        assert_eq!(&m[16..22], &BSSID);
        assert_eq!(u16::from_le_bytes([m[22], m[23]]) >> 4, 77);
        assert_eq!(&m[24..32], &[0xaa, 0xaa, 3, 0, 0, 0, 0x08, 0x00]);
        assert_eq!(&m[32..], &[0x45; 20]);
        assert_eq!(m[22..24], mac(&retry)[22..24], "one sequence number");
        // Radiotap: TSFT at the MPDU's first bit, 2 Mbit/s, signal and noise in dBm.
        assert_eq!(&first[8..16], &2096u64.to_le_bytes());
        assert_eq!((first[16], first[17]), (0x10, 4));
        assert_eq!((first[22] as i8, first[23] as i8), (-64, -101));
        // A frame heard but lost: the bad-FCS flag and a wrong FCS.
        assert_eq!(retry[16], 0x50);
        assert!(fcs_ok(&first) && !fcs_ok(&retry));
    }

    #[test]
    fn control_frames_address_the_receiver_and_rts_the_transmitter_too() {
        let rts = record(frame(FrameKind::Rts, 3, 4, true), 3, true);
        assert_eq!(&mac(&rts)[..2], &[0xb4, 0x08]);
        assert_eq!(mac(&rts).len(), 16);
        assert_eq!(&mac(&rts)[10..16], &mac_address(3));
        for (kind, subtype) in [(FrameKind::Cts, 0xc4), (FrameKind::Ack, 0xd4)] {
            let r = record(frame(kind, 4, 3, false), 3, true);
            assert_eq!(mac(&r).len(), 10);
            assert_eq!(&mac(&r)[..2], &[subtype, 0]);
            assert_eq!(&mac(&r)[4..10], &mac_address(3));
            assert!(fcs_ok(&r));
        }
    }

    #[test]
    fn addresses_follow_the_ip_addresses() {
        assert_eq!(mac_text(0), "02:00:00:00:00:01");
        assert_eq!(mac_text(299), "02:00:00:00:01:2c");
        assert_eq!(address(299), [198, 18, 1, 44]);
        assert_eq!(mac_address(BROADCAST), [0xff; 6]);
        let request = arp_packet(1, 0, 1);
        assert_eq!(&request[..8], &[0, 1, 8, 0, 6, 4, 0, 1]);
        assert_eq!(&request[8..18], &[2, 0, 0, 0, 0, 1, 198, 18, 0, 1]);
        assert_eq!(&request[18..28], &[0, 0, 0, 0, 0, 0, 198, 18, 0, 2]);
        let reply = arp_packet(2, 1, 0);
        assert_eq!(&reply[18..24], &mac_address(0));
    }
}
