//! Roaming between access points, as one station decides it: beacons heard, passive
//! scanning, and when to hand off (sans-IO; the network sends the beacons and carries
//! the decisions out, `network/roaming.rs`).
//!
//! Every access point sends a beacon each `beacon_interval` (IEEE 802.11-2020
//! §11.1.3.2). A station listens to every beacon it decodes (passive scanning,
//! §11.1.4.2) and keeps, per access point, the signal of its beacons smoothed
//! ([`SMOOTHING`]) and when it last heard one. It hands off:
//!
//! - when another access point's smoothed signal is `hysteresis_db` or more above its
//!   own's ([`HandoffReason::Signal`]);
//! - when it has heard no beacon of its own access point for `beacon_loss` intervals
//!   ([`HandoffReason::BeaconLoss`]), to the strongest access point heard in that
//!   time, or to none: then it listens until it hears one.
//!
//! A handoff takes `handoff_gap`: the time of the exchange that moves a station from
//! one access point to another (probe, authentication, reassociation, §11.3.5.4, and
//! the switch of channel). The frames of that exchange are not modelled: for the gap
//! the station neither sends nor hears, then it is associated with the new access
//! point ([`Station::joined`]).
//!
//! ```
//! use airtrace_net::roam::{RoamConfig, RoamEvent, Station, HandoffReason};
//! let mut mn = Station::new(RoamConfig::default());
//! mn.associate(0, 1);
//! assert_eq!(mn.beacon(100, 1, -60.0), None);
//! assert_eq!(mn.beacon(200, 3, -70.0), None, "weaker: stays");
//! // Heard 20 dB stronger than its own: it leaves for access point 2.
//! let e = mn.beacon(300, 2, -40.0);
//! assert!(matches!(e, Some(RoamEvent::Handoff { from: Some(1), to: Some(2), reason: HandoffReason::Signal })));
//! assert_eq!(mn.joined(350), Some(2));
//! ```

use crate::frame::NodeId;

/// Weight of a new beacon's signal in the smoothed signal (an EWMA, as drivers keep
/// one per access point).
pub const SMOOTHING: f64 = 0.25;

/// Roaming settings, shared by every station and access point of a network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoamConfig {
    /// Time between two beacons of an access point, ns.
    pub beacon_interval_ns: i64,
    /// How long a handoff keeps the station off the air, ns.
    pub handoff_gap_ns: i64,
    /// How much stronger another access point must be heard to hand off to it, dB.
    pub hysteresis_db: f64,
    /// Beacons of its own access point missed before a station leaves it.
    pub beacon_loss: u32,
}

impl Default for RoamConfig {
    /// 100 TU (102.4 ms) beacons, a 50 ms handoff, 6 dB of hysteresis, 3 beacons
    /// missed.
    fn default() -> Self {
        RoamConfig {
            beacon_interval_ns: 102_400_000,
            handoff_gap_ns: 50_000_000,
            hysteresis_db: 6.0,
            beacon_loss: 3,
        }
    }
}

impl RoamConfig {
    /// How long without a beacon of its own access point a station stays, ns.
    pub fn beacon_loss_ns(&self) -> i64 {
        self.beacon_interval_ns * i64::from(self.beacon_loss)
    }
}

/// Why a station handed off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffReason {
    /// Another access point was heard `hysteresis_db` stronger.
    Signal,
    /// The station's own access point fell silent.
    BeaconLoss,
}

impl HandoffReason {
    /// The name used in logs.
    pub fn name(self) -> &'static str {
        match self {
            HandoffReason::Signal => "signal",
            HandoffReason::BeaconLoss => "beacon_loss",
        }
    }
}

/// What a station's roaming did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoamEvent {
    /// The station left `from` (`None`: it had no access point) for `to` (`None`: none
    /// heard; it listens for one), which it joins after the handoff gap.
    Handoff {
        /// The access point it left.
        from: Option<NodeId>,
        /// The access point it goes to.
        to: Option<NodeId>,
        /// Why.
        reason: HandoffReason,
    },
    /// The station is associated with `ap`.
    Associated {
        /// The access point.
        ap: NodeId,
    },
}

/// One access point as a station heard it.
#[derive(Debug, Clone, Copy)]
struct Heard {
    ap: NodeId,
    /// Smoothed beacon signal, dBm.
    signal_dbm: f64,
    /// When its last beacon was heard (or the station associated with it), ns.
    at_ns: i64,
}

