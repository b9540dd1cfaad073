//! The writer threads: captures and link log from the forwarder into the bundle, and
//! the TCP state log from the traffic generator, off the forwarder's path.
//!
//! The forwarder runs under SCHED_FIFO and must never wait for a thread of lower
//! priority. So it has a channel of its own (one producer: a multi-producer channel
//! can make a sender wait, spinning and yielding, for another sender that is
//! installing the next block, and a preempted generator thread stalled the forwarder
//! for 50–140 ms), bounded and preallocated (no allocation per message), into which
//! it only ever `try_send`s ([`crate::forward`] holds messages back in order while it
//! is full); the writer polls that channel rather than sleeping in `recv` (a sleeping
//! receiver makes every send take the channel's wake-up mutex, which the writer,
//! preempted, may hold: stalls of 50–120 ms); and it hands the buffers back once
//! written ([`Recycler`], which the forwarder only `try_lock`s), so that the forwarder
//! reuses them instead of calling the allocator, whose locks the writer may hold when
//! preempted.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::Duration;

use airtrace_link::record::LinkRecord;
use airtrace_sim::bundle::{BundleWriter, Out};
use airtrace_sim::scenario::Vantage;

/// Capture at host a's device.
pub const V_SENDER: u8 = 1;
/// Capture at host b's device.
pub const V_RECEIVER: u8 = 2;
/// Capture where packets enter the link.
pub const V_LINK_IN: u8 = 4;
/// Capture where packets leave the link.
pub const V_LINK_OUT: u8 = 8;

/// The bit of a vantage point.
pub fn bit(v: Vantage) -> u8 {
    match v {
        Vantage::Sender => V_SENDER,
        Vantage::Receiver => V_RECEIVER,
        Vantage::LinkIn => V_LINK_IN,
        Vantage::LinkOut => V_LINK_OUT,
        // Refused before the run starts (`emulate`).
        Vantage::Air => 0,
    }
}

/// What the other threads hand the writer.
pub enum Msg {
    /// A packet read from a device, offered to the link (packet `id`).
    Ingress {
        /// Packet id.
        id: u64,
        /// When it was read, ns since the start.
        t_ns: i64,
        /// Its flow, if it belongs to one.
        flow: Option<u32>,
        /// IPv4 identification.
        ip_id: u16,
        /// Where to capture it.
        vantages: u8,
        /// The bytes to capture (snaplen applied), if any vantage applies.
        bytes: Option<Vec<u8>>,
    },
    /// A packet written to a device when it left the link.
    Egress {
        /// When it was written, ns since the start.
        t_ns: i64,
        /// Where to capture it.
        vantages: u8,
        /// Its bytes (snaplen applied).
        bytes: Vec<u8>,
    },
    /// Link log records.
    Link(Vec<LinkRecord>),
}

/// Messages the forwarder's channel holds before it is full (about four seconds of a
/// 100 Mbit/s run's packets and log records).
pub const CHANNEL_SLOTS: usize = 1 << 16;
/// How long the writer sleeps when the forwarder's channel is empty.
const POLL: Duration = Duration::from_millis(1);
/// Written buffers kept for the forwarder to reuse, at most.
const BYTES_BACK: usize = 16_384;
/// Written link record buffers kept for the forwarder to reuse, at most.
const RECORDS_BACK: usize = 256;

/// Buffers the writer has written, for the forwarder to reuse. The forwarder only
/// `try_lock`s (and allocates if the writer holds the lock): it never waits. A channel
/// would not do: a receiver spins until a sender that has claimed a slot has filled
/// it, and the writer, preempted in between, would stall the forwarder.
pub struct Recycler<T> {
    list: std::sync::Arc<std::sync::Mutex<Vec<T>>>,
    cap: usize,
}

impl<T> Clone for Recycler<T> {
    fn clone(&self) -> Self {
        Recycler {
            list: self.list.clone(),
            cap: self.cap,
        }
    }
}

