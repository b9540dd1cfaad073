//! The real-time forwarder: packets from the two TUN devices through the scenario's
//! link (the simulator's own [`Link`]), out of the other device at their delivery time.
//!
//! One thread runs [`Forwarder::run`]: it reads every packet waiting on either device
//! (non-blocking, until `EAGAIN`), stamps it with CLOCK_MONOTONIC time since the start
//! of the run, keeps it in a store keyed by id and offers the id to the link; then it
//! polls the link at the current time and writes each delivered packet to the other
//! device; then it sleeps in `ppoll` on both devices until the link's next deadline
//! (timer slack set to 1 ns), or spins when busy-polling. Captures and the link log go
//! to the writer thread ([`crate::writer`]) through a channel of its own that it never
//! waits on (messages are held back, in order, while it is full), in buffers the
//! writer hands back: file I/O, the allocator and the other threads never delay a
//! packet.
//!
//! Only IPv4 packets from the device's own host to its peer (198.18.0.1 ↔ 198.18.1.1)
//! are forwarded; anything else is counted and dropped.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use airtrace_link::link::{Event, Sent};
use airtrace_link::record::{LinkDir, LinkRecord};
use airtrace_sim::links::{Link, PacketId};
use nix::errno::Errno;
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use serde::Serialize;

use crate::idle::Intervals;
use crate::netns::{ADDR_A, ADDR_B};
use crate::writer::{Msg, ToWriter, V_LINK_IN, V_LINK_OUT, V_RECEIVER, V_SENDER};

/// Longest sleep without a deadline, so that stop requests are seen promptly.
const MAX_SLEEP_NS: i64 = 20_000_000;
/// Packets read from one device before the link is served again.
const READ_BATCH: usize = 32;
/// Work between two sleeps longer than this is recorded (`timing.long_iterations`).
const LONG_ITERATION_NS: i64 = 1_000_000;
/// The window over which spinning is rationed.
const SPIN_WINDOW_NS: i64 = 100_000_000;

/// What one link direction did (summary.json's `link`).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct DirectionCounters {
    /// Packets offered to the link.
    pub offered: u64,
    /// Dropped at a full queue (or by RED) on arrival.
    pub queue_drops: u64,
    /// Given up on after being accepted (CoDel, ARQ retry limit, link reset).
    pub link_drops: u64,
    /// Lost by the loss process.
    pub lost: u64,
    /// Delivered to the far device.
    pub delivered: u64,
    /// Bytes delivered.
    pub delivered_bytes: u64,
    /// Delivered packets whose write to the device failed.
    pub write_errors: u64,
}

/// How precisely delivery times were kept.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timing {
    /// Delivered packets measured.
    pub packets: u64,
    /// Median lateness of a delivery (write time − the model's delivery time), ns.
    pub late_p50_ns: i64,
    /// 99th percentile lateness, ns.
    pub late_p99_ns: i64,
    /// Largest lateness, ns.
    pub late_max_ns: i64,
    /// Packets read from the devices that were not host a ↔ host b IPv4 (dropped).
    pub foreign_dropped: u64,
    /// Busy-poll mode.
    pub busy_poll: bool,
    /// The forwarder thread ran under SCHED_FIFO.
    pub realtime: bool,
    /// Spin margin before each deadline, ns.
    pub spin_ns: i64,
    /// CPU time the forwarder thread used (user + system), ns.
    pub forwarder_cpu_ns: i64,
    /// Packets read from the devices.
    pub packets_read: u64,
    /// Captures or link records lost because the writer thread had stopped (on a
    /// file error).
    pub capture_drops: u64,
    /// Wake-ups from sleep more than 1 ms later than asked (the thread was not given
    /// the CPU): how many.
    pub late_wakeups: u64,
    /// The longest of them: (when it was due, ns since the start; how late, ns).
    pub longest_late_wakeups: Vec<(i64, i64)>,
    /// Writes to a device that took more than 1 ms (the write runs the receiving
    /// host's TCP stack): how many.
    pub slow_writes: u64,
    /// The longest of them: (when, ns since the start; how long, ns).
    pub longest_slow_writes: Vec<(i64, i64)>,
    /// Rounds of work between two sleeps (serving the link, reading the devices) that
    /// took more than 1 ms: how many.
    pub long_iterations: u64,
    /// The longest of them: [when, ns since the start; how long; of which serving the
    /// link and writing to the devices; of which reading the devices], ns.
    pub longest_iterations: Vec<[i64; 4]>,
}

