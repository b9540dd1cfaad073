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
//! - [`link`]: [`Direction`](link::Direction), one direction of a link: queue,
//!   transmitter at a fixed rate or driven by a delivery trace, loss process,
//!   propagation delay; driven by
//!   `send` / `next_deadline` / `poll` and reporting typed [`Event`](link::Event)s.
//! - [`trace`]: [`DeliveryTrace`](trace::DeliveryTrace), Mahimahi delivery-opportunity
//!   traces (one line = one 1500-byte packet may leave at that ms; the trace loops),
//!   parsed with `FILE:LINE` errors and queried in O(log n); drives
//!   [`Direction::with_trace`](link::Direction::with_trace).
//!
//! # Not yet here
//!
//! Active queue management (RED/CoDel), jitter and reordering, time-varying rates,
//! link-layer ARQ (GSM RLP, 802.11 retries), fragmentation, SNR-driven loss, and writing
//! link events to the bundle. Those are the
//! next steps; [`link::Direction`] is the piece they will extend.
//!
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
pub mod link;
pub mod loss;
pub mod queue;
pub mod record;
pub mod rlp;
pub mod rng;
pub mod trace;
