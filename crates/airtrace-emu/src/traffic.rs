//! The built-in traffic generator: for each TCP flow of the scenario, a receiver thread
//! in host b's namespace and a sender thread in host a's, using the kernel's TCP
//! (congestion control set per socket with `TCP_CONGESTION`), plus one sampler thread
//! reading every sender's `TCP_INFO` each millisecond. The sender also samples after
//! every `write`. For each RPC flow (`rpc_read`, `rpc_write`), a server thread in host
//! b's namespace and a client thread in host a's exchanging UDP datagrams ([`crate::rpc`]).
//!
//! Flow *i* runs from 198.18.0.1:40000+*i* to 198.18.1.1:15000+*i*, as in the
//! simulator's captures. The payload is the simulator's pattern (byte *k* of a stream
//! is *k* mod 251).

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use airtrace_sim::scenario::{AppKind, FlowSpec};
use nix::sys::socket::{self, sockopt, AddressFamily, SockFlag, SockType, SockaddrIn};

use crate::idle::Intervals;
use crate::netns::{self, ADDR_A, ADDR_B};
use crate::tcpinfo::TcpInfo;

/// Bytes a stream or on-off application writes at a time (as the simulator).
const APP_WRITE: usize = airtrace_sim::sim::APP_WRITE as usize;

/// What the run learned about one flow.
#[derive(Debug, Clone, Default)]
pub struct FlowResult {
    /// Bytes the receiver read.
    pub bytes_delivered: u64,
    /// When the receiver read its last byte, ns since the start.
    pub last_ns: Option<i64>,
    /// When the sender connected, ns since the start.
    pub connected_ns: Option<i64>,
    /// The receiver read everything the application had to send.
    pub finished: bool,
    /// Final `TCP_INFO` of the sender.
    pub final_info: Option<TcpInfo>,
    /// The kernel congestion control used (TCP flows).
    pub cc: String,
    /// The RPC client's counters (RPC flows).
    pub rpc: Option<airtrace_sim::rpc::ClientStats>,
    /// When the flow had data waiting ([`crate::idle`]).
    pub waiting: Vec<(i64, i64)>,
    /// Retransmission timer expiries of the sender (TCP flows; [`Track::timeouts`]).
    pub timeouts: Option<u64>,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// One flow's plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// 0-based index.
    pub index: usize,
    /// The scenario's flow.
    pub spec: FlowSpec,
    /// Kernel congestion control.
    pub cc: String,
}

/// The kernel congestion control for a flow: `[flow.tcp] cc`, else `reno` when a
/// `variant` is given (Linux's Reno is the NewReno the variants describe), else cubic.
pub fn congestion_control(spec: &FlowSpec) -> String {
    match spec.tcp.as_ref() {
        Some(t) if t.cc.is_some() => t.cc.clone().unwrap_or_default(),
        Some(t) if t.variant.is_some() => "reno".into(),
        _ => "cubic".into(),
    }
}

/// Congestion controls the kernel offers.
pub fn available_ccs() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The running generator.
pub struct Generator {
    handles: Vec<JoinHandle<()>>,
    results: Arc<Mutex<Vec<FlowResult>>>,
    /// Flows finished (or failed): a TCP flow's receiver or an RPC flow's client is done.
    pub finished: Arc<AtomicUsize>,
    /// Flow count.
    pub flows: usize,
}

/// What the generator follows of a TCP flow through its sender's TCP_INFO samples
/// (every millisecond and after every write): when the flow had data waiting
/// ([`crate::idle`]), and how often the retransmission timer expired.
#[derive(Debug)]
pub struct Track {
    /// Bytes the application has written.
    sent: u64,
    /// A bulk application's total: it has bytes waiting to be written until then.
    bulk_total: Option<u64>,
    waiting: Intervals,
    last_backoff: u8,
    backoff_rises: u64,
    total_rto: Option<u16>,
}

impl Track {
    /// A flow whose application started at `start_ns`: its data waits from then.
    pub fn new(start_ns: i64, bulk_total: Option<u64>) -> Self {
        let mut waiting = Intervals::default();
        waiting.open(start_ns);
        Track {
            sent: 0,
            bulk_total,
            waiting,
            last_backoff: 0,
            backoff_rises: 0,
            total_rto: None,
        }
    }

