//! A flow's idle time (summary.json's `idle_s`), as the simulator defines it: the time
//! the transmitter of the link direction carrying the flow's data (forward; reverse
//! for RPC reads) sat idle while the flow had data waiting, i.e. application data not
//! yet acknowledged end to end (Ludwig et al.'s utilization: the link should never
//! idle while data waits; `crates/airtrace-sim/src/sim.rs`, `settle_idle`).
//!
//! The simulator sees both halves at every event; here two threads see one each, so
//! each records its intervals and [`overlap_ns`] intersects them at the end:
//!
//! - the forwarder records each link direction's idle intervals from the link model
//!   itself (`Link::idle_from`, as the simulator asks it): an interval opens when the
//!   last transmission ends with nothing queued, and closes when the next packet is
//!   offered. Exact for rate links (model times); on ARQ links idle counts from the
//!   forwarder's poll that found the buffer empty, as in the simulator.
//! - the traffic generator records each flow's waiting intervals: a TCP flow waits
//!   from its application's start (handshake included, as in the simulator) while the
//!   application has bytes not yet written (bulk) or the kernel holds written bytes not
//!   yet acknowledged (`tcpi_bytes_acked`), judged at every TCP_INFO sample (each
//!   millisecond and after every write: an interval's end is known within a
//!   millisecond); an RPC flow waits from its start until its last reply.

/// Intervals of time in which something held, ns since the start of the run, in order.
#[derive(Debug, Clone, Default)]
pub struct Intervals {
    list: Vec<(i64, i64)>,
    open: Option<i64>,
}

impl Intervals {
    /// Room for `n` intervals before the list grows.
    pub fn with_capacity(n: usize) -> Self {
        Intervals {
            list: Vec::with_capacity(n),
            open: None,
        }
    }

    /// Opens an interval at `t` (which may lie ahead: a transmission that ends then),
    /// unless one is open.
    pub fn open(&mut self, t: i64) {
        self.open.get_or_insert(t);
    }

    /// Closes the open interval at `t`; nothing is kept if it had not begun by then.
    pub fn close(&mut self, t: i64) {
        if let Some(s) = self.open.take() {
            if t > s {
                self.list.push((s, t));
            }
        }
    }

    /// True while an interval is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The state at `t`: opens an interval or closes the open one.
    pub fn set(&mut self, t: i64, on: bool) {
        if on {
            self.open(t);
        } else {
            self.close(t);
        }
    }

    /// The intervals, the open one closed at `end`.
    pub fn finish(mut self, end: i64) -> Vec<(i64, i64)> {
        self.close(end);
        self.list
    }
}

/// Total time two lists of ordered, non-overlapping intervals have in common, ns.
pub fn overlap_ns(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if e > s {
            total += e - s;
        }
        // Move past whichever ends first; the other may overlap the next one.
        if a[i].1 <= b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_interval_opened_ahead_is_dropped_if_a_packet_comes_first() {
        let mut link = Intervals::default();
        link.open(0);
        link.close(100); // a packet at 100 to the idle link: idle 0..100
        link.open(250); // its transmission ends at 250
        link.close(200); // another packet at 200, while transmitting: no idle time
        assert!(!link.is_open());
        link.open(400);
        assert_eq!(link.finish(1000), [(0, 100), (400, 1000)]);
    }

    #[test]
    fn waiting_follows_the_samples() {
        let mut w = Intervals::default();
        for (t, on) in [(10, true), (20, true), (30, false), (40, false), (50, true)] {
            w.set(t, on);
        }
        assert_eq!(w.finish(70), [(10, 30), (50, 70)]);
    }

    #[test]
    fn overlap_of_idle_and_waiting() {
        let idle = [(0, 100), (150, 160), (300, 1000)];
        let waiting = [(50, 200), (250, 400), (900, 950)];
        // 50..100, 150..160, 300..400, 900..950
        assert_eq!(overlap_ns(&idle, &waiting), 50 + 10 + 100 + 50);
        assert_eq!(overlap_ns(&waiting, &idle), 210);
        assert_eq!(overlap_ns(&idle, &[]), 0);
        assert_eq!(
            overlap_ns(&[(0, 10)], &[(10, 20)]),
            0,
            "touching intervals share nothing"
        );
    }
}
