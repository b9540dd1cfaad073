//! The packets table, built column by column in Rust and handed to pyarrow as
//! raw little-endian buffers (`pyarrow.Array.from_buffers`): no per-row Python.

use std::collections::HashMap;

use airtrace_analysis::{Annotation, Flags, PacketSink, NONE_I64};
use airtrace_pcap::Record;
use airtrace_wire::{Decoded, Transport};

/// A fixed-width value that can be written as little-endian bytes.
pub trait Le: Copy + Default {
    const KIND: &'static str;
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! le {
    ($($t:ty => $k:literal),*) => {$(
        impl Le for $t {
            const KIND: &'static str = $k;
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()); }
        }
    )*};
}
le!(u8 => "u8", u16 => "u16", u32 => "u32", u64 => "u64", i8 => "i8", i64 => "i64", f64 => "f64");

/// A growable bit map (Arrow's validity and boolean layout: LSB first).
#[derive(Default)]
pub struct Bits {
    bytes: Vec<u8>,
    len: usize,
    ones: usize,
}

impl Bits {
    fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit {
            *self.bytes.last_mut().expect("pushed") |= 1 << (self.len % 8);
            self.ones += 1;
        }
        self.len += 1;
    }
}

/// One column of fixed-width values with optional nulls.
pub struct Col<T: Le> {
    data: Vec<u8>,
    valid: Bits,
    _t: std::marker::PhantomData<T>,
}

impl<T: Le> Default for Col<T> {
    fn default() -> Self {
        Col {
            data: Vec::new(),
            valid: Bits::default(),
            _t: std::marker::PhantomData,
        }
    }
}

impl<T: Le> Col<T> {
    fn push(&mut self, v: Option<T>) {
        v.unwrap_or_default().put(&mut self.data);
        self.valid.push(v.is_some());
    }
    fn export(self, name: &str) -> Exported {
        let validity = (self.valid.ones != self.valid.len).then_some(self.valid.bytes);
        Exported {
            name: name.to_string(),
            kind: T::KIND,
            data: self.data,
            validity,
            dictionary: None,
        }
    }
}

/// Strings with few distinct values, stored as u32 indices into a dictionary.
#[derive(Default)]
pub struct DictCol {
    index: Col<u32>,
    values: Vec<String>,
    lookup: HashMap<String, u32>,
}

impl DictCol {
    fn push(&mut self, v: Option<&str>) {
        let i = v.map(|s| match self.lookup.get(s) {
            Some(&i) => i,
            None => {
                let i = self.values.len() as u32;
                self.values.push(s.to_string());
                self.lookup.insert(s.to_string(), i);
                i
            }
        });
        self.index.push(i);
    }
    fn export(self, name: &str) -> Exported {
        let mut e = self.index.export(name);
        e.kind = "dict";
        e.dictionary = Some(self.values);
        e
    }
}

/// A column ready for Python: name, kind, data buffer, validity bit map, dictionary.
pub struct Exported {
    pub name: String,
    pub kind: &'static str,
    pub data: Vec<u8>,
    pub validity: Option<Vec<u8>>,
    pub dictionary: Option<Vec<String>>,
}

/// Collects the packets table as a [`PacketSink`].
#[derive(Default)]
pub struct PacketColumns {
    t0: Option<i64>,
    frame: Col<u64>,
    time_ns: Col<i64>,
    time_rel: Col<f64>,
    length: Col<u32>,
    caplen: Col<u32>,
    ip_src: DictCol,
    ip_dst: DictCol,
    protocol: Col<u8>,
    ip_id: Col<u32>,
    ttl: Col<u8>,
    src_port: Col<u16>,
    dst_port: Col<u16>,
    conn: Col<u32>,
    dir: Col<u8>,
    seq: Col<u32>,
    ack: Col<u32>,
    seq_rel: Col<u32>,
    ack_rel: Col<u32>,
    tcp_flags: Col<u16>,
    seglen: Col<u32>,
    window: Col<u32>,
    tsval: Col<u32>,
    tsecr: Col<u32>,
    sack_blocks: Col<u8>,
    dupack_num: Col<u32>,
    ack_rtt: Col<f64>,
    bytes_in_flight: Col<i64>,
    retrans_kind: DictCol,
    backoff: Col<u8>,
    idle_gap: Col<f64>,
    rto: Col<f64>,
    wlan_seq: Col<u16>,
    wlan_retry: Bits,
    signal_dbm: Col<i8>,
    rate_mbps: Col<f64>,
    bad_fcs: Bits,
    stop_layer: DictCol,
    flags: Vec<Bits>,
}

fn seconds(ns: i64) -> Option<f64> {
    (ns != NONE_I64).then_some(ns as f64 * 1e-9)
}

