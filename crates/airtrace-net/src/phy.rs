//! One radio's receiver: the signals reaching it, the frame it is locked onto, and
//! whether that frame survives the others (capture), as [`PhyProfile`] says.
//!
//! The channel hands a receiver each signal twice: when its first bit arrives
//! ([`Receiver::signal_start`]) and when its last bit has (`signal_end`). Only signals
//! at or above the carrier-sense threshold are handed over (weaker ones are neither
//! sensed nor counted as interference, as in ns-2). The receiver is busy (clear
//! channel assessment says so) while any such signal is present or it transmits.
//!
//! A receiver locks onto one frame at a time ([`Sync`]). The frame is received if, for
//! its whole length, the receiver did not transmit and the frame stayed
//! `capture_ratio` times above the interference ([`Interference`]). When a frame that
//! outlasts the locked one collides with it, the lock moves to the later-ending frame,
//! which is lost too: the receiver stays in reception until the collision is over, as
//! ns-2's `Mac802_11::collision` keeps the longer frame.

use crate::frame::Frame;
use crate::radio::{Interference, PhyProfile, Sync};

/// A signal's number on the channel.
pub type SignalId = u64;

#[derive(Debug, Clone, Copy)]
struct Present {
    id: SignalId,
    power_w: f64,
}

#[derive(Debug, Clone, Copy)]
struct Lock {
    id: SignalId,
    power_w: f64,
    end_ns: i64,
    frame: Frame,
    /// Lost: too weak to decode, interfered with, or overlapped by our transmission.
    corrupted: bool,
}

/// What a signal's start or end means for the MAC above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RxEvent {
    /// Nothing the MAC must hear about (besides a change of [`Receiver::busy`]).
    None,
    /// A frame arrived intact.
    Frame {
        /// The frame.
        frame: Frame,
        /// Its received power, W.
        power_w: f64,
    },
    /// The frame being received was lost (collision, too weak, half duplex): the MAC
    /// uses EIFS next (IEEE 802.11-2020 §10.3.2.3.7).
    Error {
        /// The frame the receiver was locked onto.
        frame: Frame,
        /// Its received power, W.
        power_w: f64,
    },
    /// A weaker frame arrived during a reception and was ignored (it ends at the
    /// given time): ns-2 sets its NAV to EIFS past that end.
    Captured {
        /// The ignored frame's end, ns.
        end_ns: i64,
    },
}

/// One radio's receiver (see the [module documentation](self)).
#[derive(Debug, Default)]
pub struct Receiver {
    present: Vec<Present>,
    lock: Option<Lock>,
    transmitting: bool,
}

impl Receiver {
    /// True while a signal is present or the radio transmits (CCA busy).
    pub fn busy(&self) -> bool {
        self.transmitting || !self.present.is_empty()
    }

    /// The radio starts transmitting: a reception in progress is lost (half duplex).
    pub fn tx_start(&mut self) {
        self.transmitting = true;
        if let Some(lock) = self.lock.as_mut() {
            lock.corrupted = true;
        }
    }

    /// The radio's transmission is over.
    pub fn tx_end(&mut self) {
        self.transmitting = false;
    }

    /// Sum of the powers present other than `except`.
    fn others_w(&self, except: SignalId) -> f64 {
        self.present
            .iter()
            .filter(|s| s.id != except)
            .map(|s| s.power_w)
            .sum()
    }

    /// Whether a frame of `power_w` survives the other signals present.
    fn survives(&self, profile: &PhyProfile, id: SignalId, power_w: f64) -> bool {
        match profile.interference {
            Interference::Additive => power_w >= profile.capture_ratio * self.others_w(id),
            Interference::Pairwise => self
                .present
                .iter()
                .filter(|s| s.id != id)
                .all(|s| power_w >= profile.capture_ratio * s.power_w),
        }
    }

    /// The first bit of signal `id` (carrying `frame`, received at `power_w`, ending
    /// at `end_ns`) arrives.
    pub fn signal_start(
        &mut self,
        profile: &PhyProfile,
        id: SignalId,
        power_w: f64,
        end_ns: i64,
        frame: Frame,
    ) -> RxEvent {
        self.present.push(Present { id, power_w });
        let decodable = power_w >= profile.rx_threshold_w;
        match self.lock {
            None => {
                let syncs = match profile.sync {
                    Sync::FirstSensed => true,
                    Sync::Decodable => decodable && !self.transmitting,
                };
                if syncs {
                    let corrupted =
                        self.transmitting || !decodable || !self.survives(profile, id, power_w);
                    self.lock = Some(Lock {
                        id,
                        power_w,
                        end_ns,
                        frame,
                        corrupted,
                    });
                }
                RxEvent::None
            }
            Some(lock) => {
                if self.survives(profile, lock.id, lock.power_w) {
                    return RxEvent::Captured { end_ns };
                }
                // A collision: the frame being received is lost; the receiver stays
                // in reception until the later of the two ends.
                let mut lock = lock;
                lock.corrupted = true;
                if end_ns > lock.end_ns {
                    lock = Lock {
                        id,
                        power_w,
                        end_ns,
                        frame,
                        corrupted: true,
                    };
                }
                self.lock = Some(lock);
                RxEvent::None
            }
        }
    }

