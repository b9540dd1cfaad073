//! Delivery-rate estimation: one rate sample per ACK, the rate at which the network
//! delivered this connection's data over the interval between sending a segment and
//! its acknowledgment (draft-cheng-iccrg-delivery-rate-estimation-02, as Linux's
//! `net/ipv4/tcp_rate.c` implements it). [BBR](crate::cc::bbr) builds its model of
//! the path from these samples.
//!
//! What it is not: a bandwidth filter (BBR keeps the windowed maximum) or an RTT
//! estimator for the RTO (the endpoint's RFC 6298 one). Counts are bytes, not
//! packets as in Linux; times are the endpoint's nanoseconds.
//!
//! How the endpoint drives it:
//!
//! 1. every transmission, new or retransmitted, takes a snapshot of the connection's
//!    delivery state ([`DeliveryRate::on_send`], `tcp_rate_skb_sent`), kept with the
//!    segment;
//! 2. every segment an ACK newly acknowledges or SACKs offers its snapshot
//!    ([`DeliveryRate::on_delivered`], `tcp_rate_skb_delivered`): the one sent last
//!    (the highest `delivered` at send) starts the sample's interval;
//! 3. once per ACK, [`DeliveryRate::sample`] (`tcp_rate_gen`) turns the bytes newly
//!    delivered into a [`RateSample`]: delivered bytes over the longer of the send
//!    phase and the ACK phase (an ACK-compressed burst is not faster than the data
//!    was sent);
//! 4. when the application writes while the sender has nothing to send and room in
//!    cwnd, [`DeliveryRate::check_app_limited`] marks the data in flight: samples
//!    taken until it is delivered are app-limited (a low rate then says nothing
//!    about the path).
//!
//! ```
//! use airtrace_tcp::rate::DeliveryRate;
//! let mut r = DeliveryRate::default();
//! // Ten 1000-byte segments sent 1 ms apart from an empty pipe, all acknowledged
//! // by one ACK 100 ms after the first was sent.
//! let snaps: Vec<_> = (0..10).map(|i| (r.on_send(i * 1_000_000, i == 0), i * 1_000_000)).collect();
//! r.begin_ack(100_000_000);
//! for (snap, sent) in &snaps {
//!     r.on_delivered(snap, *sent, false);
//! }
//! let s = r.sample(100_000_000, 10_000, 0);
//! // 10 000 bytes over the ACK phase (100 ms, longer than the 9 ms send phase).
//! assert_eq!((s.delivered, s.interval_ns), (10_000, 100_000_000));
//! assert_eq!(s.rate_bytes_per_s(), Some(100_000));
//! ```

/// The connection's delivery state when a segment was sent (Linux's
/// `tcp_skb_cb.tx`), kept with the segment until it is delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxSnapshot {
    /// [`DeliveryRate::delivered`] at the send.
    pub delivered: u64,
    /// When `delivered` last grew, at the send; `None` once the segment was SACKed
    /// (a later cumulative ACK must not count it again).
    pub delivered_ns: Option<i64>,
    /// Send time of the segment most recently delivered at the send (the start of
    /// this segment's send phase).
    pub first_tx_ns: i64,
    /// Sent while the connection was application-limited.
    pub is_app_limited: bool,
}

/// One ACK's rate sample (Linux's `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over the interval; −1 when the sample is invalid (no segment
    /// with a snapshot was delivered).
    pub delivered: i64,
    /// The longer of the send and ACK phases, ns; −1 when invalid, or when shorter
    /// than the minimum RTT (an interval that short cannot be true).
    pub interval_ns: i64,
    /// [`DeliveryRate::delivered`] when the sample's first segment was sent.
    pub prior_delivered: u64,
    /// The sample's segments were sent while application-limited.
    pub is_app_limited: bool,
    /// The sample's first segment was a retransmission.
    pub is_retrans: bool,
    /// Bytes this ACK newly acknowledged or SACKed.
    pub acked_sacked: u32,
    /// Bytes this ACK newly marked lost.
    pub losses: u32,
    /// RTT of the most recently sent segment this ACK delivered that was never
    /// retransmitted (Linux's `ca_rtt_us`), ns.
    pub rtt_ns: Option<i64>,
}

