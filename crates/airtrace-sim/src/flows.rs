//! A flow and its application, whatever carries its packets: the TCP endpoints or the
//! RPC client and server at its two ends, the bulk, stream or on-off source that feeds
//! it, and what summary.json reports of it.
//!
//! The world that runs the flow (one link, or a network of nodes) polls each side when
//! it is due ([`Flow::service_side`], [`Flow::service_app`]), hands it what arrived
//! ([`Flow::deliver`]) and carries the packets it emits; the flow never sees how.

use airtrace_link::rng::Streams;
use airtrace_tcp::{Endpoint, Phase, SenderState};
use rand::RngExt;
use serde::Serialize;

use crate::build;
use crate::packet::{Body, Datagram, Packet, RpcKind, RPC_HEADER};
use crate::rpc;
use crate::scenario::{AppKind, FlowSpec};
use crate::split::SplitSummary;

/// Bytes a stream or on-off application writes at a time.
pub const APP_WRITE: u64 = 1460;
/// Port of the first TCP flow's receiver on host `b`; flow `i` uses `TCP_SERVER_PORT +
/// i`. Ports are chosen where Wireshark registers no dissector (`tshark -G decodes`), so
/// the pattern payload is shown as data, never misread as some protocol.
pub const TCP_SERVER_PORT: u16 = 15000;
/// Port of the first TCP flow's sender on host `a`.
pub const TCP_CLIENT_PORT: u16 = 40000;
/// Ports of the first RPC flow's server (host `b`) and client (host `a`).
pub const RPC_SERVER_PORT: u16 = 20049;
/// See [`RPC_SERVER_PORT`].
pub const RPC_CLIENT_PORT: u16 = 25000;

/// Results of one flow, as summary.json reports them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSummary {
    /// The flow's name.
    pub name: String,
    /// The application.
    pub app: &'static str,
    /// `tcp` or `udp`.
    pub protocol: &'static str,
    /// When the application started, s.
    pub start_s: f64,
    /// When its last byte was delivered, s (None if none was).
    pub end_s: Option<f64>,
    /// True when every byte the application had to move got through.
    pub finished: bool,
    /// Application bytes delivered in order at the receiving side.
    pub bytes_delivered: u64,
    /// `bytes_delivered` × 8 / (`end_s` − `start_s`), bit/s.
    pub goodput_bps: f64,
    /// Packets the sending side sent again (TCP segments, RPC calls).
    pub retransmissions: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// Fast retransmits (TCP).
    pub fast_retransmits: u64,
    /// Window reductions for ECN congestion marks (TCP with `ecn`).
    pub ecn_reductions: u64,
    /// Time the transmitter of the link direction carrying this flow's data (forward;
    /// reverse for RPC reads) was idle while the flow had data not yet acknowledged
    /// (Ludwig's utilization: the link should never idle while data waits), s.
    pub idle_s: f64,
    /// Packets host `a` sent for this flow.
    pub packets_sent: u64,
    /// Packets host `b` sent for this flow.
    pub packets_returned: u64,
    /// Probes the sender sent while standing by for a route (TCP with `elfn_probe`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elfn_probes: Option<u64>,
    /// Split-TCP's proxies and zones (a flow with `[flow.split]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitSummary>,
}

/// The transport state of a flow.
pub(crate) enum Transport {
    Tcp {
        a: Box<Endpoint>,
        b: Box<Endpoint>,
    },
    Rpc {
        client: Box<rpc::Client>,
        server: Box<rpc::Server>,
        request_size: u32,
    },
    /// A UDP stream: the next datagram's number, and the stream bytes sent.
    Datagrams {
        next_xid: u32,
        sent: u64,
    },
}

