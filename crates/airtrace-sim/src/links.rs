//! The link between the two hosts, whatever its kind, behind one interface.
//!
//! A plain link is two independent [`Direction`]s; GSM RLP and stop-and-wait ARQ
//! ([`StopAndWait`]) are
//! two-way objects from `airtrace-link` (their directions are coupled). The simulation
//! sees one [`Link`] with `send`, `next_deadline`, `poll_into`, and the link log. Index
//! 0 is the forward direction (a → b, `LinkDir::Down` in airtrace-link: towards the
//! mobile host), 1 the reverse one.

use airtrace_link::arq::{AirFrame, StopAndWait, StopAndWaitConfig};
use airtrace_link::link::{Direction, Event, Sent};
use airtrace_link::record::{LinkDir, LinkRecord};
use airtrace_link::rlp::GsmRlp;

/// The link (see the [module documentation](self)).
pub enum Link {
    /// Two independent directions.
    Plain(Box<[Direction<PacketId>; 2]>),
    /// GSM RLP.
    Rlp(Box<GsmRlp<PacketId>>),
    /// 802.11-like stop-and-wait ARQ.
    StopAndWait(Box<StopAndWait<PacketId>>),
}

/// airtrace-link's name for direction `d` (0 forward, 1 reverse).
pub fn link_dir(d: usize) -> LinkDir {
    if d == 0 {
        LinkDir::Down
    } else {
        LinkDir::Up
    }
}

/// What the link carries: the id of a packet the simulation keeps (moving a small
/// integer through queues is much cheaper than moving the packet).
pub type PacketId = u64;

fn packet_id(p: &PacketId) -> u64 {
    *p
}

impl Link {
    /// meta.json's `link`: what an analysis of the link log needs to know of an ARQ
    /// link that the log does not say. For GSM RLP, the frame slots and the
    /// flow-controlled rate per direction (a slot that flow control keeps closed is not
    /// idle time); `null` for the others.
    pub fn meta(&self) -> serde_json::Value {
        match self {
            Link::Rlp(rlp) => {
                let cfg = rlp.config();
                serde_json::json!({
                    "arq": "gsm_rlp",
                    "frame_ns": cfg.frame_ns,
                    "frame_payload_bytes": cfg.frame_payload_bytes,
                    "rate_bytes_per_s": { "down": cfg.rate_bytes_per_s[0], "up": cfg.rate_bytes_per_s[1] },
                })
            }
            _ => serde_json::Value::Null,
        }
    }

    /// Starts logging every link event.
    pub fn enable_log(&mut self) {
        match self {
            Link::Plain(dirs) => {
                for (d, dir) in dirs.iter_mut().enumerate() {
                    dir.enable_log(link_dir(d), packet_id);
                }
            }
            Link::Rlp(rlp) => rlp.enable_log(packet_id),
            Link::StopAndWait(arq) => arq.enable_log(packet_id),
        }
    }

    /// Starts recording the frames on the air (stop-and-wait links only; see
    /// `StopAndWait::enable_air`). False for other links.
    pub fn enable_air(&mut self) -> bool {
        match self {
            Link::StopAndWait(arq) => {
                arq.enable_air(packet_id);
                true
            }
            Link::Plain(_) | Link::Rlp(_) => false,
        }
    }

    /// Moves the frames recorded on the air to `out`, in time order.
    pub fn drain_air(&mut self, out: &mut Vec<AirFrame>) {
        if let Link::StopAndWait(arq) = self {
            arq.drain_air(out);
        }
    }

    /// The settings of an 802.11-like link.
    pub fn arq_config(&self) -> Option<&StopAndWaitConfig> {
        match self {
            Link::StopAndWait(arq) => Some(arq.config()),
            Link::Plain(_) | Link::Rlp(_) => None,
        }
    }

    /// Offers a packet of `len` bytes to direction `d` at `now_ns`; `ect`: it is
    /// ECN-capable, so AQM may mark it rather than drop it (the ARQ links have no AQM).
    pub fn send(
        &mut self,
        now_ns: i64,
        d: usize,
        packet: PacketId,
        len: usize,
        ect: bool,
    ) -> Sent<PacketId> {
        match self {
            Link::Plain(dirs) => dirs[d].send_ecn(now_ns, packet, len, ect),
            Link::Rlp(rlp) => rlp.send(now_ns, link_dir(d), packet, len),
            Link::StopAndWait(arq) => arq.send(now_ns, link_dir(d), packet, len),
        }
    }

    /// When the link next needs a poll.
    pub fn next_deadline(&self) -> Option<i64> {
        match self {
            Link::Plain(dirs) => match (dirs[0].next_deadline(), dirs[1].next_deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            Link::Rlp(rlp) => rlp.next_deadline(),
            Link::StopAndWait(arq) => arq.next_deadline(),
        }
    }

    /// Appends, in time order, what happened up to `now_ns` and in which direction;
    /// `scratch` is a buffer for the plain link's directions.
    pub fn poll_into(
        &mut self,
        now_ns: i64,
        scratch: &mut Vec<Event<PacketId>>,
        out: &mut Vec<(LinkDir, Event<PacketId>)>,
    ) {
        match self {
            Link::Plain(dirs) => {
                let start = out.len();
                for (d, dir) in dirs.iter_mut().enumerate() {
                    scratch.clear();
                    dir.poll_into(now_ns, scratch);
                    out.extend(scratch.drain(..).map(|e| (link_dir(d), e)));
                }
                // Both directions' events are due by now; hand them over in time order.
                out[start..].sort_by_key(|(_, e)| e.at_ns());
            }
            Link::Rlp(rlp) => rlp.poll_into(now_ns, out),
            Link::StopAndWait(arq) => arq.poll_into(now_ns, out),
        }
    }

    /// When direction `d`'s transmitter fell (or falls) idle, `None` while it has
    /// packets waiting: see `Direction::idle_from`. The ARQ links only say whether
    /// data waits, so for them an idle link counts from `now_ns`, the time of the
    /// caller's event.
    pub fn idle_from(&self, d: usize, now_ns: i64) -> Option<i64> {
        match self {
            Link::Plain(dirs) => dirs[d].idle_from(),
            Link::Rlp(rlp) => (rlp.buffered(link_dir(d)) == 0).then_some(now_ns),
            Link::StopAndWait(arq) => (arq.queued(link_dir(d)) == 0).then_some(now_ns),
        }
    }

    /// Moves the logged records to `out`.
    pub fn drain_log(&mut self, out: &mut Vec<LinkRecord>) {
        match self {
            Link::Plain(dirs) => {
                for dir in dirs.iter_mut() {
                    dir.drain_log(out);
                }
            }
            Link::Rlp(rlp) => rlp.drain_log(out),
            Link::StopAndWait(arq) => arq.drain_log(out),
        }
    }
}
