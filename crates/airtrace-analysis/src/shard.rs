//! Splitting a capture's connections between threads ([`crate::analyze_file_sharded`]).
//!
//! The thread that reads the capture keeps a [`Sharder`], which gives each flow a
//! shard: the reading thread's own (0) or a worker's. A flow seen for the first time
//! goes to the shard with the least work so far, counted in packets given to it, and
//! for shard 0 also a fifth of every packet read, the cost of reading and handing out
//! frames; each flow a shard has counts as [`FLOW_WORK`] packets more, so that flows
//! that start together (and have no packets yet) are spread too. A static hash of the
//! endpoints balances badly when a few bulk transfers make most of the capture.
//!
//! Flows are told apart by a 64-bit hash of their endpoints, the same both ways. Two
//! flows with the same hash are one flow here, and go to the same shard, which is
//! harmless: all that matters is that every packet of a connection goes to one shard.
//!
//! A flow is forgotten once it has been silent for longer than any analyzer keeps an
//! idle connection, checked at the same packets as the analyzers check theirs: by then
//! its connection is finished in its shard (an analyzer's connection is never more
//! recent than its flow here), and whichever shard gets the flow next starts a new
//! connection, as a single analyzer would.

use rustc_hash::FxHashMap;

use crate::analyzer::{OPEN_IDLE_NS, SWEEP_EVERY, TS_LIMIT};
use crate::flow::Endpoint;

/// Entries of the direct-mapped cache in front of the table (a power of two).
const CACHE_SIZE: usize = 512;

/// The work a flow counts for, in packets, besides its packets (see the module doc).
const FLOW_WORK: u64 = 4096;

/// A flow's shard and last packet time.
#[derive(Clone, Copy, Default)]
struct Flow {
    shard: u8,
    last_ts: i64,
}

/// A cache entry: the flow's key (0: empty) and its state, which is newer than the
/// table's copy while it is cached.
#[derive(Clone, Copy, Default)]
struct Cached {
    key: u64,
    flow: Flow,
}

/// The shard of every live flow (see the module doc).
pub(crate) struct Sharder {
    shards: usize,
    table: FxHashMap<u64, Flow>,
    cache: Box<[Cached; CACHE_SIZE]>,
    /// Packets given to each shard.
    load: Vec<u64>,
    /// Flows each shard has.
    flows: Vec<u64>,
    packets: u64,
}

/// The flow key of a packet between `a` and `b`, either way round; never 0.
#[inline(always)]
fn flow_key(a: &Endpoint, b: &Endpoint) -> u64 {
    let addr = a.addr ^ b.addr;
    let x =
        (addr as u64) ^ ((addr >> 64) as u64).rotate_left(17) ^ u64::from(a.port ^ b.port) << 40;
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
}

impl Sharder {
    pub(crate) fn new(shards: usize) -> Self {
        assert!((1..=usize::from(u8::MAX)).contains(&shards));
        Sharder {
            shards,
            table: FxHashMap::default(),
            cache: Box::new([Cached::default(); CACHE_SIZE]),
            load: vec![0; shards],
            flows: vec![0; shards],
            packets: 0,
        }
    }

    /// Counts a packet at `ts_ns` that carries no TCP (every packet goes through
    /// either this or [`Sharder::shard`]); returns the time clamped as the analyzer does.
    #[inline(always)]
    pub(crate) fn tick(&mut self, ts_ns: i64) -> i64 {
        let ts = ts_ns.clamp(-TS_LIMIT, TS_LIMIT);
        self.packets += 1;
        if self.packets.is_multiple_of(SWEEP_EVERY) {
            self.sweep(ts);
        }
        ts
    }

    /// The shard of a TCP packet between `src` and `dst` at `ts_ns`.
    #[inline(always)]
    pub(crate) fn shard(&mut self, src: &Endpoint, dst: &Endpoint, ts_ns: i64) -> usize {
        let ts = self.tick(ts_ns);
        let key = flow_key(src, dst);
        let slot = (key >> 55) as usize & (CACHE_SIZE - 1);
        if self.cache[slot].key != key {
            self.miss(slot, key, ts);
        }
        let entry = &mut self.cache[slot].flow;
        entry.last_ts = ts;
        let shard = usize::from(entry.shard);
        self.load[shard] += 1;
        shard
    }

    /// Brings the flow `key` into cache slot `slot`, writing back the flow there.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, slot: usize, key: u64, ts: i64) {
        let old = self.cache[slot];
        if old.key != 0 {
            self.table.insert(old.key, old.flow);
        }
        let (shards, load, flows, read) =
            (self.shards, &self.load, &mut self.flows, self.packets / 5);
        let flow = *self.table.entry(key).or_insert_with(|| {
            // The shard with the least work so far (the first of equals).
            let work = |s: usize| load[s] + flows[s] * FLOW_WORK + if s == 0 { read } else { 0 };
            let shard = (0..shards).min_by_key(|&s| work(s)).unwrap_or(0);
            flows[shard] += 1;
            Flow {
                shard: shard as u8,
                last_ts: ts,
            }
        });
        self.cache[slot] = Cached { key, flow };
    }

    /// Forgets the flows silent for longer than any analyzer keeps a connection.
    #[cold]
    fn sweep(&mut self, now: i64) {
        for c in self.cache.iter_mut() {
            if c.key != 0 {
                self.table.insert(c.key, c.flow);
            }
            *c = Cached::default();
        }
        let flows = &mut self.flows;
        self.table.retain(|_, f| {
            let keep = now - f.last_ts <= OPEN_IDLE_NS;
            if !keep {
                flows[usize::from(f.shard)] -= 1;
            }
            keep
        });
    }
}