/// The packets inside the link, by id (ids are consecutive; most leave in order).
#[derive(Default)]
struct Store {
    base: u64,
    slots: std::collections::VecDeque<Option<Vec<u8>>>,
}

impl Store {
    fn insert(&mut self, id: u64, bytes: Vec<u8>) {
        if self.slots.is_empty() {
            self.base = id;
        }
        debug_assert_eq!(id, self.base + self.slots.len() as u64);
        self.slots.push_back(Some(bytes));
    }

    fn take(&mut self, id: PacketId) -> Option<Vec<u8>> {
        let bytes = self
            .slots
            .get_mut(id.checked_sub(self.base)? as usize)?
            .take();
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        bytes
    }
}

/// The forwarder's state.
pub struct Forwarder {
    link: Link,
    log_link: bool,
    tuns: [OwnedFd; 2],
    start: Instant,
    store: Store,
    next_id: u64,
    /// Which vantage points are captured (bit mask of `V_*`).
    captures: u8,
    snaplen: usize,
    to_writer: ToWriter,
    /// Counters per direction (0 forward, 1 reverse).
    pub counters: [DirectionCounters; 2],
    lateness: Vec<i64>,
    foreign: u64,
    busy_poll: bool,
    realtime: bool,
    cpu_ns: i64,
    stalls: Vec<(i64, i64)>,
    slow_writes: Vec<(i64, i64)>,
    long_iterations: Vec<[i64; 4]>,
    /// Wake this long before a deadline and spin the rest, ns.
    pub spin_ns: i64,
    buf: Vec<u8>,
    events: Vec<(LinkDir, Event<PacketId>)>,
    scratch: Vec<Event<PacketId>>,
    records: Vec<LinkRecord>,
    pool: Vec<Vec<u8>>,
    record_pool: Vec<Vec<LinkRecord>>,
    /// Per device: IP id and flow of the last first fragment read.
    fragment_flow: [(u16, Option<u32>); 2],
    /// Per direction: when its transmitter sat idle ([`crate::idle`]).
    idle: [Intervals; 2],
    /// Per flow: packets read from device a and device b (a datagram's fragments
    /// count once).
    flow_packets: Vec<[u64; 2]>,
}

/// Flow index of a packet between host a port 40000+i and host b port 15000+i (TCP),
/// or host b port 20049+i (UDP, the RPC flows); read from the first fragment's ports.
fn flow_of(p: &[u8], from_a: bool) -> Option<u32> {
    let ihl = usize::from(p[0] & 0x0f) * 4;
    if p.len() < ihl + 4 || (p[9] != 6 && p[9] != 17) {
        return None;
    }
    let sport = u16::from_be_bytes([p[ihl], p[ihl + 1]]);
    let dport = u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]);
    let server = if from_a { dport } else { sport };
    let base = if p[9] == 6 {
        airtrace_sim::sim::TCP_SERVER_PORT
    } else {
        airtrace_sim::sim::RPC_SERVER_PORT
    };
    server
        .checked_sub(base)
        .map(u32::from)
        .filter(|&i| i < 1000)
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> i64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map_or(0, |t| t.tv_sec() * 1_000_000_000 + t.tv_nsec())
}

