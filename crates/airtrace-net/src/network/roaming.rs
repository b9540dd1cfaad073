//! Roaming in a [`Network`]: access points' beacons on the air, each roaming station's
//! decisions ([`crate::roam`]) carried out, and the distribution system told where a
//! station is (one IP subnet: a layer-2 handoff).
//!
//! - Every access point sends a beacon each interval, a broadcast at the basic rate
//!   served before its queued packets; the access points' first beacons are spread
//!   evenly over the first interval.
//! - A station hears a beacon with the power its radio received it at
//!   ([`Wireless::rx_power_w`](crate::Wireless::rx_power_w)). A handoff turns its radio
//!   deaf for the handoff gap, and the packets in its interface queue, and those its
//!   transport sends meanwhile (up to the queue's size), wait for the association.
//! - At an association the distribution system learns the station's place, as a
//!   learning bridge does from its first frame (the 802.11 reassociation, §11.3.5.4):
//!   every node wired to the access points sends the station's packets towards the new
//!   access point, and the station sends everything to it. The packets for the station
//!   still queued at its other access points are dropped there (`not_associated`), as
//!   an access point told of a reassociation elsewhere (IEEE 802.11F's move notice)
//!   does: the access points share one channel in this model, and the station would
//!   otherwise go on taking frames from the one it left.
//!
//! An access point drops (`not_associated`) what it would send over its radio to a
//! station associated with another access point, or in a handoff.
//!
//! At the start each station is associated with the access point it hears strongest on
//! a quiet channel (mean SNR, no shadowing), with no gap.

use crate::frame::{BEACON_MSDU_BYTES, ETHERTYPE_IPV4};
use crate::roam::{RoamConfig, RoamEvent, Station};
use crate::routing::Routes;

use super::{key_of, Deferred, NetEvent, Network};
use crate::dcf::Sdu;
use crate::frame::{NodeId, Payload, BROADCAST, ETHERTYPE_BEACON};
use crate::ip::{DropReason, IpPacket};

/// 1 TU, the unit of the beacon interval field (IEEE 802.11-2020 §3.1), ns.
const TU_NS: i64 = 1_024_000;

/// The roaming state of a network.
#[derive(Debug)]
pub(super) struct Roaming {
    cfg: RoamConfig,
    /// Which nodes are access points, by id.
    aps: Vec<bool>,
    /// Each node's roaming state, for roaming stations.
    stations: Vec<Option<Station>>,
    /// Packets each station holds until it is associated.
    held: Vec<Vec<IpPacket>>,
    /// Shortest paths over the wires alone: how the distribution system reaches an
    /// access point.
    ds: Routes,
    /// How many packets a station holds (its interface queue's size).
    hold_limit: usize,
}

impl Roaming {
    /// A roaming station not associated now, whose packets wait.
    fn holds(&self, node: NodeId) -> bool {
        self.stations
            .get(node as usize)
            .and_then(Option::as_ref)
            .is_some_and(|s| s.ap().is_none())
    }
}

impl Network {
    /// The network with roaming: `aps` send beacons and `stations` hand off between
    /// them as `cfg` says (see [`crate::roam`] and this module's documentation). Call
    /// it after placing every node (mobility included) and before the first poll.
    pub fn with_roaming(mut self, cfg: RoamConfig, aps: &[NodeId], stations: &[NodeId]) -> Self {
        let n = self.routers.len();
        self.wireless.keep_rx_power();
        let wired = &self.wired;
        let mut roaming = Roaming {
            cfg,
            aps: vec![false; n],
            stations: vec![None; n],
            held: vec![Vec::new(); n],
            ds: Routes::shortest_paths(n, |a, b| wired.connects(a, b)),
            hold_limit: self.wireless.mac(0).config().queue_packets,
        };
        for (k, &ap) in aps.iter().enumerate() {
            roaming.aps[ap as usize] = true;
            let first = cfg.beacon_interval_ns * k as i64 / aps.len() as i64;
            self.defer(first, ap, Deferred::Beacon);
        }
        for &st in stations {
            let best = aps.iter().copied().max_by(|&a, &b| {
                let snr = |ap| self.wireless.mean_snr_db(ap, st);
                snr(a).total_cmp(&snr(b)).then(b.cmp(&a))
            });
            let mut station = Station::new(cfg);
            if let Some(ap) = best {
                station.associate(0, ap);
                self.ds_learns(&roaming.ds, st, ap);
            }
            roaming.stations[st as usize] = Some(station);
            self.defer(0, st, Deferred::Associated);
        }
        self.roaming = Some(Box::new(roaming));
        self
    }

