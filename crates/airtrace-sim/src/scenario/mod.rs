//! Scenario files: what to simulate, as TOML, with documented defaults.
//!
//! A scenario names one link between two hosts (the sender side `a` and the receiver
//! side `b`), the flows that cross it, the seed, and which files the run writes. The
//! reference with every key and its default is `docs/scenarios.md`; the files in
//! `scenarios/` are runnable examples.
//!
//! Loading is strict, because a typo that silently falls back to a default gives a
//! plausible but wrong result: unknown keys, wrong types and impossible values are all
//! errors, reported as `FILE:LINE:COLUMN: message` with the rule that was broken.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use airtrace_link::aqm::{CoDelConfig, QueueDiscipline, RedConfig};
use airtrace_link::input::{quote, read_text, MAX_SCENARIO_BYTES, MAX_TRACE_BYTES};
use airtrace_link::loss::{Dist, LossModel};
use serde::Deserialize;

use crate::overrides::{self, Marks, Override};
use crate::packet::RPC_HEADER;
use crate::units::{Duration, Rate, Size};

mod network;
mod signal;
pub use network::{
    ArpProfile, ChainSpec, MacProfile, MobileIpSpec, MobilityModel, MobilitySpec, NetworkSpec,
    NodeSpec, RandomSpec, RoamingSpec, Role, RouteSpec, RoutingProfile, SplitSpec,
};
pub use signal::{RateControlSpec, SignalSpec, WallSpec};

/// A scenario, as read from its file (see the [module documentation](self)).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short name, used in the bundle's meta.json. Default: the file's stem.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text for people reading the file.
    #[serde(default)]
    pub description: Option<String>,
    /// The seed every random stream derives from. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The latest simulated time; the run ends earlier when every flow has finished.
    /// Default 1 hour.
    #[serde(default = "default_duration")]
    pub duration: Duration,
    /// Where pcaps are taken on a one-link scenario: any of `sender`, `receiver`,
    /// `link_in`, `link_out`, `air`. Default `["sender", "receiver"]`; `[]` writes none
    /// (fastest). A network names its capture points in `network.captures`.
    #[serde(default)]
    captures: Option<Vec<Vantage>>,
    /// Bytes kept of each captured packet. Default: all of it.
    #[serde(default)]
    pub snaplen: Option<Size>,
    /// Write the link event log (link.jsonl). Default true.
    #[serde(default = "yes")]
    pub link_log: bool,
    /// Write the TCP sender state log (tcpstate.jsonl). Default true.
    #[serde(default = "yes")]
    pub tcp_state_log: bool,
    /// The link between the two hosts (a one-link scenario).
    #[serde(default)]
    pub link: Option<LinkSpec>,
    /// The nodes, their radios and routes (a network scenario).
    #[serde(default)]
    pub network: Option<NetworkSpec>,
    /// The flows (at least one), each a `[[flow]]` table.
    #[serde(rename = "flow")]
    pub flows: Vec<FlowSpec>,
}

fn default_seed() -> u64 {
    1
}
fn default_duration() -> Duration {
    Duration(3600 * 1_000_000_000)
}
/// Where a one-link scenario captures when it does not say.
const DEFAULT_CAPTURES: [Vantage; 2] = [Vantage::Sender, Vantage::Receiver];
fn yes() -> bool {
    true
}

/// A capture point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vantage {
    /// At host `a`'s interface: what it sends as it hands it to the link, what it
    /// receives as it arrives.
    Sender,
    /// At host `b`'s interface.
    Receiver,
    /// Every packet as it enters the link, in either direction (drops at a full queue
    /// included: the capture sits before the queue).
    LinkIn,
    /// Every packet as it leaves the link at the far end, in either direction.
    LinkOut,
    /// A wireless sniffer beside the stations of a `stop_and_wait` link: every
    /// transmission attempt and every 802.11 ACK, as 802.11 frames with a radiotap
    /// header (rate, FCS flags; a bad FCS on frames lost to the channel or a
    /// collision), as a monitor-mode capture shows them.
    Air,
}

impl Vantage {
    /// The name used for its file (`<name>.pcap`) and in meta.json.
    pub fn name(self) -> &'static str {
        match self {
            Vantage::Sender => "sender",
            Vantage::Receiver => "receiver",
            Vantage::LinkIn => "link_in",
            Vantage::LinkOut => "link_out",
            Vantage::Air => "air",
        }
    }
}

/// The link: settings for both directions, each of which `forward` (a → b, the data
/// direction) and `reverse` (b → a) may override.
///
/// The direction keys are spelled out here rather than flattened from [`DirSpec`]:
/// serde cannot combine `flatten` with `deny_unknown_fields`, and unknown keys must be
/// errors. [`LinkSpec::resolve`] turns them back into a `DirSpec`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Transmission rate of both directions (`"11 Mbit/s"`, `"unlimited"`).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Mahimahi delivery-opportunity trace for both directions, instead of `rate`.
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// One-way propagation delay. Default 0.
    #[serde(default)]
    pub delay: Option<Duration>,
    /// IP MTU in bytes. Default 1500.
    #[serde(default)]
    pub mtu: Option<Size>,
    /// Queue limit in packets. Default 100 (unless `queue_bytes` is given).
    #[serde(default)]
    pub queue_packets: Option<u64>,
    /// Queue limit in bytes, instead of packets.
    #[serde(default)]
    pub queue_bytes: Option<Size>,
    /// The loss process of both directions. Default none.
    #[serde(default)]
    pub loss: Option<LossSpec>,
    /// Queue discipline of both directions. Default drop-tail.
    #[serde(default)]
    pub aqm: Option<AqmSpec>,
    /// A reliable link layer instead of a plain link. Default none.
    #[serde(default)]
    pub arq: Option<ArqSpec>,
    /// VJ TCP/IP header compression (RFC 1144) on both directions. Default false.
    #[serde(default)]
    pub header_compression: bool,
    /// Overrides for the a → b direction.
    #[serde(default)]
    pub forward: Option<DirSpec>,
    /// Overrides for the b → a direction.
    #[serde(default)]
    pub reverse: Option<DirSpec>,
}

/// Settings of one link direction; every key is optional so that a direction table
/// can override only some of the link's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirSpec {
    /// Transmission rate (`"11 Mbit/s"`, `"unlimited"`). Required unless `trace` is given.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Mahimahi delivery-opportunity trace (path relative to the scenario file), used
    /// instead of `rate`.
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// One-way propagation delay. Default 0.
    #[serde(default)]
    pub delay: Option<Duration>,
    /// IP MTU in bytes. Default 1500.
    #[serde(default)]
    pub mtu: Option<Size>,
    /// Queue limit in packets. Default 100 (unless `queue_bytes` is given).
    #[serde(default)]
    pub queue_packets: Option<u64>,
    /// Queue limit in bytes, instead of packets.
    #[serde(default)]
    pub queue_bytes: Option<Size>,
    /// The loss process. Default none.
    #[serde(default)]
    pub loss: Option<LossSpec>,
    /// Queue discipline. Default drop-tail.
    #[serde(default)]
    pub aqm: Option<AqmSpec>,
}

