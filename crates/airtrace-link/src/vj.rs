//! Van Jacobson TCP/IP header compression (RFC 1144) on a serial link, as a model: the
//! compressor and decompressor state machines of RFC 1144's appendix A
//! (`sl_compress_tcp`, `sl_uncompress_tcp`), fed with header *summaries*
//! ([`TcpIpHeader`]) that the simulator and the emulator fill from the packets they
//! carry. No clock, no payload.
//!
//! Why it is here: Ludwig et al. (multi-layer tracing of TCP over GSM) found that the
//! only real damage TCP took on GSM came from header compression after RLP link resets.
//! Compression sends *deltas* against the previous header of the connection; once a
//! frame is lost the decompressor is out of step, and every compressed segment of the
//! connection is discarded until an uncompressed one resynchronises it. The compressor
//! sends one only when a header cannot be expressed as a delta, in a bulk transfer the
//! TCP retransmission after a timeout (its sequence number went backwards). A whole
//! window is lost, and the sender gets no duplicate ACKs to recover earlier.
//!
//! # Using it
//!
//! The sending side of a link direction owns a [`Compressor`], the receiving side a
//! [`Decompressor`] with the same number of slots. For every packet put on the link:
//! [`Compressor::compress`] gives an [`Encoded`] (the packet's kind and the bytes its
//! header takes on the link); keep it with the packet. When a frame comes out of the
//! link, pass it with the packet's real header to [`Decompressor::receive`]: the
//! [`Verdict`] says whether the receiving host gets a good packet.
//!
//! ```
//! use airtrace_link::vj::{Compressor, Decompressor, PacketKind, TcpIpHeader, Verdict};
//!
//! let mut tx = Compressor::new(16);
//! let mut rx = Decompressor::new(16);
//! let mut h = TcpIpHeader { conn: 1, seq: 1000, ack: 1, payload_len: 512, ..TcpIpHeader::default() };
//! let first = tx.compress(&h);
//! assert_eq!((first.kind, first.header_bytes), (PacketKind::UncompressedTcp, 40));
//! assert_eq!(rx.receive(&first, &h), Verdict::Deliver);
//! // The next segment of a bulk transfer: 3 bytes (change mask, TCP checksum).
//! h.seq += 512;
//! h.ip_id += 1;
//! let next = tx.compress(&h);
//! assert_eq!((next.kind, next.header_bytes), (PacketKind::CompressedTcp, 3));
//! assert_eq!(rx.receive(&next, &h), Verdict::Deliver);
//! ```
//!
//! # Losses: known and silent
//!
//! RFC 1144 §4.1 and §4.2: the framing layer tells the decompressor about a frame it
//! received damaged (SLIP/PPP FCS error; BSD's `if_ppp` passes `TYPE_ERROR` to
//! `sl_uncompress_tcp` after one). Call [`Decompressor::link_error`] then: it sets the
//! *toss* flag, and every COMPRESSED_TCP packet without an explicit connection number
//! is discarded ([`Discard::Tossed`]) until an UNCOMPRESSED_TCP packet, or a
//! COMPRESSED_TCP one with an explicit connection number (C bit), clears it.
//!
//! A frame that vanishes whole — the link flushed it, as RLP does on a link reset, or
//! lost it without the receiver seeing a damaged frame — needs no call: the caller
//! simply never passes it to [`receive`](Decompressor::receive). The decompressor's
//! saved header then lacks that frame's deltas, and every later compressed packet of the
//! connection is rebuilt against the stale header. The model rebuilds it exactly as the
//! RFC's decompressor does and compares the result with the real header
//! (the `h` argument): when a field the TCP checksum covers differs (connection,
//! sequence and acknowledgment numbers, window, flags, urgent pointer, options, length),
//! the receiving TCP discards the segment for its checksum ([`Discard::Corrupted`]).
//! The wrong header is kept as the saved state, as the real decompressor keeps it (it
//! cannot know), so the error persists — segment i + 5 rebuilt as segment i, and so on,
//! as the study saw — until an UNCOMPRESSED_TCP packet. A rebuilt header that differs
//! only in the IP ID (not covered by the TCP checksum; the decompressor recomputes the
//! IP checksum) is delivered. The model ignores the 2^-16 chance that a wrong header
//! still passes the checksum.
//!
//! Mixing the two (part of a frame lost: FCS error, `link_error`; whole frames lost
//! around it: silent) gives either outcome, Tossed or Corrupted; TCP sees the same loss.
//!
//! # Deviations and limits
//!
//! - ECE and CWR (RFC 3168) did not exist in 1990: RFC 1144's decompressor copies the
//!   flags from the saved header except PSH and URG, so a change of ECE or CWR would be
//!   lost. This compressor sends the packet uncompressed when they change (the IP TOS
//!   byte, where the ECN codepoints live, is compared by the RFC already, so a CE mark or
//!   an ECT change goes uncompressed too).
//! - Any change of the option bytes sends the packet uncompressed (RFC 1144 §3.2.2), so
//!   TCP timestamps (new TSval in every segment) defeat compression: every segment goes
//!   UNCOMPRESSED_TCP. The caller passes a hash of the IP and TCP option bytes.
//! - The TCP checksum travels in the compressed header; the model copies
//!   [`TcpIpHeader::checksum`] (0 unless the caller knows it).
//! - [`Encoded::header_bytes`] counts the header only: no PPP protocol field or flag,
//!   no SLIP framing ([`PacketKind::ppp_protocol`] gives the PPP value).
//! - RFC 1144's decompressor clears URG only outside the SPECIAL_I / SPECIAL_D cases, so
//!   a segment that drops URG while the urgent pointer stays the same (0) and whose
//!   other changes make a special case is rebuilt with URG set (and dropped by TCP).
//!   The model keeps this quirk; stacks that zero a non-zero pointer with the flag never
//!   meet it (the pointer change sends the segment whole).
//! - No RFC 2507 / ROHC, no "twice" algorithm, no IPv6.

