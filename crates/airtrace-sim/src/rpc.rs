//! An NFS-like RPC over UDP: a client that reads or writes a file in fixed-size
//! requests, and a server that answers each after a service time.
//!
//! This is what the NFS-over-wireless part of the Rais & Tripathi study measured: 8 KB
//! READ and WRITE requests, each one UDP datagram that IP fragments to the link MTU (a
//! lost fragment loses the whole request), and a client that retransmits a request
//! whose reply has not come after a timeout starting at 1.1 s (NFS `timeo=11`) and
//! doubling after each retransmission up to a cap. Both sides are clock-free state
//! machines in the style of the TCP endpoints: `on_datagram`, `poll_transmit`,
//! `poll_at`.

use std::collections::VecDeque;

use crate::packet::{Datagram, RpcKind};

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// READ calls; the data comes back in the replies.
    Read,
    /// WRITE calls carrying the data; small replies.
    Write,
}

/// Client settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    /// READ or WRITE.
    pub op: Op,
    /// Size of the file, in bytes.
    pub total: u64,
    /// Data per request, in bytes.
    pub request_size: u32,
    /// First retransmission timeout, ns.
    pub timeout_ns: i64,
    /// Cap of the doubling timeout, ns.
    pub max_timeout_ns: i64,
    /// Least time between the starts of two new requests, ns.
    pub pacing_ns: i64,
    /// Requests outstanding at once.
    pub outstanding: u32,
}

/// A request waiting for its reply.
#[derive(Debug, Clone, Copy)]
struct Pending {
    xid: u32,
    offset: u64,
    len: u32,
    /// Current timeout (doubles on each retransmission).
    timeout_ns: i64,
    /// When it is retransmitted if no reply came.
    deadline_ns: i64,
}

/// Counters of a client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Requests sent for the first time.
    pub requests: u64,
    /// Requests sent again after a timeout.
    pub retransmissions: u64,
    /// Replies that matched no outstanding request (answers to a retransmitted call
    /// whose first reply had already come).
    pub duplicate_replies: u64,
    /// Data bytes whose request completed.
    pub bytes_done: u64,
}

/// The RPC client (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct Client {
    config: ClientConfig,
    next_offset: u64,
    next_xid: u32,
    last_start_ns: Option<i64>,
    pending: Vec<Pending>,
    /// Calls due for (re)transmission, in order.
    due: VecDeque<Datagram>,
    stats: ClientStats,
    finished_at: Option<i64>,
}

impl Client {
    /// A client that starts at the first `poll_transmit`.
    pub fn new(config: ClientConfig) -> Self {
        Self {
            config,
            next_offset: 0,
            next_xid: 1,
            last_start_ns: None,
            pending: Vec::new(),
            due: VecDeque::new(),
            stats: ClientStats::default(),
            finished_at: None,
        }
    }

    /// The call for a request.
    fn call(&self, p: &Pending) -> Datagram {
        match self.config.op {
            Op::Read => Datagram {
                xid: p.xid,
                kind: RpcKind::ReadCall,
                offset: p.offset,
                data: 0,
            },
            Op::Write => Datagram {
                xid: p.xid,
                kind: RpcKind::WriteCall,
                offset: p.offset,
                data: p.len,
            },
        }
    }

    /// The next call to send at `now_ns`: a timed-out request first, then a new one
    /// when the window and the pacing allow.
    pub fn poll_transmit(&mut self, now_ns: i64) -> Option<Datagram> {
        for i in 0..self.pending.len() {
            let p = &mut self.pending[i];
            if p.deadline_ns <= now_ns {
                // Exponential backoff of the retransmission timeout, capped.
                p.timeout_ns = (p.timeout_ns.saturating_mul(2)).min(self.config.max_timeout_ns);
                p.deadline_ns = now_ns.saturating_add(p.timeout_ns);
                let p = *p;
                self.stats.retransmissions += 1;
                self.due.push_back(self.call(&p));
            }
        }
        if let Some(d) = self.due.pop_front() {
            return Some(d);
        }
        let paced = self
            .last_start_ns
            .is_none_or(|t| now_ns >= t.saturating_add(self.config.pacing_ns));
        if self.next_offset < self.config.total
            && self.pending.len() < self.config.outstanding as usize
            && paced
        {
            let len = (self.config.total - self.next_offset)
                .min(u64::from(self.config.request_size)) as u32;
            let p = Pending {
                xid: self.next_xid,
                offset: self.next_offset,
                len,
                timeout_ns: self.config.timeout_ns,
                deadline_ns: now_ns.saturating_add(self.config.timeout_ns),
            };
            self.next_xid = self.next_xid.wrapping_add(1);
            self.next_offset += u64::from(len);
            self.last_start_ns = Some(now_ns);
            self.pending.push(p);
            self.stats.requests += 1;
            return Some(self.call(&p));
        }
        None
    }

    /// A reply arrived.
    pub fn on_datagram(&mut self, now_ns: i64, d: &Datagram) {
        match self.pending.iter().position(|p| p.xid == d.xid) {
            Some(i) => {
                let p = self.pending.swap_remove(i);
                self.stats.bytes_done += u64::from(p.len);
                if self.stats.bytes_done >= self.config.total {
                    self.finished_at = Some(now_ns);
                }
            }
            None => self.stats.duplicate_replies += 1,
        }
    }