impl RateSample {
    /// The sample's delivery rate, bytes per second, when it is valid.
    pub fn rate_bytes_per_s(&self) -> Option<u64> {
        if self.delivered < 0 || self.interval_ns <= 0 {
            return None;
        }
        Some((self.delivered as u128 * 1_000_000_000 / self.interval_ns as u128) as u64)
    }
}

/// A connection's delivery-rate state (Linux's `tcp_sock` fields `delivered`,
/// `delivered_mstamp`, `first_tx_mstamp`, `app_limited`), and the sample being
/// gathered for the current ACK.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeliveryRate {
    /// Bytes delivered (acknowledged or SACKed) since the connection began.
    delivered: u64,
    /// When `delivered` last grew.
    delivered_ns: i64,
    /// Send time of the segment most recently delivered (or of the first sent after
    /// the pipe was empty).
    first_tx_ns: i64,
    /// 0, or the `delivered` count past which the connection stops being
    /// application-limited (the data in flight when it became so, delivered).
    app_limited: u64,
    /// The connection's minimum RTT (Linux's `tcp_min_rtt`, here over the whole
    /// connection rather than Linux's 5-minute window), ns.
    min_rtt_ns: Option<i64>,
    // --- the sample of the ACK being processed ---
    /// The snapshot of the latest-sent segment delivered by this ACK.
    prior: Option<(u64, i64)>,
    send_interval_ns: i64,
    is_app_limited: bool,
    is_retrans: bool,
    newest_clean_send_ns: Option<i64>,
}

impl DeliveryRate {
    /// Bytes delivered since the connection began.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// When `delivered` last grew (Linux's `delivered_mstamp`), ns.
    pub fn delivered_ns(&self) -> i64 {
        self.delivered_ns
    }

    /// The minimum RTT seen, ns.
    pub fn min_rtt_ns(&self) -> Option<i64> {
        self.min_rtt_ns
    }

    /// An RTT measured outside a rate sample (the handshake's).
    pub fn on_rtt_sample(&mut self, rtt_ns: i64) {
        self.min_rtt_ns = Some(self.min_rtt_ns.map_or(rtt_ns, |m| m.min(rtt_ns)));
    }

