//! Captures built byte by byte for the diagnosis tests: Ethernet, IPv4 and TCP headers
//! (no checksums: the decoder does not check them), and a bulk transfer from a server
//! to a client with a receiver model, seen at the client.

#![allow(dead_code)]

use std::path::Path;

use airtrace_analysis::FileReport;
use airtrace_diagnose::{diagnose_file, Finding};
use airtrace_pcap::{ByteOrder, Interface, PcapNgWriter, PcapWriter, Resolution, TsResolution};

pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;
pub const FIN: u8 = 0x01;
pub const MSS: u32 = 1000;
/// Initial sequence numbers of the client (a, the initiator) and the server (b).
pub const CLIENT_ISN: u32 = 1000;
pub const SERVER_ISN: u32 = 5000;

/// One TCP segment on the wire.
#[derive(Debug, Clone)]
pub struct Segment {
    pub t_ns: i64,
    pub from_client: bool,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub len: u32,
    pub window: u16,
    /// The server's data segment number it carries, if any.
    pub data_segment: Option<u32>,
    /// The client's port (the server's is 80).
    pub client_port: u16,
    /// SACK blocks (RFC 2018), absolute sequence numbers.
    pub sack: Vec<(u32, u32)>,
}

impl Segment {
    pub fn new(ms: f64, from_client: bool, seq: u32, ack: u32, flags: u8, len: u32) -> Self {
        Segment {
            t_ns: (ms * 1e6) as i64,
            from_client,
            seq,
            ack,
            flags,
            len,
            window: 65535,
            data_segment: None,
            client_port: 40000,
            sack: Vec::new(),
        }
    }

    /// The Ethernet frame.
    pub fn frame(&self, ip_id: u16) -> Vec<u8> {
        let (src, dst, sport, dport) = if self.from_client {
            ([198, 18, 0, 1], [198, 18, 0, 2], self.client_port, 80u16)
        } else {
            ([198, 18, 0, 2], [198, 18, 0, 1], 80, self.client_port)
        };
        let mut f = Vec::new();
        f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
        // SACK option: two NOPs, kind 5, length, the blocks (a multiple of 4 bytes).
        let options = if self.sack.is_empty() {
            0
        } else {
            4 + 8 * self.sack.len()
        };
        let total = 40 + options + self.len as usize;
        f.extend_from_slice(&[0x45, 0]);
        f.extend_from_slice(&(total as u16).to_be_bytes());
        f.extend_from_slice(&ip_id.to_be_bytes());
        f.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&self.seq.to_be_bytes());
        f.extend_from_slice(&self.ack.to_be_bytes());
        f.extend_from_slice(&[((20 + options as u8) / 4) << 4, self.flags]);
        f.extend_from_slice(&self.window.to_be_bytes());
        f.extend_from_slice(&[0, 0, 0, 0]);
        if !self.sack.is_empty() {
            f.extend_from_slice(&[1, 1, 5, 2 + 8 * self.sack.len() as u8]);
            for &(left, right) in &self.sack {
                f.extend_from_slice(&left.to_be_bytes());
                f.extend_from_slice(&right.to_be_bytes());
            }
        }
        f.resize(f.len() + self.len as usize, 0xAB);
        f
    }
}

/// Sorts `segments` by time (stable) and numbers their IP IDs per direction.
pub fn frames(mut segments: Vec<Segment>) -> Vec<(Segment, Vec<u8>)> {
    segments.sort_by_key(|s| s.t_ns);
    let mut ids = [0u16; 2];
    segments
        .into_iter()
        .map(|s| {
            let id = &mut ids[usize::from(s.from_client)];
            *id = id.wrapping_add(1);
            let bytes = s.frame(*id);
            (s, bytes)
        })
        .collect()
}

/// A pcap file (nanosecond time stamps) of `segments`; time 0 is 1 700 000 000 s.
pub fn pcap(segments: Vec<Segment>) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Nano).unwrap();
    for (s, bytes) in frames(segments) {
        w.write_packet(
            1_700_000_000_000_000_000 + s.t_ns,
            &bytes,
            bytes.len() as u32,
        )
        .unwrap();
    }
    w.into_inner()
}

/// A pcapng file of `segments`, ending with an Interface Statistics Block that counts
/// `drops` (`isb_ifdrop`), if given.
pub fn pcapng(segments: Vec<Segment>, drops: Option<u64>) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new(), ByteOrder::Little).unwrap();
    w.add_interface(&Interface {
        linktype: 1,
        snaplen: 0,
        resolution: TsResolution::NANO,
        offset_s: 0,
    })
    .unwrap();
    for (s, bytes) in frames(segments) {
        w.write_packet(
            0,
            1_700_000_000_000_000_000 + s.t_ns,
            &bytes,
            bytes.len() as u32,
        )
        .unwrap();
    }
    let mut out = w.into_inner();
    if let Some(n) = drops {
        let mut body = Vec::new();
        body.extend_from_slice(&0u32.to_le_bytes()); // interface 0
        body.extend_from_slice(&[0; 8]); // time stamp
        body.extend_from_slice(&5u16.to_le_bytes()); // isb_ifdrop
        body.extend_from_slice(&8u16.to_le_bytes());
        body.extend_from_slice(&n.to_le_bytes());
        body.extend_from_slice(&[0; 4]); // opt_endofopt
        let len = (12 + body.len()) as u32;
        out.extend_from_slice(&5u32.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(&len.to_le_bytes());
    }
    out
}