    /// The access point `station` is associated with, if it roams and is.
    pub fn associated_ap(&self, station: NodeId) -> Option<NodeId> {
        let r = self.roaming.as_ref()?;
        r.stations.get(station as usize)?.as_ref()?.ap()
    }

    /// Where packets go once `station` is associated with `ap` (see the module
    /// documentation). A Mobile IP agent's cell is a subnet of its own: there only the
    /// station's routes and the access point's route to it move.
    fn ds_learns(&mut self, ds: &Routes, station: NodeId, ap: NodeId) {
        let subnet_of_its_own = self.mobile_ip.as_ref().is_some_and(|m| m.is_agent(ap));
        for node in 0..self.routers.len() as NodeId {
            if node == station {
                continue;
            }
            if node == ap {
                self.routes.set(ap, station, station);
            } else if let (Some(via), false) = (ds.next_hop(node, ap), subnet_of_its_own) {
                self.routes.set(node, station, via);
            }
            self.routes.set(station, node, ap);
        }
    }

    /// Roaming takes `node`'s packet: it waits for the association if `node` is a
    /// station in a handoff (dropped when the hold queue is full), and an access point
    /// drops it (`not_associated`) rather than send it over its radio to a station
    /// associated elsewhere or nowhere. True when taken.
    pub(super) fn roaming_takes(
        &mut self,
        now: i64,
        node: NodeId,
        packet: IpPacket,
        out: &mut Vec<NetEvent>,
    ) -> bool {
        let Some(r) = self.roaming.as_mut() else {
            return false;
        };
        let dst = packet.hop_dst();
        let elsewhere = r.aps.get(node as usize) == Some(&true)
            && r.stations
                .get(dst as usize)
                .and_then(Option::as_ref)
                .is_some_and(|s| s.ap() != Some(node))
            && self.routes.next_hop(node, dst) == Some(dst);
        if elsewhere {
            self.dropped(now, node, packet, DropReason::NotAssociated, out);
            return true;
        }
        if !r.holds(node) {
            return false;
        }
        let held = &mut r.held[node as usize];
        if held.len() >= r.hold_limit {
            self.dropped(now, node, packet, DropReason::QueueFull, out);
        } else {
            held.push(packet);
            self.hold_in_routing(&packet);
        }
        true
    }