impl PacketSink for PacketColumns {
    fn packet(&mut self, r: &Record<'_>, d: &Decoded, a: &Annotation) {
        // `time` is the record's own; `time_rel` is on the analysis clock, which a
        // frame dated decades away does not move (Flags::TIME_ANOMALY).
        let t0 = *self.t0.get_or_insert(a.ts_ns);
        self.frame.push(Some(r.frame));
        self.time_ns.push(Some(r.ts_ns));
        self.time_rel.push(Some((a.ts_ns - t0) as f64 * 1e-9));
        self.length.push(Some(r.orig_len));
        self.caplen.push(Some(r.data.len() as u32));
        let ip = d.ip.as_ref();
        self.ip_src.push(ip.map(|i| i.src.to_string()).as_deref());
        self.ip_dst.push(ip.map(|i| i.dst.to_string()).as_deref());
        self.protocol.push(ip.map(|i| i.protocol));
        self.ip_id.push(ip.map(|i| i.id));
        self.ttl.push(ip.map(|i| i.ttl));
        let (sp, dp) = match &d.transport {
            Transport::Tcp(t) => (Some(t.src_port), Some(t.dst_port)),
            Transport::Udp(u) => (Some(u.src_port), Some(u.dst_port)),
            _ => (None, None),
        };
        self.src_port.push(sp);
        self.dst_port.push(dp);
        let tcp = d.tcp().filter(|_| a.conn != u32::MAX);
        let analysed = tcp.is_some()
            && !a.flags.contains(Flags::CAPTURE_DUPLICATE)
            && !a.flags.contains(Flags::MAC_RETRY);
        let when = |v| if analysed { Some(v) } else { None };
        self.conn.push(tcp.map(|_| a.conn));
        self.dir.push(tcp.map(|_| a.dir));
        self.seq.push(tcp.map(|t| t.seq));
        self.ack.push(tcp.map(|t| t.ack));
        self.seq_rel.push(when(a.seq_rel));
        self.ack_rel.push(when(a.ack_rel));
        self.tcp_flags.push(tcp.map(|t| t.flags));
        self.seglen.push(tcp.map(|t| t.payload_len));
        self.window.push(when(a.window));
        self.tsval.push(tcp.and_then(|t| t.timestamps).map(|t| t.0));
        self.tsecr.push(tcp.and_then(|t| t.timestamps).map(|t| t.1));
        self.sack_blocks.push(tcp.map(|t| t.sack_count));
        self.dupack_num
            .push((a.dupack_num > 0).then_some(a.dupack_num));
        self.ack_rtt.push(seconds(a.ack_rtt_ns));
        self.bytes_in_flight
            .push((a.bytes_in_flight >= 0).then_some(a.bytes_in_flight));
        let kind = a.retrans_kind.name();
        self.retrans_kind.push((!kind.is_empty()).then_some(kind));
        self.backoff.push((a.backoff > 0).then_some(a.backoff));
        self.idle_gap.push(seconds(a.idle_gap_ns));
        self.rto.push(seconds(a.since_first_tx_ns));
        let wlan = d.wlan.as_ref();
        self.wlan_seq.push(wlan.and_then(|w| w.seq));
        self.wlan_retry.push(wlan.is_some_and(|w| w.retry));
        let rt = d.radiotap.as_ref();
        self.signal_dbm.push(rt.and_then(|r| r.signal_dbm));
        self.rate_mbps
            .push(rt.and_then(|r| r.rate_500kbps).map(|r| r as f64 * 0.5));
        self.bad_fcs.push(rt.is_some_and(|r| r.bad_fcs()));
        self.stop_layer.push(d.stop.map(|s| s.layer.name()));
        if self.flags.is_empty() {
            self.flags.resize_with(Flags::ALL.len(), Bits::default);
        }
        for (bits, (flag, _)) in self.flags.iter_mut().zip(Flags::ALL) {
            bits.push(a.flags.contains(*flag));
        }
    }
}

impl PacketColumns {
    /// The number of rows and the columns, in table order.
    pub fn export(mut self) -> (usize, Vec<Exported>) {
        let rows = self.frame.valid.len;
        let bool_col = |name: &str, b: Bits| Exported {
            name: name.to_string(),
            kind: "bool",
            data: b.bytes,
            validity: None,
            dictionary: None,
        };
        if self.flags.is_empty() {
            self.flags.resize_with(Flags::ALL.len(), Bits::default);
        }
        let mut out = vec![
            self.frame.export("frame"),
            self.time_ns.export("time"),
            self.time_rel.export("time_rel"),
            self.length.export("length"),
            self.caplen.export("caplen"),
            self.ip_src.export("ip_src"),
            self.ip_dst.export("ip_dst"),
            self.protocol.export("protocol"),
            self.ip_id.export("ip_id"),
            self.ttl.export("ttl"),
            self.src_port.export("src_port"),
            self.dst_port.export("dst_port"),
            self.conn.export("conn"),
            self.dir.export("dir"),
            self.seq.export("seq"),
            self.ack.export("ack"),
            self.seq_rel.export("seq_rel"),
            self.ack_rel.export("ack_rel"),
            self.tcp_flags.export("tcp_flags"),
            self.seglen.export("seglen"),
            self.window.export("window"),
            self.tsval.export("tsval"),
            self.tsecr.export("tsecr"),
            self.sack_blocks.export("sack_blocks"),
            self.dupack_num.export("dupack_num"),
            self.ack_rtt.export("ack_rtt"),
            self.bytes_in_flight.export("bytes_in_flight"),
            self.retrans_kind.export("retrans_kind"),
            self.backoff.export("backoff"),
            self.idle_gap.export("idle_gap"),
            self.rto.export("rto"),
            self.wlan_seq.export("wlan_seq"),
            bool_col("wlan_retry", self.wlan_retry),
            self.signal_dbm.export("signal_dbm"),
            self.rate_mbps.export("rate_mbps"),
            bool_col("bad_fcs", self.bad_fcs),
            self.stop_layer.export("stop_layer"),
        ];
        out[1].kind = "ts_ns";
        for (bits, (_, name)) in self.flags.into_iter().zip(Flags::ALL) {
            out.push(bool_col(name, bits));
        }
        (rows, out)
    }
}