    /// True while data sent during an application-limited period is in flight.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// `tcp_rate_skb_sent`: the snapshot to keep with a segment sent `now`;
    /// `pipe_empty`: nothing was outstanding (Linux's `packets_out == 0`), so the
    /// send and delivery clocks restart here.
    pub fn on_send(&mut self, now: i64, pipe_empty: bool) -> TxSnapshot {
        if pipe_empty {
            self.first_tx_ns = now;
            self.delivered_ns = now;
        }
        TxSnapshot {
            delivered: self.delivered,
            delivered_ns: Some(self.delivered_ns),
            first_tx_ns: self.first_tx_ns,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// Starts gathering the sample of an ACK.
    pub fn begin_ack(&mut self, _now: i64) {
        self.prior = None;
        self.send_interval_ns = 0;
        self.is_app_limited = false;
        self.is_retrans = false;
        self.newest_clean_send_ns = None;
    }

    /// `tcp_rate_skb_delivered`: a segment sent at `sent_ns` with `snap` is newly
    /// acknowledged or SACKed; `retrans`: it was sent more than once. The segment
    /// with the highest `delivered` at send (the one sent last) sets the sample's
    /// start and its send phase (from its `first_tx_ns` to its own send).
    pub fn on_delivered(&mut self, snap: &TxSnapshot, sent_ns: i64, retrans: bool) {
        if !retrans {
            self.newest_clean_send_ns = Some(
                self.newest_clean_send_ns
                    .map_or(sent_ns, |t| t.max(sent_ns)),
            );
        }
        let Some(delivered_ns) = snap.delivered_ns else {
            return;
        };
        if self.prior.is_none_or(|(d, _)| snap.delivered > d) {
            self.prior = Some((snap.delivered, delivered_ns));
            self.is_app_limited = snap.is_app_limited;
            self.is_retrans = retrans;
            self.first_tx_ns = sent_ns;
            self.send_interval_ns = sent_ns - snap.first_tx_ns;
        }
    }

    /// `tcp_rate_gen`: this ACK newly delivered `delivered` bytes and marked `lost`
    /// bytes lost. The sample covers the bytes delivered since its first segment was
    /// sent, over max(send phase, ACK phase); its RTT updates the minimum RTT first
    /// (as `tcp_ack_update_rtt` runs before `tcp_rate_gen`).
    pub fn sample(&mut self, now: i64, delivered: u32, lost: u32) -> RateSample {
        self.delivered += u64::from(delivered);
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_ns = now;
        }
        let rtt_ns = self.newest_clean_send_ns.map(|t| now - t);
        if let Some(r) = rtt_ns {
            self.on_rtt_sample(r);
        }
        let mut rs = RateSample {
            delivered: -1,
            interval_ns: -1,
            prior_delivered: 0,
            is_app_limited: self.is_app_limited,
            is_retrans: self.is_retrans,
            acked_sacked: delivered,
            losses: lost,
            rtt_ns,
        };
        let Some((prior_delivered, prior_ns)) = self.prior.take() else {
            return rs;
        };
        rs.prior_delivered = prior_delivered;
        rs.delivered = (self.delivered - prior_delivered) as i64;
        let ack_interval = now - prior_ns;
        let interval = self.send_interval_ns.max(ack_interval);
        rs.interval_ns = if interval < self.min_rtt_ns.unwrap_or(0) {
            -1
        } else {
            interval
        };
        rs
    }

    /// `tcp_rate_check_app_limited`, when the application offers data: if the sender
    /// has less than a segment unsent, room in cwnd and no lost segment waiting for
    /// its retransmission, the data in flight was sent application-limited; samples
    /// stay so until `in_flight` more bytes are delivered.
    pub fn check_app_limited(
        &mut self,
        unsent_below_smss: bool,
        cwnd_has_room: bool,
        lost_pending: bool,
        in_flight: u32,
    ) {
        if unsent_below_smss && cwnd_has_room && !lost_pending {
            self.mark_app_limited(in_flight);
        }
    }

    /// The data in flight now (`in_flight` bytes) is application-limited, whatever
    /// the sender's state (BBR's PROBE_RTT says so of its own samples).
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + u64::from(in_flight)).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// Sends `n` segments of `len` bytes every `gap` ns from `start`; returns their
    /// (snapshot, send time).
    fn send(
        r: &mut DeliveryRate,
        start: i64,
        gap: i64,
        n: i64,
        pipe_empty_first: bool,
    ) -> Vec<(TxSnapshot, i64)> {
        (0..n)
            .map(|i| {
                let t = start + i * gap;
                (r.on_send(t, pipe_empty_first && i == 0), t)
            })
            .collect()
    }

    /// A first flight: 10 segments of 1000 bytes, 1 ms apart from an empty pipe,
    /// each acked 50 ms after it was sent. Every sample starts at the empty pipe
    /// (nothing was delivered before any was sent), so the k-th ACK's sample counts
    /// k segments over the ACK phase from the first send.
    #[test]
    fn per_ack_samples_of_a_steady_flight() {
        let mut r = DeliveryRate::default();
        let sent = send(&mut r, 0, MS, 10, true);
        let mut samples = vec![];
        for (i, (snap, t)) in sent.iter().enumerate() {
            let now = t + 50 * MS;
            r.begin_ack(now);
            r.on_delivered(snap, *t, false);
            let s = r.sample(now, 1000, 0);
            samples.push(s);
            assert_eq!(
                s.prior_delivered, 0,
                "ack {i}: every segment was sent before any delivery"
            );
            assert_eq!(s.delivered, 1000 * (i as i64 + 1));
        }
        // First ACK: 1000 bytes over max(0 send, 50 ms ack) = 20 000 B/s.
        assert_eq!(samples[0].interval_ns, 50 * MS);
        assert_eq!(samples[0].rate_bytes_per_s(), Some(20_000));
        // Last ACK: 10 000 bytes; send phase 9 ms, ACK phase 59 ms.
        assert_eq!(samples[9].interval_ns, 59 * MS);
        assert_eq!(samples[9].rtt_ns, Some(50 * MS));
    }