/// A flow and its application.
pub(crate) struct Flow {
    pub(crate) name: String,
    pub(crate) app: AppKind,
    pub(crate) ports: (u16, u16),
    pub(crate) start_ns: i64,
    pub(crate) stop_ns: Option<i64>,
    pub(crate) transport: Transport,
    /// Initial sequence numbers of `a` and `b`, for the payload pattern.
    pub(crate) isn: (u32, u32),
    /// Bytes the application still has to hand to TCP (bulk: the rest of the file;
    /// stream: what it could not write yet).
    pub(crate) backlog: u64,
    /// Bytes the application may write in all (None: unlimited).
    pub(crate) limit: Option<u64>,
    /// Bytes accepted by TCP so far.
    pub(crate) written: u64,
    /// The most bytes the application may have written by now (Split-TCP's
    /// end-to-end window at the source); `None`: no limit but TCP's send buffer.
    pub(crate) write_limit: Option<u64>,
    /// For a Split-TCP zone after the first (a proxy's sender): whether the zone
    /// before it has delivered everything (then this one closes once its backlog is
    /// written). `None` for every other flow.
    pub(crate) relay_upstream_done: Option<bool>,
    /// A Split-TCP zone closed when the source chose its zones again: it sends and
    /// takes nothing more.
    pub(crate) retired: bool,
    pub(crate) started: bool,
    pub(crate) closed: bool,
    /// Application rate in bit/s and on/off periods (stream, onoff).
    pub(crate) rate_bps: u64,
    /// Bytes of each write (a udp_stream's datagram size; [`APP_WRITE`] otherwise).
    pub(crate) write_bytes: u64,
    pub(crate) on_off: Option<(i64, i64)>,
    pub(crate) next_write_ns: i64,
    pub(crate) delivered: u64,
    pub(crate) last_delivery_ns: Option<i64>,
    pub(crate) finished: bool,
    pub(crate) idle_ns: i64,
    /// When idle time was last settled, and whether data was waiting then.
    pub(crate) settled_ns: i64,
    pub(crate) waiting: bool,
    pub(crate) packets: (u64, u64),
}

impl Flow {
    /// The link direction that carries the flow's data: forward (0), except for RPC
    /// reads, whose data comes back in the replies.
    pub(crate) fn data_direction(&self) -> usize {
        usize::from(self.app == AppKind::RpcRead)
    }

    /// True while the flow has application data not yet acknowledged end to end.
    pub(crate) fn has_waiting_data(&self) -> bool {
        if !self.started || self.finished {
            return false;
        }
        match &self.transport {
            Transport::Tcp { a, .. } => self.backlog > 0 || self.written > a.stats().bytes_acked,
            Transport::Rpc { client, .. } => client.finished_at().is_none(),
            Transport::Datagrams { .. } => self.backlog > 0,
        }
    }
}

impl Flow {
    /// Bytes side `a` has written that side `b` acknowledged (0 for RPC and UDP).
    pub(crate) fn acked_bytes(&self) -> u64 {
        match &self.transport {
            Transport::Tcp { a, .. } => a.stats().bytes_acked,
            Transport::Rpc { .. } | Transport::Datagrams { .. } => 0,
        }
    }

    /// The network reports that a route of side `side_a`'s data broke (ELFN).
    pub(crate) fn route_failed(&mut self, now: i64, side_a: bool) {
        if let Transport::Tcp { a, b } = &mut self.transport {
            let ep = if side_a { a } else { b };
            ep.on_route_failure(now);
        }
    }

    /// Hands an arrived packet's body to the side it was sent to (`to_a`).
    pub(crate) fn deliver(&mut self, now: i64, to_a: bool, body: Body, ce: bool) {
        match (&mut self.transport, body) {
            (Transport::Tcp { a, b }, Body::Tcp(seg)) => {
                let ep = if to_a { a } else { b };
                ep.on_segment_ce(now, &seg, ce);
            }
            (
                Transport::Rpc {
                    client,
                    server,
                    request_size,
                },
                Body::Udp(d),
            ) => {
                if to_a {
                    // Replies reach the client: a request's data counts as delivered
                    // when its reply arrives (READ data comes in it; WRITE is
                    // acknowledged by it).
                    client.on_datagram(now, &d);
                    let done = client.stats().bytes_done;
                    if done > self.delivered {
                        self.delivered = done;
                        self.last_delivery_ns = Some(now);
                    }
                    self.finished |= client.finished_at().is_some();
                } else {
                    server.on_datagram(now, &d, *request_size);
                }
            }
            (Transport::Datagrams { .. }, Body::Udp(d)) => {
                self.delivered += u64::from(d.payload_len());
                self.last_delivery_ns = Some(now);
            }
            _ => unreachable!("a flow's packets all have its transport"),
        }
    }

