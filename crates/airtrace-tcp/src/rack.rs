//! RACK-TLP (RFC 8985): time-based loss detection for SACK senders, used when
//! [`Config::rack_tlp`](crate::Config::rack_tlp) is set and SACK was negotiated.
//!
//! This module holds RACK's and TLP's variables and the rules that read them; the
//! endpoint keeps the retransmission queue (each entry with its last transmission
//! time, `Segment.xmit_ts`) and calls the hooks:
//!
//! - [`Rack::delivered`] for every segment an ACK newly acknowledges, cumulatively or
//!   selectively, then [`Rack::update`] (RFC 8985 §6.2 steps 2 and 3: RACK.rtt,
//!   RACK.xmit_ts, RACK.end_seq, RACK.fack, RACK.reordering_seen).
//! - [`Rack::reo_wnd`] (§6.2 step 4) and [`Rack::verdict`] (step 5) for each segment
//!   not yet acknowledged: lost now, lost in some time (the reordering timer, §6.3),
//!   or not judged (sent after the most recently delivered segment).
//! - [`Rack::pto`] (§7.2) when the Tail Loss Probe timer is armed; [`Rack::tlp_sent`]
//!   and [`Rack::tlp_on_ack`] (§7.3, §7.4) around a probe.
//!
//! With RACK the endpoint marks losses only by RACK's rule: the DupThresh rules of RFC
//! 6675 (IsLost, three duplicate ACKs) are not used, as in Linux with RACK on (RFC
//! 8985 §3.4 calls RACK-TLP an alternative to them). So a segment reordered by less
//! than the reordering window is not retransmitted, and a lost retransmission is
//! found once later segments are SACKed, without a timeout.
//!
//! What is not modelled: the D-SACK adaptation of the reordering window (§6.2 step 4,
//! RACK.reo_wnd_mult and reo_wnd_persist): the model's receivers never send D-SACK, so
//! the window is the fixed RACK.min_RTT/4 (capped by SRTT) once reordering was seen,
//! and 0 before it in a recovery or once DupThresh segments are SACKed, as the RFC
//! says. RACK.min_RTT is the smallest RTT sample of the connection (Linux keeps a
//! windowed minimum). The TSecr test of §6.2 step 2 is not applied to SACKed
//! retransmissions (only "rtt < RACK.min_RTT"), as in Linux: an RFC 7323 receiver
//! echoes the timestamp of the segment that last advanced its window, never that of an
//! out-of-order segment, so that test would discard every SACKed retransmission.

use crate::endpoint::seq;

/// WCDelAckT, the worst-case delayed-ACK time the PTO allows for when only one
/// segment is in flight (RFC 8985 §7.2: 200 ms).
pub const WC_DEL_ACK_NS: i64 = 200_000_000;
/// The PTO before any RTT sample (RFC 8985 §7.2: 1 s).
pub const PTO_NO_SRTT_NS: i64 = 1_000_000_000;

/// A segment an ACK newly delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Delivered {
    xmit_ts: i64,
    end_seq: u32,
    retransmitted: bool,
}

/// What RACK says of one segment not yet acknowledged (RFC 8985 §6.2 step 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Sent after the most recently delivered segment: nothing to say yet.
    NotJudged,
    /// Lost: sent before a delivered segment, more than RACK.rtt + reo_wnd ago.
    Lost,
    /// Lost in this many ns unless it is acknowledged first.
    LostIn(i64),
}

/// What an ACK says of an outstanding Tail Loss Probe (RFC 8985 §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpOutcome {
    /// No probe outstanding, or the ACK does not settle it.
    Pending,
    /// The probe (new data, or a retransmission the receiver already had) revealed
    /// no loss.
    NoLoss,
    /// The probe's retransmission repaired a loss: the congestion control must
    /// respond to it.
    RepairedLoss,
}

