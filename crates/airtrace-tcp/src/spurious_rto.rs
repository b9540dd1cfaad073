//! Spurious retransmission timeouts: detection by F-RTO (RFC 5682) or by the Eifel
//! algorithm (RFC 3522, with timestamps), and the Eifel response (RFC 4015), used
//! when [`Config::spurious_rto`](crate::Config::spurious_rto) is not `off`.
//!
//! A timeout is spurious when the segments it took for lost were only delayed (a
//! delay spike, a link that stalls and then delivers its backlog). A sender without
//! detection sets cwnd to one segment and resends the whole window (go-back-N),
//! though the receiver has it or will. With detection it finds out from the first
//! ACKs after the timeout, undoes the window reduction and goes on with new data.
//!
//! - **F-RTO** (RFC 5682 §2, SACK-enhanced as §3 when SACK is in use): on the first
//!   timeout the sender retransmits only the first unacknowledged segment (step 1). If
//!   the next ACK that advances the window stays below RecoveryPoint (snd_max at the
//!   timeout), it sends two new segments instead of retransmitting (step 2b); if the
//!   ACK after that acknowledges more data below RecoveryPoint (cumulatively or by
//!   SACK), data sent before the timeout arrived after it: spurious (step 3b). An
//!   ACK reaching RecoveryPoint (2a, 3a), a duplicate ACK with nothing new (3a), no new
//!   data to send (2b) or a second timeout end the algorithm: the conventional
//!   recovery (go-back-N, cwnd at most 2 or 3 segments) follows.
//! - **Eifel** (RFC 3522 §2): the sender keeps the timestamp of its first
//!   retransmission; the first ACK that advances the window after it echoes an older
//!   timestamp only if it was sent for the original: spurious. Recovery starts as
//!   usual (go-back-N) and stops where the detection says so. Needs timestamps (the
//!   connection's, RFC 7323); without them it does nothing.
//! - **Response** (RFC 4015 §4, for both): retransmissions not yet sent are
//!   cancelled (SND.NXT ← SND.MAX: new data goes on), cwnd = FlightSize +
//!   min(bytes_acked, IW), ssthresh = pipe_prev (max(FlightSize, ssthresh) before the
//!   timeout), the backoff is cleared and, with an RTT sample from the ACK, SRTT =
//!   max(SRTT_prev, sample) and RTTVAR = max(RTTVAR_prev, sample/2) (step (8), the
//!   "RTO adaptation").
//! - **Linux's response** ([`UndoRule::Linux`], `tcp_undo_cwnd_reduction`) instead:
//!   cwnd and ssthresh back to what they were before the episode (prior_cwnd,
//!   prior_ssthresh), no RTO adaptation; and a timeout during a fast recovery neither
//!   reduces the window again nor starts F-RTO (`tcp_enter_loss`).
//!
//! Not modelled: the response's variant for a late detection (LATE_SPUR_TO, RFC 4015
//! §4 step (7): only an F-RTO or Eifel detection on the first ACKs is made here), the
//! Eifel detection by D-SACK (RFC 3708: the model's receivers send no D-SACK), and
//! the congestion control's own state (CUBIC's epoch, restarted by the timeout, is
//! not restored; Linux's `undo_cwnd` restores only cwnd too).

use serde::{Deserialize, Serialize};

use crate::endpoint::seq;

/// Which detection of spurious timeouts the sender uses ([`Config::spurious_rto`]).
///
/// [`Config::spurious_rto`]: crate::Config::spurious_rto
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpuriousRtoDetection {
    /// None: every timeout is taken for a loss (go-back-N), as before this existed.
    #[default]
    Off,
    /// F-RTO, RFC 5682 (SACK-enhanced on SACK connections).
    Frto,
    /// The Eifel detection algorithm with timestamps, RFC 3522.
    Eifel,
}

/// What a timeout does to ssthresh when it comes during a fast recovery, when F-RTO
/// may start, and how a timeout found spurious is undone ([`Config::undo`]).
///
/// [`Config::undo`]: crate::Config::undo
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UndoRule {
    /// The RFCs (both presets): every first timeout sets ssthresh (RFC 5681 eq. (4)),
    /// a fast recovery's too, and may start F-RTO; a spurious one is undone by RFC
    /// 4015's response (ssthresh = pipe_prev = max(FlightSize, ssthresh) at the
    /// timeout, cwnd = FlightSize + min(bytes_acked, IW), the RTO adapted).
    #[default]
    Rfc4015,
    /// Linux (`tcp_enter_loss`, `tcp_try_undo_loss`, `tcp_undo_cwnd_reduction` in
    /// net/ipv4/tcp_input.c): each window reduction (a fast recovery, a timeout)
    /// remembers prior_ssthresh = max(ssthresh, ¾·cwnd) (ssthresh alone during a
    /// recovery) and prior_cwnd = cwnd; a timeout during a fast recovery keeps the
    /// recovery's ssthresh (it was reduced in this window already) and starts no
    /// F-RTO; a spurious timeout is undone with cwnd = max(cwnd, prior_cwnd) and
    /// ssthresh = max(ssthresh, prior_ssthresh): back to what it was before the
    /// episode, no RTO adaptation. An ECN-Echo reduction leaves nothing to undo.
    Linux,
}