/// TCP flag bits of the header's flags byte.
pub const TH_FIN: u8 = 0x01;
/// SYN.
pub const TH_SYN: u8 = 0x02;
/// RST.
pub const TH_RST: u8 = 0x04;
/// PSH.
pub const TH_PUSH: u8 = 0x08;
/// ACK.
pub const TH_ACK: u8 = 0x10;
/// URG.
pub const TH_URG: u8 = 0x20;
/// ECE (RFC 3168).
pub const TH_ECE: u8 = 0x40;
/// CWR (RFC 3168).
pub const TH_CWR: u8 = 0x80;

/// Slots (connection states) RFC 1144 uses by default (`MAX_STATES`).
pub const DEFAULT_SLOTS: u8 = 16;

// Change-mask bits (RFC 1144 §3.2.2, `slcompress.h`).
const NEW_C: u8 = 0x40;
const NEW_I: u8 = 0x20;
const TCP_PUSH_BIT: u8 = 0x10;
const NEW_S: u8 = 0x08;
const NEW_A: u8 = 0x04;
const NEW_W: u8 = 0x02;
const NEW_U: u8 = 0x01;
/// Echoed interactive traffic: seq and ack both advance by the previous length.
const SPECIAL_I: u8 = NEW_S | NEW_W | NEW_U;
/// Unidirectional data: seq advances by the previous length.
const SPECIAL_D: u8 = NEW_S | NEW_A | NEW_W | NEW_U;
const SPECIALS_MASK: u8 = NEW_S | NEW_A | NEW_W | NEW_U;

/// The longest compressed header: change mask, connection, checksum, five 3-byte
/// fields.
const MAX_COMPRESSED: usize = 4 + 15;

/// What the compressor and decompressor look at in one IPv4/TCP packet. The caller
/// fills it from the packet; [`Default`] is a 40-byte header without options with only
/// ACK set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TcpIpHeader {
    /// The connection: the caller's key for (source address, destination address,
    /// source port, destination port) — what RFC 1144 compares to find the slot. The
    /// two directions of a TCP connection are two keys.
    pub conn: u64,
    /// IP header length in bytes (20 without options).
    pub ip_hdr_len: u16,
    /// TCP header length in bytes (20 without options).
    pub tcp_hdr_len: u16,
    /// IP TOS byte (DSCP and the ECN codepoint).
    pub tos: u8,
    /// IP time to live.
    pub ttl: u8,
    /// IP "don't fragment".
    pub dont_fragment: bool,
    /// A fragment (more-fragments set or a non-zero offset): never compressed.
    pub fragment: bool,
    /// IP identification.
    pub ip_id: u16,
    /// TCP sequence number.
    pub seq: u32,
    /// TCP acknowledgment number.
    pub ack: u32,
    /// TCP window field (as sent, scaled or not).
    pub window: u16,
    /// TCP flags byte ([`TH_ACK`], [`TH_PUSH`], …).
    pub flags: u8,
    /// TCP urgent pointer.
    pub urgent: u16,
    /// TCP checksum, carried verbatim in compressed headers (0 when unknown).
    pub checksum: u16,
    /// TCP payload bytes.
    pub payload_len: u32,
    /// Any hash of the IP and TCP option bytes (0 for none): equal values mean
    /// unchanged options.
    pub options: u64,
}

impl Default for TcpIpHeader {
    fn default() -> Self {
        TcpIpHeader {
            conn: 0,
            ip_hdr_len: 20,
            tcp_hdr_len: 20,
            tos: 0,
            ttl: 64,
            dont_fragment: true,
            fragment: false,
            ip_id: 0,
            seq: 0,
            ack: 0,
            window: 0,
            flags: TH_ACK,
            urgent: 0,
            checksum: 0,
            payload_len: 0,
            options: 0,
        }
    }
}

impl TcpIpHeader {
    /// IP plus TCP header bytes, options included.
    pub fn header_len(&self) -> usize {
        usize::from(self.ip_hdr_len) + usize::from(self.tcp_hdr_len)
    }

    /// The fields the receiving TCP's checksum covers (pseudo-header and TCP header)
    /// are the same.
    fn tcp_checksum_matches(&self, o: &TcpIpHeader) -> bool {
        self.conn == o.conn
            && self.seq == o.seq
            && self.ack == o.ack
            && self.window == o.window
            && self.flags == o.flags
            && self.urgent == o.urgent
            && self.payload_len == o.payload_len
            && self.tcp_hdr_len == o.tcp_hdr_len
            && self.options == o.options
    }
}

/// How a packet crosses the link (RFC 1144 §3.2.1 packet types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// TYPE_IP: sent as is (not TCP-compressible: SYN, FIN, RST, no ACK, a fragment).
    Ip,
    /// TYPE_UNCOMPRESSED_TCP: the full header, the IP protocol byte replaced by the
    /// slot number; (re)initialises the slot at the decompressor.
    UncompressedTcp,
    /// TYPE_COMPRESSED_TCP: change mask, optional slot, checksum, deltas.
    CompressedTcp,
}

impl PacketKind {
    /// The PPP protocol field (RFC 1332 §4): IP 0x0021, Van Jacobson uncompressed
    /// 0x002f, compressed 0x002d.
    pub fn ppp_protocol(self) -> u16 {
        match self {
            PacketKind::Ip => 0x0021,
            PacketKind::UncompressedTcp => 0x002f,
            PacketKind::CompressedTcp => 0x002d,
        }
    }
}

/// One packet as the compressor sent it. Keep it with the packet and hand it to
/// [`Decompressor::receive`] on the other side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Encoded {
    /// Packet type.
    pub kind: PacketKind,
    /// Bytes the IP and TCP headers take on the link: the full header for
    /// [`PacketKind::Ip`] and [`PacketKind::UncompressedTcp`], 3 to 19 bytes for
    /// [`PacketKind::CompressedTcp`].
    pub header_bytes: usize,
    /// The slot (connection number) used; 0 for [`PacketKind::Ip`].
    pub slot: u8,
    bytes: [u8; MAX_COMPRESSED],
}