    /// The last bit of signal `id` has arrived.
    pub fn signal_end(&mut self, id: SignalId) -> RxEvent {
        self.present.retain(|s| s.id != id);
        match self.lock {
            Some(lock) if lock.id == id => {
                self.lock = None;
                let (frame, power_w) = (lock.frame, lock.power_w);
                if lock.corrupted {
                    RxEvent::Error { frame, power_w }
                } else {
                    RxEvent::Frame { frame, power_w }
                }
            }
            _ => RxEvent::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameKind;
    use crate::radio::PhyProfile;

    fn frame() -> Frame {
        Frame {
            kind: FrameKind::Data,
            src: 1,
            dst: 2,
            nav_ns: 0,
            seq: 0,
            retry: false,
            payload: None,
            bytes: 100,
            rate_bps: 2_000_000,
            airtime_ns: 1000,
        }
    }

    const NEAR: f64 = 8.92e-10; // 200 m on the WaveLAN profile
    const FAR: f64 = 5.57e-11; // 400 m: sensed, not decodable

    #[test]
    fn a_lone_decodable_frame_is_received() {
        let p = PhyProfile::wavelan();
        let mut r = Receiver::default();
        assert_eq!(r.signal_start(&p, 1, NEAR, 10, frame()), RxEvent::None);
        assert!(r.busy());
        assert_eq!(
            r.signal_end(1),
            RxEvent::Frame {
                frame: frame(),
                power_w: NEAR
            }
        );
        assert!(!r.busy());
    }

    /// 12 dB above one interferer: the first frame is captured, the second ignored.
    #[test]
    fn a_frame_twelve_db_above_a_later_interferer_survives() {
        let p = PhyProfile::wavelan();
        let mut r = Receiver::default();
        r.signal_start(&p, 1, NEAR, 10, frame());
        assert_eq!(
            r.signal_start(&p, 2, FAR, 20, frame()),
            RxEvent::Captured { end_ns: 20 }
        );
        assert_eq!(
            r.signal_end(1),
            RxEvent::Frame {
                frame: frame(),
                power_w: NEAR
            }
        );
        assert_eq!(r.signal_end(2), RxEvent::None);
    }

    /// ns-2: a receiver that locked onto an undecodable frame loses the stronger frame
    /// that follows it, and stays in reception until the later end.
    #[test]
    fn first_sensed_sync_loses_a_strong_frame_behind_a_weak_one() {
        let p = PhyProfile::wavelan();
        let mut r = Receiver::default();
        r.signal_start(&p, 1, FAR, 30, frame());
        r.signal_start(&p, 2, NEAR, 20, frame());
        assert_eq!(r.signal_end(2), RxEvent::None);
        assert_eq!(
            r.signal_end(1),
            RxEvent::Error {
                frame: frame(),
                power_w: FAR
            }
        );
        // Syncing only to decodable frames, the strong one is received.
        let p = PhyProfile {
            sync: Sync::Decodable,
            ..PhyProfile::wavelan()
        };
        let mut r = Receiver::default();
        r.signal_start(&p, 1, FAR, 30, frame());
        r.signal_start(&p, 2, NEAR, 20, frame());
        assert_eq!(
            r.signal_end(2),
            RxEvent::Frame {
                frame: frame(),
                power_w: NEAR
            }
        );
        assert_eq!(r.signal_end(1), RxEvent::None);
    }

    /// Two interferers at 400 m add up to 8 times less than a 200 m frame: under the
    /// 10 dB capture ratio when they add, over it when compared one by one.
    #[test]
    fn interference_adds_up_unless_pairwise() {
        for (interference, want) in [
            (
                Interference::Additive,
                RxEvent::Error {
                    frame: frame(),
                    power_w: NEAR,
                },
            ),
            (
                Interference::Pairwise,
                RxEvent::Frame {
                    frame: frame(),
                    power_w: NEAR,
                },
            ),
        ] {
            let p = PhyProfile {
                interference,
                ..PhyProfile::wavelan()
            };
            let mut r = Receiver::default();
            r.signal_start(&p, 1, NEAR, 10, frame());
            r.signal_start(&p, 2, FAR, 8, frame());
            r.signal_start(&p, 3, FAR, 9, frame());
            r.signal_end(2);
            r.signal_end(3);
            assert_eq!(r.signal_end(1), want, "{interference:?}");
        }
    }

    #[test]
    fn transmitting_loses_the_reception_in_progress() {
        let p = PhyProfile::wavelan();
        let mut r = Receiver::default();
        r.signal_start(&p, 1, NEAR, 10, frame());
        r.tx_start();
        r.tx_end();
        assert_eq!(
            r.signal_end(1),
            RxEvent::Error {
                frame: frame(),
                power_w: NEAR
            }
        );
    }
}