/// What the sender saved at the first timeout (RFC 4015 §4 steps (1)–(3)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved {
    /// pipe_prev = max(FlightSize, ssthresh).
    pub pipe_prev: u32,
    /// SRTT_prev = SRTT + 2·G.
    pub srtt_prev: i64,
    /// RTTVAR_prev.
    pub rttvar_prev: i64,
}

/// Where an F-RTO or Eifel episode stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// F-RTO step 2: waiting for the first ACK that advances the window.
    FrtoFirstAck,
    /// F-RTO step 3: two new segments sent, waiting for the next ACK.
    FrtoSecondAck,
    /// Eifel: waiting for the first ACK that advances the window; the first
    /// retransmission carried this TSval.
    Eifel { retransmit_ts: u32 },
}

/// What the sender must do after an ACK during an episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing yet.
    Wait,
    /// F-RTO step 2b: send up to two new segments (not retransmissions).
    SendTwoNew,
    /// The timeout was genuine (or cannot be told): conventional RTO recovery, cwnd
    /// at most this many segments (F-RTO's 2 or 3; `None`: as it is).
    Conventional(Option<u32>),
    /// Spurious: apply the response with what was saved.
    Spurious(Saved),
}

/// What one ACK says, as the detection needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// The cumulative ACK advanced snd_una.
    pub advanced: bool,
    /// The cumulative ACK number.
    pub ack: u32,
    /// The ACK SACKed data not SACKed before.
    pub new_sack: bool,
    /// The highest sequence number it SACKs (end of its highest block), if any.
    pub highest_sack: Option<u32>,
    /// Its timestamp echo (TSecr), on a timestamp connection.
    pub tsecr: Option<u32>,
}

/// The detection state of one sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpuriousRto {
    mode: SpuriousRtoDetection,
    /// The episode under way: its step, RecoveryPoint and what was saved.
    episode: Option<(Step, u32, Saved)>,
}

impl SpuriousRto {
    /// A sender with detection `mode`.
    pub fn new(mode: SpuriousRtoDetection) -> Self {
        SpuriousRto {
            mode,
            episode: None,
        }
    }

    /// True while an episode is under way (the endpoint then shows it each ACK).
    pub fn active(&self) -> bool {
        self.episode.is_some()
    }

    /// True while F-RTO holds back the go-back-N of a timeout (steps 1–3): only the
    /// first unacknowledged segment is retransmitted.
    pub fn holds_go_back_n(&self) -> bool {
        matches!(
            self.episode,
            Some((Step::FrtoFirstAck | Step::FrtoSecondAck, _, _))
        )
    }

    /// A retransmission timeout. `first`: not a repeat for the same data (an episode
    /// starts only on the first; a repeat ends any episode, RFC 5682 step 2 "if the
    /// RTO expires again, go to step 1", which then reverts to the conventional
    /// recovery as §2 says for a timeout during one). `recovery_point`: snd_max.
    /// `retransmit_ts`: the TSval the retransmission will carry, on a timestamp
    /// connection. Returns true when an episode started.
    pub fn on_timeout(
        &mut self,
        first: bool,
        recovery_point: u32,
        saved: Saved,
        retransmit_ts: Option<u32>,
    ) -> bool {
        self.episode = None;
        if !first {
            return false;
        }
        let step = match (self.mode, retransmit_ts) {
            (SpuriousRtoDetection::Off, _) | (SpuriousRtoDetection::Eifel, None) => return false,
            (SpuriousRtoDetection::Frto, _) => Step::FrtoFirstAck,
            (SpuriousRtoDetection::Eifel, Some(ts)) => Step::Eifel { retransmit_ts: ts },
        };
        self.episode = Some((step, recovery_point, saved));
        true
    }

    /// The episode ended some other way (a recovery, or everything acknowledged).
    pub fn cancel(&mut self) {
        self.episode = None;
    }

