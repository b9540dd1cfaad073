//! The RPC flows of the traffic generator (`rpc_read`, `rpc_write`): the simulator's
//! NFS-like RPC ([`airtrace_sim::rpc`]) over real UDP sockets in the two namespaces.
//!
//! The very state machines the simulator runs decide what to send and when: the
//! client ([`rpc::Client`]) starts requests (pacing, requests outstanding), and
//! retransmits a request whose reply has not come within its timeout, doubling the
//! timeout after each retransmission up to `max_timeout`; the server ([`rpc::Server`])
//! answers each call after the service time, one at a time. Here they are driven by
//! the run's CLOCK_MONOTONIC time, and their datagrams travel as real UDP datagrams
//! with the simulator's payload ([`Datagram::write_payload`]). The kernel fragments a
//! datagram larger than the device's MTU, and a lost fragment loses the datagram
//! (reassembly never completes), as on the simulated link.
//!
//! Flow *i* runs from 198.18.0.1:25000+*i* (client) to 198.18.1.1:20049+*i* (server),
//! the simulator's ports. A request's bytes count as delivered when its reply reaches
//! the client (READ data comes in the reply; a WRITE is acknowledged by it).
//!
//! Where to start: [`client`] and [`server`], one thread each.

use std::io;
use std::net::{SocketAddrV4, UdpSocket};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use airtrace_sim::packet::{Datagram, RPC_HEADER};
use airtrace_sim::rpc::{self, Op};
use airtrace_sim::scenario::{AppKind, FlowSpec};
use nix::errno::Errno;
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;

use crate::idle::Intervals;
use crate::netns::{self, ADDR_A, ADDR_B};
use crate::traffic::{now_ns, sleep_until, FlowResult};

/// Longest wait for a datagram, so that a stop request is seen promptly.
const MAX_WAIT: Duration = Duration::from_millis(20);
/// Largest datagram read (an RPC header and up to 64 KiB of data).
const MAX_DATAGRAM: usize = 65_536 + RPC_HEADER as usize;

/// The server's address of flow `i`.
fn server_addr(i: usize) -> SocketAddrV4 {
    SocketAddrV4::new(ADDR_B.into(), airtrace_sim::sim::RPC_SERVER_PORT + i as u16)
}

/// The client's address of flow `i`.
fn client_addr(i: usize) -> SocketAddrV4 {
    SocketAddrV4::new(ADDR_A.into(), airtrace_sim::sim::RPC_CLIENT_PORT + i as u16)
}

/// The flow's client settings, as the simulator builds them.
fn client_config(spec: &FlowSpec) -> rpc::ClientConfig {
    let r = spec.rpc.clone().unwrap_or_default();
    rpc::ClientConfig {
        op: if spec.app == AppKind::RpcRead {
            Op::Read
        } else {
            Op::Write
        },
        total: spec.bytes.map_or(0, |b| b.0),
        request_size: r.request_size.0 as u32,
        timeout_ns: r.timeout.0,
        max_timeout_ns: r.max_timeout.0,
        pacing_ns: r.pacing.0,
        outstanding: r.outstanding,
    }
}

