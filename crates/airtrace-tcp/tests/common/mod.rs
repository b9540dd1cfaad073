//! A tiny deterministic two-endpoint network for tests that read like packet
//! exchanges: A (client, the bulk sender) and B (server, the sink), a fixed one-way
//! delay, an optional rate (serialisation, IPv4 header counted) in each direction, and
//! drop rules applied to each segment sent, CE-mark rules applied to each
//! ECN-capable segment that is not dropped (a marking router), delay rules (a segment
//! held back, overtaken by later ones) and stalls (a path that stops for a while,
//! then delivers its backlog). Every transmission is
//! logged; `trace()` prints the log in a tcpdump-like notation with relative sequence
//! numbers (`ect` after an ECN-capable segment, `CE` after a marked one).
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Write as _;

use airtrace_tcp::{Config, Endpoint, Flags, Options, Segment, SenderState};

pub const A: usize = 0;
pub const B: usize = 1;
pub const MS: i64 = 1_000_000;
pub const S: i64 = 1_000 * MS;
/// ISNs: A's wraps around 2^32 during a transfer, to exercise modular arithmetic.
pub const ISN: [u32; 2] = [u32::MAX - 20_000, 7_000];

/// One segment put on the wire.
#[derive(Clone, Debug)]
pub struct Sent {
    pub t: i64,
    pub from: usize,
    pub seg: Segment,
    pub dropped: bool,
    /// Marked CE on the way (only ECN-capable segments are).
    pub ce: bool,
}

impl Sent {
    /// Sequence number relative to the sender's ISN (the SYN is 0, data starts at 1).
    pub fn rel_seq(&self) -> u32 {
        self.seg.seq.wrapping_sub(ISN[self.from])
    }
    pub fn rel_ack(&self) -> u32 {
        self.seg.ack.wrapping_sub(ISN[1 - self.from])
    }
    pub fn is_data(&self) -> bool {
        self.seg.len > 0
    }
    pub fn is_pure_ack(&self) -> bool {
        self.seg.len == 0 && self.seg.flags.0 & (Flags::SYN.0 | Flags::FIN.0) == 0
    }
}

/// What a drop rule sees.
pub struct Ctx<'a> {
    pub from: usize,
    pub seg: &'a Segment,
    /// Relative sequence number.
    pub rel_seq: u32,
    /// Data segments: how many times this sequence number has been sent (1 = first).
    pub times_seen: u32,
    /// Pure ACKs: their number, from 1, counting that sender's pure ACKs.
    pub pure_ack_no: u64,
    pub now: i64,
}

type Rule = Box<dyn FnMut(&Ctx) -> bool>;

pub struct Net {
    pub ep: [Endpoint; 2],
    cfg: [Config; 2],
    pub now: i64,
    pub delay: [i64; 2],
    pub rate_bps: [Option<u64>; 2],
    /// A drop-tail queue in front of each direction's rate: a segment that would wait
    /// longer than this (the backlog ahead of it plus its own serialisation) is
    /// dropped. `None`: unlimited.
    pub queue_limit_ns: [Option<i64>; 2],
    busy: [i64; 2],
    queue: Vec<(i64, u64, usize, Segment, bool)>,
    order: u64,
    pub log: Vec<Sent>,
    rules: Vec<Rule>,
    ce_rules: Vec<Rule>,
    delay_rules: Vec<(Rule, i64)>,
    /// (direction, start, end): what that end sends in [start, end) leaves at end.
    stalls: Vec<(usize, i64, i64)>,
    seen: HashMap<(usize, u32), u32>,
    pure_acks: [u64; 2],
    pub to_write: u64,
    written: u64,
    pub close_when_written: bool,
    closed: bool,
    pub delivered: u64,
    /// A's SenderState each time it changed (take_state_changed), with the time.
    pub states: Vec<(i64, SenderState)>,
    /// B's delivered byte count over time: (time, total delivered).
    pub deliveries: Vec<(i64, u64)>,
}

