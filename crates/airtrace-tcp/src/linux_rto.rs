//! Linux's RTO: the variance term of the retransmission timeout floored at the minimum
//! RTO, so that RTO ≥ SRTT + min_rto (`tcp_rtt_estimator` and `tcp_set_rto` in
//! net/ipv4/tcp_input.c), used when [`Config::rto_rule`](crate::Config::rto_rule) is
//! [`RtoRule::Linux`].
//!
//! RFC 6298 (2.4) clamps the whole RTO: max(SRTT + 4·RTTVAR, min_rto). On a path with
//! a steady RTT, RTTVAR decays to almost nothing and the RTO comes down to min_rto
//! (200 ms) whatever the RTT: at SRTT 100 ms a delay of 100 ms more is a timeout.
//! Linux keeps SRTT as RFC 6298 does (gain 1/8) but adds to it a variance term that
//! is never below min_rto:
//!
//! - *mdev* is four times the mean deviation, with RFC 6298's gain 1/4, except that a
//!   sample *below* SRTT moves it with gain 1/32 (only the part of the error above
//!   mdev/4 counts, divided by 8);
//! - *mdev_max* is the largest mdev of the current window of data (from the snd_nxt
//!   recorded when it began until snd_una passes it), and starts each window at
//!   min_rto;
//! - *rttvar*, the term the RTO uses, follows mdev_max up at once and comes down by a
//!   quarter of the difference at the end of each window, never below that window's
//!   mdev_max, so never below min_rto.
//!
//! RTO = SRTT + rttvar: at a steady 100 ms, 300 ms where RFC 6298 gives 200 ms. The
//! first sample R gives SRTT = R, mdev = 2R and rttvar = max(2R, min_rto) (Linux's
//! "RTO = 3·RTT").
//!
//! Not modelled: Linux's microsecond samples from the send times of segments (the
//! endpoint's samples are its own: timestamp echoes in whole ms, or the timed
//! segment) and the rounding of the RTO up to whole jiffies.

use serde::{Deserialize, Serialize};

use crate::endpoint::seq;

/// How the retransmission timeout follows the RTT samples ([`Config::rto_rule`]).
///
/// [`Config::rto_rule`]: crate::Config::rto_rule
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoRule {
    /// RFC 6298: RTO = max(SRTT + max(G, 4·RTTVAR), min_rto). Both presets.
    #[default]
    Rfc6298,
    /// Linux: RTO = SRTT + rttvar, rttvar ≥ min_rto (this module).
    Linux,
}

/// Linux's variance state (`mdev_us`, `mdev_max_us`, `rttvar_us`, `rtt_seq`), ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxRttVar {
    /// Four times the smoothed mean deviation.
    mdev: i64,
    /// The largest `mdev` of the current window (at least min_rto).
    mdev_max: i64,
    /// The RTO's variance term.
    rttvar: i64,
    /// snd_nxt when the current window began.
    rtt_seq: u32,
}

impl LinuxRttVar {
    /// The first sample `r`: mdev = 2r, rttvar = max(2r, `min_rto`), a window
    /// beginning at `snd_nxt`.
    pub fn first(r: i64, min_rto: i64, snd_nxt: u32) -> Self {
        let mdev = 2 * r;
        let rttvar = mdev.max(min_rto);
        LinuxRttVar {
            mdev,
            mdev_max: rttvar,
            rttvar,
            rtt_seq: snd_nxt,
        }
    }

    /// A later sample `r`, `srtt` the smoothed RTT before it; `snd_una` after the ACK
    /// that gave it.
    pub fn update(&mut self, srtt: i64, r: i64, min_rto: i64, snd_una: u32, snd_nxt: u32) {
        let err = r - srtt;
        let delta = if err < 0 {
            // A sample below SRTT: the finer gain (1/32) on the part above mdev/4.
            let e = -err - self.mdev / 4;
            if e > 0 {
                e / 8
            } else {
                e
            }
        } else {
            err - self.mdev / 4
        };
        self.mdev += delta;
        if self.mdev > self.mdev_max {
            self.mdev_max = self.mdev;
            self.rttvar = self.rttvar.max(self.mdev_max);
        }
        if seq::gt(snd_una, self.rtt_seq) {
            // The window ended: rttvar decays towards its largest mdev.
            if self.mdev_max < self.rttvar {
                self.rttvar -= (self.rttvar - self.mdev_max) / 4;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max = min_rto;
        }
    }

    /// The RTO's variance term (Linux's `rttvar_us`), never below min_rto.
    pub fn rttvar(&self) -> i64 {
        self.rttvar
    }

    /// The smoothed mean deviation (Linux's `mdev_us / 4`, what `tcp_info` reports as
    /// the RTT variance).
    pub fn mean_deviation(&self) -> i64 {
        self.mdev / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn the_first_sample_gives_three_rtts_or_srtt_plus_the_minimum() {
        let v = LinuxRttVar::first(100 * MS, 200 * MS, 0);
        assert_eq!((v.rttvar(), v.mean_deviation()), (200 * MS, 50 * MS));
        let v = LinuxRttVar::first(300 * MS, 200 * MS, 0);
        assert_eq!(v.rttvar(), 600 * MS);
    }

    #[test]
    fn a_steady_rtt_keeps_the_floor_and_a_rise_lifts_rttvar_at_once() {
        let mut v = LinuxRttVar::first(300 * MS, 200 * MS, 0);
        // Steady 300 ms, one window per sample: mdev shrinks by a quarter each time,
        // rttvar by a quarter of its distance to the window's mdev_max (min_rto).
        for una in 1..40 {
            v.update(300 * MS, 300 * MS, 200 * MS, una, una);
        }
        assert!((200 * MS..201 * MS).contains(&v.rttvar()), "{}", v.rttvar());
        assert!(v.mean_deviation() < MS);
        // A sample 400 ms above SRTT: mdev = 3/4·mdev + 400 ms > rttvar.
        v.update(300 * MS, 700 * MS, 200 * MS, 40, 40);
        assert!(v.rttvar() > 400 * MS);
        // A sample below SRTT moves mdev by (|err| − mdev/4)/8 only.
        let mut w = LinuxRttVar::first(100 * MS, 200 * MS, 0);
        w.update(100 * MS, 20 * MS, 200 * MS, 0, 0);
        // |err| = 80, mdev/4 = 50: + 30/8 ms.
        assert_eq!(w.mean_deviation(), (200 * MS + 30 * MS / 8) / 4);
    }
}