impl Encoded {
    fn full(kind: PacketKind, h: &TcpIpHeader, slot: u8) -> Self {
        Encoded {
            kind,
            header_bytes: h.header_len(),
            slot,
            bytes: [0; MAX_COMPRESSED],
        }
    }

    /// The compressed header, byte for byte as RFC 1144 lays it out (change mask,
    /// connection number when the C bit is set, TCP checksum, deltas); empty unless
    /// [`PacketKind::CompressedTcp`].
    pub fn compressed_header(&self) -> &[u8] {
        match self.kind {
            PacketKind::CompressedTcp => &self.bytes[..self.header_bytes],
            _ => &[],
        }
    }

    /// The compressed header carries its connection number (C bit).
    pub fn explicit_slot(&self) -> bool {
        self.kind == PacketKind::CompressedTcp && self.bytes[0] & NEW_C != 0
    }
}

/// A small byte buffer for the deltas.
struct Deltas {
    b: [u8; 15],
    n: usize,
}

impl Deltas {
    fn push(&mut self, x: u8) {
        self.b[self.n] = x;
        self.n += 1;
    }

    /// ENCODE: 1..=255 in one byte, else 0 and the 16-bit value.
    fn encode(&mut self, v: u16) {
        if v >= 256 {
            self.push(0);
            self.push((v >> 8) as u8);
            self.push(v as u8);
        } else {
            self.push(v as u8);
        }
    }

    /// ENCODEZ: as `encode`, but 0 takes three bytes (the urgent pointer and the IP ID
    /// delta can be 0).
    fn encodez(&mut self, v: u16) {
        if v == 0 {
            self.push(0);
            self.push(0);
            self.push(0);
        } else {
            self.encode(v);
        }
    }
}

/// Compressor counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompressorStats {
    /// Packets sent as TYPE_IP.
    pub ip: u64,
    /// Packets sent as UNCOMPRESSED_TCP.
    pub uncompressed: u64,
    /// Packets sent as COMPRESSED_TCP.
    pub compressed: u64,
    /// Slot searches that found no state (a new connection or one forgotten): the
    /// least recently used slot was reused.
    pub misses: u64,
    /// Header bytes saved by compression.
    pub bytes_saved: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    hdr: Option<TcpIpHeader>,
    last_used: u64,
}

/// The sending side of RFC 1144 (`sl_compress_tcp`).
#[derive(Clone, Debug)]
pub struct Compressor {
    slots: Vec<Slot>,
    compress_cid: bool,
    last_xmit: Option<u8>,
    clock: u64,
    stats: CompressorStats,
}

impl Compressor {
    /// A compressor with `slots` connection states (RFC 1144: 16; PPP negotiates it as
    /// Max-Slot-Id + 1). The connection number is left out of a compressed header when
    /// it is the same as the last one sent (PPP's Comp-Slot-Id, on by default; see
    /// [`set_compress_slot_id`](Compressor::set_compress_slot_id)).
    ///
    /// # Panics
    /// When `slots` is 0.
    pub fn new(slots: u8) -> Self {
        assert!(slots > 0, "a VJ compressor needs at least one slot");
        Compressor {
            slots: vec![Slot::default(); usize::from(slots)],
            compress_cid: true,
            last_xmit: None,
            clock: 0,
            stats: CompressorStats::default(),
        }
    }

    /// Whether a compressed header may leave out an unchanged connection number
    /// (true by default). The decompressor needs no setting: the C bit tells it.
    pub fn set_compress_slot_id(&mut self, on: bool) {
        self.compress_cid = on;
    }

    /// Counters.
    pub fn stats(&self) -> &CompressorStats {
        &self.stats
    }