impl Net {
    /// A and B with a symmetric one-way delay and no rate limit.
    pub fn new(a: Config, b: Config, delay_ns: i64) -> Self {
        a.validate().unwrap();
        b.validate().unwrap();
        Net {
            cfg: [a.clone(), b.clone()],
            ep: [
                Endpoint::client(a, ISN[A], 1_000),
                Endpoint::server(b, ISN[B], 50_000),
            ],
            now: 0,
            delay: [delay_ns; 2],
            rate_bps: [None; 2],
            queue_limit_ns: [None; 2],
            busy: [0; 2],
            queue: Vec::new(),
            order: 0,
            log: Vec::new(),
            rules: Vec::new(),
            ce_rules: Vec::new(),
            delay_rules: Vec::new(),
            stalls: Vec::new(),
            seen: HashMap::new(),
            pure_acks: [0; 2],
            to_write: 0,
            written: 0,
            close_when_written: false,
            closed: false,
            delivered: 0,
            states: Vec::new(),
            deliveries: Vec::new(),
        }
    }

    pub fn same(cfg: Config, delay_ns: i64) -> Self {
        Self::new(cfg.clone(), cfg, delay_ns)
    }

    pub fn rate(mut self, bps: u64) -> Self {
        self.rate_bps = [Some(bps); 2];
        self
    }

    /// A's application sends `bytes`, then closes.
    /// A drop-tail queue of `packets` full-sized (1500-byte) packets at the rate, in
    /// each direction (see [`Net::queue_limit_ns`]).
    pub fn queue_packets(mut self, packets: i64) -> Self {
        for d in 0..2 {
            let r = self.rate_bps[d].expect("a queue needs a rate") as i64;
            self.queue_limit_ns[d] = Some(packets * 1500 * 8 * S / r);
        }
        self
    }

    pub fn bulk(mut self, bytes: u64) -> Self {
        self.to_write = bytes;
        self.close_when_written = true;
        self
    }

    /// A's application sends `bytes` and keeps the connection open.
    pub fn send_open(mut self, bytes: u64) -> Self {
        self.to_write = bytes;
        self.close_when_written = false;
        self
    }

    pub fn drop_if(&mut self, rule: impl FnMut(&Ctx) -> bool + 'static) {
        self.rules.push(Box::new(rule));
    }

    /// Drop A's data segment number `index` (0-based, full-sized segments of `smss`)
    /// the `k`-th time it is sent (1 = the original).
    pub fn drop_seg(&mut self, index: u32, k: u32) {
        let smss = self.smss();
        self.drop_if(move |c| {
            c.from == A && c.seg.len > 0 && c.rel_seq == 1 + index * smss && c.times_seen == k
        });
    }

    /// Mark CE on every ECN-capable segment (not dropped) for which `rule` is true.
    pub fn mark_ce_if(&mut self, rule: impl FnMut(&Ctx) -> bool + 'static) {
        self.ce_rules.push(Box::new(rule));
    }

    /// Mark CE on A's data segment number `index` (0-based, full-sized segments) the
    /// `k`-th time it is sent (1 = the original), if it is ECN-capable.
    pub fn mark_ce_seg(&mut self, index: u32, k: u32) {
        let smss = self.smss();
        self.mark_ce_if(move |c| {
            c.from == A && c.seg.len > 0 && c.rel_seq == 1 + index * smss && c.times_seen == k
        });
    }

    /// Delay every segment for which `rule` is true by `extra_ns` beyond the path's
    /// delay (it is reordered behind those sent after it).
    pub fn delay_if(&mut self, extra_ns: i64, rule: impl FnMut(&Ctx) -> bool + 'static) {
        self.delay_rules.push((Box::new(rule), extra_ns));
    }

    /// Delay A's data segment number `index` the `k`-th time it is sent by `extra_ns`.
    pub fn delay_seg(&mut self, index: u32, k: u32, extra_ns: i64) {
        let smss = self.smss();
        self.delay_if(extra_ns, move |c| {
            c.from == A && c.seg.len > 0 && c.rel_seq == 1 + index * smss && c.times_seen == k
        });
    }

    /// The path from `from` stalls from `start` to `end` (a delay spike, a link that
    /// stops and then delivers its backlog): what `from` sends meanwhile leaves at
    /// `end`, in order, then takes the path's delay.
    pub fn stall(&mut self, from: usize, start: i64, end: i64) {
        self.stalls.push((from, start, end));
    }