/// RACK's and TLP's state for one sender (RFC 8985 §5.2, §5.3).
#[derive(Clone, Debug)]
pub struct Rack {
    /// RACK.xmit_ts, RACK.end_seq: the most recently sent segment delivered (None
    /// before the first).
    latest: Option<(i64, u32)>,
    /// RACK.rtt: the RTT of that segment's last transmission, ns.
    rtt: i64,
    /// That segment was sent once only.
    latest_is_original: bool,
    /// RACK.min_RTT: smallest RTT sample, ns.
    min_rtt: Option<i64>,
    /// RACK.fack: highest end_seq delivered.
    fack: Option<u32>,
    /// RACK.reordering_seen.
    reordering_seen: bool,
    /// Segments the ACK being processed delivered (reused between ACKs).
    delivered: Vec<Delivered>,
    /// When the RACK reordering timer expires (§6.3).
    pub(crate) reo_deadline: Option<i64>,
    /// When the PTO timer expires (§7.2).
    pub(crate) pto_deadline: Option<i64>,
    /// TLP.end_seq, TLP.is_retrans: the outstanding probe (§7.3).
    tlp: Option<(u32, bool)>,
}

impl Default for Rack {
    fn default() -> Self {
        Self::new()
    }
}

impl Rack {
    /// Nothing delivered, no reordering seen, no timer armed.
    pub fn new() -> Self {
        Rack {
            latest: None,
            rtt: 0,
            latest_is_original: false,
            min_rtt: None,
            fack: None,
            reordering_seen: false,
            delivered: Vec::new(),
            reo_deadline: None,
            pto_deadline: None,
            tlp: None,
        }
    }

    /// An RTT sample of the connection (RFC 6298's): keeps RACK.min_RTT.
    pub fn on_rtt_sample(&mut self, rtt_ns: i64) {
        let r = rtt_ns.max(0);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// A segment (its last transmission at `xmit_ts`, ending at `end_seq`) that the ACK
    /// being processed acknowledged for the first time.
    pub fn delivered(&mut self, xmit_ts: i64, end_seq: u32, retransmitted: bool) {
        self.delivered.push(Delivered {
            xmit_ts,
            end_seq,
            retransmitted,
        });
    }

    /// RACK_sent_after (RFC 8985 §6.2): (t1, seq1) sent after (t2, seq2).
    fn sent_after(t1: i64, seq1: u32, t2: i64, seq2: u32) -> bool {
        t1 > t2 || (t1 == t2 && seq::gt(seq1, seq2))
    }

    /// RFC 8985 §6.2 steps 2 and 3 for the segments [`delivered`](Rack::delivered)
    /// since the last call, in the order they were sent: RACK.rtt, RACK.xmit_ts and
    /// RACK.end_seq from the most recently sent one (a retransmission whose RTT is
    /// below RACK.min_RTT was acknowledged for its original: skipped), and
    /// RACK.reordering_seen when an original transmission is delivered below
    /// RACK.fack.
    pub fn update(&mut self, now: i64) {
        if self.delivered.is_empty() {
            return;
        }
        let mut list = std::mem::take(&mut self.delivered);
        list.sort_unstable_by(|a, b| {
            a.xmit_ts
                .cmp(&b.xmit_ts)
                .then_with(|| (a.end_seq.wrapping_sub(b.end_seq) as i32).cmp(&0))
        });
        for d in &list {
            // Step 3: RACK_detect_reordering.
            match self.fack {
                Some(f) if !seq::gt(d.end_seq, f) => {
                    if seq::lt(d.end_seq, f) && !d.retransmitted {
                        self.reordering_seen = true;
                    }
                }
                _ => self.fack = Some(d.end_seq),
            }
            // Step 2: RACK_update.
            let rtt = now - d.xmit_ts;
            if d.retransmitted && self.min_rtt.is_some_and(|m| rtt < m) {
                continue;
            }
            let after = self
                .latest
                .is_none_or(|(t, e)| Self::sent_after(d.xmit_ts, d.end_seq, t, e));
            if after {
                self.rtt = rtt;
                self.latest = Some((d.xmit_ts, d.end_seq));
                self.latest_is_original = !d.retransmitted;
            }
        }
        list.clear();
        self.delivered = list;
    }

    /// True once an original transmission was delivered below RACK.fack.
    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }

    /// RACK.rtt, ns (0 before the first delivery).
    pub fn rtt(&self) -> i64 {
        self.rtt
    }