    /// Encodes one packet and updates the state, following `sl_compress_tcp`:
    /// - TYPE_IP when the packet is a fragment or its flags are not ACK alone among
    ///   SYN, FIN, RST, ACK;
    /// - UNCOMPRESSED_TCP when the connection has no slot (the least recently used is
    ///   taken), when anything that should not change did (IP header length, TOS, DF,
    ///   TTL, TCP header length, options; here also ECE or CWR), the urgent pointer
    ///   changed without URG, the acknowledgment or sequence number moved by 2^16 or
    ///   more or backwards (the RFC's unsigned delta), nothing changed and the packet
    ///   is not data after a bare ACK (a retransmission, a repeated ACK, a window
    ///   probe), or the changes happen to equal a special-case mask;
    /// - else COMPRESSED_TCP: change mask, connection number if it differs from the last
    ///   one sent, TCP checksum, then the urgent pointer, window, ack, sequence and IP ID
    ///   deltas (1 byte for 1..=255, else 3), none for seq/ack in the SPECIAL_D / SPECIAL_I
    ///   cases and none for an IP ID that went up by exactly 1.
    pub fn compress(&mut self, h: &TcpIpHeader) -> Encoded {
        if h.fragment || h.flags & (TH_SYN | TH_FIN | TH_RST | TH_ACK) != TH_ACK {
            self.stats.ip += 1;
            return Encoded::full(PacketKind::Ip, h, 0);
        }
        self.clock += 1;
        let found = self
            .slots
            .iter()
            .position(|s| s.hdr.is_some_and(|o| o.conn == h.conn));
        let i = match found {
            Some(i) => i,
            None => {
                self.stats.misses += 1;
                // The least recently used; never-used slots first, lowest number first
                // (the order of RFC 1144's initial list).
                let i = (0..self.slots.len())
                    .min_by_key(|&i| (self.slots[i].last_used, i))
                    .unwrap_or(0);
                self.slots[i].last_used = self.clock;
                return self.uncompressed(i, h);
            }
        };
        self.slots[i].last_used = self.clock;
        let Some(o) = self.slots[i].hdr else {
            return self.uncompressed(i, h);
        };
        if o.ip_hdr_len != h.ip_hdr_len
            || o.tos != h.tos
            || o.dont_fragment != h.dont_fragment
            || o.ttl != h.ttl
            || o.tcp_hdr_len != h.tcp_hdr_len
            || o.options != h.options
            || (o.flags ^ h.flags) & (TH_ECE | TH_CWR) != 0
        {
            return self.uncompressed(i, h);
        }
        let mut d = Deltas { b: [0; 15], n: 0 };
        let mut changes = 0u8;
        if h.flags & TH_URG != 0 {
            d.encodez(h.urgent);
            changes |= NEW_U;
        } else if h.urgent != o.urgent {
            return self.uncompressed(i, h);
        }
        let dw = h.window.wrapping_sub(o.window);
        if dw != 0 {
            d.encode(dw);
            changes |= NEW_W;
        }
        let da = h.ack.wrapping_sub(o.ack);
        if da != 0 {
            if da > 0xffff {
                return self.uncompressed(i, h);
            }
            d.encode(da as u16);
            changes |= NEW_A;
        }
        let ds = h.seq.wrapping_sub(o.seq);
        if ds != 0 {
            if ds > 0xffff {
                return self.uncompressed(i, h);
            }
            d.encode(ds as u16);
            changes |= NEW_S;
        }
        // Data after a bare ACK goes compressed with no change; anything else unchanged
        // is probably a retransmission, a repeated ACK or a window probe: send it whole
        // in case the other side missed the compressed one.
        let data_after_ack = h.payload_len != o.payload_len && o.payload_len == 0;
        match changes {
            0 if data_after_ack => {}
            0 | SPECIAL_I | SPECIAL_D => return self.uncompressed(i, h),
            c if c == NEW_S | NEW_A && ds == da && ds == o.payload_len => {
                // Echoed interactive traffic.
                changes = SPECIAL_I;
                d.n = 0;
            }
            NEW_S if ds == o.payload_len => {
                // Unidirectional data.
                changes = SPECIAL_D;
                d.n = 0;
            }
            _ => {}
        }
        let did = i32::from(h.ip_id) - i32::from(o.ip_id);
        if did != 1 {
            d.encodez(did as u16);
            changes |= NEW_I;
        }
        if h.flags & TH_PUSH != 0 {
            changes |= TCP_PUSH_BIT;
        }
        self.slots[i].hdr = Some(*h);
        let slot = i as u8;
        let mut out = Encoded {
            kind: PacketKind::CompressedTcp,
            header_bytes: 0,
            slot,
            bytes: [0; MAX_COMPRESSED],
        };
        let mut n = if !self.compress_cid || self.last_xmit != Some(slot) {
            self.last_xmit = Some(slot);
            out.bytes[0] = changes | NEW_C;
            out.bytes[1] = slot;
            2
        } else {
            out.bytes[0] = changes;
            1
        };
        out.bytes[n] = (h.checksum >> 8) as u8;
        out.bytes[n + 1] = h.checksum as u8;
        n += 2;
        out.bytes[n..n + d.n].copy_from_slice(&d.b[..d.n]);
        out.header_bytes = n + d.n;
        self.stats.compressed += 1;
        self.stats.bytes_saved += (h.header_len() - out.header_bytes) as u64;
        out
    }

    fn uncompressed(&mut self, i: usize, h: &TcpIpHeader) -> Encoded {
        self.slots[i].hdr = Some(*h);
        let slot = i as u8;
        self.last_xmit = Some(slot);
        self.stats.uncompressed += 1;
        Encoded::full(PacketKind::UncompressedTcp, h, slot)
    }
}

/// Why the receiving host does not get a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Discard {
    /// A COMPRESSED_TCP packet without a connection number while the toss flag is set
    /// (after [`Decompressor::link_error`]): dropped by the decompressor.
    Tossed,
    /// A connection number beyond the slots (or a compressed packet before any
    /// connection number was ever received): dropped by the decompressor, which sets
    /// the toss flag.
    BadSlot,
    /// Rebuilt against a saved header that is out of step (a frame lost without the
    /// decompressor knowing, or a slot never initialised): passed up with a wrong TCP
    /// header, which the receiving TCP drops for its checksum.
    Corrupted,
}

/// What becomes of a received packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The receiving host gets the packet with its header intact (or a wrong IP ID,
    /// which nothing checks).
    Deliver,
    /// Lost after the link.
    Discard(Discard),
}

impl Verdict {
    /// True for [`Verdict::Deliver`].
    pub fn is_deliver(self) -> bool {
        self == Verdict::Deliver
    }
}

/// Decompressor counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecompressorStats {
    /// Packets delivered.
    pub delivered: u64,
    /// [`Discard::Tossed`] packets.
    pub tossed: u64,
    /// [`Discard::BadSlot`] packets.
    pub bad_slot: u64,
    /// [`Discard::Corrupted`] packets.
    pub corrupted: u64,
    /// [`Decompressor::link_error`] calls.
    pub link_errors: u64,
}

/// The receiving side of RFC 1144 (`sl_uncompress_tcp`), which also plays the
/// receiving TCP's checksum test. See the module documentation for known and silent
/// losses.
#[derive(Clone, Debug)]
pub struct Decompressor {
    /// The header each slot holds, as the decompressor rebuilt it.
    slots: Vec<Option<TcpIpHeader>>,
    last_recv: Option<u8>,
    toss: bool,
    stats: DecompressorStats,
}

impl Decompressor {
    /// A decompressor with `slots` connection states (the compressor's number).
    ///
    /// # Panics
    /// When `slots` is 0.
    pub fn new(slots: u8) -> Self {
        assert!(slots > 0, "a VJ decompressor needs at least one slot");
        Decompressor {
            slots: vec![None; usize::from(slots)],
            last_recv: None,
            toss: false,
            stats: DecompressorStats::default(),
        }
    }

    /// The framing layer received a damaged frame (or knows it lost one): set the toss
    /// flag (RFC 1144 §4.2, `TYPE_ERROR`).
    pub fn link_error(&mut self) {
        self.stats.link_errors += 1;
        self.toss = true;
    }

    /// The toss flag is set: compressed packets without a connection number are
    /// discarded.
    pub fn is_tossing(&self) -> bool {
        self.toss
    }

    /// Counters.
    pub fn stats(&self) -> &DecompressorStats {
        &self.stats
    }