    /// Drop B's `n`-th pure ACK (1-based).
    pub fn drop_ack(&mut self, n: u64) {
        self.drop_if(move |c| c.from == B && c.pure_ack_no == n);
    }

    /// Payload per full segment the two will use (both ends' MSS option and timestamps).
    pub fn smss(&self) -> u32 {
        let (a, b) = (&self.cfg[A], &self.cfg[B]);
        let ts = a.timestamps && b.timestamps;
        u32::from(a.mss.min(b.mss)) - if ts { 12 } else { 0 }
    }

    fn transmit(&mut self, from: usize, seg: Segment) {
        let now = self.now;
        let size = 20 + seg.header_len() as i64 + i64::from(seg.len);
        let ser = match self.rate_bps[from] {
            Some(r) => size * 8 * S / r as i64,
            None => 0,
        };
        let mut depart = self.busy[from].max(now) + ser;
        for &(d, start, end) in &self.stalls {
            if d == from && now >= start && now < end {
                depart = depart.max(end + ser);
            }
        }
        let overflow = self.queue_limit_ns[from].is_some_and(|l| depart - now > l);
        if !overflow {
            self.busy[from] = depart;
        }
        let mut arrive = depart + self.delay[from];
        let rel_seq = seg.seq.wrapping_sub(ISN[from]);
        let times_seen = if seg.len > 0 {
            let c = self.seen.entry((from, rel_seq)).or_insert(0);
            *c += 1;
            *c
        } else {
            0
        };
        let pure = seg.len == 0 && seg.flags.0 & (Flags::SYN.0 | Flags::FIN.0) == 0;
        let pure_ack_no = if pure {
            self.pure_acks[from] += 1;
            self.pure_acks[from]
        } else {
            0
        };
        let ctx = Ctx {
            from,
            seg: &seg,
            rel_seq,
            times_seen,
            pure_ack_no,
            now,
        };
        let mut dropped = overflow;
        for r in &mut self.rules {
            if r(&ctx) {
                dropped = true;
                break;
            }
        }
        for (r, extra) in &mut self.delay_rules {
            if r(&ctx) {
                arrive += *extra;
                break;
            }
        }
        let mut ce = false;
        if !dropped && seg.ect {
            for r in &mut self.ce_rules {
                if r(&ctx) {
                    ce = true;
                    break;
                }
            }
        }
        self.log.push(Sent {
            t: now,
            from,
            seg,
            dropped,
            ce,
        });
        if !dropped {
            self.order += 1;
            self.queue.push((arrive, self.order, 1 - from, seg, ce));
        }
    }

    fn poll_all(&mut self) {
        for i in [A, B] {
            if i == A {
                let n = self.ep[A].write(self.to_write - self.written);
                self.written += n;
                if self.written == self.to_write && self.close_when_written && !self.closed {
                    self.closed = true;
                    self.ep[A].close();
                }
            }
            let mut guard = 0;
            while let Some(seg) = self.ep[i].poll_transmit(self.now) {
                self.transmit(i, seg);
                guard += 1;
                assert!(guard < 100_000, "poll_transmit never returns None");
            }
        }
        let d = self.ep[B].take_delivered();
        if d > 0 {
            self.delivered += d;
            self.deliveries.push((self.now, self.delivered));
        }
        if self.ep[A].take_state_changed() {
            self.states.push((self.now, self.ep[A].sender_state()));
        }
    }

    /// Runs one event time; false when nothing is left to happen.
    pub fn step(&mut self, limit: i64) -> bool {
        let next = self
            .queue
            .iter()
            .map(|q| q.0)
            .chain(self.ep[A].poll_at())
            .chain(self.ep[B].poll_at())
            .min();
        let Some(t) = next else { return false };
        if t > limit {
            return false;
        }
        assert!(t >= self.now, "time went back: {t} < {}", self.now);
        self.now = t;
        let mut due: Vec<_> = Vec::new();
        self.queue.retain(|q| {
            if q.0 <= t {
                due.push(*q);
                false
            } else {
                true
            }
        });
        due.sort_by_key(|q| (q.0, q.1));
        // One arrival at a time, each followed by a poll, as an event-driven simulator
        // would process them.
        for (_, _, to, seg, ce) in due {
            self.ep[to].on_segment_ce(t, &seg, ce);
            self.poll_all();
        }
        self.poll_all();
        true
    }