    /// RFC 5682 steps 2 and 3, RFC 3522 §2: what this ACK says. `can_send_new`: the
    /// sender has new data and the receive window lets some go (step 2b).
    pub fn on_ack(&mut self, a: &AckInfo, can_send_new: bool) -> Decision {
        let Some((step, recover, saved)) = self.episode else {
            return Decision::Wait;
        };
        let beyond = seq::ge(a.ack, recover) || a.highest_sack.is_some_and(|h| seq::gt(h, recover));
        let decision = match step {
            Step::Eifel { retransmit_ts } => {
                if !a.advanced {
                    return Decision::Wait;
                }
                // RFC 3522 §2: an echo older than the retransmission's timestamp.
                match a.tsecr {
                    Some(e) if seq::lt(e, retransmit_ts) => Decision::Spurious(saved),
                    _ => Decision::Conventional(None),
                }
            }
            Step::FrtoFirstAck => {
                if !a.advanced {
                    // Duplicate ACKs before the new ACK: stay in step 2.
                    return Decision::Wait;
                }
                if beyond {
                    Decision::Conventional(Some(2))
                } else if can_send_new {
                    self.episode = Some((Step::FrtoSecondAck, recover, saved));
                    return Decision::SendTwoNew;
                } else {
                    Decision::Conventional(None)
                }
            }
            Step::FrtoSecondAck => {
                if beyond || !(a.advanced || a.new_sack) {
                    Decision::Conventional(Some(3))
                } else {
                    Decision::Spurious(saved)
                }
            }
        };
        self.episode = None;
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAVED: Saved = Saved {
        pipe_prev: 20_000,
        srtt_prev: 40,
        rttvar_prev: 10,
    };

    fn ack(advanced: bool, ack: u32, new_sack: bool) -> AckInfo {
        AckInfo {
            advanced,
            ack,
            new_sack,
            highest_sack: None,
            tsecr: None,
        }
    }

    #[test]
    fn frto_two_acks_below_recovery_point_make_it_spurious() {
        let mut d = SpuriousRto::new(SpuriousRtoDetection::Frto);
        assert!(d.on_timeout(true, 10_000, SAVED, None));
        assert!(d.holds_go_back_n());
        assert_eq!(d.on_ack(&ack(false, 1000, false), true), Decision::Wait);
        assert_eq!(
            d.on_ack(&ack(true, 3000, false), true),
            Decision::SendTwoNew
        );
        assert_eq!(
            d.on_ack(&ack(true, 5000, false), true),
            Decision::Spurious(SAVED)
        );
        assert!(!d.holds_go_back_n());
    }

    #[test]
    fn frto_falls_back_on_a_duplicate_ack_the_recovery_point_or_nothing_to_send() {
        let mut d = SpuriousRto::new(SpuriousRtoDetection::Frto);
        d.on_timeout(true, 10_000, SAVED, None);
        assert_eq!(
            d.on_ack(&ack(true, 10_000, false), true),
            Decision::Conventional(Some(2))
        );
        d.on_timeout(true, 10_000, SAVED, None);
        d.on_ack(&ack(true, 3000, false), true);
        assert_eq!(
            d.on_ack(&ack(false, 3000, false), true),
            Decision::Conventional(Some(3))
        );
        // A duplicate ACK that SACKs new data below RecoveryPoint is spurious (§3 3b).
        d.on_timeout(true, 10_000, SAVED, None);
        d.on_ack(&ack(true, 3000, false), true);
        assert_eq!(
            d.on_ack(&ack(false, 3000, true), true),
            Decision::Spurious(SAVED)
        );
        d.on_timeout(true, 10_000, SAVED, None);
        assert_eq!(
            d.on_ack(&ack(true, 3000, false), false),
            Decision::Conventional(None)
        );
        // A repeat timeout starts nothing.
        assert!(!d.on_timeout(false, 10_000, SAVED, None));
        assert_eq!(d.on_ack(&ack(true, 5000, false), true), Decision::Wait);
    }

    #[test]
    fn eifel_compares_the_echo_with_the_retransmissions_timestamp() {
        let mut d = SpuriousRto::new(SpuriousRtoDetection::Eifel);
        assert!(!d.on_timeout(true, 10_000, SAVED, None));
        assert!(d.on_timeout(true, 10_000, SAVED, Some(500)));
        assert!(!d.holds_go_back_n());
        let mut a = ack(true, 3000, false);
        a.tsecr = Some(499);
        assert_eq!(d.on_ack(&a, true), Decision::Spurious(SAVED));
        d.on_timeout(true, 10_000, SAVED, Some(500));
        a.tsecr = Some(500);
        assert_eq!(d.on_ack(&a, true), Decision::Conventional(None));
    }
}