    /// Lets one side send what it can now: appends its packets' bodies to `out` in the
    /// order sent. Returns when the side is next due, and the sender's state when it
    /// changed (for the TCP state log).
    pub(crate) fn service_side(
        &mut self,
        now: i64,
        side_a: bool,
        out: &mut Vec<Body>,
    ) -> (Option<i64>, Option<SenderState>) {
        if !self.started {
            return (None, None);
        }
        let mut state_changed = None;
        let wake = match &mut self.transport {
            Transport::Tcp { a, b } => {
                let ep = if side_a { a } else { b };
                if side_a {
                    let room = self
                        .write_limit
                        .map_or(u64::MAX, |l| l.saturating_sub(self.written));
                    if self.backlog > 0 && room > 0 {
                        let n = ep.write(self.backlog.min(room));
                        self.backlog -= n;
                        self.written += n;
                    }
                    let app_done = self.backlog == 0
                        && match (self.relay_upstream_done, self.app) {
                            (Some(upstream_done), _) => upstream_done,
                            (None, AppKind::Bulk) => true,
                            _ => {
                                self.limit.is_some_and(|l| self.written >= l)
                                    || self.stop_ns.is_some_and(|s| now >= s)
                            }
                        };
                    if app_done && !self.closed {
                        ep.close();
                        self.closed = true;
                    }
                }
                while let Some(seg) = ep.poll_transmit(now) {
                    out.push(Body::Tcp(seg));
                }
                if side_a {
                    if ep.take_state_changed() {
                        state_changed = Some(ep.sender_state());
                    }
                } else {
                    let got = ep.take_delivered();
                    if got > 0 {
                        self.delivered += got;
                        self.last_delivery_ns = Some(now);
                    }
                }
                let wake = ep.poll_at();
                if !self.finished && self.closed && a_done(self) {
                    self.finished = true;
                }
                wake
            }
            Transport::Datagrams { next_xid, sent } => {
                if side_a {
                    while self.backlog > 0 {
                        let n = self.backlog.min(self.write_bytes);
                        self.backlog -= n;
                        self.written += n;
                        // Each write is one datagram of that many payload bytes, the
                        // first RPC_HEADER of them the header.
                        let data = n.saturating_sub(u64::from(RPC_HEADER)) as u32;
                        out.push(Body::Udp(Datagram {
                            xid: *next_xid,
                            kind: RpcKind::Stream,
                            offset: *sent,
                            data,
                        }));
                        *next_xid = next_xid.wrapping_add(1);
                        *sent += u64::from(data);
                    }
                    let all_sent = self.limit.is_some_and(|l| self.written >= l)
                        || self.stop_ns.is_some_and(|s| now >= s);
                    self.finished |= all_sent;
                }
                None
            }
            Transport::Rpc { client, server, .. } => {
                if side_a {
                    while let Some(d) = client.poll_transmit(now) {
                        out.push(Body::Udp(d));
                    }
                    client.poll_at()
                } else {
                    while let Some(d) = server.poll_transmit(now) {
                        out.push(Body::Udp(d));
                    }
                    server.poll_at()
                }
            }
        };
        (wake.map(|t| t.max(now)), state_changed)
    }

    /// The application: starts the flow, and writes for stream and on-off sources.
    /// Returns when it is next due; side `a` is to be serviced after it.
    pub(crate) fn service_app(&mut self, now: i64) -> Option<i64> {
        if !self.started {
            self.started = true;
            if self.app == AppKind::Bulk {
                self.backlog = self.limit.unwrap_or(0);
            }
        }
        let mut next = None;
        if matches!(
            self.app,
            AppKind::Stream | AppKind::Onoff | AppKind::UdpStream
        ) && self.rate_bps > 0
            && !self.closed
        {
            let stopped = self.stop_ns.is_some_and(|s| now >= s);
            let room = self
                .limit
                .map_or(u64::MAX, |l| l.saturating_sub(self.written + self.backlog));
            let interval = ((self.write_bytes * 8 * 1_000_000_000) / self.rate_bps).max(1) as i64;
            if !stopped && room > 0 && now >= self.next_write_ns {
                let in_on = match self.on_off {
                    Some((on, off)) => (now - self.start_ns) % (on + off) < on,
                    None => true,
                };
                if in_on {
                    self.backlog += self.write_bytes.min(room);
                    self.next_write_ns = now + interval;
                } else if let Some((on, off)) = self.on_off {
                    let cycle = on + off;
                    let elapsed = now - self.start_ns;
                    self.next_write_ns = self.start_ns + (elapsed / cycle + 1) * cycle;
                }
            }
            if !stopped && room > self.write_bytes {
                next = Some(self.next_write_ns.max(now + 1));
            } else if stopped || room == 0 {
                // The last write: the side service closes the connection.
                next = self.stop_ns.filter(|&s| s > now);
            }
            if let Some(stop) = self.stop_ns {
                next = next.map(|n| n.min(stop.max(now)));
            }
        }
        next
    }