    /// A roaming timer of `node` is due at `now`.
    pub(super) fn roam_timer(
        &mut self,
        now: i64,
        node: NodeId,
        what: Deferred,
        out: &mut Vec<NetEvent>,
    ) {
        let Some(r) = self.roaming.as_mut() else {
            return;
        };
        match what {
            Deferred::Beacon => {
                let interval = r.cfg.beacon_interval_ns;
                let sdu = Sdu {
                    payload: Payload {
                        token: (interval / TU_NS) as u64,
                        len: BEACON_MSDU_BYTES,
                        ethertype: ETHERTYPE_BEACON,
                    },
                    next_hop: BROADCAST,
                    priority: true,
                };
                self.wireless.send(now, node, sdu);
                self.defer(now + interval, node, Deferred::Beacon);
            }
            Deferred::Associated => {
                let Some(st) = r.stations[node as usize].as_mut() else {
                    return;
                };
                // At the start the station is associated already; after a gap it
                // joins now.
                let ap = match st.joining() {
                    Some(_) => st.joined(now),
                    None => st.ap(),
                };
                let Some(ap) = ap else { return };
                let ds = std::mem::replace(&mut r.ds, Routes::new(0));
                let held = std::mem::take(&mut r.held[node as usize]);
                let others: Vec<NodeId> = (0..r.aps.len() as NodeId)
                    .filter(|&a| r.aps[a as usize] && a != ap)
                    .collect();
                out.push(NetEvent::Roam {
                    at_ns: now,
                    node,
                    event: RoamEvent::Associated { ap },
                });
                self.ds_learns(&ds, node, ap);
                for other in others {
                    self.flush_for(now, other, node, out);
                }
                self.wireless.set_listening(now, node, true);
                self.schedule_beacon_check(node);
                self.mip_associated(now, node, out);
                if let Some(r) = self.roaming.as_mut() {
                    r.ds = ds;
                }
                for packet in held {
                    self.route(now, node, packet, out);
                    self.let_go_from_routing(&packet);
                }
            }
            Deferred::BeaconCheck => {
                let Some(st) = r.stations[node as usize].as_mut() else {
                    return;
                };
                if st.beacon_check_at().is_some_and(|at| at <= now) {
                    if let Some(e) = st.check_beacons(now) {
                        self.hand_off(now, node, e, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// Access point `ap` drops the packets for `station` waiting in its interface
    /// queue: the station is associated elsewhere.
    fn flush_for(&mut self, now: i64, ap: NodeId, station: NodeId, out: &mut Vec<NetEvent>) {
        let stale = self.wireless.take_queued(ap, |q| {
            q.next_hop == station && q.payload.ethertype == ETHERTYPE_IPV4
        });
        for sdu in stale {
            self.hop_dropped(now, ap, sdu, DropReason::NotAssociated, out);
        }
    }

    /// Checks, when it is due, that `station` still hears its access point.
    fn schedule_beacon_check(&mut self, station: NodeId) {
        let at = self
            .roaming
            .as_ref()
            .and_then(|r| r.stations[station as usize].as_ref())
            .and_then(Station::beacon_check_at);
        if let Some(at) = at {
            self.defer(at, station, Deferred::BeaconCheck);
        }
    }

    /// `node` decoded a beacon of `ap`.
    pub(super) fn heard_beacon(
        &mut self,
        now: i64,
        node: NodeId,
        ap: NodeId,
        out: &mut Vec<NetEvent>,
    ) {
        let Some(power_w) = self.wireless.rx_power_w(node, ap) else {
            return;
        };
        let Some(r) = self.roaming.as_mut() else {
            return;
        };
        if !r.aps[ap as usize] {
            return;
        }
        let Some(st) = r.stations[node as usize].as_mut() else {
            return;
        };
        let own = st.ap() == Some(ap);
        match st.beacon(now, ap, crate::radio::w_to_dbm(power_w)) {
            Some(e) => self.hand_off(now, node, e, out),
            None if own => self.schedule_beacon_check(node),
            None => {}
        }
    }

    /// `station` starts handoff `e`: deaf until it joins, its queued packets held.
    fn hand_off(&mut self, now: i64, station: NodeId, e: RoamEvent, out: &mut Vec<NetEvent>) {
        out.push(NetEvent::Roam {
            at_ns: now,
            node: station,
            event: e,
        });
        let RoamEvent::Handoff { to, .. } = e else {
            return;
        };
        let queued = self
            .wireless
            .take_queued(station, |q| q.payload.ethertype == ETHERTYPE_IPV4);
        for sdu in queued {
            // The hop ends; the packet waits in the station, counted there.
            if let Some(packet) = self.hops.remove(key_of(sdu.payload.token)) {
                if let Some(r) = self.roaming.as_mut() {
                    r.held[station as usize].push(packet);
                }
            }
        }
        if to.is_some() {
            let gap = self.roaming.as_ref().map_or(0, |r| r.cfg.handoff_gap_ns);
            self.wireless.set_listening(now, station, false);
            self.defer(now + gap, station, Deferred::Associated);
        }
    }
}