/// A queue discipline: `aqm = { kind = "red" }` or `{ kind = "codel", target = "5 ms" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmSpec {
    /// Drop arrivals beyond the queue limit (the default).
    DropTail,
    /// Random Early Detection (Floyd & Jacobson 1993); thresholds in packets.
    Red {
        #[serde(default)]
        w_q: Option<f64>,
        #[serde(default)]
        min_th: Option<f64>,
        #[serde(default)]
        max_th: Option<f64>,
        #[serde(default)]
        max_p: Option<f64>,
        #[serde(default)]
        gentle: Option<bool>,
        #[serde(default)]
        ecn: Option<bool>,
    },
    /// CoDel (RFC 8289).
    Codel {
        #[serde(default)]
        target: Option<Duration>,
        #[serde(default)]
        interval: Option<Duration>,
        #[serde(default)]
        ecn: Option<bool>,
    },
}

/// A link layer with retransmissions: `arq = { kind = "gsm_rlp" }` or
/// `{ kind = "stop_and_wait", retry_limit = 7 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArqSpec {
    /// GSM RLP as Ludwig et al. measured it (airtrace-link's `rlp` module): its own
    /// 20 ms frame slots replace `rate`; `loss` applies per frame.
    GsmRlp {
        #[serde(default)]
        n2: Option<u32>,
        #[serde(default)]
        frame: Option<Duration>,
        #[serde(default)]
        frame_payload: Option<u64>,
        #[serde(default)]
        one_way_delay: Option<Duration>,
        #[serde(default)]
        buffer_packets: Option<u64>,
        /// Data rate after flow control (L2R), e.g. `"960 B/s"`. Default 1200 B/s.
        #[serde(default)]
        flow_control: Option<Rate>,
        #[serde(default)]
        reset: Option<Duration>,
    },
    /// 802.11-like stop-and-wait with a retry limit (airtrace-link's `arq` module):
    /// `rate`, `delay` and `queue_packets` come from `[link]`; `loss` applies per attempt.
    StopAndWait {
        #[serde(default)]
        retry_limit: Option<u32>,
        /// SIFS + ACK + way back. Default 314 us (802.11b, 1 Mbit/s ACK).
        #[serde(default)]
        ack: Option<Duration>,
        /// `"dcf"` (802.11b slotted backoff, the default) or `"none"`.
        #[serde(default)]
        backoff: Option<String>,
        /// `"separate"` (each direction its own channel, the default) or `"shared"`
        /// (two stations contending for one channel: collisions).
        #[serde(default)]
        medium: Option<String>,
        /// Auto Rate Fallback over these rates, slowest first (replaces `[link] rate`)...
        #[serde(default)]
        rates: Option<Vec<Rate>>,
        /// ...each with the probability that the channel corrupts an attempt at it.
        #[serde(default)]
        rate_loss: Option<Vec<f64>>,
    },
}

/// A loss process, as the `loss` table writes it: `{ model = "bernoulli", p = 0.01 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    /// Nothing is lost.
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state Markov chain per packet (Gilbert-Elliott).
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        #[serde(default)]
        loss_in_good: f64,
        #[serde(default = "one")]
        loss_in_bad: f64,
    },
    /// Bursts in time: every packet sent in a burst is lost. `length` and `gap` are a
    /// duration or `{ min = ..., max = ... }` (uniform); `every` (fixed bursts only)
    /// is the start-to-start period, instead of `gap`.
    Bursts {
        length: DistSpec,
        #[serde(default)]
        gap: Option<DistSpec>,
        #[serde(default)]
        every: Option<Duration>,
    },
    /// A loss pattern: `"0001000011"` (1 = lost), cycling.
    Pattern { pattern: String },
    /// A loss trace file (path relative to the scenario): one `0` or `1` per line for
    /// each packet sent (1 = lost), `#` comments; it cycles like a pattern.
    Trace { file: PathBuf },
}

fn one() -> f64 {
    1.0
}

/// A duration that is fixed (`"100 ms"`) or uniform (`{ min = "50 ms", max = "150 ms" }`).
#[derive(Debug, Clone, Copy)]
pub enum DistSpec {
    Fixed(Duration),
    Uniform { min: Duration, max: Duration },
}

/// What a [`DistSpec`] may be, for errors.
const DIST_FORMS: &str =
    "a duration such as \"100 ms\", or a uniform range { min = \"50 ms\", max = \"150 ms\" }";
/// What a [`DistSpec`] may be besides a duration, after a duration's error.
const DIST_RANGE: &str = "or a uniform range { min = \"50 ms\", max = \"150 ms\" }";

/// Not `#[serde(untagged)]`, whose error ("data did not match any variant of untagged
/// enum DistSpec") names neither the value nor the accepted forms: a table is a range
/// (its own errors name the key at fault), anything else a duration.
impl<'de> Deserialize<'de> for DistSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{value, Error, IntoDeserializer, MapAccess, Visitor};

        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Uniform {
            min: Duration,
            max: Duration,
        }
        /// A duration, its error followed by the other form a DistSpec may take.
        fn fixed<'a, E: Error>(v: impl IntoDeserializer<'a, value::Error>) -> Result<DistSpec, E> {
            Duration::deserialize(v.into_deserializer())
                .map(DistSpec::Fixed)
                .map_err(|e| E::custom(format!("{e}; {DIST_RANGE}")))
        }
        struct DistVisitor;
        impl<'de> Visitor<'de> for DistVisitor {
            type Value = DistSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(DIST_FORMS)
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<DistSpec, E> {
                fixed(v)
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<DistSpec, E> {
                fixed(v)
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<DistSpec, E> {
                fixed(v)
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<DistSpec, E> {
                fixed(v)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<DistSpec, A::Error> {
                let Uniform { min, max } =
                    Uniform::deserialize(value::MapAccessDeserializer::new(map))?;
                Ok(DistSpec::Uniform { min, max })
            }
        }
        d.deserialize_any(DistVisitor)
    }
}

impl DistSpec {
    fn dist(self) -> Dist {
        match self {
            DistSpec::Fixed(d) => Dist::Fixed(d.0),
            DistSpec::Uniform { min, max } => Dist::Uniform {
                min: min.0,
                max: max.0,
            },
        }
    }
}

/// What a flow's application does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    /// Send `bytes` as fast as TCP allows (FTP-like).
    Bulk,
    /// Write at a constant `rate` (Bachmann's "stream").
    Stream,
    /// Alternate `on` periods at `rate` with silent `off` periods (Bachmann's "stopngo").
    Onoff,
    /// Read a file of `bytes` with RPC READ requests over UDP (NFS-like).
    RpcRead,
    /// Write a file of `bytes` with RPC WRITE requests over UDP (NFS-like).
    RpcWrite,
    /// Send UDP datagrams at a constant `rate`, none answered (Kuang's UDP stream;
    /// simulated only).
    UdpStream,
}

impl AppKind {
    /// True for the applications that run over TCP.
    pub fn is_tcp(self) -> bool {
        matches!(self, AppKind::Bulk | AppKind::Stream | AppKind::Onoff)
    }

    /// Its name in scenario files and summaries.
    pub fn name(self) -> &'static str {
        match self {
            AppKind::Bulk => "bulk",
            AppKind::Stream => "stream",
            AppKind::Onoff => "onoff",
            AppKind::RpcRead => "rpc_read",
            AppKind::RpcWrite => "rpc_write",
            AppKind::UdpStream => "udp_stream",
        }
    }
}