/// Writes `bytes` to a file named `name` and diagnoses it.
pub fn diagnose(name: &str, bytes: &[u8]) -> (FileReport, Vec<Finding>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diagnose-wire");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(if name.contains('.') {
        name.to_string()
    } else {
        format!("{name}.pcap")
    });
    std::fs::write(&path, bytes).unwrap();
    diagnose_file(&path).unwrap()
}

/// A bulk transfer of `segments` segments of [`MSS`] bytes from the server, in flights
/// of `flight` segments every `flight_gap_ms`, captured at the client: each segment
/// arrives as sent, the client ACKs every second segment in order (and at once when a
/// segment arrives out of order, with the same ACK: a duplicate), 0.05 ms after it.
#[derive(Debug, Clone)]
pub struct Transfer {
    pub segments: u32,
    pub flight: u32,
    pub flight_gap_ms: f64,
    /// Segments that arrive but that the capture misses.
    pub not_captured: Vec<u32>,
    /// Segments lost before the client (and the capture): resent by fast retransmit,
    /// arriving 80 ms after the third duplicate ACK (past the handshake RTT, so that the
    /// analyzer does not take it for reordering).
    pub lost_in_network: Vec<u32>,
}

impl Default for Transfer {
    fn default() -> Self {
        Transfer {
            segments: 40,
            flight: 10,
            flight_gap_ms: 100.0,
            not_captured: Vec::new(),
            lost_in_network: Vec::new(),
        }
    }
}

impl Transfer {
    /// Every segment on the wire at the capture point, the missed ones included
    /// (marked by `data_segment` and filtered by [`Transfer::captured`]).
    pub fn segments(&self) -> Vec<Segment> {
        let c = CLIENT_ISN;
        let s = SERVER_ISN;
        let mut out = vec![
            Segment::new(0.0, true, c, 0, SYN, 0),
            Segment::new(50.0, false, s, c + 1, SYN | ACK, 0),
            Segment::new(50.1, true, c + 1, s + 1, ACK, 0),
        ];
        let seq = |k: u32| s + 1 + k * MSS;
        // Arrivals at the client: (time, segment number), retransmissions included.
        let mut arrivals: Vec<(f64, u32)> = Vec::new();
        for k in 0..self.segments {
            let ms = 100.0
                + f64::from(k / self.flight) * self.flight_gap_ms
                + f64::from(k % self.flight) * 0.1;
            let mut seg = Segment::new(ms, false, seq(k), c + 1, ACK, MSS);
            seg.data_segment = Some(k);
            if !self.lost_in_network.contains(&k) {
                arrivals.push((ms, k));
            }
            out.push(seg);
        }
        // The client's ACKs, and the fast retransmissions they trigger.
        let mut received = vec![false; self.segments as usize];
        let mut next = 0u32; // first segment not yet received in order
        let mut unacked = 0;
        let mut dupacks = 0;
        let mut i = 0;
        while i < arrivals.len() {
            arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (ms, k) = arrivals[i];
            i += 1;
            received[k as usize] = true;
            let at = ms + 0.05;
            if k == next {
                while next < self.segments && received[next as usize] {
                    next += 1;
                }
                unacked += 1;
                dupacks = 0;
                let filled_hole = next > k + 1;
                if unacked >= 2 || filled_hole || next == self.segments {
                    out.push(Segment::new(at, true, c + 1, seq(next), ACK, 0));
                    unacked = 0;
                }
            } else if k > next {
                out.push(Segment::new(at, true, c + 1, seq(next), ACK, 0));
                dupacks += 1;
                if dupacks == 3 {
                    let mut retx = Segment::new(at + 80.0, false, seq(next), c + 1, ACK, MSS);
                    retx.data_segment = Some(next);
                    out.push(retx);
                    arrivals.push((at + 80.0, next));
                }
            }
        }
        out
    }

    /// What the capture holds.
    pub fn captured(&self) -> Vec<Segment> {
        let mut first_seen = std::collections::HashSet::new();
        self.segments()
            .into_iter()
            .filter(|s| match s.data_segment {
                // The first transmission of a missed or network-lost segment is not there.
                Some(k) if first_seen.insert(k) => {
                    !self.not_captured.contains(&k) && !self.lost_in_network.contains(&k)
                }
                _ => true,
            })
            .collect()
    }

    pub fn pcap(&self) -> Vec<u8> {
        pcap(self.captured())
    }

    pub fn pcapng(&self, drops: Option<u64>) -> Vec<u8> {
        pcapng(self.captured(), drops)
    }

    /// The frame number of the first captured transmission of data segment `k`.
    pub fn frame_of_segment(&self, k: u32) -> Option<u64> {
        frames(self.captured())
            .iter()
            .position(|(s, _)| s.data_segment == Some(k))
            .map(|i| i as u64 + 1)
    }
}