/// Sets CE in an ECN-capable packet's header and fixes the header checksum.
fn mark_ce(p: &mut [u8]) {
    if p[1] & 0x03 == 0 {
        return;
    }
    p[1] |= 0x03;
    let ihl = usize::from(p[0] & 0x0f) * 4;
    p[10] = 0;
    p[11] = 0;
    let mut sum: u32 = p[..ihl]
        .chunks_exact(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    p[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

impl Forwarder {
    /// A forwarder over `link` between `tun_a` and `tun_b`, its clock started at
    /// `start`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        link: Link,
        log_link: bool,
        tun_a: OwnedFd,
        tun_b: OwnedFd,
        start: Instant,
        captures: u8,
        snaplen: usize,
        to_writer: ToWriter,
        busy_poll: bool,
    ) -> Self {
        let mut link = link;
        if log_link {
            link.enable_log();
        }
        Forwarder {
            link,
            log_link,
            tuns: [tun_a, tun_b],
            start,
            store: Store::default(),
            next_id: 0,
            captures,
            snaplen,
            to_writer,
            counters: Default::default(),
            lateness: Vec::new(),
            foreign: 0,
            busy_poll,
            realtime: false,
            cpu_ns: 0,
            stalls: Vec::new(),
            slow_writes: Vec::new(),
            long_iterations: Vec::new(),
            spin_ns: 0,
            buf: vec![0; 65536],
            events: Vec::new(),
            scratch: Vec::new(),
            records: Vec::new(),
            pool: Vec::new(),
            record_pool: Vec::new(),
            fragment_flow: [(0, None); 2],
            idle: [0, 1].map(|_| {
                let mut idle = Intervals::with_capacity(1 << 16);
                idle.open(0);
                idle
            }),
            flow_packets: Vec::new(),
        }
    }

    fn now(&self) -> i64 {
        self.start.elapsed().as_nanos() as i64
    }

    /// Runs until `stop` is set, `end_ns` passes, or `done` is set and the link has
    /// emptied.
    pub fn run(
        &mut self,
        stop: &AtomicBool,
        done: &AtomicBool,
        end_ns: i64,
    ) -> std::io::Result<()> {
        let _ = nix::sys::prctl::set_timerslack(1);
        // A sleeping forwarder takes little CPU: run it ahead of everything else so
        // that deadlines hold on a loaded machine. (Not when spinning.)
        if !self.busy_poll && std::env::var_os("AIRTRACE_EMU_NO_RT").is_none() {
            self.realtime = crate::sys::set_realtime(50).is_ok();
        }
        let mut done_at: Option<i64> = None;
        let (mut window_start, mut window_cpu, mut checked, mut may_spin) =
            (i64::MIN / 2, 0i64, 0i64, true);
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = self.now();
            if now >= end_ns {
                break;
            }
            self.service_link(now)?;
            let t_read = self.now();
            let read = self.read_all(0)? + self.read_all(1)?;
            let t_served = self.now();
            if read > 0 {
                self.service_link(t_served)?;
            }
            // How long the work between two sleeps took, and in which part.
            let t_end = self.now();
            let took = t_end - now;
            if took > LONG_ITERATION_NS {
                self.long_iterations.push([
                    now,
                    took,
                    took - (t_served - t_read),
                    t_served - t_read,
                ]);
            }
            if done.load(Ordering::Relaxed) {
                let at = *done_at.get_or_insert(now);
                if self.link.next_deadline().is_none() || now - at > 500_000_000 {
                    break;
                }
            }
            if self.busy_poll {
                continue;
            }
            let now = self.now();
            let wait = match self.link.next_deadline() {
                Some(d) => (d - now).min(MAX_SLEEP_NS),
                None => MAX_SLEEP_NS,
            };
            // Sleep until `spin_ns` before the deadline, then spin (reading the
            // devices meanwhile): a wake-up from ppoll takes tens of µs. Spinning stops
            // for the rest of a 100 ms window once the thread has used 60 % of it: a
            // real-time thread that keeps a CPU busy is throttled by the kernel (stalls
            // of 50 ms each second). The thread's CPU time includes the receiving TCP
            // stacks, which run inside its writes to the devices.
            if now - window_start >= SPIN_WINDOW_NS {
                window_start = now;
                window_cpu = thread_cpu_ns();
                may_spin = true;
            } else if may_spin && now - checked >= 1_000_000 {
                checked = now;
                may_spin = (thread_cpu_ns() - window_cpu) * 10 < SPIN_WINDOW_NS * 6;
            }
            let wait = wait - if may_spin { self.spin_ns } else { 0 };
            if wait > 0 {
                let mut fds = [
                    PollFd::new(self.tuns[0].as_fd(), PollFlags::POLLIN),
                    PollFd::new(self.tuns[1].as_fd(), PollFlags::POLLIN),
                ];
                let ts = TimeSpec::from_duration(std::time::Duration::from_nanos(wait as u64));
                let before = self.now();
                match ppoll(&mut fds, Some(ts), None) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(e) => return Err(std::io::Error::other(format!("ppoll: {e}"))),
                }
                // A wake-up much later than asked: the thread did not get the CPU.
                let over = self.now() - before - wait;
                if over > 1_000_000 {
                    self.stalls.push((before + wait, over));
                }
            }
        }
        self.flush_log();
        self.cpu_ns = thread_cpu_ns();
        // The end: what is held back may now wait for room.
        self.to_writer.outbox.flush();
        Ok(())
    }

    /// Reads every packet waiting on device `d` (0: host a's) and offers it to the link.
    fn read_all(&mut self, d: usize) -> std::io::Result<usize> {
        let mut n = 0;
        // At most READ_BATCH at a time, so that deliveries due meanwhile are not held
        // up behind a burst from a fast sender.
        while n < READ_BATCH {
            let len = match nix::unistd::read(&self.tuns[d], &mut self.buf) {
                Ok(len) => len,
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    return Err(std::io::Error::other(format!(
                        "reading the TUN device: {e}"
                    )))
                }
            };
            n += 1;
            let now = self.now();
            let p = &self.buf[..len];
            let (local, peer) = if d == 0 {
                (ADDR_A, ADDR_B)
            } else {
                (ADDR_B, ADDR_A)
            };
            if len < 20 || p[0] >> 4 != 4 || p[12..16] != local || p[16..20] != peer {
                self.foreign += 1;
                continue;
            }
            let id = self.next_id;
            self.next_id += 1;
            let ip_id = u16::from_be_bytes([p[4], p[5]]);
            let fragment = u16::from_be_bytes([p[6], p[7]]);
            let flow = if fragment & 0x1fff != 0 {
                // A later fragment has no ports: its datagram's first fragment, read just
                // before it, named the flow.
                let (id, flow) = self.fragment_flow[d];
                flow.filter(|_| id == ip_id)
            } else {
                let flow = flow_of(p, d == 0);
                if fragment & 0x2000 != 0 {
                    self.fragment_flow[d] = (ip_id, flow);
                }
                if let Some(f) = flow {
                    let f = f as usize;
                    if self.flow_packets.len() <= f {
                        self.flow_packets.resize(f + 1, [0, 0]);
                    }
                    self.flow_packets[f][d] += 1;
                }
                flow
            };
            let vantages = self.captures & (V_LINK_IN | if d == 0 { V_SENDER } else { V_RECEIVER });
            let capture = (vantages != 0).then(|| {
                let mut c = self.buffer();
                c.extend_from_slice(&self.buf[..len.min(self.snaplen)]);
                c
            });
            let mut bytes = self.buffer();
            bytes.extend_from_slice(&self.buf[..len]);
            self.hand_over(Msg::Ingress {
                id,
                t_ns: now,
                flow,
                ip_id,
                vantages,
                bytes: capture,
            });
            self.counters[d].offered += 1;
            self.store.insert(id, bytes);
            // ECT(0) or ECT(1) in the IP header (RFC 3168 §5): AQM may mark it CE.
            let ect = matches!(self.buf[1] & 3, 1 | 2);
            // An idle transmitter gets work (if the packet is queued, not dropped).
            self.idle[d].close(now);
            if let Sent::Dropped(id, _) = self.link.send(now, d, id, len, ect) {
                self.counters[d].queue_drops += 1;
                self.recycle(id);
            }
            if let Some(from) = self.link.idle_from(d, now) {
                // Not before `now`: the time until now is recorded already.
                self.idle[d].open(from.max(now));
            }
        }
        Ok(n)
    }

    /// An empty buffer: a recycled one, else one the writer has handed back, else a
    /// new one (only until enough circulate).
    fn buffer(&mut self) -> Vec<u8> {
        if self.pool.is_empty() {
            self.to_writer.bytes_back.take_all(&mut self.pool);
        }
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b
    }

    /// Passes `msg` to the writer thread without ever waiting ([`crate::writer::Outbox`]).
    fn hand_over(&mut self, msg: Msg) {
        self.to_writer.outbox.send(msg);
    }

    fn recycle(&mut self, id: PacketId) {
        if let Some(b) = self.store.take(id) {
            if self.pool.len() < 8192 {
                self.pool.push(b);
            }
        }
    }

    /// Polls the link at `now` and acts on what happened.
    fn service_link(&mut self, now: i64) -> std::io::Result<()> {
        if self.link.next_deadline().is_none_or(|d| d > now) {
            return Ok(());
        }
        self.events.clear();
        self.link
            .poll_into(now, &mut self.scratch, &mut self.events);
        let events = std::mem::take(&mut self.events);
        for (dir, ev) in &events {
            let d = dir.index();
            match ev {
                Event::Delivered { at_ns, item, ce } => {
                    let Some(mut bytes) = self.store.take(*item) else {
                        continue;
                    };
                    if *ce {
                        mark_ce(&mut bytes);
                    }
                    // Forward (0) goes out of host b's device, reverse out of a's.
                    let out = &self.tuns[1 - d];
                    // Stamped as handed over: the write runs the receiving stack.
                    let t = self.now();
                    let ok = loop {
                        match nix::unistd::write(out, &bytes) {
                            Ok(_) => break true,
                            Err(Errno::EINTR) => continue,
                            Err(_) => break false,
                        }
                    };
                    let took = self.now() - t;
                    if took > 1_000_000 {
                        self.slow_writes.push((t, took));
                    }
                    self.lateness.push(t - at_ns);
                    let c = &mut self.counters[d];
                    if ok {
                        c.delivered += 1;
                        c.delivered_bytes += bytes.len() as u64;
                    } else {
                        c.write_errors += 1;
                    }
                    let vantages =
                        self.captures & (V_LINK_OUT | if d == 0 { V_RECEIVER } else { V_SENDER });
                    if vantages != 0 {
                        bytes.truncate(self.snaplen);
                        self.hand_over(Msg::Egress {
                            t_ns: t,
                            vantages,
                            bytes,
                        });
                    } else if self.pool.len() < 8192 {
                        self.pool.push(bytes);
                    }
                }
                Event::Lost { item, .. } => {
                    self.counters[d].lost += 1;
                    self.recycle(*item);
                }
                Event::Dropped { item, .. } => {
                    self.counters[d].link_drops += 1;
                    self.recycle(*item);
                }
            }
        }
        self.events = events;
        for (d, idle) in self.idle.iter_mut().enumerate() {
            if !idle.is_open() {
                if let Some(from) = self.link.idle_from(d, now) {
                    idle.open(from);
                }
            }
        }
        self.flush_log();
        Ok(())
    }

    /// Each direction's idle intervals up to `end_ns` ([`crate::idle`]); ends the
    /// record.
    pub fn take_idle(&mut self, end_ns: i64) -> [Vec<(i64, i64)>; 2] {
        std::mem::take(&mut self.idle).map(|i| i.finish(end_ns))
    }

    /// Each flow's packets read from device a and from device b (a datagram's IP
    /// fragments count once).
    pub fn take_flow_packets(&mut self) -> Vec<[u64; 2]> {
        std::mem::take(&mut self.flow_packets)
    }

    fn flush_log(&mut self) {
        if !self.log_link {
            return;
        }
        self.records.clear();
        self.link.drain_log(&mut self.records);
        if !self.records.is_empty() {
            if self.record_pool.is_empty() {
                self.to_writer.records_back.take_all(&mut self.record_pool);
            }
            let empty = self.record_pool.pop().unwrap_or_default();
            let records = std::mem::replace(&mut self.records, empty);
            self.hand_over(Msg::Link(records));
        }
    }

    /// Timing statistics of the run so far.
    pub fn timing(&mut self) -> Timing {
        let l = &mut self.lateness;
        l.sort_unstable();
        let q = |f: f64| {
            if l.is_empty() {
                0
            } else {
                l[((l.len() - 1) as f64 * f).round() as usize]
            }
        };
        Timing {
            packets: l.len() as u64,
            late_p50_ns: q(0.5),
            late_p99_ns: q(0.99),
            late_max_ns: l.last().copied().unwrap_or(0),
            foreign_dropped: self.foreign,
            busy_poll: self.busy_poll,
            realtime: self.realtime,
            spin_ns: self.spin_ns,
            forwarder_cpu_ns: self.cpu_ns,
            packets_read: self.next_id + self.foreign,
            capture_drops: self.to_writer.outbox.lost,
            late_wakeups: self.stalls.len() as u64,
            longest_late_wakeups: {
                let mut v = self.stalls.clone();
                v.sort_by_key(|&(_, over)| std::cmp::Reverse(over));
                v.truncate(5);
                v
            },
            slow_writes: self.slow_writes.len() as u64,
            long_iterations: self.long_iterations.len() as u64,
            longest_iterations: {
                let mut v = self.long_iterations.clone();
                v.sort_by_key(|x| std::cmp::Reverse(x[1]));
                v.truncate(5);
                v
            },
            longest_slow_writes: {
                let mut v = self.slow_writes.clone();
                v.sort_by_key(|&(_, took)| std::cmp::Reverse(took));
                v.truncate(5);
                v
            },
        }
    }
}