impl<T> Recycler<T> {
    /// A recycler keeping at most `cap` buffers.
    pub fn new(cap: usize) -> Self {
        Recycler {
            list: Default::default(),
            cap,
        }
    }

    /// Moves every buffer kept into `out`, unless the lock is taken; never waits.
    pub fn take_all(&self, out: &mut Vec<T>) {
        if let Ok(mut list) = self.list.try_lock() {
            out.append(&mut list);
        }
    }

    /// Keeps `buffer` for reuse (dropped if `cap` are kept already).
    pub fn give(&self, buffer: T) {
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        if list.len() < self.cap {
            list.push(buffer);
        }
    }
}

/// The sending end of a bounded channel that never waits: while the channel is full,
/// messages are held back here, and go first, in order, once it has room.
pub struct Outbox<T> {
    tx: SyncSender<T>,
    held: VecDeque<T>,
    /// Messages lost because the receiver had gone.
    pub lost: u64,
}

impl<T> Outbox<T> {
    /// An outbox over `tx`.
    pub fn new(tx: SyncSender<T>) -> Self {
        Outbox {
            tx,
            held: VecDeque::new(),
            lost: 0,
        }
    }

    /// Sends `msg` after those held back, or holds it back too; never waits.
    pub fn send(&mut self, msg: T) {
        self.held.push_back(msg);
        while let Some(m) = self.held.pop_front() {
            match self.tx.try_send(m) {
                Ok(()) => {}
                Err(TrySendError::Full(m)) => {
                    self.held.push_front(m);
                    return;
                }
                Err(TrySendError::Disconnected(_)) => {
                    self.lost += 1 + self.held.len() as u64;
                    self.held.clear();
                    return;
                }
            }
        }
    }

    /// Messages held back now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Sends what is held back, waiting for room (at the end of a run).
    pub fn flush(&mut self) {
        for m in std::mem::take(&mut self.held) {
            if self.tx.send(m).is_err() {
                self.lost += 1;
            }
        }
    }
}

/// The forwarder's ends of its channels with the writer.
pub struct ToWriter {
    /// Messages to write.
    pub outbox: Outbox<Msg>,
    /// Packet buffers written, for reuse.
    pub bytes_back: Recycler<Vec<u8>>,
    /// Link record buffers written (empty), for reuse.
    pub records_back: Recycler<Vec<LinkRecord>>,
}

/// The writer's ends.
pub struct FromForwarder {
    rx: Receiver<Msg>,
    bytes_back: Recycler<Vec<u8>>,
    records_back: Recycler<Vec<LinkRecord>>,
}

/// The channels between the forwarder and the writer.
pub fn channels() -> (ToWriter, FromForwarder) {
    let (tx, rx) = sync_channel(CHANNEL_SLOTS);
    let (bytes, records) = (Recycler::new(BYTES_BACK), Recycler::new(RECORDS_BACK));
    (
        ToWriter {
            outbox: Outbox::new(tx),
            bytes_back: bytes.clone(),
            records_back: records.clone(),
        },
        FromForwarder {
            rx,
            bytes_back: bytes,
            records_back: records,
        },
    )
}

/// Writes tcpstate.jsonl lines received until every sender is gone; returns the log.
pub fn tcp_log(mut log: Option<Out>, rx: Receiver<Vec<u8>>) -> io::Result<Option<Out>> {
    for line in rx {
        if let Some(log) = log.as_mut() {
            log.write_all(&line)?;
        }
    }
    Ok(log)
}

