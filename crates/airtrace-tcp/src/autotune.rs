//! Buffer autotuning ([`Config::autotune`](crate::Config::autotune)): the receive
//! window and the send buffer grow during a connection as Linux grows them, instead
//! of staying at [`Config::rcvbuf`](crate::Config::rcvbuf) and
//! [`Config::sndbuf`](crate::Config::sndbuf).
//!
//! - Receiver, Linux's dynamic right-sizing (`tcp_rcv_space_adjust` in
//!   net/ipv4/tcp_input.c, with the receiver's RTT estimate of `tcp_rcv_rtt_measure_ts`
//!   and `tcp_rcv_rtt_measure`): once per receiver-measured RTT, if the application
//!   read more than in the previous RTT, the window may grow to twice the bytes read
//!   in the RTT plus 16 segments, plus twice the relative growth from one RTT to the
//!   next (so a sender in slow start, doubling each RTT, is never held back). The
//!   first measurement's reference is the initial window, ten segments
//!   (`tcp_init_buffer_space`). [`RcvSpace`] holds that state.
//! - Sender, `tcp_sndbuf_expand` (net/ipv4/tcp_input.c), called on ACKs that free
//!   send-buffer room while the congestion window is not full
//!   (`tcp_should_expand_sndbuf`): the buffer holds twice the larger of cwnd and the
//!   initial window, in segments (three times with BBR, which may grow cwnd during
//!   a recovery: its `sndbuf_expand`). [`sndbuf_for`] computes it.
//!
//! What is not modelled: Linux counts buffers in kernel memory (`truesize`, about
//! 1.5–2 times the payload for 1448-byte segments) and advertises a window of about
//! half the receive buffer; here both are payload bytes, the window cap is half of
//! [`RMEM_MAX`] and the send buffer cap is [`WMEM_MAX`] of payload. The receive
//! window's slower opening by `rcv_ssthresh` (`tcp_grow_window`), the reordering term
//! of `tcp_sndbuf_expand` and memory pressure are left out. A buffer set by the
//! application (`SO_RCVBUF`, `SO_SNDBUF`) turns Linux's autotuning off: a scenario
//! that sets `rcvbuf`/`sndbuf` and `autotune` gets its buffers as the starting point
//! instead.

/// Linux's default `net.ipv4.tcp_rmem[2]` (6 MiB): the largest receive buffer
/// autotuning gives. The window scale is chosen for it, as Linux chooses it
/// (`tcp_select_initial_window`).
pub const RMEM_MAX: u32 = 6 << 20;

/// Linux's default `net.ipv4.tcp_wmem[2]` (4 MiB): the largest send buffer.
pub const WMEM_MAX: u32 = 4 << 20;

/// `TCP_INIT_CWND`: the initial window Linux assumes for both buffers.
const INIT_CWND: u32 = 10;

/// The receiver's state for dynamic right-sizing (Linux's `rcvq_space` and
/// `rcv_rtt_est`).
#[derive(Clone, Debug)]
pub struct RcvSpace {
    /// Bytes read in the last measured RTT (`rcvq_space.space`).
    space: u64,
    /// Bytes read when the current measurement began (`rcvq_space.seq`).
    read_at_start: u64,
    /// When it began (`rcvq_space.time`); `None` before the first read.
    started: Option<i64>,
    /// The receiver's RTT estimate, ns (0: none yet).
    rtt_ns: i64,
    /// The last TSecr sampled (`rcv_rtt_last_tsecr`): one sample per echoed value.
    last_tsecr: u32,
    /// Window method: (sequence number that ends the window, when it began).
    window_mark: Option<(u32, i64)>,
}

impl RcvSpace {
    /// State at the start of a connection whose segments carry `advmss` bytes.
    pub fn new(advmss: u32) -> Self {
        RcvSpace {
            space: u64::from(INIT_CWND * advmss),
            read_at_start: 0,
            started: None,
            rtt_ns: 0,
            last_tsecr: 0,
            window_mark: None,
        }
    }

    /// The receiver's RTT estimate in ns (0 before the first sample).
    pub fn rtt_ns(&self) -> i64 {
        self.rtt_ns
    }

    /// A full-sized data segment arrived echoing `tsecr` (timestamps in use),
    /// `now_ts` being our own timestamp clock (ms): the time since we sent the value
    /// is an RTT sample (`tcp_rcv_rtt_measure_ts`), smoothed by 1/8.
    pub fn on_tsecr(&mut self, now_ts: u32, tsecr: u32) {
        if tsecr == 0 || tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        let ms = now_ts.wrapping_sub(tsecr) as i32;
        if ms < 0 {
            return;
        }
        // A sample below the clock's tick counts as one tick.
        self.update_rtt(i64::from(ms.max(1)) * 1_000_000, false);
    }

    /// Window method, without timestamps (`tcp_rcv_rtt_measure`): the time to receive
    /// one advertised window of data, from `rcv_nxt` when the measurement began to
    /// that plus `window`, bounds the RTT from above; the smallest such sample is kept.
    pub fn on_in_order(&mut self, now: i64, rcv_nxt: u32, window: u32) {
        if let Some((end, since)) = self.window_mark {
            if crate::endpoint::seq::lt(rcv_nxt, end) {
                return;
            }
            self.update_rtt((now - since).max(1), true);
        }
        self.window_mark = Some((rcv_nxt.wrapping_add(window), now));
    }