/// Waits for one datagram on the non-blocking `sock` until `deadline_ns` (at most
/// [`MAX_WAIT`]) and decodes it. `None` when nothing (valid) came. The wait is a
/// `ppoll` (a high-resolution timer; SO_RCVTIMEO would round up to the kernel's tick,
/// milliseconds late for the server's service time and the client's timeouts).
fn recv_until(
    sock: &UdpSocket,
    buf: &mut [u8],
    start: Instant,
    deadline_ns: Option<i64>,
) -> io::Result<Option<Datagram>> {
    let wait = deadline_ns.map_or(MAX_WAIT, |d| {
        Duration::from_nanos((d - now_ns(start)).max(0) as u64).min(MAX_WAIT)
    });
    if wait.is_zero() {
        return Ok(None);
    }
    let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLIN)];
    match ppoll(&mut fds, Some(TimeSpec::from_duration(wait)), None) {
        Ok(_) | Err(Errno::EINTR) => {}
        Err(e) => return Err(io::Error::other(format!("ppoll: {e}"))),
    }
    match sock.recv(buf) {
        Ok(n) => Ok(Datagram::parse_payload(&buf[..n])),
        // A call that found no server yet comes back as ICMP port unreachable; the
        // client's timer retransmits it, as it would over the network.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock
                    | io::ErrorKind::Interrupted
                    | io::ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Sends `d` on the connected socket `sock`; `out` is a reused buffer. A send the
/// kernel refuses for the moment (a full buffer, an ICMP error) is a lost datagram.
fn send(sock: &UdpSocket, d: &Datagram, out: &mut Vec<u8>) -> io::Result<()> {
    out.clear();
    d.write_payload(out);
    match sock.send(out) {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock
                    | io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Flow `i`'s server in host b's namespace: answers calls until `stop` or `done` (its
/// client has finished). Signals `ready` once bound.
pub fn server(
    i: usize,
    spec: &FlowSpec,
    ns_b: &str,
    start: Instant,
    stop: &AtomicBool,
    done: &AtomicBool,
    ready: Sender<()>,
) -> io::Result<()> {
    netns::enter(ns_b)?;
    let r = spec.rpc.clone().unwrap_or_default();
    let request_size = r.request_size.0 as u32;
    let mut server = rpc::Server::new(r.service_time.0);
    let sock = UdpSocket::bind(server_addr(i))?;
    sock.connect(client_addr(i))?;
    sock.set_nonblocking(true)?;
    let _ = ready.send(());
    let (mut buf, mut out) = (vec![0u8; MAX_DATAGRAM], Vec::with_capacity(MAX_DATAGRAM));
    while !stop.load(Ordering::Relaxed) && !done.load(Ordering::Relaxed) {
        while let Some(reply) = server.poll_transmit(now_ns(start)) {
            send(&sock, &reply, &mut out)?;
        }
        if let Some(call) = recv_until(&sock, &mut buf, start, server.poll_at())? {
            server.on_datagram(now_ns(start), &call, request_size);
        }
    }
    Ok(())
}

/// Flow `i`'s client in host a's namespace: from the flow's start time, sends calls as
/// the client state machine says and hands it the replies, until every byte is done or
/// `stop`. Writes its progress into `results[i]`.
pub fn client(
    i: usize,
    spec: &FlowSpec,
    ns_a: &str,
    start: Instant,
    stop: &AtomicBool,
    ready: std::sync::mpsc::Receiver<()>,
    results: &Mutex<Vec<FlowResult>>,
) -> io::Result<()> {
    netns::enter(ns_a)?;
    if ready.recv_timeout(Duration::from_secs(10)).is_err() {
        return Err(io::Error::other("the RPC server did not start"));
    }
    let sock = UdpSocket::bind(client_addr(i))?;
    sock.connect(server_addr(i))?;
    sock.set_nonblocking(true)?;
    let mut client = rpc::Client::new(client_config(spec));
    sleep_until(start, spec.start.0, stop);
    let started = now_ns(start);
    results.lock().unwrap_or_else(|p| p.into_inner())[i].connected_ns = Some(started);
    // Data waits from the start until the last reply.
    let mut waiting = Intervals::default();
    waiting.open(started);
    let (mut buf, mut out) = (vec![0u8; MAX_DATAGRAM], Vec::with_capacity(MAX_DATAGRAM));
    let mut last_ns = None;
    while !stop.load(Ordering::Relaxed) && client.finished_at().is_none() {
        while let Some(call) = client.poll_transmit(now_ns(start)) {
            send(&sock, &call, &mut out)?;
        }
        if let Some(reply) = recv_until(&sock, &mut buf, start, client.poll_at())? {
            let (now, before) = (now_ns(start), client.stats().bytes_done);
            client.on_datagram(now, &reply);
            if client.stats().bytes_done > before {
                last_ns = Some(now);
            }
            if client.finished_at().is_some() {
                waiting.close(now);
            }
        }
    }
    let mut r = results.lock().unwrap_or_else(|p| p.into_inner());
    r[i].bytes_delivered = client.stats().bytes_done;
    r[i].last_ns = last_ns;
    r[i].finished = client.finished_at().is_some();
    r[i].rpc = Some(client.stats());
    r[i].waiting = waiting.finish(now_ns(start));
    Ok(())
}
