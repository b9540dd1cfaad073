//! The streaming analyzer: decoded packets in, annotations and connection summaries out.
//!
//! ```
//! use airtrace_analysis::{Analyzer, PacketIn};
//! use airtrace_wire::Decoded;
//! let mut analyzer = Analyzer::new();
//! let decoded = Decoded::default(); // a frame that carried no TCP
//! let mut ann = airtrace_analysis::Annotation::default();
//! analyzer.process(&PacketIn { frame: 1, ts_ns: 0, wire_len: 60, decoded: &decoded, payload: &[] }, &mut ann);
//! assert_eq!(ann.conn, u32::MAX);
//! assert!(analyzer.finish().is_empty());
//! ```

use rustc_hash::FxHashMap;

use airtrace_wire::{tcp_flags, Decoded, Tcp, Transport};

use crate::annotation::{Annotation, Flags};
use crate::conn::{Conn, Seg};
use crate::dups::MacRetries;
use crate::flow::{Endpoint, FlowKey};
use crate::metrics::{ConnState, ConnSummary};

/// A closed or reset connection is finished after this much silence.
const CLOSED_LINGER_NS: i64 = 120_000_000_000;
/// An open connection is finished after this much silence.
pub(crate) const OPEN_IDLE_NS: i64 = 3_600_000_000_000;
/// Finished connections are looked for every this many packets.
pub(crate) const SWEEP_EVERY: u64 = 1 << 16;
/// Capture times are clamped to ±2^62 ns (±146 years around 1970) so that the
/// difference of any two fits in an `i64`: a corrupt timestamp must not overflow.
pub(crate) const TS_LIMIT: i64 = (1 << 62) - 1;
/// Entries of the connection cache (a power of two).
const CACHE_SIZE: usize = 1024;

/// The cache entry of a packet's connection: a cheap hash, the same for both
/// directions. A hit is checked against the connection's endpoints.
#[inline]
fn cache_index(src: &Endpoint, dst: &Endpoint) -> usize {
    let h = (src.addr ^ dst.addr) as u64 ^ ((src.port ^ dst.port) as u64) << 40;
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize & (CACHE_SIZE - 1)
}

/// One decoded packet, as the analyzer takes it.
pub struct PacketIn<'a> {
    /// 1-based frame number in the file.
    pub frame: u64,
    pub ts_ns: i64,
    /// Length of the frame on the wire.
    pub wire_len: u32,
    pub decoded: &'a Decoded,
    /// The captured transport payload.
    pub payload: &'a [u8],
}

/// Rebuilds TCP connections from packets in capture order.
pub struct Analyzer {
    /// Live connections by key, as indices into `conns`.
    live: FxHashMap<FlowKey, usize>,
    /// Connection slots; a finished connection's slot is reused (see `free`).
    conns: Vec<Conn>,
    free: Vec<usize>,
    /// A direct-mapped cache in front of `live`: slot + 1 by [`cache_index`], 0 if empty.
    cache: Box<[u32; CACHE_SIZE]>,
    finished: Vec<ConnSummary>,
    next_id: u32,
    mac: MacRetries,
    first_ts: Option<i64>,
    packets: u64,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer {
            live: FxHashMap::default(),
            conns: Vec::new(),
            free: Vec::new(),
            cache: Box::new([0; CACHE_SIZE]),
            finished: Vec::new(),
            next_id: 0,
            mac: MacRetries::default(),
            first_ts: None,
            packets: 0,
        }
    }
}