    /// `tcp_rcv_rtt_update`: an EWMA with gain 1/8 for timestamp samples, the minimum
    /// for window samples (which only bound the RTT from above).
    fn update_rtt(&mut self, sample: i64, window_dependent: bool) {
        self.rtt_ns = if self.rtt_ns == 0 {
            sample
        } else if window_dependent {
            self.rtt_ns.min(sample)
        } else {
            self.rtt_ns + (sample - self.rtt_ns) / 8
        };
    }

    /// The application has now read `read` bytes in all (here: everything delivered
    /// in order). Once an RTT has passed since the measurement began, returns the
    /// window the receiver may now advertise if the bytes read in it exceed the
    /// previous RTT's (`tcp_rcv_space_adjust`), and starts a new measurement.
    pub fn on_read(&mut self, now: i64, read: u64, advmss: u32) -> Option<u32> {
        let Some(started) = self.started else {
            self.read_at_start = read;
            self.started = Some(now);
            return None;
        };
        if self.rtt_ns == 0 || now - started < self.rtt_ns {
            return None;
        }
        let copied = read - self.read_at_start;
        let mut grown = None;
        if copied > self.space {
            // Twice what one RTT carried, 16 segments of slack, and twice the growth
            // seen from one RTT to the next.
            let mut rcvwin = 2 * copied + 16 * u64::from(advmss);
            let growth = rcvwin * (copied - self.space) / self.space.max(1);
            rcvwin += 2 * growth;
            grown = Some(rcvwin.min(u64::from(RMEM_MAX / 2)) as u32);
            self.space = copied;
        }
        self.read_at_start = read;
        self.started = Some(now);
        grown
    }
}

/// `tcp_sndbuf_expand`: the send buffer for a congestion window of `cwnd` bytes and
/// segments of `smss` bytes, `per_segment` (the congestion control's
/// `sndbuf_expand`: 2, BBR 3) times max(cwnd, the initial window) in segments, at
/// most [`WMEM_MAX`].
pub fn sndbuf_for(cwnd: u32, smss: u32, per_segment: u32) -> u32 {
    let segments = (cwnd / smss.max(1)).max(INIT_CWND);
    (per_segment * segments).saturating_mul(smss).min(WMEM_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    #[test]
    fn the_first_read_only_starts_a_measurement() {
        let mut r = RcvSpace::new(MSS);
        r.on_tsecr(100, 60);
        assert_eq!(r.on_read(0, 1000, MSS), None);
        assert_eq!(r.rtt_ns(), 40_000_000);
    }

    #[test]
    fn no_growth_before_an_rtt_has_passed_or_without_an_rtt_estimate() {
        let mut r = RcvSpace::new(MSS);
        r.on_read(0, 0, MSS);
        assert_eq!(r.on_read(50_000_000, 100 * u64::from(MSS), MSS), None);
        r.on_tsecr(100, 60);
        assert_eq!(r.on_read(39_000_000, 100 * u64::from(MSS), MSS), None);
    }

    #[test]
    fn a_doubling_rtt_grows_the_window_to_six_times_the_bytes_read_plus_slack() {
        // Initial space: 10 segments. 20 segments read in one RTT: rcvwin = 2·20 + 16
        // = 56 segments, growth (20 − 10)/10 = 100 % adds 2·56: 168 segments.
        let mut r = RcvSpace::new(MSS);
        r.on_tsecr(100, 60);
        r.on_read(0, 0, MSS);
        let w = r.on_read(40_000_000, 20 * u64::from(MSS), MSS);
        assert_eq!(w, Some(168 * MSS));
        // The same 20 segments in the next RTT: no more growth.
        assert_eq!(r.on_read(80_000_000, 40 * u64::from(MSS), MSS), None);
    }

    #[test]
    fn the_window_stops_at_half_of_tcp_rmem_max() {
        let mut r = RcvSpace::new(MSS);
        r.on_tsecr(100, 60);
        r.on_read(0, 0, MSS);
        assert_eq!(r.on_read(40_000_000, 100 << 20, MSS), Some(RMEM_MAX / 2));
    }

    #[test]
    fn window_samples_keep_the_smallest() {
        let mut r = RcvSpace::new(MSS);
        r.on_in_order(0, 0, 10_000);
        r.on_in_order(5, 9_999, 10_000);
        assert_eq!(r.rtt_ns(), 0);
        r.on_in_order(50_000_000, 10_000, 10_000);
        r.on_in_order(90_000_000, 20_000, 10_000);
        assert_eq!(r.rtt_ns(), 40_000_000);
    }

    #[test]
    fn the_send_buffer_holds_two_windows_between_the_initial_window_and_the_cap() {
        assert_eq!(sndbuf_for(2 * MSS, MSS, 2), 20 * MSS);
        assert_eq!(sndbuf_for(100 * MSS, MSS, 2), 200 * MSS);
        assert_eq!(sndbuf_for(100 * MSS, MSS, 3), 300 * MSS);
        assert_eq!(sndbuf_for(10_000 * MSS, MSS, 2), WMEM_MAX);
    }
}
