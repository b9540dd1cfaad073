//! From scenario settings to the models that run: link directions and TCP
//! configurations.

use airtrace_link::link::Direction as LinkDirection;
use airtrace_link::loss::{LossModel, LossProcess};
use airtrace_link::queue::QueueLimit;
use airtrace_link::rng::Streams;
use airtrace_link::trace::DeliveryTrace;
use airtrace_tcp::{Config, Variant};

use crate::packet::Packet;
use crate::scenario::{DirSpec, TcpSpec};

/// Default queue limit, in packets, when a scenario gives none.
pub const DEFAULT_QUEUE_PACKETS: u64 = 100;
/// Default IP MTU.
pub const DEFAULT_MTU: u32 = 1500;

/// One built link direction with the settings the simulation needs besides it.
pub struct BuiltDirection {
    /// The link model.
    pub link: LinkDirection<Packet>,
    /// IP MTU in bytes.
    pub mtu: u32,
}

/// Builds a link direction; `name` (`forward` or `reverse`) names its random streams.
///
/// Bursts in time set for the whole link (`shared_bursts`) draw their schedule from one
/// stream, `link/loss`, in both directions, so that a burst on the radio channel hits
/// data and ACKs alike; every other loss process has its own stream per direction.
pub fn direction(spec: &DirSpec, name: &str, shared_bursts: bool, streams: &Streams) -> Result<BuiltDirection, String> {
    let model = match &spec.loss {
        Some(loss) => loss.model()?,
        None => LossModel::None,
    };
    let stream = if shared_bursts && matches!(model, LossModel::Bursts { .. }) {
        streams.stream("link/loss")
    } else {
        streams.stream(&format!("link/{name}/loss"))
    };
    let loss = LossProcess::new(model, stream).map_err(|e| e.to_string())?;
    let limit = match (spec.queue_packets, spec.queue_bytes) {
        (_, Some(bytes)) => QueueLimit::Bytes(bytes.0 as usize),
        (Some(packets), None) => QueueLimit::Packets(packets as usize),
        (None, None) => QueueLimit::Packets(DEFAULT_QUEUE_PACKETS as usize),
    };
    let delay = spec.delay.map_or(0, |d| d.0);
    let link = match (&spec.trace, spec.rate) {
        (Some(path), _) => {
            let trace = DeliveryTrace::load(path).map_err(|e| e.to_string())?;
            LinkDirection::with_trace(trace, delay, limit, loss)
        }
        (None, Some(rate)) => LinkDirection::new(rate.0, delay, limit, loss),
        (None, None) => return Err(format!("the {name} direction needs a rate or a trace")),
    };
    let mtu = spec.mtu.map_or(DEFAULT_MTU, |m| m.0 as u32);
    Ok(BuiltDirection { link, mtu })
}

/// The TCP configuration of a flow: its profile (default `linux`) with the
/// scenario's overrides applied, checked.
pub fn tcp_config(spec: Option<&TcpSpec>) -> Result<Config, String> {
    let default = TcpSpec::default();
    let spec = spec.unwrap_or(&default);
    let mut c = match spec.profile.as_deref() {
        None | Some("linux") => Config::linux(),
        Some("bsd") => Config::bsd(),
        Some(other) => return Err(format!("unknown TCP profile {other:?}")),
    };
    if let Some(v) = spec.variant.as_deref() {
        c.variant = match v {
            "tahoe" => Variant::Tahoe,
            "reno" => Variant::Reno,
            "newreno" => Variant::NewReno,
            "sack" => Variant::Sack,
            other => return Err(format!("unknown TCP variant {other:?}")),
        };
    }
    let size = |s: crate::units::Size| u32::try_from(s.0).map_err(|_| format!("{} bytes is too large", s.0));
    if let Some(v) = spec.mss {
        c.mss = v;
    }
    if let Some(v) = spec.initial_cwnd {
        c.initial_cwnd_segments = v;
    }
    if let Some(v) = spec.sndbuf {
        c.sndbuf = size(v)?;
    }
    if let Some(v) = spec.rcvbuf {
        c.rcvbuf = size(v)?;
    }
    if let Some(v) = spec.timestamps {
        c.timestamps = v;
    }
    if let Some(v) = spec.window_scaling {
        c.window_scaling = v;
    }
    if let Some(v) = spec.delayed_ack {
        c.delayed_ack.enabled = v;
    }
    if let Some(v) = spec.ack_every {
        c.delayed_ack.every = v;
    }
    if let Some(v) = spec.delayed_ack_timeout {
        c.delayed_ack.timeout_ns = v.0;
    }
    if let Some(v) = spec.initial_rto {
        c.rto.initial_ns = v.0;
    }
    if let Some(v) = spec.min_rto {
        c.rto.min_ns = v.0;
    }
    if let Some(v) = spec.max_rto {
        c.rto.max_ns = v.0;
    }
    if let Some(v) = spec.granularity {
        c.rto.granularity_ns = v.0;
    }
    if let Some(v) = spec.max_backoff_shift {
        c.rto.max_backoff_shift = v;
    }
    if let Some(v) = spec.dupack_threshold {
        c.dupack_threshold = v;
    }
    if let Some(v) = spec.limited_transmit {
        c.limited_transmit = v;
    }
    c.validate().map_err(|e| e.to_string())?;
    Ok(c)
}