    /// One frame out of the link: `enc` as the compressor produced it, `h` the header
    /// the packet really had (what the compressor was given). Frames lost on the way
    /// are simply never passed; see the module documentation.
    pub fn receive(&mut self, enc: &Encoded, h: &TcpIpHeader) -> Verdict {
        let v = self.decode(enc, h);
        match v {
            Verdict::Deliver => self.stats.delivered += 1,
            Verdict::Discard(Discard::Tossed) => self.stats.tossed += 1,
            Verdict::Discard(Discard::BadSlot) => self.stats.bad_slot += 1,
            Verdict::Discard(Discard::Corrupted) => self.stats.corrupted += 1,
        }
        v
    }

    fn decode(&mut self, enc: &Encoded, h: &TcpIpHeader) -> Verdict {
        match enc.kind {
            PacketKind::Ip => Verdict::Deliver,
            PacketKind::UncompressedTcp => {
                if usize::from(enc.slot) >= self.slots.len() {
                    self.toss = true;
                    return Verdict::Discard(Discard::BadSlot);
                }
                self.last_recv = Some(enc.slot);
                self.toss = false;
                self.slots[usize::from(enc.slot)] = Some(*h);
                Verdict::Deliver
            }
            PacketKind::CompressedTcp => self.decode_compressed(enc.compressed_header(), h),
        }
    }