/// The largest UDP payload an IPv4 datagram carries: 65535 bytes less the IPv4 and
/// UDP headers (RFC 791, RFC 768).
pub const MAX_UDP_PAYLOAD: u64 = 65_535 - 20 - 8;

/// One `[[flow]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Name in summary.json. Default `flow<N>` (1-based).
    #[serde(default)]
    pub name: Option<String>,
    /// The node the flow starts at (its sender or RPC client), in a network (in a
    /// chain: default its first node).
    #[serde(default)]
    pub from: Option<String>,
    /// The node it goes to (its receiver or RPC server), in a network (in a chain:
    /// default its last node).
    #[serde(default)]
    pub to: Option<String>,
    /// The application.
    pub app: AppKind,
    /// Bytes to transfer (bulk, rpc_*: required; stream, onoff: optional limit).
    #[serde(default)]
    pub bytes: Option<Size>,
    /// Application rate (stream, onoff).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// On period (onoff).
    #[serde(default)]
    pub on: Option<Duration>,
    /// Off period (onoff).
    #[serde(default)]
    pub off: Option<Duration>,
    /// When the flow starts. Default 0.
    #[serde(default)]
    pub start: Duration,
    /// When a stream or onoff application stops writing. Default: never.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// UDP payload bytes of each datagram of a `udp_stream` (its 24-byte header
    /// included). Default 1460. A datagram longer than the MTU is sent in fragments.
    #[serde(default)]
    pub datagram_size: Option<Size>,
    /// TCP settings (TCP applications).
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    /// RPC settings (rpc_read, rpc_write).
    #[serde(default)]
    pub rpc: Option<RpcSpec>,
    /// Split-TCP proxies along the flow's route (`[flow.split]`, TCP in a network).
    #[serde(default)]
    pub split: Option<SplitSpec>,
}

/// TCP settings: a profile and overrides of its values.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// `linux` (default) or `bsd`.
    #[serde(default)]
    pub profile: Option<String>,
    /// `tahoe`, `reno`, `newreno` or `sack`.
    #[serde(default)]
    pub variant: Option<String>,
    /// The congestion control: the emulator sets it on the flow's socket
    /// (`TCP_CONGESTION`, e.g. `cubic`, `reno`, `bbr`; its default: `reno` when
    /// `variant` is given, else `cubic`), and the simulator models the same algorithm
    /// when it is given (`reno`: RFC 5681 AIMD; `cubic`: RFC 9438; any other name is
    /// refused). Absent, the simulator keeps its AIMD (`reno`), as before the key
    /// selected anything, so existing scenarios give the same results.
    #[serde(default)]
    pub cc: Option<String>,
    #[serde(default)]
    pub mss: Option<u16>,
    #[serde(default)]
    pub initial_cwnd: Option<u32>,
    #[serde(default)]
    pub sndbuf: Option<Size>,
    #[serde(default)]
    pub rcvbuf: Option<Size>,
    #[serde(default)]
    pub timestamps: Option<bool>,
    #[serde(default)]
    pub window_scaling: Option<bool>,
    #[serde(default)]
    pub delayed_ack: Option<bool>,
    #[serde(default)]
    pub ack_every: Option<u32>,
    #[serde(default)]
    pub delayed_ack_timeout: Option<Duration>,
    #[serde(default)]
    pub initial_rto: Option<Duration>,
    #[serde(default)]
    pub min_rto: Option<Duration>,
    #[serde(default)]
    pub max_rto: Option<Duration>,
    /// Timer granularity (e.g. `"500 ms"`, the BSD tick); `"0 s"` for exact timers.
    #[serde(default)]
    pub granularity: Option<Duration>,
    #[serde(default)]
    pub max_backoff_shift: Option<u32>,
    #[serde(default)]
    pub dupack_threshold: Option<u32>,
    #[serde(default)]
    pub limited_transmit: Option<bool>,
    /// Grow cwnd by bytes acknowledged (RFC 3465; linux) or per ACK (bsd, ns-3).
    #[serde(default)]
    pub byte_counting: Option<bool>,
    /// Halve the pipe, not FlightSize, on fast retransmit (as ns-3 does).
    #[serde(default)]
    pub ssthresh_from_pipe: Option<bool>,
    /// Negotiate ECN (RFC 3168): AQM with `ecn = true` then marks instead of dropping.
    #[serde(default)]
    pub ecn: Option<bool>,
    /// Explicit Link Failure Notification (Holland & Vaidya): on a route error about
    /// its data the sender stands by and probes at this interval. Off when absent or
    /// `false` (so that a sweep can turn it off).
    #[serde(default, deserialize_with = "crate::units::duration_or_off")]
    pub elfn_probe: Option<Duration>,
    /// Proportional Rate Reduction (RFC 6937) in SACK recovery (simulator; default
    /// false: RFC 6675's cwnd = ssthresh).
    #[serde(default)]
    pub prr: Option<bool>,
    /// HyStart++ (RFC 9406) in the initial slow start, with reno or cubic
    /// (simulator; default false).
    #[serde(default)]
    pub hystart: Option<bool>,
    /// RACK-TLP (RFC 8985) loss detection for SACK senders: losses marked by time
    /// instead of by three duplicate ACKs, and a Tail Loss Probe before the RTO
    /// (simulator; default false).
    #[serde(default)]
    pub rack_tlp: Option<bool>,
    /// Detection of spurious timeouts, with the Eifel response (RFC 4015): `"off"`,
    /// `"frto"` (RFC 5682) or `"eifel"` (RFC 3522, with timestamps) (simulator;
    /// default off).
    #[serde(default)]
    pub spurious_rto: Option<airtrace_tcp::SpuriousRtoDetection>,
    /// Buffer autotuning as Linux does it: the receive window grows with the bytes
    /// delivered per RTT up to 3 MiB, the send buffer with the congestion window up to
    /// 4 MiB, from `rcvbuf` and `sndbuf` (simulator; the emulated kernel autotunes
    /// unless `rcvbuf`/`sndbuf` are set; default false).
    #[serde(default)]
    pub autotune: Option<bool>,
    /// Halve cwnd on a congestion event, as Linux's reno does, instead of RFC 5681's
    /// FlightSize (simulator; default false).
    #[serde(default)]
    pub ssthresh_from_cwnd: Option<bool>,
    /// How the RTO follows the RTT samples: `"rfc6298"` (default) or `"linux"`
    /// (the variance term at least the minimum RTO: RTO ≥ SRTT + min_rto)
    /// (simulator; the emulated kernel always uses its own).
    #[serde(default)]
    pub rto_rule: Option<airtrace_tcp::RtoRule>,
    /// A timeout during a fast recovery and the undo of a spurious timeout:
    /// `"rfc4015"` (default) or `"linux"` (the recovery's ssthresh kept, no F-RTO
    /// then; a spurious timeout undone to the window before the episode)
    /// (simulator; the emulated kernel always uses its own).
    #[serde(default)]
    pub undo: Option<airtrace_tcp::UndoRule>,
    /// Linux's HyStart (the kernel cubic's ACK-train and delay-increase detection) in
    /// slow start, with `cc = "cubic"`; excludes `hystart` (simulator; default
    /// false).
    #[serde(default)]
    pub hystart_linux: Option<bool>,
}