    /// RACK.reo_wnd (RFC 8985 §6.2 step 4, without the D-SACK multiplier): 0 when no
    /// reordering was seen and the sender is in a recovery (`in_recovery`: fast or RTO
    /// recovery) or `sacked_segments` ≥ `dupthresh`; otherwise min(RACK.min_RTT / 4,
    /// SRTT).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segments: u32,
        dupthresh: u32,
        srtt: i64,
    ) -> i64 {
        if !self.reordering_seen && (in_recovery || sacked_segments >= dupthresh) {
            return 0;
        }
        (self.min_rtt.unwrap_or(0) / 4).min(srtt)
    }

    /// Where a scan of the outstanding segments in sequence order may stop: when the
    /// most recently sent delivered segment was sent once only, every segment from
    /// its end on was sent after it (an original later, a retransmission later
    /// still), so [`verdict`](Rack::verdict) would not judge it. `None`: scan all.
    pub fn scan_end(&self) -> Option<u32> {
        match self.latest {
            Some((_, end)) if self.latest_is_original => Some(end),
            _ => None,
        }
    }

    /// RFC 8985 §6.2 step 5 for one segment not yet acknowledged, last sent at
    /// `xmit_ts`: lost if it was sent before RACK.xmit_ts (RACK.end_seq) and
    /// `xmit_ts` + RACK.rtt + `reo_wnd` ≤ `now`.
    pub fn verdict(&self, now: i64, reo_wnd: i64, xmit_ts: i64, end_seq: u32) -> Verdict {
        let Some((t, e)) = self.latest else {
            return Verdict::NotJudged;
        };
        if !Self::sent_after(t, e, xmit_ts, end_seq) {
            return Verdict::NotJudged;
        }
        let remaining = xmit_ts + self.rtt + reo_wnd - now;
        if remaining <= 0 {
            Verdict::Lost
        } else {
            Verdict::LostIn(remaining)
        }
    }

    /// The PTO (RFC 8985 §7.2): 2·SRTT (1 s before an RTT sample), plus WCDelAckT when
    /// one segment is in flight, never beyond the RTO's expiry.
    pub fn pto(
        &self,
        now: i64,
        srtt: Option<i64>,
        one_segment: bool,
        rto_deadline: Option<i64>,
    ) -> i64 {
        let mut pto = match srtt {
            Some(s) => {
                let mut p = 2 * s;
                if one_segment {
                    p += WC_DEL_ACK_NS;
                }
                p
            }
            None => PTO_NO_SRTT_NS,
        };
        if let Some(d) = rto_deadline {
            pto = pto.min(d - now);
        }
        pto.max(0)
    }

    /// True while a probe is outstanding (TLP.end_seq set): no other probe may go.
    pub fn tlp_outstanding(&self) -> bool {
        self.tlp.is_some()
    }

    /// A probe went (RFC 8985 §7.3): TLP.end_seq = SND.NXT after it, TLP.is_retrans.
    pub fn tlp_sent(&mut self, snd_nxt: u32, is_retrans: bool) {
        self.tlp = Some((snd_nxt, is_retrans));
        self.pto_deadline = None;
    }

    /// The episode of the outstanding probe is over without a verdict: a recovery or
    /// a timeout responded to the losses (as Linux clears `tlp_high_seq` there).
    pub fn tlp_end(&mut self) {
        self.tlp = None;
    }

    /// RFC 8985 §7.4.2 on an ACK: `ack` its cumulative ACK; `is_dupack`: a duplicate ACK
    /// without SACK information (the receiver got a copy of what it had: the probe's
    /// retransmission was redundant). The model's receivers send no D-SACK, so a
    /// retransmitted probe acknowledged beyond TLP.end_seq without such a duplicate
    /// ACK counts as a repaired loss.
    pub fn tlp_on_ack(&mut self, ack: u32, is_dupack: bool) -> TlpOutcome {
        let Some((end, is_retrans)) = self.tlp else {
            return TlpOutcome::Pending;
        };
        if seq::lt(ack, end) {
            return TlpOutcome::Pending;
        }
        if !is_retrans || (ack == end && is_dupack) {
            self.tlp = None;
            TlpOutcome::NoLoss
        } else if seq::gt(ack, end) {
            self.tlp = None;
            TlpOutcome::RepairedLoss
        } else {
            TlpOutcome::Pending
        }
    }

    /// The earliest of RACK's timers.
    pub fn deadline(&self) -> Option<i64> {
        match (self.reo_deadline, self.pto_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn the_most_recently_sent_delivery_sets_rack_rtt_and_judges_older_segments() {
        let mut r = Rack::new();
        r.on_rtt_sample(40 * MS);
        // One ACK delivers a segment sent at 10 ms and one sent at 5 ms.
        r.delivered(10 * MS, 3000, false);
        r.delivered(5 * MS, 2000, false);
        r.update(60 * MS);
        assert_eq!(r.rtt(), 50 * MS);
        assert!(!r.reordering_seen());
        // Sent at 8 ms: 8 + 50 = 58 ms is past; with a 10 ms window, 8 ms to go.
        assert_eq!(r.verdict(60 * MS, 0, 8 * MS, 2500), Verdict::Lost);
        assert_eq!(
            r.verdict(60 * MS, 10 * MS, 8 * MS, 2500),
            Verdict::LostIn(8 * MS)
        );
        // Sent after the segment of 10 ms: not judged.
        assert_eq!(r.verdict(60 * MS, 0, 11 * MS, 4000), Verdict::NotJudged);
    }

    #[test]
    fn a_scan_stops_at_the_latest_delivered_original_only() {
        let mut r = Rack::new();
        assert_eq!(r.scan_end(), None);
        r.delivered(5 * MS, 3000, false);
        r.update(45 * MS);
        assert_eq!(r.scan_end(), Some(3000));
        // A retransmission sent later is the latest now: older originals above it
        // were sent before it.
        r.on_rtt_sample(40 * MS);
        r.delivered(50 * MS, 1000, true);
        r.update(90 * MS);
        assert_eq!(r.scan_end(), None);
        assert_eq!(r.verdict(91 * MS, 0, 6 * MS, 4000), Verdict::Lost);
    }

    #[test]
    fn an_original_delivered_below_fack_is_reordering_a_retransmission_is_not() {
        let mut r = Rack::new();
        r.delivered(MS, 3000, false);
        r.update(41 * MS);
        r.delivered(2 * MS, 4000, true);
        r.delivered(0, 2000, true);
        r.update(42 * MS);
        assert!(!r.reordering_seen());
        r.delivered(0, 1000, false);
        r.update(43 * MS);
        assert!(r.reordering_seen());
    }

    #[test]
    fn reo_wnd_is_zero_in_recovery_until_reordering_is_seen() {
        let mut r = Rack::new();
        r.on_rtt_sample(40 * MS);
        assert_eq!(r.reo_wnd(false, 2, 3, 50 * MS), 10 * MS);
        assert_eq!(r.reo_wnd(false, 3, 3, 50 * MS), 0);
        assert_eq!(r.reo_wnd(true, 0, 3, 50 * MS), 0);
        r.delivered(2 * MS, 3000, false);
        r.delivered(MS, 2000, false);
        r.update(50 * MS);
        r.delivered(0, 1000, false);
        r.update(51 * MS);
        assert_eq!(r.reo_wnd(true, 5, 3, 50 * MS), 10 * MS);
        // Capped by SRTT.
        assert_eq!(r.reo_wnd(true, 5, 3, 8 * MS), 8 * MS);
    }

    #[test]
    fn a_retransmission_acked_faster_than_min_rtt_was_the_original() {
        let mut r = Rack::new();
        r.on_rtt_sample(40 * MS);
        r.delivered(100 * MS, 1000, true);
        r.update(110 * MS);
        assert_eq!(r.rtt(), 0);
        assert_eq!(r.verdict(110 * MS, 0, 0, 500), Verdict::NotJudged);
    }

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_for_one_segment_capped_by_the_rto() {
        let r = Rack::new();
        assert_eq!(r.pto(0, Some(40 * MS), false, Some(300 * MS)), 80 * MS);
        assert_eq!(r.pto(0, Some(40 * MS), true, Some(500 * MS)), 280 * MS);
        assert_eq!(r.pto(0, Some(40 * MS), true, Some(250 * MS)), 250 * MS);
        assert_eq!(r.pto(0, None, false, None), PTO_NO_SRTT_NS);
    }

    #[test]
    fn a_retransmitted_probe_repairs_a_loss_unless_a_duplicate_ack_follows() {
        let mut r = Rack::new();
        r.tlp_sent(5000, true);
        assert_eq!(r.tlp_on_ack(4000, false), TlpOutcome::Pending);
        assert_eq!(r.tlp_on_ack(5000, true), TlpOutcome::NoLoss);
        r.tlp_sent(5000, true);
        assert_eq!(r.tlp_on_ack(5000, false), TlpOutcome::Pending);
        assert_eq!(r.tlp_on_ack(6000, false), TlpOutcome::RepairedLoss);
        assert!(!r.tlp_outstanding());
        r.tlp_sent(7000, false);
        assert_eq!(r.tlp_on_ack(7000, false), TlpOutcome::NoLoss);
    }
}
