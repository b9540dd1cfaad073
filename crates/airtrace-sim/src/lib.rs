//! The airtrace simulator: TCP and an NFS-like RPC over a modelled link, in simulated
//! time, writing the same bundle a testbed gives (captures, link log, TCP state).
//!
//! The studies this project grew from changed a link (bursts of loss, a reliable
//! link layer, an overbuffered interface) and watched TCP react; this crate lets a user
//! do the same in seconds, repeatably: same scenario and seed, same bytes.
//!
//! # Map of the code
//!
//! - [`scenario`]: the TOML scenario file (strict: unknown keys, wrong types and
//!   impossible values are `FILE:LINE:COL` errors), with [`units`] for `"20 ms"`,
//!   `"11 Mbit/s"`, `"128 KiB"`. Start here. [`overrides`]: `--set KEY=VALUE` on top
//!   of a scenario file.
//! - [`sim`]: the run: two hosts, the link between them, the flows, and the loop that
//!   jumps to the next wake-up ([`sched`]). [`sim::run`] is the entry point.
//! - `flows`: a flow and its application (TCP endpoints or RPC client and server,
//!   bulk, stream and on-off sources), whatever carries its packets.
//! - [`netsim`]: the run of a network of nodes (chains, cells, random topologies, moving
//!   or not) over `airtrace-net`'s radio channel, MAC, ARP and routes; [`split`]:
//!   Split-TCP's proxies, zones and end-to-end acknowledgements there.
//! - [`build`]: scenario settings → the link (from `airtrace-link`, the code the
//!   emulator shares) and TCP configurations (from `airtrace-tcp`).
//! - [`links`]: one interface over the link kinds (plain directions, GSM RLP).
//! - [`rpc`]: the UDP RPC client and server (NFS-like READ/WRITE, doubling timeouts).
//! - [`packet`]: the simulated packet and its bytes (IPv4, TCP, UDP, checksums,
//!   fragments) for the captures.
//! - [`air`]: the `air` vantage's radiotap 802.11 frames (the sniffer's view of an
//!   802.11-like link: attempts, retries, collisions, ACKs); [`wlan`]: the radiotap
//!   and 802.11 encoding it shares with [`netair`], a network's air captures at its
//!   nodes (`air-<node>.pcap`).
//! - [`plan`]: sweep plans (`airtrace sweep`): parameters expanded into runs, each
//!   combination loaded before any run; [`plan::metrics`] makes a run's row.
//! - [`bundle`]: the output directory, written atomically; [`dest`]: where it goes
//!   (what may be replaced, the lock, temporary names, what killed runs left).
//!
//! # Time
//!
//! Simulated time is an `i64` count of nanoseconds from the start of the run. Pcap time
//! stamps are [`bundle::EPOCH_NS`] plus that.

pub mod air;
pub mod build;
pub mod bundle;
pub mod dest;
mod flows;
pub mod links;
pub mod mipwire;
pub mod netair;
pub mod netsim;
pub mod overrides;
pub mod packet;
pub mod plan;
pub mod rpc;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod split;
pub mod units;
pub mod wlan;

pub use overrides::Override;
pub use scenario::{Scenario, ScenarioError};
pub use sim::{run, Options, SimError, Summary};