    /// True when the flow has finished and nothing of it is left to exchange.
    pub(crate) fn done(&self) -> bool {
        self.retired
            || (self.finished
                && match &self.transport {
                    Transport::Tcp { a, b } => a.is_closed() && b.is_closed(),
                    Transport::Rpc { .. } | Transport::Datagrams { .. } => true,
                })
    }

    /// Segments the TCP sender sent again (0 for RPC).
    pub(crate) fn retransmitted_segments(&self) -> u64 {
        match &self.transport {
            Transport::Tcp { a, .. } => a.stats().retransmitted_segments,
            Transport::Rpc { .. } | Transport::Datagrams { .. } => 0,
        }
    }

    /// Where a TCP segment's first payload byte sits in its stream (0 for UDP): the
    /// encoder writes that many bytes of the stream's pattern.
    pub(crate) fn stream_offset(&self, packet: &Packet) -> u64 {
        match &packet.body {
            Body::Tcp(seg) => {
                let isn = if packet.from_a {
                    self.isn.0
                } else {
                    self.isn.1
                };
                u64::from(seg.seq.wrapping_sub(isn).wrapping_sub(1))
            }
            Body::Udp(_) => 0,
        }
    }

    /// Appends flow `i`'s tcpstate.jsonl line for sender state `s` at `now` to `line`.
    pub(crate) fn write_state_line(
        &self,
        i: usize,
        now: i64,
        s: &SenderState,
        line: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        use std::io::Write;
        write!(
            line,
            r#"{{"t_ns":{},"flow":{},"cwnd":{},"ssthresh":{},"srtt_ns":{},"rttvar_ns":{},"rto_ns":{},"phase":"{}","in_flight":{},"backoff":{},"retransmits":{}}}"#,
            now,
            i,
            s.cwnd,
            s.ssthresh,
            s.srtt_ns,
            s.rttvar_ns,
            s.rto_ns,
            phase_name(s.phase),
            s.bytes_in_flight,
            s.backoff,
            self.retransmitted_segments()
        )?;
        line.push(b'\n');
        Ok(())
    }

    /// What summary.json reports of the flow.
    pub(crate) fn summary(&self) -> FlowSummary {
        self.summary_delivered_by(self)
    }

    /// What summary.json reports of the flow, with what `receiver` delivered as the
    /// flow's delivery (a Split-TCP flow's last zone: the destination's).
    pub(crate) fn summary_delivered_by(&self, receiver: &Flow) -> FlowSummary {
        let s = |ns: i64| ns as f64 / 1e9;
        let (retransmissions, timeouts, fast, ecn) = match &self.transport {
            Transport::Tcp { a, .. } => {
                let st = a.stats();
                (
                    st.retransmitted_segments,
                    st.timeouts,
                    st.fast_retransmits,
                    st.ecn_reductions,
                )
            }
            Transport::Datagrams { .. } => (0, 0, 0, 0),
            Transport::Rpc { client, .. } => {
                let st = client.stats();
                (st.retransmissions, st.retransmissions, 0, 0)
            }
        };
        let span = receiver.last_delivery_ns.map_or(0, |t| t - self.start_ns);
        FlowSummary {
            name: self.name.clone(),
            app: self.app.name(),
            protocol: if self.app.is_tcp() { "tcp" } else { "udp" },
            start_s: s(self.start_ns),
            end_s: receiver.last_delivery_ns.map(s),
            finished: receiver.finished,
            bytes_delivered: receiver.delivered,
            goodput_bps: if span > 0 {
                receiver.delivered as f64 * 8.0 / s(span)
            } else {
                0.0
            },
            retransmissions,
            timeouts,
            fast_retransmits: fast,
            ecn_reductions: ecn,
            idle_s: s(self.idle_ns),
            packets_sent: self.packets.0,
            packets_returned: self.packets.1,
            elfn_probes: match &self.transport {
                Transport::Tcp { a, .. } if a.config().elfn_probe_ns.is_some() => {
                    Some(a.elfn_probes())
                }
                _ => None,
            },
            split: None,
        }
    }
}