/// RPC settings, with NFS-over-UDP defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RpcSpec {
    /// Data per READ or WRITE. Default 8 KiB.
    #[serde(default = "default_rpc_size")]
    pub request_size: Size,
    /// First retransmission timeout. Default 1.1 s (NFS `timeo=11`).
    #[serde(default = "default_rpc_timeout")]
    pub timeout: Duration,
    /// The timeout doubles after each retransmission up to this. Default 60 s.
    #[serde(default = "default_rpc_max_timeout")]
    pub max_timeout: Duration,
    /// Server time to answer a request. Default 1 ms.
    #[serde(default = "default_rpc_service")]
    pub service_time: Duration,
    /// Least time between the starts of two requests. Default 0.
    #[serde(default)]
    pub pacing: Duration,
    /// Requests outstanding at once. Default 1.
    #[serde(default = "default_rpc_outstanding")]
    pub outstanding: u32,
}

impl Default for RpcSpec {
    fn default() -> Self {
        Self {
            request_size: default_rpc_size(),
            timeout: default_rpc_timeout(),
            max_timeout: default_rpc_max_timeout(),
            service_time: default_rpc_service(),
            pacing: Duration(0),
            outstanding: default_rpc_outstanding(),
        }
    }
}

fn default_rpc_size() -> Size {
    Size(8192)
}
fn default_rpc_timeout() -> Duration {
    Duration(1_100_000_000)
}
fn default_rpc_max_timeout() -> Duration {
    Duration(60_000_000_000)
}
fn default_rpc_service() -> Duration {
    Duration(1_000_000)
}
fn default_rpc_outstanding() -> u32 {
    1
}

/// A scenario that could not be loaded: `FILE:LINE:COLUMN: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file.
    pub file: PathBuf,
    /// 1-based line and column, when the place is known.
    pub place: Option<(usize, usize)>,
    /// What is wrong, and the rule broken.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.place {
            Some((line, col)) => {
                write!(f, "{}:{line}:{col}: {}", self.file.display(), self.message)
            }
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl ScenarioError {
    /// The message cut short: the toml and serde errors inside it quote the values they
    /// refuse, which may be megabytes long.
    pub(crate) fn cut(mut self) -> Self {
        if let Some((at, _)) = self.message.char_indices().nth(MAX_MESSAGE_CHARS) {
            let rest = self.message.len() - at;
            self.message.truncate(at);
            self.message += &format!("… ({rest} more bytes)");
        }
        self
    }
}

/// Longest scenario error message, in characters, before it is cut.
const MAX_MESSAGE_CHARS: usize = 300;

impl std::error::Error for ScenarioError {}

/// A key path inside the document, for pointing at a value that breaks a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Name(&'static str),
    Index(usize),
}

/// A rule broken by a value at a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub path: Vec<Key>,
    pub message: String,
}