/// Writes everything the forwarder sends until it is gone, handing the buffers back;
/// `epoch_ns` is added to the run's time for pcap stamps. Returns the bundle.
pub fn run(
    mut bundle: BundleWriter,
    from: FromForwarder,
    epoch_ns: i64,
) -> io::Result<BundleWriter> {
    // Packet ids are consecutive from 0: (flow, ip_id) of each, for the link log.
    let mut info: Vec<(Option<u32>, u16)> = Vec::new();
    let mut line = Vec::with_capacity(256);
    let vantages = [
        Vantage::Sender,
        Vantage::Receiver,
        Vantage::LinkIn,
        Vantage::LinkOut,
    ];
    let capture =
        |bundle: &mut BundleWriter, t_ns: i64, mask: u8, bytes: &[u8]| -> io::Result<()> {
            for v in vantages {
                if mask & bit(v) != 0 {
                    if let Some(pcap) = bundle.capture(v) {
                        let ts = epoch_ns + t_ns;
                        pcap.write_packet(ts, bytes, bytes.len() as u32)?;
                    }
                }
            }
            Ok(())
        };
    let give_back = |b: Vec<u8>| {
        let mut b = b;
        b.clear();
        from.bytes_back.give(b);
    };
    loop {
        // Never blocks in `recv`: a receiver asleep on the channel makes every send
        // take the channel's wake-up lock, which this thread, preempted, may hold.
        let msg = match from.rx.try_recv() {
            Ok(msg) => msg,
            Err(TryRecvError::Empty) => {
                std::thread::sleep(POLL);
                continue;
            }
            Err(TryRecvError::Disconnected) => break,
        };
        match msg {
            Msg::Ingress {
                id,
                t_ns,
                flow,
                ip_id,
                vantages,
                bytes,
            } => {
                debug_assert_eq!(id, info.len() as u64);
                info.push((flow, ip_id));
                if let Some(b) = bytes {
                    capture(&mut bundle, t_ns, vantages, &b)?;
                    give_back(b);
                }
            }
            Msg::Egress {
                t_ns,
                vantages,
                bytes,
            } => {
                capture(&mut bundle, t_ns, vantages, &bytes)?;
                give_back(bytes);
            }
            Msg::Link(mut records) => {
                if let Some(log) = bundle.link_log.as_mut() {
                    let lookup = |id: u64| {
                        info.get(id as usize)
                            .and_then(|&(f, ip_id)| f.map(|f| (f, ip_id)))
                    };
                    airtrace_sim::bundle::write_link_records(log, &records, lookup, &mut line)?;
                }
                records.clear();
                from.records_back.give(records);
            }
        }
    }
    Ok(bundle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_outbox_holds_messages_back_in_order_and_never_waits() {
        let (tx, rx) = sync_channel(2);
        let mut out = Outbox::new(tx);
        for i in 0..5 {
            out.send(i);
        }
        assert_eq!(out.held(), 3, "two in the channel, three held back");
        assert_eq!((rx.try_recv(), rx.try_recv()), (Ok(0), Ok(1)));
        out.send(5); // 2 and 3 go first
        assert_eq!(out.held(), 2);
        assert_eq!((rx.try_recv(), rx.try_recv()), (Ok(2), Ok(3)));
        let reader = std::thread::spawn(move || rx.iter().collect::<Vec<_>>());
        out.flush();
        drop(out);
        assert_eq!(reader.join().unwrap(), [4, 5]);
    }

    #[test]
    fn messages_to_a_receiver_gone_are_counted_lost() {
        let (tx, rx) = sync_channel(1);
        let mut out = Outbox::new(tx);
        out.send(1);
        out.send(2);
        drop(rx);
        out.send(3);
        // 1 was handed over (into the channel); 2, held back, and 3 never were.
        assert_eq!((out.lost, out.held()), (2, 0));
    }
}

#[cfg(test)]
mod recycler_tests {
    use super::Recycler;

    #[test]
    fn buffers_come_back_up_to_the_cap_and_taking_never_waits() {
        let r = Recycler::new(2);
        for i in 0..3 {
            r.give(vec![i]);
        }
        let mut out = Vec::new();
        let guard = r.list.lock().unwrap();
        r.take_all(&mut out);
        assert!(out.is_empty(), "the lock is held: nothing, at once");
        drop(guard);
        r.take_all(&mut out);
        assert_eq!(out, [vec![0], vec![1]], "the third was over the cap");
    }
}