/// One station's roaming state (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct Station {
    cfg: RoamConfig,
    ap: Option<NodeId>,
    joining: Option<NodeId>,
    heard: Vec<Heard>,
}

impl Station {
    /// A station associated with no access point yet.
    pub fn new(cfg: RoamConfig) -> Self {
        Station {
            cfg,
            ap: None,
            joining: None,
            heard: Vec::new(),
        }
    }

    /// The access point it is associated with (`None` during a handoff).
    pub fn ap(&self) -> Option<NodeId> {
        self.ap
    }

    /// The access point a handoff under way goes to.
    pub fn joining(&self) -> Option<NodeId> {
        self.joining
    }

    /// Associates with `ap` at once (at the start of a run).
    pub fn associate(&mut self, now: i64, ap: NodeId) {
        self.joining = Some(ap);
        self.joined(now);
    }

    fn heard_mut(&mut self, ap: NodeId) -> Option<&mut Heard> {
        self.heard.iter_mut().find(|h| h.ap == ap)
    }

    /// The smoothed signal of `ap`'s beacons, once one was heard.
    fn signal_dbm(&self, ap: NodeId) -> Option<f64> {
        let h = self.heard.iter().find(|h| h.ap == ap)?;
        h.signal_dbm.is_finite().then_some(h.signal_dbm)
    }

    /// A beacon of `ap` was decoded at `signal_dbm`: returns the handoff it starts, if
    /// any.
    pub fn beacon(&mut self, now: i64, ap: NodeId, signal_dbm: f64) -> Option<RoamEvent> {
        match self.heard_mut(ap) {
            Some(h) => {
                h.signal_dbm = if h.signal_dbm.is_finite() {
                    h.signal_dbm + SMOOTHING * (signal_dbm - h.signal_dbm)
                } else {
                    signal_dbm
                };
                h.at_ns = now;
            }
            None => self.heard.push(Heard {
                ap,
                signal_dbm,
                at_ns: now,
            }),
        }
        if self.joining.is_some() {
            return None;
        }
        let Some(own) = self.ap else {
            return Some(self.hand_off(Some(ap), HandoffReason::BeaconLoss));
        };
        let (Some(theirs), Some(ours)) = (self.signal_dbm(ap), self.signal_dbm(own)) else {
            return None;
        };
        (ap != own && theirs >= ours + self.cfg.hysteresis_db)
            .then(|| self.hand_off(Some(ap), HandoffReason::Signal))
    }

    /// When the station will have missed `beacon_loss` beacons of its access point (if
    /// it has one and hears none before), ns.
    pub fn beacon_check_at(&self) -> Option<i64> {
        let own = self.ap?;
        let last = self.heard.iter().find(|h| h.ap == own)?.at_ns;
        Some(last + self.cfg.beacon_loss_ns())
    }

    /// At `now`, the station checks that it still hears its access point: if it has
    /// missed `beacon_loss` beacons, it leaves for the strongest access point heard
    /// since, or for none.
    pub fn check_beacons(&mut self, now: i64) -> Option<RoamEvent> {
        if self.beacon_check_at()? > now {
            return None;
        }
        let own = self.ap;
        let since = now - self.cfg.beacon_loss_ns();
        let best = self
            .heard
            .iter()
            .filter(|h| Some(h.ap) != own && h.at_ns > since)
            .max_by(|a, b| a.signal_dbm.total_cmp(&b.signal_dbm))
            .map(|h| h.ap);
        Some(self.hand_off(best, HandoffReason::BeaconLoss))
    }

    fn hand_off(&mut self, to: Option<NodeId>, reason: HandoffReason) -> RoamEvent {
        let from = self.ap.take();
        self.joining = to;
        RoamEvent::Handoff { from, to, reason }
    }

