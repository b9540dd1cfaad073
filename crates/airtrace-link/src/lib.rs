//! Link models shared by the airtrace simulator and emulator.
//!
//! The simulator runs links in simulated time; the emulator runs the same code in real
//! time inside its TUN forwarder. For "simulate, then check it on real TCP" to be honest
//! the two must share one implementation, so nothing here reads a clock: every call
//! takes the current time as `now_ns: i64` (nanoseconds since the start of the run),
//! and every random choice comes from a named stream derived from the scenario seed.
//! Same scenario + same seed ⇒ same losses, in the simulator and in the emulator.
//!
//! # Map of the code
//!
//! - [`rng`]: [`Streams`](rng::Streams), one independent ChaCha8 stream per name,
//!   derived from the scenario seed. Start here.
//! - [`loss`]: [`LossModel`](loss::LossModel) (none, Bernoulli, Gilbert-Elliott, bursts
//!   scheduled in time as in Rais & Tripathi 1995, loss traces) and
//!   [`LossProcess`](loss::LossProcess), which answers "is the packet sent now lost?".
//! - [`queue`]: [`DropTail`](queue::DropTail), a FIFO that drops arrivals beyond a
//!   limit in packets or bytes ([`QueueLimit`](queue::QueueLimit)).
//! - [`aqm`]: [`QueueDiscipline`](aqm::QueueDiscipline): drop-tail, RED
//!   ([`RedConfig`](aqm::RedConfig), decided at enqueue) or CoDel
//!   ([`CoDelConfig`](aqm::CoDelConfig), RFC 8289, decided at dequeue), either marking
//!   ECN-capable packets instead of dropping them.
//! - [`link`]: [`Direction`](link::Direction), one direction of a link: queue (with
//!   its discipline), transmitter at a fixed rate or driven by a delivery trace,
//!   optional MTU (IPv4 fragmentation: each fragment its own transmission, the datagram
//!   lost with any fragment), loss process, propagation delay; driven by
//!   `send` / `next_deadline` / `poll_into` and reporting typed [`Event`](link::Event)s
//!   (delivered with a CE flag, lost naming the fragment, dropped with a reason).
//! - [`rlp`]: [`GsmRlp`](rlp::GsmRlp), both directions of a GSM RLP link as in Ludwig
//!   et al.: 24 data bytes per 30-byte frame every 20 ms, selective reject after one RLP
//!   round trip, N2 retransmissions then a link reset that flushes both directions,
//!   flow control to a lower byte rate.
//! - [`arq`]: [`StopAndWait`](arq::StopAndWait), stop-and-wait ARQ like 802.11 DCF
//!   retries: one packet at a time per direction, ACK turnaround, retry limit, fixed or
//!   slotted contention-window backoff.
//! - [`record`]: [`LinkRecord`](record::LinkRecord), the link log (the bundle's
//!   `link.jsonl`, schema in `docs/link-log.md`), written by every link type when
//!   `enable_log` was called; [`LinkDir`](record::LinkDir) and
//!   [`DropReason`](record::DropReason).
//! - [`vj`]: Van Jacobson TCP/IP header compression (RFC 1144) on a serial link:
//!   [`Compressor`](vj::Compressor) gives each packet's kind and header bytes on the
//!   link, [`Decompressor`](vj::Decompressor) says whether the receiving host gets it,
//!   both fed with [`TcpIpHeader`](vj::TcpIpHeader) summaries. Models the Ludwig et al.
//!   failure: after a damaged frame ([`link_error`](vj::Decompressor::link_error),
//!   toss) or a silently lost one (never passed to `receive`: deltas applied to a stale
//!   header, TCP checksum fails) every compressed segment is lost until an uncompressed
//!   one, usually the timeout's retransmission.
//! - [`trace`]: [`DeliveryTrace`](trace::DeliveryTrace), Mahimahi delivery-opportunity
//!   traces (one line = one 1500-byte packet may leave at that ms; the trace loops),
//!   parsed with `FILE:LINE` errors and queried in O(log n); drives
//!   [`Direction::with_trace`](link::Direction::with_trace).
//!
//! All link types share one clock-free style: `send(now_ns, ...)`, `next_deadline()`,
//! `poll_into(now_ns, &mut out)`; the two-way ARQ links take the direction in `send`
//! and report `(LinkDir, Event)` pairs.
//!
//! # Not yet here
//!
//! Jitter and reordering, time-varying rates, SNR- and frame-length-driven loss
//! (Bachmann), a shared medium between the two directions of an 802.11 link
//! (collisions, one backoff for both), ACK loss, RLP checkpoint recovery (lost SREJs,
//! timer T1), XON/XOFF flow-control bursts, ECN and fragmentation in the ARQ links
//! (they carry packets whole and never mark), and writing the link log into the
//! bundle (the record type and its schema are here; the simulator and emulator write
//! the file).

//! # How sim and emu use it
//!
//! Both build one [`LossProcess`](loss::LossProcess) per link direction from the
//! scenario's [`LossModel`](loss::LossModel) and a stream named after that direction,
//! then ask it once per packet. The simulator passes its event time, the emulator the
//! monotonic time elapsed since the run started.
//!
//! ```
//! use airtrace_link::loss::{LossModel, LossProcess};
//! use airtrace_link::rng::Streams;
//!
//! let streams = Streams::new(2026);
//! let model = LossModel::GilbertElliott {
//!     p_good_to_bad: 0.01,
//!     p_bad_to_good: 0.2,
//!     loss_in_good: 0.0,
//!     loss_in_bad: 1.0,
//! };
//! let mut down = LossProcess::new(model.clone(), streams.stream("link0/down/loss"))?;
//! let mut again = LossProcess::new(model, streams.stream("link0/down/loss"))?;
//! for i in 0..1000 {
//!     let now_ns = i * 1_000_000; // one packet per millisecond
//!     assert_eq!(down.lose(now_ns), again.lose(now_ns));
//! }
//! # Ok::<(), airtrace_link::loss::LossConfigError>(())
//! ```

pub mod aqm;
pub mod arq;
pub mod input;
pub mod link;
pub mod loss;
pub mod queue;
pub mod record;
pub mod rlp;
pub mod rng;
pub mod trace;
pub mod vj;