    /// One sample at `now_ns`. Data waits while the application has bytes to write or
    /// the kernel holds bytes written and not yet acknowledged (`tcpi_bytes_acked`
    /// counts the SYN as one byte, and at the end the FIN).
    pub fn observe(&mut self, now_ns: i64, info: &TcpInfo) {
        let acked = info.bytes_acked.saturating_sub(1);
        let backlog = self.bulk_total.is_some_and(|t| self.sent < t);
        self.waiting.set(now_ns, backlog || self.sent > acked);
        self.backoff_rises += u64::from(info.backoff.saturating_sub(self.last_backoff));
        self.last_backoff = info.backoff;
        self.total_rto = info.total_rto;
    }

    /// Retransmission timer expiries: `tcpi_total_rto` (Linux 6.7 and later, SYN
    /// timeouts included), else the rises of `tcpi_backoff` from sample to sample
    /// (each expiry raises it by one; an expiry whose backoff an ACK undid within one
    /// sampling interval would be missed).
    pub fn timeouts(&self) -> u64 {
        self.total_rto.map_or(self.backoff_rises, u64::from)
    }
}

type Active = Arc<Mutex<Vec<(usize, Arc<TcpStream>, Arc<Mutex<Track>>)>>>;

/// Reads the sender's TCP_INFO into `track` and a tcpstate.jsonl line to the writer.
fn sample(
    stream: &TcpStream,
    track: &Mutex<Track>,
    start: Instant,
    flow: usize,
    line: &mut Vec<u8>,
    tx: &Sender<Vec<u8>>,
) -> Option<TcpInfo> {
    let mut track = track.lock().unwrap_or_else(|p| p.into_inner());
    let info = TcpInfo::read(stream).ok()?;
    let now = now_ns(start);
    track.observe(now, &info);
    line.clear();
    info.write_line(line, now, flow);
    let _ = tx.send(line.clone());
    Some(info)
}

/// Time since `start`, ns.
pub(crate) fn now_ns(start: Instant) -> i64 {
    start.elapsed().as_nanos() as i64
}

/// Sleeps until `t_ns` after `start`, waking at least every 50 ms to see `stop`.
pub(crate) fn sleep_until(start: Instant, t_ns: i64, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let left = t_ns - now_ns(start);
        if left <= 0 {
            return;
        }
        std::thread::sleep(Duration::from_nanos(left.min(50_000_000) as u64));
    }
}

impl Generator {
    /// Starts every flow's threads and the sampler.
    pub fn start(
        plans: Vec<Plan>,
        ns_a: String,
        ns_b: String,
        start: Instant,
        stop: Arc<AtomicBool>,
        tx: Sender<Vec<u8>>,
        sample_every: Duration,
    ) -> Generator {
        let n = plans.len();
        let results = Arc::new(Mutex::new(vec![FlowResult::default(); n]));
        let finished = Arc::new(AtomicUsize::new(0));
        let active: Active = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        for plan in plans {
            let (ready_tx, ready_rx) = mpsc::channel::<()>();
            if !plan.spec.app.is_tcp() {
                let i = plan.index;
                let done = Arc::new(AtomicBool::new(false));
                {
                    let (spec, ns_b, stop, done, results) = (
                        plan.spec.clone(),
                        ns_b.clone(),
                        stop.clone(),
                        done.clone(),
                        results.clone(),
                    );
                    handles.push(std::thread::spawn(move || {
                        if let Err(e) =
                            crate::rpc::server(i, &spec, &ns_b, start, &stop, &done, ready_tx)
                        {
                            results.lock().unwrap_or_else(|p| p.into_inner())[i]
                                .error
                                .get_or_insert(format!("RPC server: {e}"));
                        }
                    }));
                }
                let (ns_a, stop, results, finished) = (
                    ns_a.clone(),
                    stop.clone(),
                    results.clone(),
                    finished.clone(),
                );
                handles.push(std::thread::spawn(move || {
                    if let Err(e) =
                        crate::rpc::client(i, &plan.spec, &ns_a, start, &stop, ready_rx, &results)
                    {
                        results.lock().unwrap_or_else(|p| p.into_inner())[i]
                            .error
                            .get_or_insert(format!("RPC client: {e}"));
                    }
                    done.store(true, Ordering::SeqCst);
                    finished.fetch_add(1, Ordering::SeqCst);
                }));
                continue;
            }
            let total = plan.spec.bytes.map(|b| b.0);
            let rcvbuf = plan
                .spec
                .tcp
                .as_ref()
                .and_then(|t| t.rcvbuf)
                .map(|b| b.0 as usize);
            let i = plan.index;
            {
                let (ns_b, stop, results, finished) = (
                    ns_b.clone(),
                    stop.clone(),
                    results.clone(),
                    finished.clone(),
                );
                handles.push(std::thread::spawn(move || {
                    let r = receive(i, &ns_b, start, &stop, ready_tx, (total, rcvbuf), &results);
                    if let Err(e) = r {
                        let mut res = results.lock().unwrap_or_else(|p| p.into_inner());
                        res[i].error.get_or_insert(format!("receiver: {e}"));
                    }
                    finished.fetch_add(1, Ordering::SeqCst);
                }));
            }
            {
                let (ns_a, stop, results, tx, active) = (
                    ns_a.clone(),
                    stop.clone(),
                    results.clone(),
                    tx.clone(),
                    active.clone(),
                );
                handles.push(std::thread::spawn(move || {
                    let r = send(&plan, &ns_a, start, &stop, ready_rx, &tx, &active, &results);
                    if let Err(e) = r {
                        let mut res = results.lock().unwrap_or_else(|p| p.into_inner());
                        res[plan.index].error.get_or_insert(format!("sender: {e}"));
                    }
                }));
            }
        }
        {
            let (stop, active, finished) = (stop.clone(), active.clone(), finished.clone());
            handles.push(std::thread::spawn(move || {
                let mut line = Vec::with_capacity(256);
                let mut next = now_ns(start);
                while !stop.load(Ordering::Relaxed) && finished.load(Ordering::SeqCst) < n {
                    next += sample_every.as_nanos() as i64;
                    sleep_until(start, next, &stop);
                    let socks = active.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    for (flow, s, track) in socks {
                        sample(&s, &track, start, flow, &mut line, &tx);
                    }
                }
            }));
        }
        Generator {
            handles,
            results,
            finished,
            flows: n,
        }
    }

