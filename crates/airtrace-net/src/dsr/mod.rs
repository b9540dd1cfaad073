//! Dynamic Source Routing (RFC 4728) as the CMU Monarch code in ns-2 ran it, which is
//! what Holland & Vaidya measured TCP over.
//!
//! - [`path`]: a source route (at most [`MAX_SR_LEN`] nodes) and the DSR options header
//!   a packet carries (RFC 4728 §6), with its length on the wire.
//! - [`cache`]: a node's path cache (ns-2's `MobiCache`: a primary cache of routes it
//!   uses, a secondary one of routes it overheard).
//! - [`agent`]: one node's DSR: route discovery (a non-propagating request first, then
//!   flooded ones with exponential back-off), replies from the target and from caches,
//!   the send buffer, route errors on failed link-layer delivery, packet salvaging and
//!   the gratuitous propagation of the last route error on the next request.
//!
//! The agent does no I/O and reads no clock: [`crate::network::Network`] hands it what
//! arrives and what the MAC gave up, and carries out the [`agent::Action`]s it returns.

pub mod agent;
pub mod cache;
pub mod path;

pub use agent::{Action, DsrAgent};
pub use path::{DsrHeader, LinkError, Path, RouteRequest, MAX_SR_LEN};

/// DSR settings. [`DsrConfig::ns2`] gives the values of ns-2's `dsragent.cc`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DsrConfig {
    /// Packets the send buffer holds; the oldest is dropped for a newer one.
    pub send_buffer_packets: usize,
    /// How long a packet may wait in the send buffer for a route, ns.
    pub send_timeout_ns: i64,
    /// Period of the send-buffer check, ns (each check waits this plus up to this again).
    pub buffer_check_ns: i64,
    /// Back-off unit between route requests for one target: the n-th request waits
    /// `4^(n-1)` units (RFC 4728 §8.2.2's exponential back-off), ns.
    pub request_period_ns: i64,
    /// Longest wait between two requests for one target, ns.
    pub request_max_period_ns: i64,
    /// How long a non-propagating request waits for a reply before a propagating one
    /// follows, ns (ns-2's `arp_timeout`).
    pub ring_zero_timeout_ns: i64,
    /// Broadcasts and the replies to them wait a uniform time up to this, ns.
    pub jitter_ns: i64,
    /// Start each discovery with a non-propagating request (neighbours answer from
    /// their caches).
    pub ring_zero_search: bool,
    /// Intermediate nodes answer propagating requests from their caches (the
    /// behaviour the study blames for spreading stale routes).
    pub reply_from_cache: bool,
    /// A node whose link failed sends the packet on by another route from its cache.
    pub salvage: bool,
    /// The last route error a node received rides on its next propagating request.
    pub propagate_last_error: bool,
    /// How long a received route error is kept for that, ns.
    pub max_error_hold_ns: i64,
    /// Routes in the caches expire this long after they were last learned or used
    /// (`None`: never, as in ns-2; one of the study's proposed fixes).
    pub cache_timeout_ns: Option<i64>,
    /// A broken link is remembered this long, and no route over it is learned
    /// meanwhile (a negative cache; `None`: none, as in ns-2; the study's other
    /// proposed fix).
    pub negative_cache_ns: Option<i64>,
    /// Delay between packets leaving the send buffer when a route arrives, so that ARP
    /// can complete (ns-2 spaces them by `arp_timeout`), ns.
    pub release_spacing_ns: i64,
    /// Promiscuous listening (ns-2's `tap`): learn routes from packets overheard, take
    /// in the route errors they carry, and tell a source of a shorter route when one of
    /// its packets is heard ahead of its turn (a gratuitous reply).
    pub promiscuous: bool,
    /// Least time between two gratuitous replies for one route, ns.
    pub gratuitous_hold_ns: i64,
}

impl DsrConfig {
    /// ns-2's CMU DSR (`dsragent.cc`, `dsragent.h`): a 64-packet send buffer kept 30 s,
    /// checked every 30–60 ms; requests backed off from 0.5 s up to 10 s; a 30 ms
    /// ring-zero search; 10 ms jitter; replies from caches, salvaging, gratuitous
    /// error propagation and promiscuous listening on (replies that shorten a route at
    /// most once a second per route).
    pub fn ns2() -> Self {
        DsrConfig {
            send_buffer_packets: 64,
            send_timeout_ns: 30_000_000_000,
            buffer_check_ns: 30_000_000,
            request_period_ns: 500_000_000,
            request_max_period_ns: 10_000_000_000,
            ring_zero_timeout_ns: 30_000_000,
            jitter_ns: 10_000_000,
            ring_zero_search: true,
            reply_from_cache: true,
            salvage: true,
            propagate_last_error: true,
            max_error_hold_ns: 1_000_000_000,
            cache_timeout_ns: None,
            negative_cache_ns: None,
            release_spacing_ns: 30_000_000,
            promiscuous: true,
            gratuitous_hold_ns: 1_000_000_000,
        }
    }
}
