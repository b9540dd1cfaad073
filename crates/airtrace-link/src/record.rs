//! The link log: one [`LinkRecord`] per link-layer event, the JSON Lines schema of the
//! bundle's `link.jsonl` (documented for users in `docs/link-log.md`).
//!
//! Every link type ([`Direction`](crate::link::Direction),
//! [`GsmRlp`](crate::rlp::GsmRlp), [`StopAndWait`](crate::arq::StopAndWait)) can keep a
//! log. Logging is off by default and costs one branch per event when off. Turn it on
//! with the type's `enable_log`, giving a function that names a packet with a `u64`
//! (the caller's packet id, e.g. its index in the capture); collect records with
//! `drain_log`. The id function is a plain `fn` pointer, so the link puts no trait
//! bound on the item type.
//!
//! Records are appended when the link processes the event. A caller that polls at every
//! `next_deadline` (as the simulator does) gets them in time order; otherwise sort by
//! `t_ns` (stably) before writing.

use serde::Serialize;

/// Which way a packet travels. Two-way link types ([`GsmRlp`](crate::rlp::GsmRlp),
/// [`StopAndWait`](crate::arq::StopAndWait)) index their sides with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkDir {
    /// Towards the mobile / client (index 0).
    Down,
    /// From the mobile / client (index 1).
    Up,
}

impl LinkDir {
    /// Both directions, in index order.
    pub const BOTH: [LinkDir; 2] = [LinkDir::Down, LinkDir::Up];

    /// The other direction.
    pub fn reverse(self) -> Self {
        match self {
            LinkDir::Down => LinkDir::Up,
            LinkDir::Up => LinkDir::Down,
        }
    }

    /// 0 for `Down`, 1 for `Up`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Why a link gave up on a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The queue (interface buffer) was full when the packet arrived.
    Queue,
    /// Active queue management (RED at enqueue, CoDel at dequeue) chose it.
    Aqm,
    /// Link-layer ARQ gave up after its retry limit.
    RetryLimit,
    /// A link reset flushed it (GSM RLP).
    Reset,
    /// It arrived, but the receiver's header decompressor could not rebuild its header
    /// (out of step after a loss: VJ compression, RFC 1144).
    HeaderCompression,
    /// On a shared medium, another station transmitted in the same backoff slot: both
    /// frames were lost (the reason of a `frame_lost`, not of a drop).
    Collision,
}

/// What happened, in the log. Serialised as the snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkEventKind {
    /// A link-layer frame's first transmission starts (ARQ links).
    FrameSent,
    /// A retransmission of a frame starts (ARQ links); `attempt` ≥ 2.
    FrameRetransmitted,
    /// A frame transmission was lost; at the time it would have arrived.
    FrameLost,
    /// A frame transmission arrived.
    FrameDelivered,
    /// The receiver asks for a lost frame again (GSM RLP selective reject), sent in the
    /// reverse direction; `dir` is the direction of the data frame it asks for.
    SrejSent,
    /// The link resets (GSM RLP, a frame exceeded N2 retransmissions): both directions'
    /// buffers are flushed.
    LinkReset,
    /// The reset is over; frames flow again.
    LinkResetDone,
    /// An IP fragment arrived (only for datagrams sent as several fragments).
    FragmentDelivered,
    /// An IP fragment was lost; its datagram is lost.
    FragmentLost,
    /// A packet reached the far end (all its fragments / frames, in order).
    PacketDelivered,
    /// A packet was lost on the wire (its loss process, or one of its fragments).
    PacketLost,
    /// The link gave up on a packet; see `reason`.
    PacketDropped,
    /// A packet arrived but the receiving end threw it away; see `reason` (written by
    /// the simulator for VJ decompression failures).
    PacketDiscarded,
    /// AQM marked the packet Congestion Experienced instead of dropping it.
    EcnMarked,
}