    /// Waits for every thread (the caller sets `stop` first if the run is cut short).
    pub fn join(self) -> Vec<FlowResult> {
        for h in self.handles {
            let _ = h.join();
        }
        let r = self.results.lock().unwrap_or_else(|p| p.into_inner());
        r.clone()
    }
}

/// Flow `i`'s receiver in host b's namespace: listens, accepts, reads everything.
/// `(total, rcvbuf)`: the bytes expected, and the scenario's receive buffer, set with
/// SO_RCVBUF before `listen` so that the connection's window and window scale follow it
/// (Linux doubles the value for its bookkeeping and advertises about half: a window of
/// about `rcvbuf`).
fn receive(
    i: usize,
    ns_b: &str,
    start: Instant,
    stop: &AtomicBool,
    ready: Sender<()>,
    (total, rcvbuf): (Option<u64>, Option<usize>),
    results: &Mutex<Vec<FlowResult>>,
) -> io::Result<()> {
    netns::enter(ns_b)?;
    let port = airtrace_sim::sim::TCP_SERVER_PORT + i as u16;
    let fd: OwnedFd = socket::socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    socket::setsockopt(&fd, sockopt::ReuseAddr, &true)?;
    if let Some(bytes) = rcvbuf {
        socket::setsockopt(&fd, sockopt::RcvBuf, &bytes)?;
    }
    let b = ADDR_B;
    socket::bind(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &SockaddrIn::new(b[0], b[1], b[2], b[3], port),
    )?;
    socket::listen(&fd, socket::Backlog::new(8).map_err(io::Error::other)?)?;
    let listener = TcpListener::from(fd);
    listener.set_nonblocking(true)?;
    let _ = ready.send(());
    let mut stream = loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2))
            }
            Err(e) => return Err(e),
        }
    };
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                got += n as u64;
                let mut r = results.lock().unwrap_or_else(|p| p.into_inner());
                r[i].bytes_delivered = got;
                r[i].last_ns = Some(now_ns(start));
                if total.is_some_and(|t| got >= t) {
                    r[i].finished = true;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    if total.is_none() && !stop.load(Ordering::Relaxed) {
        results.lock().unwrap_or_else(|p| p.into_inner())[i].finished = true;
    }
    Ok(())
}