/// True when a bulk or bounded flow's sender has handed over everything and all of it
/// is acknowledged.
fn a_done(flow: &Flow) -> bool {
    match &flow.transport {
        Transport::Tcp { a, .. } => flow.backlog == 0 && a.all_data_acked(),
        Transport::Rpc { client, .. } => client.finished_at().is_some(),
        Transport::Datagrams { .. } => flow.finished,
    }
}

/// Builds flow `i` from its spec.
pub(crate) fn new_flow(i: usize, spec: &FlowSpec, streams: &Streams) -> Result<Flow, String> {
    let mut rng = streams.stream(&format!("flow{}/isn", i + 1));
    let isn = (rng.random::<u32>(), rng.random::<u32>());
    let ts_offsets = (rng.random::<u32>(), rng.random::<u32>());
    let transport = if spec.app.is_tcp() {
        let config = build::sim_tcp_config(spec.tcp.as_ref())?;
        // The congestion control's random choices (BBR's first gain phase) have a
        // stream of their own, so the other streams draw as before.
        let mut cc_rng = streams.stream(&format!("flow{}/cc", i + 1));
        let cc_seeds = (cc_rng.random::<u64>(), cc_rng.random::<u64>());
        Transport::Tcp {
            a: Box::new(
                Endpoint::client(config.clone(), isn.0, ts_offsets.0).with_cc_seed(cc_seeds.0),
            ),
            b: Box::new(Endpoint::server(config, isn.1, ts_offsets.1).with_cc_seed(cc_seeds.1)),
        }
    } else if spec.app == AppKind::UdpStream {
        Transport::Datagrams {
            next_xid: 0,
            sent: 0,
        }
    } else {
        let rpc = spec.rpc.clone().unwrap_or_default();
        let op = if spec.app == AppKind::RpcRead {
            rpc::Op::Read
        } else {
            rpc::Op::Write
        };
        let request_size = rpc.request_size.0 as u32;
        Transport::Rpc {
            client: Box::new(rpc::Client::new(rpc::ClientConfig {
                op,
                total: spec.bytes.map_or(0, |b| b.0),
                request_size,
                timeout_ns: rpc.timeout.0,
                max_timeout_ns: rpc.max_timeout.0,
                pacing_ns: rpc.pacing.0,
                outstanding: rpc.outstanding,
            })),
            server: Box::new(rpc::Server::new(rpc.service_time.0)),
            request_size,
        }
    };
    let (client_port, server_port) = if spec.app.is_tcp() {
        (TCP_CLIENT_PORT, TCP_SERVER_PORT)
    } else {
        (RPC_CLIENT_PORT, RPC_SERVER_PORT)
    };
    Ok(Flow {
        name: spec
            .name
            .clone()
            .unwrap_or_else(|| format!("flow{}", i + 1)),
        app: spec.app,
        ports: (client_port + i as u16, server_port + i as u16),
        start_ns: spec.start.0,
        stop_ns: spec.stop.map(|d| d.0),
        transport,
        isn,
        backlog: 0,
        limit: spec.bytes.map(|b| b.0),
        written: 0,
        write_limit: None,
        relay_upstream_done: None,
        retired: false,
        started: false,
        closed: false,
        rate_bps: spec.rate.and_then(|r| r.0).unwrap_or(0),
        write_bytes: spec.datagram_size.map_or(APP_WRITE, |s| s.0),
        on_off: spec.on.zip(spec.off).map(|(on, off)| (on.0, off.0)),
        next_write_ns: spec.start.0,
        delivered: 0,
        last_delivery_ns: None,
        finished: false,
        idle_ns: 0,
        settled_ns: 0,
        waiting: false,
        packets: (0, 0),
    })
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Open => "open",
        Phase::Disorder => "disorder",
        Phase::Recovery => "recovery",
        Phase::Loss => "loss",
    }
}