fn invalid(path: &[Key], message: impl Into<String>) -> Invalid {
    Invalid {
        path: path.to_vec(),
        message: message.into(),
    }
}

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        Self::parse(path, &Self::read_text(path)?)
    }

    /// The text of the scenario file at `path`, at most
    /// [`MAX_SCENARIO_BYTES`](airtrace_link::input::MAX_SCENARIO_BYTES) of it.
    pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
        read_text(path, MAX_SCENARIO_BYTES).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            place: None,
            message: format!("cannot read the scenario: {e}"),
        })
    }

    /// Reads the scenario file at `path` and applies `overrides` (`KEY=VALUE`, as
    /// `airtrace simulate --set` takes them), as `airtrace simulate` does (the native
    /// command and the Python module alike). With `bundle`, also returns the text the
    /// bundle keeps as its scenario.toml ([`overrides::effective_text`]); without, an
    /// empty string. Errors read `FILE:LINE:COL: message`, `FILE: --set KEY=VALUE:
    /// message`, or `FILE: ` and why the file could not be read.
    pub fn load_with(
        path: &Path,
        overrides: &[String],
        bundle: bool,
    ) -> Result<(Scenario, String), ScenarioError> {
        let error = |message: String| ScenarioError {
            file: path.to_path_buf(),
            place: None,
            message,
        };
        let text = Self::read_text(path)?;
        let overrides = overrides
            .iter()
            .map(|arg| Override::parse(arg))
            .collect::<Result<Vec<_>, _>>()
            .map_err(error)?;
        let scenario = Self::parse_with(path, &text, &overrides)?;
        if !bundle {
            return Ok((scenario, String::new()));
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let text = overrides::effective_text(&name, &text, &overrides).map_err(error)?;
        Ok((scenario, text))
    }

    /// Parses and checks scenario text; `path` names it in errors and anchors relative
    /// trace paths.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        Self::parse_with(path, text, &[])
    }

    /// Parses scenario text, applies `overrides` (`--set KEY=VALUE`, see
    /// [`crate::overrides`]) and checks the result as a file is checked. An error
    /// caused by an override names it (`FILE: --set KEY=VALUE: message`); the others
    /// keep their place in the file.
    pub fn parse_with(
        path: &Path,
        text: &str,
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        let error = |place: Option<(usize, usize)>, message: String| {
            ScenarioError {
                file: path.to_path_buf(),
                place,
                message,
            }
            .cut()
        };
        let at = |span: Option<Range<usize>>| span.map(|s| line_col(text, s.start));
        let mut root = toml::de::DeTable::parse(text)
            .map_err(|e| error(at(e.span()), e.message().trim().to_string()))?;
        let marks = Marks::after(text);
        overrides::apply(root.get_mut(), overrides, marks).map_err(|m| error(None, m))?;
        let mut scenario =
            Scenario::deserialize(toml::de::Deserializer::from(root)).map_err(|e| {
                let message = e.message().trim().to_string();
                match marks.blamed(overrides, e.span()) {
                    Some(o) => error(None, format!("{o}: {message}")),
                    None => error(at(e.span()), message),
                }
            })?;
        scenario.resolve_paths(path.parent().unwrap_or(Path::new(".")));
        if let Err(bad) = scenario.validate() {
            let rule = format!("{}: {}", dotted(&bad.path), bad.message);
            return Err(match overrides.iter().rev().find(|o| o.meets(&bad.path)) {
                Some(o) => error(None, format!("{o}: {rule}")),
                None => error(at(span_of(text, &bad.path)), rule),
            });
        }
        if scenario.name.is_none() {
            scenario.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        }
        Ok(scenario)
    }

    /// Makes the delivery-trace, loss-trace and movement-file paths relative to the
    /// scenario file absolute.
    fn resolve_paths(&mut self, base: &Path) {
        let movement = self.network.as_mut().and_then(|n| n.mobility.as_mut());
        if let Some(file) = movement.and_then(|m| m.file.as_mut()) {
            if file.is_relative() {
                *file = base.join(&*file);
            }
        }
        let Some(link) = self.link.as_mut() else {
            return;
        };
        let mut dirs: Vec<(&mut Option<PathBuf>, &mut Option<LossSpec>)> =
            vec![(&mut link.trace, &mut link.loss)];
        for dir in [link.forward.as_mut(), link.reverse.as_mut()]
            .into_iter()
            .flatten()
        {
            dirs.push((&mut dir.trace, &mut dir.loss));
        }
        for (trace, loss) in dirs {
            let loss_file = match loss {
                Some(LossSpec::Trace { file }) => Some(file),
                _ => None,
            };
            for p in trace.as_mut().into_iter().chain(loss_file) {
                if p.is_relative() {
                    *p = base.join(&*p);
                }
            }
        }
    }

    /// Checks every value against its rule; the first broken rule is returned.
    pub fn validate(&self) -> Result<(), Invalid> {
        use Key::{Index, Name};
        if self.flows.is_empty() {
            return Err(invalid(&[], "a scenario needs at least one [[flow]]"));
        }
        if self.duration.0 <= 0 {
            return Err(invalid(&[Name("duration")], "must be longer than 0 s"));
        }
        if let Some(Size(n)) = self.snaplen {
            if n < 40 {
                return Err(invalid(
                    &[Name("snaplen")],
                    "must be at least 40 bytes (the IP and TCP headers)",
                ));
            }
        }
        match (&self.link, &self.network) {
            (Some(link), None) => self.validate_link(link)?,
            (None, Some(network)) => self.validate_network(network)?,
            (Some(_), Some(_)) => {
                return Err(invalid(
                    &[Name("network")],
                    "a scenario has one [link] or a [network], not both",
                ))
            }
            (None, None) => {
                return Err(invalid(
                    &[],
                    "a scenario needs a [link] (two hosts) or a [network] (nodes)",
                ))
            }
        }
        for (i, flow) in self.flows.iter().enumerate() {
            let at = |key: &'static str| vec![Name("flow"), Index(i), Name(key)];
            let needs = |key: &'static str, present: bool| {
                if present {
                    Ok(())
                } else {
                    Err(invalid(
                        &[Name("flow"), Index(i)],
                        format!("a {:?} flow needs `{key}`", flow.app),
                    ))
                }
            };
            match flow.app {
                AppKind::Bulk | AppKind::RpcRead | AppKind::RpcWrite => {
                    needs("bytes", flow.bytes.is_some())?
                }
                AppKind::Stream | AppKind::UdpStream => needs("rate", flow.rate.is_some())?,
                AppKind::Onoff => {
                    needs("rate", flow.rate.is_some())?;
                    needs("on", flow.on.is_some())?;
                    needs("off", flow.off.is_some())?;
                }
            }
            if flow.bytes == Some(Size(0)) {
                return Err(invalid(&at("bytes"), "must be at least 1 byte"));
            }
            if flow.rate.is_some_and(|r| r.0.is_none()) {
                return Err(invalid(&at("rate"), "an application rate must be finite"));
            }
            if flow.on.is_some_and(|d| d.0 <= 0) || flow.off.is_some_and(|d| d.0 < 0) {
                return Err(invalid(&at("on"), "on must be > 0 s and off >= 0 s"));
            }
            if let Some(size) = flow.datagram_size {
                if flow.app != AppKind::UdpStream {
                    return Err(invalid(
                        &at("datagram_size"),
                        "only a udp_stream takes datagram_size",
                    ));
                }
                // RFC 768: the UDP length field holds at most 65535 bytes, header
                // included, and IPv4's total length the same with its 20 (RFC 791).
                if !(u64::from(RPC_HEADER)..=MAX_UDP_PAYLOAD).contains(&size.0) {
                    return Err(invalid(
                        &at("datagram_size"),
                        format!("must be {RPC_HEADER} to {MAX_UDP_PAYLOAD} bytes (the stream's header to the most IPv4 carries), not {}", size.0),
                    ));
                }
            }
            // An empty table sets nothing (`--set 'flow[1].tcp={}'` clears it).
            if flow.tcp.as_ref().is_some_and(|t| *t != TcpSpec::default()) && !flow.app.is_tcp() {
                return Err(invalid(
                    &at("tcp"),
                    "only TCP applications (bulk, stream, onoff) take [flow.tcp] (--set 'flow[N].tcp={}' clears it)",
                ));
            }
            if flow.rpc.is_some() && !matches!(flow.app, AppKind::RpcRead | AppKind::RpcWrite) {
                return Err(invalid(
                    &at("rpc"),
                    "only rpc_read and rpc_write take [flow.rpc]",
                ));
            }
            if let Some(tcp) = &flow.tcp {
                tcp.check().map_err(|(key, m)| {
                    let mut p = at("tcp");
                    p.push(Name(key));
                    invalid(&p, m)
                })?;
            }
            if let Some(rpc) = &flow.rpc {
                let mut p = at("rpc");
                if rpc.request_size.0 == 0 || rpc.request_size.0 > 65_000 {
                    p.push(Name("request_size"));
                    return Err(invalid(&p, "must be 1 to 65000 bytes (one UDP datagram)"));
                }
                if rpc.timeout.0 <= 0 || rpc.max_timeout < rpc.timeout {
                    p.push(Name("max_timeout"));
                    return Err(invalid(
                        &p,
                        "timeout must be > 0 s and max_timeout >= timeout",
                    ));
                }
                if rpc.outstanding == 0 {
                    p.push(Name("outstanding"));
                    return Err(invalid(
                        &p,
                        "at least one request must be allowed outstanding",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Where a one-link scenario takes captures.
    pub fn captures(&self) -> &[Vantage] {
        self.captures.as_deref().unwrap_or(&DEFAULT_CAPTURES)
    }

    /// The link of a one-link scenario, or why the emulator or simulator cannot run it.
    pub fn one_link(&self) -> Result<&LinkSpec, String> {
        self.link.as_ref().ok_or_else(|| {
            "this scenario is a network of nodes; only a [link] scenario runs here".to_string()
        })
    }

    /// The checks of a one-link scenario.
    fn validate_link(&self, link: &LinkSpec) -> Result<(), Invalid> {
        use Key::{Index, Name};
        for (i, flow) in self.flows.iter().enumerate() {
            if flow.split.is_some() {
                return Err(invalid(
                    &[Name("flow"), Index(i), Name("split")],
                    "Split-TCP puts proxies on a route through a [network]; a [link] has none",
                ));
            }
            for (key, given) in [("from", &flow.from), ("to", &flow.to)] {
                if given.is_some() {
                    return Err(invalid(
                        &[Name("flow"), Index(i), Name(key)],
                        "flows of a [link] scenario run from host a to host b; `from` and `to` name nodes of a [network]",
                    ));
                }
            }
        }
        let mut seen = Vec::new();
        for (i, v) in self.captures().iter().enumerate() {
            if seen.contains(v) {
                return Err(invalid(
                    &[Name("captures"), Index(i)],
                    format!("{} is listed twice", v.name()),
                ));
            }
            if *v == Vantage::Air && !matches!(link.arq, Some(ArqSpec::StopAndWait { .. })) {
                return Err(invalid(
                    &[Name("captures"), Index(i)],
                    "an air capture needs an 802.11-like link: link.arq = { kind = \"stop_and_wait\" }",
                ));
            }
            seen.push(*v);
        }
        for (name, dir) in [
            ("forward", Direction::Forward),
            ("reverse", Direction::Reverse),
        ] {
            let resolved = link.resolve(dir);
            let path = vec![Name("link")];
            let overrides = match dir {
                Direction::Forward => link.forward.as_ref(),
                Direction::Reverse => link.reverse.as_ref(),
            };
            let blame = |key: &'static str| {
                let mut p = path.clone();
                if overrides.is_some_and(|o| o.has(key)) {
                    p.push(Name(name));
                }
                p.push(Name(key));
                p
            };
            let rlp = matches!(link.arq, Some(ArqSpec::GsmRlp { .. }));
            if rlp {
                for key in [
                    "rate",
                    "trace",
                    "mtu",
                    "queue_packets",
                    "queue_bytes",
                    "aqm",
                ] {
                    if resolved.has(key) {
                        return Err(invalid(
                            &blame(key),
                            "a gsm_rlp link sets its own rate and buffer; remove this key",
                        ));
                    }
                }
            } else if resolved.rate.is_none()
                && resolved.trace.is_none()
                && !matches!(&link.arq, Some(ArqSpec::StopAndWait { rates: Some(_), .. }))
            {
                return Err(invalid(
                    &path,
                    format!("the {name} direction needs a rate or a trace"),
                ));
            }
            if resolved.rate.is_some() && resolved.trace.is_some() {
                return Err(invalid(
                    &blame("trace"),
                    format!("the {name} direction has both a rate and a trace; give one"),
                ));
            }
            if let Some(Size(mtu)) = resolved.mtu {
                if !(68..=65535).contains(&mtu) {
                    return Err(invalid(
                        &blame("mtu"),
                        "must be between 68 and 65535 bytes (RFC 791)",
                    ));
                }
            }
            if resolved.queue_packets.is_some() && resolved.queue_bytes.is_some() {
                return Err(invalid(
                    &blame("queue_bytes"),
                    "give queue_packets or queue_bytes, not both",
                ));
            }
            if resolved.queue_packets == Some(0) || resolved.queue_bytes == Some(Size(0)) {
                let key = if resolved.queue_packets.is_some() {
                    "queue_packets"
                } else {
                    "queue_bytes"
                };
                return Err(invalid(
                    &blame(key),
                    "a queue must hold at least one packet",
                ));
            }
            if let Some(loss) = &resolved.loss {
                loss.model().map_err(|m| invalid(&blame("loss"), m))?;
            }
            if let Some(aqm) = &resolved.aqm {
                aqm.discipline().map_err(|m| invalid(&blame("aqm"), m))?;
            }
        }
        if let Some(ArqSpec::StopAndWait { .. }) = &link.arq {
            for (name, o) in [("forward", &link.forward), ("reverse", &link.reverse)] {
                if let Some(o) = o {
                    for key in [
                        "rate",
                        "trace",
                        "delay",
                        "mtu",
                        "queue_packets",
                        "queue_bytes",
                        "aqm",
                    ] {
                        if o.has(key) {
                            return Err(invalid(
                                &[Name("link"), Name(name), Name(key)],
                                "a stop_and_wait link is the same both ways: set this in [link] (only loss differs per direction)",
                            ));
                        }
                    }
                }
            }
            if link.trace.is_some() {
                return Err(invalid(
                    &[Name("link"), Name("trace")],
                    "a stop_and_wait link needs a rate, not a trace",
                ));
            }
            if let Some(ArqSpec::StopAndWait { rates: Some(_), .. }) = &link.arq {
                if link.rate.is_some() {
                    return Err(invalid(
                        &[Name("link"), Name("rate")],
                        "with arq.rates the rate adapts: leave [link] rate out",
                    ));
                }
            }
        }
        if let Some(arq) = &link.arq {
            arq.check()
                .map_err(|m| invalid(&[Name("link"), Name("arq")], m))?;
        }
        Ok(())
    }
}

/// A link direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// a → b.
    Forward,
    /// b → a.
    Reverse,
}

impl DirSpec {
    /// True if this table sets `key`.
    fn has(&self, key: &str) -> bool {
        match key {
            "rate" => self.rate.is_some(),
            "trace" => self.trace.is_some(),
            "delay" => self.delay.is_some(),
            "mtu" => self.mtu.is_some(),
            "queue_packets" => self.queue_packets.is_some(),
            "queue_bytes" => self.queue_bytes.is_some(),
            "loss" => self.loss.is_some(),
            "aqm" => self.aqm.is_some(),
            _ => false,
        }
    }

    /// `self` with every unset key taken from `base`.
    fn or(&self, base: &DirSpec) -> DirSpec {
        let (own_limit, base_limit) = (
            self.queue_packets.is_some() || self.queue_bytes.is_some(),
            (base.queue_packets, base.queue_bytes),
        );
        DirSpec {
            rate: self.rate.or(if self.trace.is_some() {
                None
            } else {
                base.rate
            }),
            trace: self.trace.clone().or(if self.rate.is_some() {
                None
            } else {
                base.trace.clone()
            }),
            delay: self.delay.or(base.delay),
            mtu: self.mtu.or(base.mtu),
            queue_packets: if own_limit {
                self.queue_packets
            } else {
                base_limit.0
            },
            queue_bytes: if own_limit {
                self.queue_bytes
            } else {
                base_limit.1
            },
            loss: self.loss.clone().or_else(|| base.loss.clone()),
            aqm: self.aqm.clone().or_else(|| base.aqm.clone()),
        }
    }
}

impl LinkSpec {
    /// The settings of one direction: its overrides over the link's.
    pub fn resolve(&self, dir: Direction) -> DirSpec {
        let overrides = match dir {
            Direction::Forward => &self.forward,
            Direction::Reverse => &self.reverse,
        };
        let both = DirSpec {
            rate: self.rate,
            trace: self.trace.clone(),
            delay: self.delay,
            mtu: self.mtu,
            queue_packets: self.queue_packets,
            queue_bytes: self.queue_bytes,
            loss: self.loss.clone(),
            aqm: self.aqm.clone(),
        };
        match overrides {
            Some(o) => o.or(&both),
            None => both,
        }
    }
}

impl LossSpec {
    /// The link crate's model, or the rule this spec breaks.
    pub fn model(&self) -> Result<LossModel, String> {
        let model = match self {
            LossSpec::None => LossModel::None,
            LossSpec::Bernoulli { p } => LossModel::Bernoulli { p: *p },
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => LossModel::GilbertElliott {
                p_good_to_bad: *p_good_to_bad,
                p_bad_to_good: *p_bad_to_good,
                loss_in_good: *loss_in_good,
                loss_in_bad: *loss_in_bad,
            },
            LossSpec::Bursts { length, gap, every } => {
                let gap = match (gap, every, length) {
                    (Some(g), None, _) => g.dist(),
                    (None, Some(every), DistSpec::Fixed(len)) if every.0 > len.0 => {
                        Dist::Fixed(every.0 - len.0)
                    }
                    (None, Some(_), DistSpec::Fixed(_)) => {
                        return Err("`every` must be longer than `length`".into())
                    }
                    (None, Some(_), DistSpec::Uniform { .. }) => {
                        return Err(
                            "`every` needs a fixed `length`; give `gap` for uniform bursts".into(),
                        )
                    }
                    (Some(_), Some(_), _) => return Err("give `gap` or `every`, not both".into()),
                    (None, None, _) => {
                        return Err("bursts need `gap` (time between bursts) or `every`".into())
                    }
                };
                LossModel::Bursts {
                    length: length.dist(),
                    gap,
                }
            }
            LossSpec::Trace { file } => {
                let text = read_text(file, MAX_TRACE_BYTES)
                    .map_err(|e| format!("cannot read the loss trace {}: {e}", file.display()))?;
                let mut entries = Vec::new();
                for (i, line) in text.lines().enumerate() {
                    match line.split('#').next().unwrap_or("").trim() {
                        "" => {}
                        "0" => entries.push(false),
                        "1" => entries.push(true),
                        other => {
                            return Err(format!(
                                "{}:{}: a loss trace line is 0 or 1, not {}",
                                file.display(),
                                i + 1,
                                quote(other)
                            ))
                        }
                    }
                }
                LossModel::Trace(entries)
            }
            LossSpec::Pattern { pattern } => {
                let mut entries = Vec::with_capacity(pattern.len());
                for c in pattern.chars().filter(|c| !c.is_whitespace()) {
                    match c {
                        '0' => entries.push(false),
                        '1' => entries.push(true),
                        other => {
                            return Err(format!("a loss pattern holds only 0 and 1, not {other:?}"))
                        }
                    }
                }
                LossModel::Trace(entries)
            }
        };
        model.validate().map_err(|e| e.to_string())?;
        Ok(model)
    }
}

impl TcpSpec {
    /// Checks the values that can be checked without building the configuration.
    fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(p) = &self.profile {
            if !["linux", "bsd"].contains(&p.as_str()) {
                return Err(("profile", format!("unknown profile {p:?} (linux or bsd)")));
            }
        }
        if let Some(v) = &self.variant {
            if !["tahoe", "reno", "newreno", "sack"].contains(&v.as_str()) {
                return Err((
                    "variant",
                    format!("unknown variant {v:?} (tahoe, reno, newreno or sack)"),
                ));
            }
        }
        if self.mss.is_some_and(|m| m < 64) {
            return Err(("mss", "must be at least 64 bytes".into()));
        }
        if self.initial_cwnd == Some(0) {
            return Err(("initial_cwnd", "must be at least 1 segment".into()));
        }
        if self.ack_every == Some(0) {
            return Err(("ack_every", "must be at least 1".into()));
        }
        if self.dupack_threshold == Some(0) {
            return Err(("dupack_threshold", "must be at least 1".into()));
        }
        if let (Some(min), Some(max)) = (self.min_rto, self.max_rto) {
            if min > max {
                return Err(("max_rto", "must not be below min_rto".into()));
            }
        }
        Ok(())
    }
}

impl AqmSpec {
    /// The link crate's queue discipline, or the rule this spec breaks.
    pub fn discipline(&self) -> Result<QueueDiscipline, String> {
        let d = match self {
            AqmSpec::DropTail => QueueDiscipline::DropTail,
            AqmSpec::Red {
                w_q,
                min_th,
                max_th,
                max_p,
                gentle,
                ecn,
            } => {
                let base = RedConfig::default();
                QueueDiscipline::Red(RedConfig {
                    w_q: w_q.unwrap_or(base.w_q),
                    min_th: min_th.unwrap_or(base.min_th),
                    max_th: max_th.unwrap_or(base.max_th),
                    max_p: max_p.unwrap_or(base.max_p),
                    gentle: gentle.unwrap_or(base.gentle),
                    ecn: ecn.unwrap_or(base.ecn),
                    ..base
                })
            }
            AqmSpec::Codel {
                target,
                interval,
                ecn,
            } => {
                let base = CoDelConfig::default();
                QueueDiscipline::CoDel(CoDelConfig {
                    target_ns: target.map_or(base.target_ns, |d| d.0),
                    interval_ns: interval.map_or(base.interval_ns, |d| d.0),
                    ecn: ecn.unwrap_or(base.ecn),
                    ..base
                })
            }
        };
        d.validate().map_err(|e| e.to_string())?;
        Ok(d)
    }
}

impl ArqSpec {
    /// Checks the values a configuration cannot hold.
    fn check(&self) -> Result<(), String> {
        match self {
            ArqSpec::GsmRlp {
                frame,
                frame_payload,
                buffer_packets,
                flow_control,
                ..
            } => {
                if frame.is_some_and(|f| f.0 <= 0) {
                    return Err("frame must be longer than 0 s".into());
                }
                if *frame_payload == Some(0) || *buffer_packets == Some(0) {
                    return Err("frame_payload and buffer_packets must be at least 1".into());
                }
                if flow_control.is_some_and(|r| r.0.is_none()) {
                    return Err("flow_control must be a finite rate such as \"960 B/s\"".into());
                }
                Ok(())
            }
            ArqSpec::StopAndWait {
                retry_limit,
                backoff,
                medium,
                rates,
                rate_loss,
                ..
            } => {
                if *retry_limit == Some(0) {
                    return Err("retry_limit counts transmissions: at least 1".into());
                }
                match backoff.as_deref() {
                    None | Some("dcf") | Some("none") => {}
                    Some(other) => return Err(format!("unknown backoff {other:?} (dcf or none)")),
                }
                match medium.as_deref() {
                    None | Some("separate") | Some("shared") => {}
                    Some(other) => {
                        return Err(format!("unknown medium {other:?} (separate or shared)"))
                    }
                }
                match (rates, rate_loss) {
                    (None, None) => Ok(()),
                    (Some(rates), Some(loss)) => {
                        if rates.is_empty() || rates.len() != loss.len() {
                            return Err(
                                "rates and rate_loss need one entry per rate, at least one".into(),
                            );
                        }
                        let bps: Vec<_> = rates.iter().map(|r| r.0).collect();
                        if bps.iter().any(Option::is_none) || bps.windows(2).any(|w| w[0] >= w[1]) {
                            return Err("rates must be finite and increasing, slowest first".into());
                        }
                        if loss.iter().any(|p| !(0.0..=1.0).contains(p)) {
                            return Err("rate_loss entries are probabilities in [0, 1]".into());
                        }
                        Ok(())
                    }
                    _ => Err("rates and rate_loss go together".into()),
                }
            }
        }
    }
}

/// "link.forward.loss" for a key path.
fn dotted(path: &[Key]) -> String {
    let mut out = String::new();
    for key in path {
        match key {
            Key::Name(n) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(n);
            }
            Key::Index(i) => out.push_str(&format!("[{}]", i + 1)),
        }
    }
    if out.is_empty() {
        "scenario".into()
    } else {
        out
    }
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The span of the value at `path` in the document (or of its nearest ancestor that
/// is written out), found by re-reading the text with toml_edit, which keeps spans.
fn span_of(text: &str, path: &[Key]) -> Option<Range<usize>> {
    use toml_edit::Item;
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut item: &Item = doc.as_item();
    let mut best = None;
    for key in path {
        let next = match key {
            Key::Name(n) => item.get(*n),
            Key::Index(i) => item.get(*i),
        };
        let Some(next) = next else { break };
        item = next;
        if let Some(span) = item.span() {
            best = Some(span);
        } else if let Item::Table(t) = item {
            best = t.span().or(best);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
seed = 7
captures = []

[link]
rate = "2 Mbit/s"
delay = "50 ms"
queue_packets = 50

[link.forward]
loss = { model = "bernoulli", p = 0.01 }

[[flow]]
app = "bulk"
bytes = "5 MB"
"#;

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(Path::new("s.toml"), text)
    }

    #[test]
    fn minimal_scenario_resolves_directions() {
        let s = parse(MINIMAL).unwrap();
        assert_eq!(s.name.as_deref(), Some("s"));
        let fwd = s.link.as_ref().unwrap().resolve(Direction::Forward);
        let rev = s.link.as_ref().unwrap().resolve(Direction::Reverse);
        assert_eq!(fwd.rate, Some(Rate(Some(2_000_000))));
        assert_eq!(rev.delay, Some(Duration(50_000_000)));
        assert!(matches!(fwd.loss, Some(LossSpec::Bernoulli { p }) if p == 0.01));
        assert!(rev.loss.is_none());
        assert_eq!(s.flows[0].bytes, Some(Size(5_000_000)));
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = MINIMAL.replace("delay = \"50 ms\"", "dealy = \"50 ms\"");
        let err = parse(&text).unwrap_err();
        assert_eq!(err.place.map(|p| p.0), Some(7), "{err}");
        assert!(err.to_string().starts_with("s.toml:7:"), "{err}");
        assert!(err.message.contains("unknown field `dealy`"), "{err}");
    }

    #[test]
    fn an_air_capture_needs_an_802_11_link_and_a_known_medium() {
        let text = MINIMAL.replace("captures = []", "captures = [\"air\"]");
        let err = parse(&text).unwrap_err();
        assert_eq!(err.place.map(|p| p.0), Some(3), "{err}");
        assert!(err.message.contains("stop_and_wait"), "{err}");
        let wlan = text.replace(
            "queue_packets = 50",
            "arq = { kind = \"stop_and_wait\", medium = \"shared\" }",
        );
        let wlan = wlan.replace("[link.forward]\n", "");
        assert!(parse(&wlan).is_ok(), "{:?}", parse(&wlan).err());
        let err = parse(&wlan.replace("\"shared\"", "\"ether\"")).unwrap_err();
        assert!(
            err.message
                .contains("unknown medium \"ether\" (separate or shared)"),
            "{err}"
        );
    }

    #[test]
    fn datagram_size_is_a_udp_streams_from_its_header_to_what_ipv4_carries() {
        let udp = MINIMAL.replace(
            "app = \"bulk\"\nbytes = \"5 MB\"",
            "app = \"udp_stream\"\nrate = \"1 Mbit/s\"\ndatagram_size = SIZE",
        );
        for (size, ok) in [
            ("24", true),
            ("23", false),
            ("65507", true),
            ("65508", false),
        ] {
            let result = parse(&udp.replace("SIZE", size));
            assert_eq!(result.is_ok(), ok, "{size}: {result:?}");
        }
        let s = parse(&udp.replace("SIZE", "\"2 KiB\"")).unwrap();
        assert_eq!(s.flows[0].datagram_size, Some(Size(2048)));
        let tcp = MINIMAL.replace("bytes = \"5 MB\"", "bytes = \"5 MB\"\ndatagram_size = 2048");
        let err = parse(&tcp).unwrap_err();
        assert!(
            err.message
                .contains("only a udp_stream takes datagram_size"),
            "{err}"
        );
    }

    #[test]
    fn wrong_type_is_reported_where_it_is() {
        let text = MINIMAL.replace("queue_packets = 50", "queue_packets = \"fifty\"");
        let err = parse(&text).unwrap_err();
        assert_eq!(err.place.map(|p| p.0), Some(8), "{err}");
    }

    #[test]
    fn impossible_value_names_the_rule_and_line() {
        let text = MINIMAL.replace("p = 0.01", "p = 1.5");
        let err = parse(&text).unwrap_err();
        assert_eq!(err.place.map(|p| p.0), Some(11), "{err}");
        assert!(err.message.starts_with("link.forward.loss:"), "{err}");
        assert!(
            err.message.contains("[0, 1]") || err.message.contains("probability"),
            "{err}"
        );
    }

    #[test]
    fn spurious_rto_takes_one_of_its_names() {
        let text = MINIMAL.replace(
            "bytes = \"5 MB\"",
            "bytes = \"5 MB\"\ntcp = { spurious_rto = \"frto\", rack_tlp = true }",
        );
        let s = parse(&text).unwrap();
        let tcp = s.flows[0].tcp.as_ref().unwrap();
        assert_eq!(
            tcp.spurious_rto,
            Some(airtrace_tcp::SpuriousRtoDetection::Frto)
        );
        assert_eq!(tcp.rack_tlp, Some(true));
        let err = parse(&text.replace("\"frto\"", "\"f-rto\"")).unwrap_err();
        assert_eq!(err.place.map(|p| p.0), Some(16), "{err}");
        assert!(
            err.message
                .contains("expected one of `off`, `frto`, `eifel`"),
            "{err}"
        );
    }

    #[test]
    fn flow_rules_point_into_the_flow() {
        let text = MINIMAL.replace("bytes = \"5 MB\"", "bytes = 0");
        let err = parse(&text).unwrap_err();
        assert_eq!(err.place.map(|p| p.0), Some(15), "{err}");
        assert!(err.message.starts_with("flow[1].bytes:"), "{err}");
        let text = MINIMAL.replace("bytes = \"5 MB\"", "");
        assert!(parse(&text).unwrap_err().message.contains("needs `bytes`"));
    }

    #[test]
    fn bursts_every_and_uniform() {
        let s = parse(&MINIMAL.replace(
            "{ model = \"bernoulli\", p = 0.01 }",
            "{ model = \"bursts\", length = \"100 ms\", every = \"1 s\" }",
        ))
        .unwrap();
        let model = s
            .link
            .as_ref()
            .unwrap()
            .resolve(Direction::Forward)
            .loss
            .unwrap()
            .model()
            .unwrap();
        assert_eq!(
            model,
            LossModel::Bursts {
                length: Dist::Fixed(100_000_000),
                gap: Dist::Fixed(900_000_000)
            }
        );
        let s = parse(&MINIMAL.replace(
            "{ model = \"bernoulli\", p = 0.01 }",
            "{ model = \"bursts\", length = { min = \"50 ms\", max = \"150 ms\" }, gap = \"900 ms\" }",
        ))
        .unwrap();
        let model = s
            .link
            .as_ref()
            .unwrap()
            .resolve(Direction::Forward)
            .loss
            .unwrap()
            .model()
            .unwrap();
        assert!(matches!(
            model,
            LossModel::Bursts {
                length: Dist::Uniform {
                    min: 50_000_000,
                    max: 150_000_000
                },
                ..
            }
        ));
    }

    #[test]
    fn directions_need_a_rate() {
        let text = MINIMAL.replace("rate = \"2 Mbit/s\"", "");
        let err = parse(&text).unwrap_err();
        assert!(err.message.contains("needs a rate or a trace"), "{err}");
    }
}