/// One line of the link log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkRecord {
    /// When it happened, in ns since the start of the run.
    pub t_ns: i64,
    /// Which way the packet or frame travels.
    pub dir: LinkDir,
    /// What happened.
    pub kind: LinkEventKind,
    /// The caller's packet id (from the `enable_log` function), when one packet is
    /// concerned.
    pub packet: Option<u64>,
    /// Frame sequence number (ARQ links, per direction, from 0 after each reset), or
    /// the fragment index for `fragment_*` kinds.
    pub frame: Option<u64>,
    /// Transmission attempt of the frame, from 1.
    pub attempt: Option<u32>,
    /// Bytes concerned: frame payload, fragment length (with its IP header), or packet
    /// length.
    pub bytes: Option<u32>,
    /// Packets waiting in the queue / interface buffer right after the event.
    pub queue_packets: Option<u32>,
    /// Why the packet was dropped (`packet_dropped` only).
    pub reason: Option<DropReason>,
    /// Number of fragments of the datagram (`fragment_*`, and `packet_*` of fragmented
    /// datagrams).
    pub fragments: Option<u32>,
}

impl LinkRecord {
    /// A record with only the time, direction and kind set.
    pub fn new(t_ns: i64, dir: LinkDir, kind: LinkEventKind) -> Self {
        Self {
            t_ns,
            dir,
            kind,
            packet: None,
            frame: None,
            attempt: None,
            bytes: None,
            queue_packets: None,
            reason: None,
            fragments: None,
        }
    }

    /// Sets `packet`.
    pub fn packet(mut self, id: u64) -> Self {
        self.packet = Some(id);
        self
    }

    /// Sets `frame`.
    pub fn frame(mut self, seq: u64) -> Self {
        self.frame = Some(seq);
        self
    }

    /// Sets `attempt`.
    pub fn attempt(mut self, n: u32) -> Self {
        self.attempt = Some(n);
        self
    }

    /// Sets `bytes` (saturating at `u32::MAX`).
    pub fn bytes(mut self, n: usize) -> Self {
        self.bytes = Some(u32::try_from(n).unwrap_or(u32::MAX));
        self
    }

    /// Sets `queue_packets` (saturating at `u32::MAX`).
    pub fn queue(mut self, n: usize) -> Self {
        self.queue_packets = Some(u32::try_from(n).unwrap_or(u32::MAX));
        self
    }

    /// Sets `reason`.
    pub fn reason(mut self, r: DropReason) -> Self {
        self.reason = Some(r);
        self
    }

    /// Sets `fragments`.
    pub fn fragments(mut self, n: u32) -> Self {
        self.fragments = Some(n);
        self
    }
}

/// A link's optional log: the id function and the records not yet drained.
#[derive(Debug, Clone)]
pub(crate) struct Log<T> {
    id: Option<fn(&T) -> u64>,
    pub(crate) records: Vec<LinkRecord>,
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self {
            id: None,
            records: Vec::new(),
        }
    }
}

impl<T> Log<T> {
    pub(crate) fn enable(&mut self, id: fn(&T) -> u64) {
        self.id = Some(id);
    }

    #[inline]
    pub(crate) fn on(&self) -> bool {
        self.id.is_some()
    }

    /// The id of `item` (0 when logging is off).
    #[inline]
    pub(crate) fn id(&self, item: &T) -> u64 {
        self.id.map_or(0, |f| f(item))
    }

    /// Appends the record built by `make` if logging is on.
    #[inline]
    pub(crate) fn push(&mut self, make: impl FnOnce() -> LinkRecord) {
        if self.on() {
            self.records.push(make());
        }
    }

    pub(crate) fn drain_into(&mut self, out: &mut Vec<LinkRecord>) {
        out.append(&mut self.records);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_line_has_every_field_in_snake_case() {
        let r = LinkRecord::new(20_000_000, LinkDir::Up, LinkEventKind::PacketDropped)
            .packet(7)
            .reason(DropReason::RetryLimit)
            .queue(3);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"t_ns":20000000,"dir":"up","kind":"packet_dropped","packet":7,"frame":null,"attempt":null,"bytes":null,"queue_packets":3,"reason":"retry_limit","fragments":null}"#
        );
    }
}