    fn decode_compressed(&mut self, b: &[u8], h: &TcpIpHeader) -> Verdict {
        let changes = b[0];
        let mut p = 1;
        if changes & NEW_C != 0 {
            let id = b[1];
            p = 2;
            if usize::from(id) >= self.slots.len() {
                self.toss = true;
                return Verdict::Discard(Discard::BadSlot);
            }
            self.toss = false;
            self.last_recv = Some(id);
        } else if self.toss {
            return Verdict::Discard(Discard::Tossed);
        }
        let Some(slot) = self.last_recv else {
            // The RFC's code would index state 255; treat it as a bad number.
            self.toss = true;
            return Verdict::Discard(Discard::BadSlot);
        };
        let Some(mut r) = self.slots[usize::from(slot)] else {
            // A zeroed state: the rebuilt header is garbage.
            return Verdict::Discard(Discard::Corrupted);
        };
        r.checksum = u16::from_be_bytes([b[p], b[p + 1]]);
        p += 2;
        let next = |p: &mut usize| -> u16 {
            if b[*p] == 0 {
                let v = u16::from_be_bytes([b[*p + 1], b[*p + 2]]);
                *p += 3;
                v
            } else {
                *p += 1;
                u16::from(b[*p - 1])
            }
        };
        if changes & TCP_PUSH_BIT != 0 {
            r.flags |= TH_PUSH;
        } else {
            r.flags &= !TH_PUSH;
        }
        match changes & SPECIALS_MASK {
            SPECIAL_I => {
                r.ack = r.ack.wrapping_add(r.payload_len);
                r.seq = r.seq.wrapping_add(r.payload_len);
            }
            SPECIAL_D => r.seq = r.seq.wrapping_add(r.payload_len),
            _ => {
                if changes & NEW_U != 0 {
                    r.flags |= TH_URG;
                    r.urgent = next(&mut p);
                } else {
                    r.flags &= !TH_URG;
                }
                if changes & NEW_W != 0 {
                    r.window = r.window.wrapping_add(next(&mut p));
                }
                if changes & NEW_A != 0 {
                    r.ack = r.ack.wrapping_add(u32::from(next(&mut p)));
                }
                if changes & NEW_S != 0 {
                    r.seq = r.seq.wrapping_add(u32::from(next(&mut p)));
                }
            }
        }
        if changes & NEW_I != 0 {
            r.ip_id = r.ip_id.wrapping_add(next(&mut p));
        } else {
            r.ip_id = r.ip_id.wrapping_add(1);
        }
        // The length comes from the frame, which is intact.
        r.payload_len = h.payload_len;
        self.slots[usize::from(slot)] = Some(r);
        if r.tcp_checksum_matches(h) {
            Verdict::Deliver
        } else {
            Verdict::Discard(Discard::Corrupted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 512;

    /// A bulk-data stream of one connection: segment k of `MSS` bytes.
    fn data(conn: u64, k: u32) -> TcpIpHeader {
        TcpIpHeader {
            conn,
            ip_id: 100 + k as u16,
            seq: 1_000 + k * MSS,
            ack: 1,
            window: 8_192,
            payload_len: MSS,
            ..TcpIpHeader::default()
        }
    }

    /// Sends `hs` through a compressor and a decompressor without loss.
    fn run(hs: &[TcpIpHeader]) -> Vec<(PacketKind, usize)> {
        let mut c = Compressor::new(DEFAULT_SLOTS);
        let mut d = Decompressor::new(DEFAULT_SLOTS);
        hs.iter()
            .map(|h| {
                let e = c.compress(h);
                assert_eq!(d.receive(&e, h), Verdict::Deliver, "{h:?}");
                (e.kind, e.header_bytes)
            })
            .collect()
    }

    use PacketKind::{CompressedTcp as C, Ip, UncompressedTcp as U};

    fn send(c: &mut Compressor, d: &mut Decompressor, h: TcpIpHeader) -> (Encoded, Verdict) {
        let e = c.compress(&h);
        (e, d.receive(&e, &h))
    }

    #[test]
    fn bulk_data_takes_three_bytes() {
        let mut hs: Vec<_> = (0..5).map(|k| data(1, k)).collect();
        hs[4].flags |= TH_PUSH;
        // First: the slot is set up with the full header. Then SPECIAL_D (seq moved by
        // the previous length, ack and window unchanged, IP ID + 1): the change mask and
        // the checksum; PSH is a bit of the mask.
        assert_eq!(run(&hs), vec![(U, 40), (C, 3), (C, 3), (C, 3), (C, 3)]);
        let mut c = Compressor::new(16);
        c.compress(&hs[0]);
        let e = c.compress(&hs[1]);
        assert_eq!(e.compressed_header(), &[SPECIAL_D, 0, 0]);
        let e = c.compress(&TcpIpHeader {
            checksum: 0xbeef,
            ..hs[2]
        });
        assert_eq!(e.compressed_header(), &[SPECIAL_D, 0xbe, 0xef]);
        let e = c.compress(&hs[3]);
        assert!(!e.explicit_slot());
        assert_eq!(c.stats().bytes_saved, 3 * 37);
    }

    #[test]
    fn data_deltas_and_ip_id_jumps() {
        let mut hs = vec![data(1, 0), data(1, 1)];
        // A short segment (seq moved by the previous length, 512: SPECIAL_D), then the
        // next one 100 bytes on: the previous length again, SPECIAL_D.
        let mut short = data(1, 2);
        short.payload_len = 100;
        hs.push(short);
        let mut after = data(1, 3);
        after.seq = short.seq + 100;
        hs.push(after);
        let mut jump = data(1, 4);
        jump.seq = after.seq + MSS;
        jump.ip_id = after.ip_id + 3; // other packets in between: NEW_I, 1 byte
        hs.push(jump);
        let mut wrap = jump;
        wrap.seq += MSS;
        wrap.ip_id = wrap.ip_id.wrapping_add(300); // NEW_I, 3 bytes
        wrap.window = 8_000; // down by 192: the 16-bit delta 65344, 3 bytes; seq 3 bytes
        hs.push(wrap);
        assert_eq!(
            run(&hs),
            vec![(U, 40), (C, 3), (C, 3), (C, 3), (C, 4), (C, 3 + 3 + 3 + 3)]
        );
    }

    #[test]
    fn pure_acks() {
        // The receiver's side: ACKs every 2 segments, then a 100-byte one.
        let ack = |a: u32, id: u16| TcpIpHeader {
            conn: 2,
            ip_id: id,
            seq: 7,
            ack: a,
            window: 8_192,
            ..TcpIpHeader::default()
        };
        let hs = [
            ack(1_000, 1),
            ack(1_000 + 2 * MSS, 2),       // NEW_A, 1024 ≥ 256: 3 bytes
            ack(1_000 + 2 * MSS + 100, 3), // NEW_A, 1 byte
            TcpIpHeader {
                window: 7_000,
                ..ack(1_000 + 4 * MSS, 4)
            }, // NEW_W + NEW_A
            ack(1_000 + 4 * MSS, 5),       // only the window moved back (+1192): 3 + 3
            ack(1_000 + 4 * MSS, 6),       // nothing changed: a repeated ACK goes whole
        ];
        assert_eq!(
            run(&hs),
            vec![(U, 40), (C, 6), (C, 4), (C, 9), (C, 6), (U, 40)]
        );
    }

    #[test]
    fn data_after_a_bare_ack_and_echo() {
        // Interactive: an ACK, then data with the same seq and ack (changes 0, data
        // after a bare ACK: compressed), then echoed data: SPECIAL_I.
        let a = TcpIpHeader {
            conn: 3,
            ip_id: 1,
            seq: 50,
            ack: 900,
            window: 4096,
            ..TcpIpHeader::default()
        };
        let b = TcpIpHeader {
            ip_id: 2,
            payload_len: 1,
            flags: TH_ACK | TH_PUSH,
            ..a
        };
        let c = TcpIpHeader {
            ip_id: 3,
            seq: 51,
            ack: 901,
            ..b
        };
        assert_eq!(run(&[a, b, c]), vec![(U, 40), (C, 3), (C, 3)]);
        let mut comp = Compressor::new(16);
        comp.compress(&a);
        comp.compress(&b);
        let e = comp.compress(&c);
        assert_eq!(e.compressed_header()[0], SPECIAL_I | TCP_PUSH_BIT);
    }

    #[test]
    fn what_goes_uncompressed_or_as_ip() {
        let base = data(1, 0);
        let next = data(1, 1);
        let check = |h: TcpIpHeader, want: PacketKind| {
            let mut c = Compressor::new(16);
            c.compress(&base);
            let e = c.compress(&h);
            assert_eq!(e.kind, want, "{h:?}");
            if want != C {
                assert_eq!(e.header_bytes, h.header_len());
            }
        };
        check(next, C);
        check(
            TcpIpHeader {
                flags: TH_ACK | TH_FIN,
                ..next
            },
            Ip,
        );
        check(
            TcpIpHeader {
                flags: TH_SYN,
                ..next
            },
            Ip,
        );
        check(
            TcpIpHeader {
                flags: TH_ACK | TH_RST,
                ..next
            },
            Ip,
        );
        check(TcpIpHeader { flags: 0, ..next }, Ip);
        check(
            TcpIpHeader {
                fragment: true,
                ..next
            },
            Ip,
        );
        check(
            TcpIpHeader {
                options: 99,
                ..next
            },
            U,
        );
        check(
            TcpIpHeader {
                tcp_hdr_len: 32,
                ..next
            },
            U,
        );
        check(TcpIpHeader { tos: 0x03, ..next }, U); // CE mark
        check(TcpIpHeader { ttl: 63, ..next }, U);
        check(
            TcpIpHeader {
                flags: TH_ACK | TH_ECE,
                ..next
            },
            U,
        );
        check(
            TcpIpHeader {
                flags: TH_ACK | TH_CWR,
                ..next
            },
            U,
        );
        check(TcpIpHeader { urgent: 5, ..next }, U); // urgent pointer without URG
                                                     // Sequence number backwards (a retransmission) or 2^16 ahead.
        check(
            TcpIpHeader {
                seq: base.seq - MSS,
                ..next
            },
            U,
        );
        check(
            TcpIpHeader {
                seq: base.seq + 65_536,
                ..next
            },
            U,
        );
        check(
            TcpIpHeader {
                seq: base.seq + 65_535,
                ..next
            },
            C,
        );
        check(
            TcpIpHeader {
                ack: base.ack.wrapping_sub(1),
                ..next
            },
            U,
        );
        // The same segment again: nothing changed.
        check(
            TcpIpHeader {
                ip_id: base.ip_id + 1,
                ..base
            },
            U,
        );
        // Changes that look like SPECIAL_D (U, W, A, S all set): sent whole.
        check(
            TcpIpHeader {
                flags: TH_ACK | TH_URG,
                urgent: 1,
                window: 1,
                ack: 2,
                ..next
            },
            U,
        );
        // URG with a pointer: NEW_U, carried.
        check(
            TcpIpHeader {
                flags: TH_ACK | TH_URG,
                urgent: 1,
                ..next
            },
            C,
        );
    }

    #[test]
    fn retransmission_goes_uncompressed_and_resyncs_after_link_error() {
        let mut c = Compressor::new(16);
        let mut d = Decompressor::new(16);
        let mut out = Vec::new();
        for k in 0..4 {
            let h = data(1, k);
            let e = c.compress(&h);
            out.push(d.receive(&e, &h));
        }
        // Segment 4's frame arrives damaged: the framing layer says so.
        let h4 = data(1, 4);
        c.compress(&h4);
        d.link_error();
        assert!(d.is_tossing());
        // Segments 5..9 are compressed: every one tossed.
        for k in 5..10 {
            let h = data(1, k);
            let e = c.compress(&h);
            assert_eq!(e.kind, C);
            out.push(d.receive(&e, &h));
        }
        // The retransmission of segment 4 after the timeout: seq went backwards.
        let mut r = data(1, 4);
        r.ip_id = 200;
        let e = c.compress(&r);
        assert_eq!((e.kind, e.header_bytes), (U, 40));
        out.push(d.receive(&e, &r));
        assert!(!d.is_tossing());
        // Go-back-N goes on compressed, and is delivered.
        let mut h = r;
        for _ in 5..8 {
            h.seq += MSS;
            h.ip_id += 1;
            let e = c.compress(&h);
            assert_eq!((e.kind, e.header_bytes), (C, 3));
            out.push(d.receive(&e, &h));
        }
        let tossed = Verdict::Discard(Discard::Tossed);
        let ok = Verdict::Deliver;
        assert_eq!(
            out,
            vec![ok, ok, ok, ok, tossed, tossed, tossed, tossed, tossed, ok, ok, ok, ok]
        );
        assert_eq!(d.stats().tossed, 5);
        assert_eq!(d.stats().link_errors, 1);
    }

    #[test]
    fn silent_loss_corrupts_until_an_uncompressed_packet() {
        // Ludwig et al., Fig. 9: a link reset flushes 5 whole frames; the decompressor
        // never hears of them and rebuilds segment i + 5 as segment i.
        let mut c = Compressor::new(16);
        let mut d = Decompressor::new(16);
        for k in 0..3 {
            let h = data(1, k);
            assert!(d.receive(&c.compress(&h), &h).is_deliver());
        }
        for k in 3..8 {
            c.compress(&data(1, k)); // flushed by the reset
        }
        for k in 8..21 {
            let h = data(1, k);
            let e = c.compress(&h);
            assert_eq!(e.kind, C);
            assert_eq!(
                d.receive(&e, &h),
                Verdict::Discard(Discard::Corrupted),
                "segment {k}"
            );
        }
        assert!(!d.is_tossing(), "nothing told the decompressor");
        assert_eq!(d.stats().corrupted, 13);
        // The timeout's retransmission of segment 3 resynchronises.
        let mut r = data(1, 3);
        r.ip_id = 500;
        let e = c.compress(&r);
        assert_eq!(e.kind, U);
        assert!(d.receive(&e, &r).is_deliver());
        let mut h = r;
        h.seq += MSS;
        h.ip_id += 1;
        assert!(d.receive(&c.compress(&h), &h).is_deliver());
    }

    #[test]
    fn a_lost_type_ip_packet_does_not_desynchronise() {
        // A lost TYPE_IP packet (here a FIN) leaves no trace in either state.
        let mut c = Compressor::new(16);
        let mut d = Decompressor::new(16);
        let h0 = data(1, 0);
        d.receive(&c.compress(&h0), &h0);
        let fin = TcpIpHeader {
            flags: TH_ACK | TH_FIN,
            ..data(1, 1)
        };
        assert_eq!(c.compress(&fin).kind, Ip); // lost
        let h2 = data(1, 1);
        assert!(d.receive(&c.compress(&h2), &h2).is_deliver());
    }

    #[test]
    fn explicit_slot_clears_toss_but_not_a_stale_state() {
        // Two connections interleaved: every compressed header names its slot (C bit).
        let mut c = Compressor::new(16);
        let mut d = Decompressor::new(16);
        let (e, v) = send(&mut c, &mut d, data(1, 0));
        assert_eq!((e.kind, e.slot, v), (U, 0, Verdict::Deliver));
        let (e, v) = send(&mut c, &mut d, data(2, 0));
        assert_eq!((e.kind, e.slot, v), (U, 1, Verdict::Deliver));
        let (e, v) = send(&mut c, &mut d, data(1, 1));
        assert_eq!(
            (e.kind, e.header_bytes, e.explicit_slot(), v),
            (C, 4, true, Verdict::Deliver)
        );
        // The frame of connection 2's next segment arrives damaged.
        c.compress(&data(2, 1));
        d.link_error();
        // Connection 1's next segment names slot 0: the toss flag is cleared, and slot
        // 0 is intact.
        let (e, v) = send(&mut c, &mut d, data(1, 2));
        assert_eq!((e.explicit_slot(), v), (true, Verdict::Deliver));
        assert!(!d.is_tossing());
        // Connection 2's next one names slot 1, which still holds segment 0: rebuilt as
        // segment 1, and dropped by TCP.
        let (e, v) = send(&mut c, &mut d, data(2, 2));
        assert_eq!(
            (e.explicit_slot(), v),
            (true, Verdict::Discard(Discard::Corrupted))
        );
    }

    #[test]
    fn slot_id_left_out_only_when_unchanged() {
        let mut c = Compressor::new(16);
        c.set_compress_slot_id(false);
        c.compress(&data(1, 0));
        let e = c.compress(&data(1, 1));
        assert_eq!((e.header_bytes, e.explicit_slot()), (4, true));
        assert_eq!(e.compressed_header(), &[SPECIAL_D | NEW_C, 0, 0, 0]);
    }

    #[test]
    fn slot_reuse_is_least_recently_used() {
        let mut c = Compressor::new(16);
        let mut d = Decompressor::new(16);
        let mut send = |c: &mut Compressor, h: TcpIpHeader| {
            let (e, v) = send(c, &mut d, h);
            assert!(v.is_deliver(), "{h:?}");
            e
        };
        // Connections 0..16 take slots 0..16.
        for conn in 0..16 {
            let e = send(&mut c, data(conn, 0));
            assert_eq!((e.kind, e.slot), (U, conn as u8));
        }
        // Connection 0 is used again (compressed, naming its slot): now 1 is the oldest.
        let e = send(&mut c, data(0, 1));
        assert_eq!((e.kind, e.slot, e.header_bytes), (C, 0, 4));
        // A 17th connection takes slot 1, and connection 1 then needs a slot again: the
        // oldest is now 2.
        let e = send(&mut c, data(16, 0));
        assert_eq!((e.kind, e.slot), (U, 1));
        let e = send(&mut c, data(1, 1));
        assert_eq!((e.kind, e.slot), (U, 2));
        assert_eq!(c.stats().misses, 18);
        // Connection 2 lost its slot: whole header again, in slot 3.
        let e = send(&mut c, data(2, 1));
        assert_eq!((e.kind, e.slot), (U, 3));
    }

    #[test]
    fn decompressor_rejects_slots_it_does_not_have() {
        let mut c = Compressor::new(16);
        let mut d = Decompressor::new(4);
        for conn in 0..5 {
            let h = data(conn, 0);
            let e = c.compress(&h);
            let v = d.receive(&e, &h);
            if conn < 4 {
                assert!(v.is_deliver());
            } else {
                assert_eq!(v, Verdict::Discard(Discard::BadSlot));
                assert!(d.is_tossing());
            }
        }
        // A compressed packet before any slot is known.
        let mut d = Decompressor::new(16);
        let mut c = Compressor::new(16);
        c.compress(&data(1, 0)); // lost
        let h = data(1, 1);
        assert_eq!(
            d.receive(&c.compress(&h), &h),
            Verdict::Discard(Discard::BadSlot)
        );
    }

    #[test]
    fn urg_dropped_in_a_special_case_is_an_rfc_1144_quirk() {
        // The decompressor clears URG only outside the special cases. A segment with URG
        // and pointer 0, then one without URG (pointer still 0) whose changes make
        // SPECIAL_D: rebuilt with URG still set, so TCP drops it. Real stacks clear the
        // pointer with the flag only if it was non-zero, which sends that segment whole.
        let mut c = Compressor::new(16);
        let mut d = Decompressor::new(16);
        let mut h = TcpIpHeader {
            flags: TH_ACK | TH_URG,
            ..data(1, 0)
        };
        send(&mut c, &mut d, h);
        h.flags = TH_ACK;
        h.seq += MSS;
        h.ip_id += 1;
        let (e, v) = send(&mut c, &mut d, h);
        assert_eq!((e.kind, v), (C, Verdict::Discard(Discard::Corrupted)));
        let mut h = TcpIpHeader {
            flags: TH_ACK | TH_URG,
            urgent: 7,
            ..data(2, 0)
        };
        send(&mut c, &mut d, h);
        h.flags = TH_ACK;
        h.urgent = 0;
        h.seq += MSS;
        h.ip_id += 1;
        let (e, v) = send(&mut c, &mut d, h);
        assert_eq!((e.kind, v), (U, Verdict::Deliver));
    }

    proptest::proptest! {
        /// Without losses, every packet is rebuilt exactly, and the header sizes add up.
        #[test]
        fn lossless_streams_are_rebuilt_exactly(
            steps in proptest::collection::vec(
                (0u64..3, 0u32..3, 0u32..70_000, 0u32..2000, 0i32..3, 0u8..8, 0u16..600),
                1..200,
            ),
            slots in 1u8..4,
        ) {
            let mut c = Compressor::new(slots);
            let mut d = Decompressor::new(slots);
            let mut last: [TcpIpHeader; 3] =
                core::array::from_fn(|i| TcpIpHeader { conn: i as u64, ..TcpIpHeader::default() });
            let mut saved = 0u64;
            for (conn, what, dseq, dack, dwin, fl, len) in steps {
                let o = last[conn as usize];
                let mut h = o;
                h.ip_id = o.ip_id.wrapping_add(1 + (dseq % 3) as u16);
                match what {
                    0 => h.seq = o.seq.wrapping_add(o.payload_len),
                    1 => h.seq = o.seq.wrapping_add(dseq),
                    _ => h.seq = o.seq.wrapping_sub(dseq % 5000),
                }
                h.ack = o.ack.wrapping_add(dack);
                h.window = o.window.wrapping_add((dwin * 100) as u16);
                h.flags = TH_ACK
                    | if fl & 1 != 0 { TH_PUSH } else { 0 }
                    | if fl & 2 != 0 { TH_URG } else { 0 }
                    | if fl == 7 { TH_ECE } else { 0 };
                // As BSD and Linux send it: a non-zero pointer with URG, 0 without (see
                // `urg_dropped_in_a_special_case_is_an_rfc_1144_quirk`).
                h.urgent = if fl & 2 != 0 { len.max(1) } else { 0 };
                h.payload_len = u32::from(len);
                h.checksum = len ^ 0x5a5a;
                let e = c.compress(&h);
                proptest::prop_assert_eq!(d.receive(&e, &h), Verdict::Deliver);
                if e.kind == PacketKind::CompressedTcp {
                    proptest::prop_assert!((3..=MAX_COMPRESSED).contains(&e.header_bytes));
                    proptest::prop_assert_eq!(e.compressed_header().len(), e.header_bytes);
                    saved += (h.header_len() - e.header_bytes) as u64;
                } else {
                    proptest::prop_assert_eq!(e.header_bytes, 40);
                }
                last[conn as usize] = h;
            }
            proptest::prop_assert_eq!(c.stats().bytes_saved, saved);
        }
    }
}