/// Opens flow `i`'s socket in the current namespace: congestion control, buffers and
/// MSS set before connecting from host a's port to host b's. None when `stop` came
/// first ([`connect_until_stopped`]).
fn connect(plan: &Plan, stop: &AtomicBool) -> io::Result<Option<TcpStream>> {
    let i = plan.index as u16;
    let fd: OwnedFd = socket::socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
        None,
    )?;
    socket::setsockopt(&fd, sockopt::ReuseAddr, &true)?;
    socket::setsockopt(
        &fd,
        sockopt::TcpCongestion,
        &std::ffi::OsString::from(&plan.cc),
    )
    .map_err(|e| {
        io::Error::other(format!(
            "congestion control {:?}: {e} (the kernel offers: {})",
            plan.cc,
            available_ccs().join(", ")
        ))
    })?;
    if let Some(tcp) = &plan.spec.tcp {
        if let Some(mss) = tcp.mss {
            socket::setsockopt(&fd, sockopt::TcpMaxSeg, &u32::from(mss))?;
        }
        if let Some(b) = tcp.sndbuf {
            socket::setsockopt(&fd, sockopt::SndBuf, &(b.0 as usize))?;
        }
    }
    let a = ADDR_A;
    let b = ADDR_B;
    socket::bind(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &SockaddrIn::new(
            a[0],
            a[1],
            a[2],
            a[3],
            airtrace_sim::sim::TCP_CLIENT_PORT + i,
        ),
    )?;
    let server = SockaddrIn::new(
        b[0],
        b[1],
        b[2],
        b[3],
        airtrace_sim::sim::TCP_SERVER_PORT + i,
    );
    if !connect_until_stopped(&fd, &server, stop)? {
        return Ok(None);
    }
    let stream = TcpStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(Some(stream))
}