    /// When the client next needs `poll_transmit`: the earliest retransmission
    /// deadline, or the end of the pacing gap when a new request waits only for it.
    pub fn poll_at(&self) -> Option<i64> {
        let timer = self.pending.iter().map(|p| p.deadline_ns).min();
        let can_start = self.next_offset < self.config.total
            && self.pending.len() < self.config.outstanding as usize;
        let pace = match (can_start, self.last_start_ns) {
            (true, Some(t)) => Some(t.saturating_add(self.config.pacing_ns)),
            (true, None) => Some(i64::MIN),
            _ => None,
        };
        timer.into_iter().chain(pace).min()
    }

    /// When the last request completed, once every byte is done.
    pub fn finished_at(&self) -> Option<i64> {
        self.finished_at
    }

    /// Counters.
    pub fn stats(&self) -> ClientStats {
        self.stats
    }
}

/// The RPC server: one request at a time, each taking the service time.
#[derive(Debug, Clone)]
pub struct Server {
    service_ns: i64,
    busy_until_ns: i64,
    /// Replies with the time they are ready, in order.
    replies: VecDeque<(i64, Datagram)>,
    /// Calls answered (retransmitted calls are answered again).
    pub calls: u64,
}

impl Server {
    /// A server that needs `service_ns` per request.
    pub fn new(service_ns: i64) -> Self {
        Self {
            service_ns,
            busy_until_ns: i64::MIN,
            replies: VecDeque::new(),
            calls: 0,
        }
    }

    /// A call arrived: its reply is ready after the requests before it and its own
    /// service time.
    pub fn on_datagram(&mut self, now_ns: i64, d: &Datagram, request_size: u32) {
        let reply = match d.kind {
            RpcKind::ReadCall => Datagram {
                xid: d.xid,
                kind: RpcKind::ReadReply,
                offset: d.offset,
                data: request_size,
            },
            RpcKind::WriteCall => Datagram {
                xid: d.xid,
                kind: RpcKind::WriteReply,
                offset: d.offset,
                data: 0,
            },
            RpcKind::ReadReply | RpcKind::WriteReply | RpcKind::Stream => return,
        };
        self.calls += 1;
        let ready = now_ns
            .max(self.busy_until_ns)
            .saturating_add(self.service_ns);
        self.busy_until_ns = ready;
        self.replies.push_back((ready, reply));
    }

    /// The next reply ready at `now_ns`.
    pub fn poll_transmit(&mut self, now_ns: i64) -> Option<Datagram> {
        match self.replies.front() {
            Some(&(ready, d)) if ready <= now_ns => {
                self.replies.pop_front();
                Some(d)
            }
            _ => None,
        }
    }

    /// When the next reply is ready.
    pub fn poll_at(&self) -> Option<i64> {
        self.replies.front().map(|&(t, _)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn client(op: Op, total: u64) -> Client {
        Client::new(ClientConfig {
            op,
            total,
            request_size: 8192,
            timeout_ns: 1100 * MS,
            max_timeout_ns: 4000 * MS,
            pacing_ns: 0,
            outstanding: 1,
        })
    }

    #[test]
    fn read_requests_one_at_a_time_and_finish() {
        let mut c = client(Op::Read, 10_000);
        let first = c.poll_transmit(0).unwrap();
        assert_eq!(
            (first.kind, first.offset, first.data),
            (RpcKind::ReadCall, 0, 0)
        );
        assert_eq!(c.poll_transmit(0), None, "one outstanding");
        let mut s = Server::new(2 * MS);
        s.on_datagram(10 * MS, &first, 8192);
        assert_eq!(s.poll_at(), Some(12 * MS));
        let reply = s.poll_transmit(12 * MS).unwrap();
        assert_eq!(reply.data, 8192);
        c.on_datagram(30 * MS, &reply);
        let second = c.poll_transmit(30 * MS).unwrap();
        assert_eq!(second.offset, 8192);
        c.on_datagram(
            60 * MS,
            &Datagram {
                data: 1808,
                ..reply
            },
        );
        assert_eq!(
            c.finished_at(),
            None,
            "xid of the first reply is done already"
        );
        let reply2 = Datagram {
            xid: second.xid,
            kind: RpcKind::ReadReply,
            offset: 8192,
            data: 1808,
        };
        c.on_datagram(61 * MS, &reply2);
        assert_eq!(c.finished_at(), Some(61 * MS));
        assert_eq!(c.stats().duplicate_replies, 1);
    }

    #[test]
    fn timeouts_double_up_to_the_cap() {
        let mut c = client(Op::Write, 8192);
        let call = c.poll_transmit(0).unwrap();
        assert_eq!(call.data, 8192);
        let mut deadlines = Vec::new();
        for _ in 0..4 {
            let t = c.poll_at().unwrap();
            deadlines.push(t);
            assert_eq!(c.poll_transmit(t).map(|d| d.xid), Some(call.xid));
        }
        // 1.1 s, then 2.2 s, 4 s (cap), 4 s after each retransmission.
        assert_eq!(deadlines, [1100 * MS, 3300 * MS, 7300 * MS, 11300 * MS]);
        assert_eq!(c.stats().retransmissions, 4);
    }
}