impl Analyzer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Analyses the next packet of the capture into `ann` (which it resets).
    ///
    /// Always inlined: called once per packet from the loops of `file.rs`, it costs
    /// about 25 instructions a packet more as a call.
    #[inline(always)]
    pub fn process(&mut self, p: &PacketIn<'_>, ann: &mut Annotation) {
        *ann = Annotation::default();
        let (ts, t0) = self.tick(p.ts_ns);
        ann.ts_ns = ts;
        let mac_retry = p
            .decoded
            .wlan
            .as_ref()
            .is_some_and(|w| self.mac.is_retry(w));
        if mac_retry {
            ann.flags.insert(Flags::MAC_RETRY);
        }
        let (Some(ip), Transport::Tcp(tcp)) = (&p.decoded.ip, &p.decoded.transport) else {
            return;
        };
        let src = Endpoint::new(ip.src, tcp.src_port);
        let dst = Endpoint::new(ip.dst, tcp.dst_port);
        let syn_only = tcp.flags & (tcp_flags::SYN | tcp_flags::ACK) == tcp_flags::SYN;

        let index = cache_index(&src, &dst);
        let cached = (self.cache[index] as usize).checked_sub(1);
        let hit =
            cached.and_then(|slot| Some((slot, self.conns.get(slot)?.direction_of(&src, &dst)?)));
        let (mut slot, mut d) = match hit {
            Some(found) => found,
            None => {
                let found = self.lookup(src, dst, tcp, ts, p.frame);
                self.cache[index] = found.0 as u32 + 1;
                found
            }
        };
        if syn_only
            && self.conns[slot]
                .base_seq(d)
                .is_some_and(|isn| isn != tcp.seq)
        {
            (slot, d) = (self.reuse(slot, src, dst, ts, t0, p.frame), 0);
            ann.flags.insert(Flags::REUSED_PORTS);
        }
        let conn = &mut self.conns[slot];
        ann.conn = conn.id;
        ann.dir = d as u8;

        let may_repeat = conn.may_repeat(d, tcp);
        let rtt = conn.handshake_rtt_ns();
        let dir = &mut conn.dirs[d];
        if mac_retry {
            dir.m.packets += 1;
            dir.m.mac_retries += 1;
            return;
        }
        if dir
            .recent
            .is_capture_duplicate(ip, tcp, ts, may_repeat, rtt)
        {
            dir.m.packets += 1;
            dir.m.capture_duplicates += 1;
            ann.flags.insert(Flags::CAPTURE_DUPLICATE);
            return;
        }
        let seg = Seg {
            frame: p.frame,
            ts_ns: ts,
            tcp,
            wire_len: p.wire_len,
            truncated: p.decoded.stop.is_some(),
        };
        conn.process(d, &seg, ann);
    }

    /// Counts a packet at `ts_ns` and sweeps when it is time: the part of
    /// [`Analyzer::process`] every packet goes through. Returns the packet's time,
    /// clamped, and the first packet's.
    #[inline(always)]
    fn tick(&mut self, ts_ns: i64) -> (i64, i64) {
        let ts = ts_ns.clamp(-TS_LIMIT, TS_LIMIT);
        let t0 = *self.first_ts.get_or_insert(ts);
        self.packets += 1;
        if self.packets.is_multiple_of(SWEEP_EVERY) {
            self.sweep(ts, t0);
        }
        (ts, t0)
    }

    /// Sets the number of packets counted so far, for an analyzer that is given only
    /// some of a capture's packets: its next packet is the capture's `n + 1`-th. It must
    /// still be given every `SWEEP_EVERY`-th packet (if only through [`Analyzer::skip`]),
    /// and the first, so that it ends idle connections where a single analyzer would.
    #[inline]
    pub(crate) fn set_packets_seen(&mut self, n: u64) {
        self.packets = n;
    }

    /// Takes note of a packet that another analyzer analyses (on another thread, see `analyze_file_sharded`),
    /// captured at `ts_ns`, that carries no 802.11 header: it is counted, so that every
    /// analyzer of a capture finishes idle connections at the same packets and times as
    /// one analyzer alone would.
    #[inline]
    pub fn skip(&mut self, ts_ns: i64) {
        self.tick(ts_ns);
    }

    /// [`Analyzer::skip`] for a decoded packet, which may carry an 802.11 header: the
    /// MAC-retry detector sees every frame.
    #[inline]
    pub fn pass(&mut self, p: &PacketIn<'_>) {
        self.tick(p.ts_ns);
        if let Some(w) = &p.decoded.wlan {
            self.mac.is_retry(w);
        }
    }

    /// The slot and direction of a packet's connection when the cache missed: from the
    /// table, or a new connection.
    #[cold]
    #[inline(never)]
    fn lookup(
        &mut self,
        src: Endpoint,
        dst: Endpoint,
        tcp: &Tcp,
        ts: i64,
        frame: u64,
    ) -> (usize, usize) {
        let key = FlowKey::of(src, dst);
        if let Some(&slot) = self.live.get(&key) {
            if let Some(d) = self.conns[slot].direction_of(&src, &dst) {
                return (slot, d);
            }
        }
        // The client is the SYN's sender; for a SYN/ACK, its receiver.
        let synack =
            tcp.flags & (tcp_flags::SYN | tcp_flags::ACK) == (tcp_flags::SYN | tcp_flags::ACK);
        let (a, b, d) = if synack { (dst, src, 1) } else { (src, dst, 0) };
        let c = Conn::new(self.next_id, a, b, ts, frame);
        self.next_id += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.conns[slot] = c;
                slot
            }
            None => {
                self.conns.push(c);
                self.conns.len() - 1
            }
        };
        self.live.insert(key, slot);
        (slot, d)
    }

    /// A new SYN with a new initial sequence number: the ports are reused, and a new
    /// connection takes the slot of the old one, whose summary is kept.
    /// Returns the slot; the SYN's sender is the new connection's `a` (direction 0).
    #[cold]
    #[inline(never)]
    fn reuse(
        &mut self,
        slot: usize,
        src: Endpoint,
        dst: Endpoint,
        ts: i64,
        t0: i64,
        frame: u64,
    ) -> usize {
        self.finished.push(self.conns[slot].summary(t0));
        let mut c = Conn::new(self.next_id, src, dst, ts, frame);
        c.reused_ports = true;
        self.next_id += 1;
        self.conns[slot] = c;
        slot
    }

    /// Moves connections that have been silent long enough to the finished list.
    fn sweep(&mut self, now: i64, t0: i64) {
        let newly_freed = self.free.len();
        let (conns, finished, free) = (&self.conns, &mut self.finished, &mut self.free);
        self.live.retain(|_, slot| {
            let c = &conns[*slot];
            let idle = now - c.last_ts;
            let done = match c.state {
                ConnState::Open => idle > OPEN_IDLE_NS,
                ConnState::Closed | ConnState::Reset => idle > CLOSED_LINGER_NS,
            };
            if done {
                finished.push(c.summary(t0));
                free.push(*slot);
            }
            !done
        });
        for &slot in &self.free[newly_freed..] {
            // Drop the finished connections' buffers now, not when the slot is reused.
            self.conns[slot].release();
        }
        if self.free.len() > newly_freed {
            self.cache.fill(0);
        }
    }

    /// The summaries of every connection, in order of their first packet.
    pub fn finish(mut self) -> Vec<ConnSummary> {
        let t0 = self.first_ts.unwrap_or(0);
        let conns = &self.conns;
        self.finished
            .extend(self.live.values().map(|&slot| conns[slot].summary(t0)));
        self.finished.sort_by_key(|c| c.id);
        self.finished
    }
}
