//! TCP connection reconstruction, per-packet annotations and per-connection metrics.
//!
//! Map of the code:
//! - [`analyzer`]: the [`Analyzer`], one streaming pass over decoded packets; start here.
//! - [`conn`]: one connection, its two directions and the per-packet steps.
//! - [`wireshark`]: the `tcp.analysis.*` flags with Wireshark's meaning.
//! - [`dups`]: capture duplicates and 802.11 MAC retries.
//! - [`annotation`]: the per-packet output ([`Annotation`], [`Flags`]).
//! - [`clock`]: capture times that cannot be true, kept from poisoning the rest.
//! - [`metrics`]: the per-connection output ([`ConnSummary`]).
//! - [`flow`]: connection keys; [`seq`]: sequence-number arithmetic; `holes`: gaps
//!   in the captured sequence space.
//! - [`file`]: reading a capture end to end ([`analyze_file`], [`analyze_capture`]).
//! - [`selfcheck`]: values in a finished report that cannot be true, caught and named.
//! - [`vantage`]: where the capture sat, near the sender or the receiver of the data.
//!
//! Memory is bounded by the live connections and their outstanding data: finished
//! connections keep only their summary.

pub mod analyzer;
pub mod annotation;
pub mod clock;
pub(crate) mod conn;
pub(crate) mod dups;
pub mod file;
pub mod flow;
pub(crate) mod holes;
pub mod metrics;
pub mod selfcheck;
pub mod seq;
pub(crate) mod shard;
pub mod vantage;
pub mod wireshark;

pub use analyzer::{Analyzer, PacketIn};
pub use annotation::{Annotation, Flags, RetransKind, NONE_I64};
pub use file::{
    analyze_capture, analyze_file, analyze_file_sharded, analyze_file_summary, FileReport,
    PacketSink,
};
pub use metrics::{ConnState, ConnSummary, DirMetrics, RttStats};
pub use vantage::{capture_point, CapturePoint};