    /// ACK compression: a segment sent at 0 is acked at 100 ms; ten more follow from
    /// 100 ms, 2 ms apart, and one stretched ACK covers them all at 125 ms. The ACK
    /// phase (25 ms since the delivery clock read 100 ms) is shorter than the send
    /// phase, so the send phase bounds the rate. The ten were all sent with the same
    /// `delivered` count, and the first of them (as in Linux, the oldest wins a tie)
    /// starts the sample: its send phase runs from the send of the segment delivered
    /// last before it (0) to its own (100 ms).
    #[test]
    fn a_compressed_ack_is_bounded_by_the_send_rate() {
        let mut r = DeliveryRate::default();
        // A first segment delivered, to start the delivery clock at 100 ms.
        let first = r.on_send(0, true);
        r.begin_ack(100 * MS);
        r.on_delivered(&first, 0, false);
        r.sample(100 * MS, 1000, 0);
        let sent = send(&mut r, 100 * MS, 2 * MS, 10, false);
        r.begin_ack(125 * MS);
        for (snap, t) in &sent {
            r.on_delivered(snap, *t, false);
        }
        let s = r.sample(125 * MS, 10_000, 0);
        assert_eq!(s.prior_delivered, 1000);
        assert_eq!(s.delivered, 10_000);
        assert_eq!(s.interval_ns, 100 * MS);
        assert_eq!(s.rate_bytes_per_s(), Some(100_000));
    }

    /// A SACKed segment is counted once: its snapshot is not offered again when the
    /// cumulative ACK covers it (the endpoint clears `delivered_ns`), and a sample
    /// with no snapshot at all is invalid.
    #[test]
    fn no_snapshot_no_sample() {
        let mut r = DeliveryRate::default();
        let mut snap = r.on_send(0, true);
        r.begin_ack(40 * MS);
        r.on_delivered(&snap, 0, false);
        assert!(r.sample(40 * MS, 1000, 0).delivered > 0);
        snap.delivered_ns = None; // SACKed earlier
        r.begin_ack(50 * MS);
        r.on_delivered(&snap, 0, false);
        let s = r.sample(50 * MS, 0, 0);
        assert_eq!(
            (s.delivered, s.interval_ns, s.rate_bytes_per_s()),
            (-1, -1, None)
        );
    }

    /// An interval shorter than the minimum RTT cannot be a true delivery interval
    /// (a spurious retransmission acked at once): the sample's interval is invalid.
    #[test]
    fn interval_below_min_rtt_is_invalid() {
        let mut r = DeliveryRate::default();
        let snap = r.on_send(0, true);
        r.begin_ack(10 * MS);
        r.on_delivered(&snap, 0, true);
        r.on_rtt_sample(40 * MS);
        let s = r.sample(10 * MS, 1000, 0);
        assert_eq!((s.delivered, s.interval_ns), (1000, -1));
        assert!(s.is_retrans);
        assert_eq!(s.rtt_ns, None, "Karn: no RTT from a retransmission");
    }

    /// The application runs dry with room in cwnd: what is in flight then (3000
    /// bytes) is marked; segments sent until those are delivered give app-limited
    /// samples, and the mark clears once delivered passes it.
    #[test]
    fn app_limited_until_the_bubble_is_delivered() {
        let mut r = DeliveryRate::default();
        let a = send(&mut r, 0, MS, 3, true);
        r.check_app_limited(true, true, false, 3000);
        assert!(r.is_app_limited());
        let b = r.on_send(5 * MS, false);
        assert!(b.is_app_limited && !a[0].0.is_app_limited);
        for (i, (snap, t)) in a.iter().enumerate() {
            r.begin_ack(t + 40 * MS);
            r.on_delivered(snap, *t, false);
            let s = r.sample(t + 40 * MS, 1000, 0);
            assert!(!s.is_app_limited, "segment {i} was sent before the mark");
        }
        // delivered = 3000 = the mark: not yet past it.
        assert!(r.is_app_limited());
        r.begin_ack(45 * MS);
        r.on_delivered(&b, 5 * MS, false);
        let s = r.sample(45 * MS, 1000, 0);
        assert!(s.is_app_limited);
        assert!(!r.is_app_limited(), "the bubble is delivered");
        // Not marked when cwnd is full, or a loss awaits its retransmission.
        r.check_app_limited(true, false, false, 1000);
        r.check_app_limited(true, true, true, 1000);
        r.check_app_limited(false, true, false, 1000);
        assert!(!r.is_app_limited());
    }
}