    /// The handoff gap is over at `now`: the station is associated with the access
    /// point it was joining, which it returns.
    pub fn joined(&mut self, now: i64) -> Option<NodeId> {
        let ap = self.joining.take()?;
        self.ap = Some(ap);
        match self.heard_mut(ap) {
            Some(h) => h.at_ns = now,
            None => self.heard.push(Heard {
                ap,
                // Not heard yet (associated at the start): the first beacon sets it.
                signal_dbm: f64::NEG_INFINITY,
                at_ns: now,
            }),
        }
        Some(ap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn station() -> Station {
        Station::new(RoamConfig {
            beacon_interval_ns: 100 * MS,
            handoff_gap_ns: 50 * MS,
            hysteresis_db: 6.0,
            beacon_loss: 3,
        })
    }

    // --- association ---

    #[test]
    fn associated_at_the_start_and_its_first_beacon_sets_the_signal() {
        let mut mn = station();
        mn.associate(0, 1);
        assert_eq!(mn.ap(), Some(1));
        assert_eq!(mn.beacon(100 * MS, 1, -50.0), None);
        assert_eq!(mn.signal_dbm(1), Some(-50.0));
        assert_eq!(mn.beacon_check_at(), Some(400 * MS));
    }

    #[test]
    fn no_handoff_before_its_own_access_point_was_heard() {
        let mut mn = station();
        mn.associate(0, 1);
        assert_eq!(mn.beacon(10 * MS, 2, -90.0), None);
        mn.beacon(20 * MS, 1, -95.0);
        assert!(mn.beacon(30 * MS, 2, -90.0).is_none());
        assert!(mn.beacon(40 * MS, 2, -70.0).is_some());
    }

    #[test]
    fn a_station_with_no_access_point_joins_the_first_it_hears() {
        let mut mn = station();
        let e = mn.beacon(10 * MS, 2, -80.0);
        assert_eq!(
            e,
            Some(RoamEvent::Handoff {
                from: None,
                to: Some(2),
                reason: HandoffReason::BeaconLoss
            })
        );
        assert_eq!((mn.ap(), mn.joining()), (None, Some(2)));
        assert_eq!(mn.joined(60 * MS), Some(2));
        assert_eq!(mn.ap(), Some(2));
    }

    // --- handoff on signal, with hysteresis ---

    #[test]
    fn hysteresis_just_holds_and_just_gives_way() {
        for (theirs, hands_off) in [(-54.01, false), (-54.0, true)] {
            let mut mn = station();
            mn.associate(0, 1);
            mn.beacon(100 * MS, 1, -60.0);
            let e = mn.beacon(150 * MS, 2, theirs);
            assert_eq!(e.is_some(), hands_off, "{theirs} dBm against -60 dBm");
        }
    }

    #[test]
    fn the_smoothed_signal_takes_several_beacons_to_cross_the_hysteresis() {
        let mut mn = station();
        mn.associate(0, 1);
        mn.beacon(0, 1, -60.0);
        mn.beacon(10 * MS, 2, -70.0);
        // Access point 2 now at -50 dBm: its average climbs from -70 to -65, -61.25,
        // -58.4, -56.3, -54.7, -53.6: the sixth beacon crosses -60 + 6 dB.
        let mut at = 0;
        for k in 1..=10 {
            if mn.beacon(k * 100 * MS, 2, -50.0).is_some() {
                at = k;
                break;
            }
            mn.beacon(k * 100 * MS + MS, 1, -60.0);
        }
        assert_eq!(at, 6);
        assert_eq!(mn.joining(), Some(2));
        assert_eq!(mn.beacon(800 * MS, 1, -20.0), None, "deaf while joining");
    }

    // --- handoff on beacon loss ---

    #[test]
    fn three_beacons_missed_leave_for_the_strongest_heard_lately() {
        let mut mn = station();
        mn.associate(0, 1);
        mn.beacon(0, 1, -60.0);
        mn.beacon(50 * MS, 3, -75.0);
        mn.beacon(60 * MS, 2, -70.0);
        assert_eq!(mn.check_beacons(299 * MS), None, "just not yet");
        let e = mn.check_beacons(300 * MS);
        assert_eq!(
            e,
            Some(RoamEvent::Handoff {
                from: Some(1),
                to: Some(2),
                reason: HandoffReason::BeaconLoss
            })
        );
    }

    #[test]
    fn beacon_loss_with_nothing_else_heard_leaves_the_station_listening() {
        let mut mn = station();
        mn.associate(0, 1);
        let e = mn.check_beacons(300 * MS);
        assert_eq!(
            e,
            Some(RoamEvent::Handoff {
                from: Some(1),
                to: None,
                reason: HandoffReason::BeaconLoss
            })
        );
        assert_eq!(
            (mn.ap(), mn.joining(), mn.beacon_check_at()),
            (None, None, None)
        );
        assert!(
            mn.beacon(400 * MS, 1, -80.0).is_some(),
            "back to the first heard"
        );
    }
}