    /// Runs until nothing is left to happen (or `limit`), starting with a poll at 0.
    pub fn run_until(&mut self, limit: i64) -> &mut Self {
        if self.log.is_empty() {
            self.poll_all();
        }
        while self.step(limit) {}
        self
    }

    /// Moves the clock to `t` (nothing may be pending before it) and polls both ends:
    /// lets a test's application act at a given time.
    pub fn at(&mut self, t: i64) -> &mut Self {
        assert!(t >= self.now);
        self.now = t;
        self.poll_all();
        self
    }

    pub fn run(&mut self) -> &mut Self {
        self.run_until(3_600 * S)
    }

    /// The log as text lines, e.g.
    /// `  100.000 B>A . 1:1(0) ack 1449 win 1024 sack 2897:4345`.
    pub fn trace(&self) -> Vec<String> {
        self.log.iter().map(line).collect()
    }

    /// Trace lines from `from` to `to` (ms, inclusive).
    pub fn trace_between(&self, from_ms: i64, to_ms: i64) -> Vec<String> {
        self.log
            .iter()
            .filter(|s| s.t >= from_ms * MS && s.t <= to_ms * MS)
            .map(line)
            .collect()
    }

    pub fn print(&self) {
        for l in self.trace() {
            println!("{l}");
        }
    }

    /// A's data segments that are retransmissions (same sequence seen before).
    pub fn retransmissions(&self) -> Vec<&Sent> {
        let mut seen = std::collections::HashSet::new();
        self.log
            .iter()
            .filter(|s| s.from == A && s.seg.len > 0)
            .filter(|s| !seen.insert(s.rel_seq()))
            .collect()
    }

    /// A's state changes, the first one that satisfies `f`.
    pub fn first_state(&self, f: impl Fn(&SenderState) -> bool) -> (i64, SenderState) {
        *self
            .states
            .iter()
            .find(|(_, s)| f(s))
            .expect("no such sender state")
    }
}

pub fn line(s: &Sent) -> String {
    let mut out = String::new();
    let dir = if s.from == A { "A>B" } else { "B>A" };
    let rs = s.rel_seq();
    let _ = write!(
        out,
        "{:>9.3} {} {} {}:{}({})",
        s.t as f64 / MS as f64,
        dir,
        s.seg.flags,
        rs,
        rs.wrapping_add(s.seg.len),
        s.seg.len
    );
    if s.seg.flags.contains(Flags::ACK) {
        let _ = write!(out, " ack {}", s.rel_ack());
    }
    let _ = write!(out, " win {}", s.seg.window);
    for (l, r) in s.seg.options.sack.iter() {
        let base = ISN[1 - s.from];
        let _ = write!(
            out,
            " sack {}:{}",
            l.wrapping_sub(base),
            r.wrapping_sub(base)
        );
    }
    if s.seg.ect {
        out.push_str(" ect");
    }
    if s.ce {
        out.push_str(" CE");
    }
    if s.dropped {
        out.push_str(" DROPPED");
    }
    out
}

/// B's side of the conversation, written by hand: B's ISN is 0, TSval = 5000 + ms.
pub fn from_b(ack: u32, tsecr: u32, now_ms: u32, syn: bool) -> Segment {
    let mut options = Options {
        timestamps: Some((5_000 + now_ms, tsecr)),
        ..Options::default()
    };
    let mut flags = Flags::ACK;
    if syn {
        flags |= Flags::SYN;
        options.mss = Some(1460);
        options.window_scale = Some(7);
        options.sack_permitted = true;
    }
    Segment {
        seq: if syn { 0 } else { 1 },
        ack,
        flags,
        window: if syn { 65535 } else { 1024 },
        len: 0,
        options,
        ect: false,
    }
}