/// Connects the non-blocking socket `fd` to `to`, seeing `stop` at least every 50 ms
/// (as [`sleep_until`]): connect(2) returns EINPROGRESS, poll(2) waits for the socket
/// to become writable, and SO_ERROR tells how the handshake ended (connect(2),
/// "EINPROGRESS"). A blocking connect would wait out every SYN retransmission (about
/// 130 s with Linux's default `tcp_syn_retries` of 6) on a link that loses everything,
/// deaf to SIGINT and SIGTERM. Returns false when `stop` came first.
fn connect_until_stopped(fd: &OwnedFd, to: &SockaddrIn, stop: &AtomicBool) -> io::Result<bool> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    match socket::connect(std::os::fd::AsRawFd::as_raw_fd(fd), to) {
        Ok(()) => return Ok(true),
        Err(nix::errno::Errno::EINPROGRESS | nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(e.into()),
    }
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
        match poll(&mut fds, PollTimeout::from(50u8)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => break,
            Err(e) => return Err(e.into()),
        }
    }
    match socket::getsockopt(fd, sockopt::SocketError)? {
        0 => Ok(true),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

#[allow(clippy::too_many_arguments)]
fn send(
    plan: &Plan,
    ns_a: &str,
    start: Instant,
    stop: &AtomicBool,
    ready: mpsc::Receiver<()>,
    tx: &Sender<Vec<u8>>,
    active: &Active,
    results: &Mutex<Vec<FlowResult>>,
) -> io::Result<()> {
    let i = plan.index;
    netns::enter(ns_a)?;
    if ready.recv_timeout(Duration::from_secs(10)).is_err() {
        return Err(io::Error::other("the receiver did not start"));
    }
    sleep_until(start, plan.spec.start.0, stop);
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    results.lock().unwrap_or_else(|p| p.into_inner())[i].cc = plan.cc.clone();
    let total = plan.spec.bytes.map(|b| b.0);
    let track = Arc::new(Mutex::new(Track::new(
        now_ns(start),
        total.filter(|_| plan.spec.app == AppKind::Bulk),
    )));
    let Some(stream) = connect(plan, stop)? else {
        return Ok(());
    };
    let stream = Arc::new(stream);
    results.lock().unwrap_or_else(|p| p.into_inner())[i].connected_ns = Some(now_ns(start));
    stream.set_write_timeout(Some(Duration::from_millis(50)))?;
    stream.set_read_timeout(Some(Duration::from_millis(50)))?;
    active
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((i, stream.clone(), track.clone()));
    // The pattern: byte k is k mod 251; `pattern[k % 251..]` continues any offset.
    let pattern: Vec<u8> = (0..(1usize << 16) + 251).map(|k| (k % 251) as u8).collect();
    let stop_ns = plan.spec.stop.map_or(i64::MAX, |d| d.0);
    let rate = plan.spec.rate.and_then(|r| r.0);
    let mut sent: u64 = 0;
    let mut line = Vec::with_capacity(256);
    let app_start = now_ns(start);
    let mut w = &*stream;
    while !stop.load(Ordering::Relaxed) && total.is_none_or(|t| sent < t) {
        let now = now_ns(start);
        if now >= stop_ns {
            break;
        }
        let mut chunk = 1usize << 16;
        if plan.spec.app != AppKind::Bulk {
            // Paced applications: APP_WRITE bytes whenever the schedule allows.
            let rate = rate.unwrap_or(1_000_000).max(1) as f64;
            let mut elapsed = (now - app_start) as f64 / 1e9;
            if plan.spec.app == AppKind::Onoff {
                let on = plan.spec.on.map_or(1.0, |d| d.0 as f64 / 1e9);
                let off = plan.spec.off.map_or(1.0, |d| d.0 as f64 / 1e9);
                let cycles = (elapsed / (on + off)).floor();
                let into = elapsed - cycles * (on + off);
                if into >= on {
                    sleep_until(
                        start,
                        app_start + ((cycles + 1.0) * (on + off) * 1e9) as i64,
                        stop,
                    );
                    continue;
                }
                elapsed = cycles * on + into;
            }
            let allowed = (elapsed * rate / 8.0) as u64;
            if sent + APP_WRITE as u64 > allowed {
                let wait = ((sent + APP_WRITE as u64) as f64 * 8.0 / rate - elapsed) * 1e9;
                std::thread::sleep(Duration::from_nanos((wait.max(0.0) as u64).min(50_000_000)));
                continue;
            }
            chunk = APP_WRITE;
        }
        if let Some(t) = total {
            chunk = chunk.min((t - sent) as usize);
        }
        let off = (sent % 251) as usize;
        match w.write(&pattern[off..off + chunk]) {
            Ok(n) => {
                sent += n as u64;
                track.lock().unwrap_or_else(|p| p.into_inner()).sent = sent;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
        sample(&stream, &track, start, i, &mut line, tx);
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Wait for the receiver to close (it has read everything), then report.
    let mut buf = [0u8; 256];
    while !stop.load(Ordering::Relaxed) {
        match (&*stream).read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => break,
        }
    }
    let info = sample(&stream, &track, start, i, &mut line, tx);
    active
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|(f, _, _)| *f != i);
    let (waiting, timeouts) = {
        let mut t = track.lock().unwrap_or_else(|p| p.into_inner());
        (
            std::mem::take(&mut t.waiting).finish(now_ns(start)),
            t.timeouts(),
        )
    };
    let mut r = results.lock().unwrap_or_else(|p| p.into_inner());
    (r[i].final_info, r[i].waiting, r[i].timeouts) = (info, waiting, Some(timeouts));
    drop(r);
    let _ = w.flush();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(backoff: u8, bytes_acked: u64, total_rto: Option<u16>) -> TcpInfo {
        TcpInfo {
            backoff,
            bytes_acked,
            total_rto,
            ..TcpInfo::default()
        }
    }

    #[test]
    fn timeouts_come_from_the_kernel_count_or_the_backoff_rises() {
        let mut t = Track::new(0, None);
        for (i, b) in [0, 1, 2, 0, 1, 1].into_iter().enumerate() {
            t.observe(i as i64, &info(b, 0, None));
        }
        assert_eq!(t.timeouts(), 3, "an older kernel: 0→1→2, then 0→1");
        t.observe(9, &info(1, 0, Some(5)));
        assert_eq!(
            t.timeouts(),
            5,
            "tcpi_total_rto wins where the kernel has it"
        );
    }

    #[test]
    fn a_bulk_flow_waits_until_its_last_byte_is_acknowledged() {
        let mut t = Track::new(100, Some(3000));
        t.sent = 2000;
        t.observe(200, &info(0, 2001, None)); // all written acknowledged, 1000 to write
        t.sent = 3000;
        t.observe(300, &info(0, 2001, None));
        t.observe(400, &info(0, 3001, None)); // the SYN counts one byte
        t.observe(500, &info(0, 3002, None)); // and the FIN
        assert_eq!(t.waiting.finish(600), [(100, 400)]);
        let mut stream = Track::new(0, None);
        stream.sent = 1460;
        stream.observe(10, &info(0, 1, None));
        stream.observe(20, &info(0, 1461, None));
        stream.sent = 2920;
        stream.observe(30, &info(0, 1461, None));
        assert_eq!(stream.waiting.finish(40), [(0, 20), (30, 40)]);
    }
}
