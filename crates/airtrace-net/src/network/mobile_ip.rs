//! Mobile IP in a [`Network`] (RFC 5944; the protocol's pieces are
//! [`crate::mobile_ip`]'s): agents' advertisements on their cells, solicitations,
//! registrations relayed by foreign agents, the home agent's bindings and its IP-in-IP
//! tunnel (RFC 2003) to the foreign agent, which hands the packets to the mobile node
//! over its radio.
//!
//! The agents are access points of `[network.roaming]`: associating with one moves only
//! the station's own routes and the access point's route to it (each agent's cell is
//! a subnet of its own), so the rest of the network still sends the mobile node's
//! packets home, where the home agent intercepts them.

use crate::frame::{NodeId, BROADCAST};
use crate::ip::{DropReason, IpPacket, NO_PACKET};
use crate::mobile_ip::{Message, Mip, MipConfig, MipEvent, MobileNode, Registration, RETRY_NS};

use super::{Deferred, NetEvent, Network};

/// IP-in-IP's outer header, bytes (RFC 2003 §3.1).
const OUTER_HEADER: u32 = 20;
/// TTL of the packets an agent or mobile node sends (other than on-link broadcasts,
/// which have 1: RFC 5944 §2.3.1).
const TTL: u8 = 64;
/// The longest wait between two transmissions of a registration (§3.6.3), ns.
const MAX_RETRY_NS: i64 = 64 * RETRY_NS;

/// The Mobile IP state of a network.
#[derive(Debug)]
pub(super) struct MobileIp {
    cfg: MipConfig,
    /// Each node's agent role: `Some(true)` home agent, `Some(false)` foreign agent.
    agents: Vec<Option<bool>>,
    /// Each node's mobile node state, for mobile nodes.
    mobiles: Vec<Option<MobileNode>>,
    /// The home agents' bindings: each mobile node's care-of address.
    bindings: Vec<Option<NodeId>>,
    /// The foreign agents' visitors: (agent, mobile node).
    visitors: Vec<(NodeId, NodeId)>,
    /// Each agent's next advertisement sequence number (§2.1.1).
    seq: Vec<u16>,
}

impl MobileIp {
    /// True when `node` is a Mobile IP agent.
    pub(super) fn is_agent(&self, node: NodeId) -> bool {
        self.agents.get(node as usize).is_some_and(Option::is_some)
    }
}

impl Network {
    /// The network with Mobile IP: `home_agent` and `foreign_agents` (access points of
    /// its roaming) advertise, `mobiles` (roaming stations whose home agent is
    /// `home_agent`) register, as `cfg` says. Call it after [`Network::with_roaming`].
    pub fn with_mobile_ip(
        mut self,
        cfg: MipConfig,
        home_agent: NodeId,
        foreign_agents: &[NodeId],
        mobiles: &[NodeId],
    ) -> Self {
        let n = self.routers.len();
        let mut mip = MobileIp {
            cfg,
            agents: vec![None; n],
            mobiles: vec![None; n],
            bindings: vec![None; n],
            visitors: Vec::new(),
            seq: vec![0; n],
        };
        mip.agents[home_agent as usize] = Some(true);
        for &fa in foreign_agents {
            mip.agents[fa as usize] = Some(false);
        }
        for &m in mobiles {
            mip.mobiles[m as usize] = Some(MobileNode::new(m, home_agent, cfg.lifetime_s));
        }
        let agents: Vec<NodeId> = [home_agent]
            .into_iter()
            .chain(foreign_agents.iter().copied())
            .collect();
        for (k, &a) in agents.iter().enumerate() {
            let first = cfg.advertisement_interval_ns * k as i64 / agents.len() as i64;
            self.defer(first, a, Deferred::Advertise);
        }
        self.mobile_ip = Some(Box::new(mip));
        self
    }

    /// `node` sends Mobile IP message `m` to `to` ([`BROADCAST`]: on its cell).
    fn send_mip(
        &mut self,
        now: i64,
        node: NodeId,
        to: NodeId,
        m: Message,
        out: &mut Vec<NetEvent>,
    ) {
        let packet = IpPacket {
            src: node,
            dst: to,
            ttl: if to == BROADCAST { 1 } else { TTL },
            len: m.ip_len(),
            user: NO_PACKET,
            dsr: None,
            mip: Some(Mip::Message(m)),
            frag: None,
        };
        if to == BROADCAST {
            self.send_hop(now, node, BROADCAST, packet, out);
        } else {
            self.route(now, node, packet, out);
        }
    }

    /// Agent `agent` advertises on its cell (§2.3).
    fn advertise(&mut self, now: i64, agent: NodeId, out: &mut Vec<NetEvent>) {
        let Some(mip) = self.mobile_ip.as_mut() else {
            return;
        };
        let Some(home) = mip.agents[agent as usize] else {
            return;
        };
        let seq = mip.seq[agent as usize];
        mip.seq[agent as usize] = seq.wrapping_add(1);
        let m = Message::Advertisement {
            agent,
            home,
            seq,
            lifetime_s: mip.cfg.advertisement_lifetime_s(),
            registration_lifetime_s: mip.cfg.lifetime_s,
        };
        self.send_mip(now, agent, BROADCAST, m, out);
    }

    /// A Mobile IP timer of `node` is due at `now`.
    pub(super) fn mip_timer(
        &mut self,
        now: i64,
        node: NodeId,
        what: Deferred,
        out: &mut Vec<NetEvent>,
    ) {
        let Some(mip) = self.mobile_ip.as_mut() else {
            return;
        };
        match what {
            Deferred::Advertise => {
                let interval = mip.cfg.advertisement_interval_ns;
                self.advertise(now, node, out);
                self.defer(now + interval, node, Deferred::Advertise);
            }
            Deferred::RegistrationRetry { id } => {
                let Some(mn) = mip.mobiles[node as usize].as_mut() else {
                    return;
                };
                if mn.pending().is_some_and(|(r, _)| r.id == id) {
                    if let Some((r, attempt)) = mn.retry() {
                        self.send_request(now, r, attempt, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// The mobile node sends (or sends again) registration `r` through its agent, and
    /// waits for the reply (§3.6.3).
    fn send_request(&mut self, now: i64, r: Registration, attempt: u32, out: &mut Vec<NetEvent>) {
        out.push(NetEvent::MobileIp {
            at_ns: now,
            node: r.mobile,
            event: MipEvent::RequestSent {
                registration: r,
                attempt,
            },
        });
        let wait = (RETRY_NS << (attempt - 1).min(6)).min(MAX_RETRY_NS);
        self.defer(
            now + wait,
            r.mobile,
            Deferred::RegistrationRetry { id: r.id },
        );
        self.send_mip(now, r.mobile, r.via, Message::Request(r), out);
    }

    /// Station `node` was just associated: with `solicit`, a mobile node solicits an
    /// advertisement at once (§2.4.1, §2.4.2).
    pub(super) fn mip_associated(&mut self, now: i64, node: NodeId, out: &mut Vec<NetEvent>) {
        let solicits = self.mobile_ip.as_ref().is_some_and(|m| {
            m.cfg.solicit && m.mobiles.get(node as usize).is_some_and(Option::is_some)
        });
        if solicits {
            self.send_mip(now, node, BROADCAST, Message::Solicitation, out);
        }
    }

    /// `packet` came in at `node`: Mobile IP takes it if it is a message for `node`,
    /// a tunnel ending at `node`, or a packet the home agent `node` tunnels. True when
    /// taken.
    pub(super) fn mip_arrived(
        &mut self,
        now: i64,
        node: NodeId,
        packet: IpPacket,
        out: &mut Vec<NetEvent>,
    ) -> bool {
        let Some(mip) = self.mobile_ip.as_ref() else {
            return false;
        };
        match packet.mip {
            None => {
                let binding = (mip.agents[node as usize] == Some(true))
                    .then(|| mip.bindings.get(packet.dst as usize).copied().flatten())
                    .flatten();
                let Some(care_of) = binding else {
                    return false;
                };
                // RFC 2003 §3.1: the encapsulator, a router, decrements the inner TTL.
                if packet.ttl <= 1 {
                    self.dropped(now, node, packet, DropReason::TtlExpired, out);
                    return true;
                }
                // `src` and `dst` stay the inner header's; the tunnel's ends are the
                // outer one's.
                let tunnelled = IpPacket {
                    ttl: TTL,
                    len: packet.len + OUTER_HEADER,
                    mip: Some(Mip::Tunnel {
                        from: node,
                        to: care_of,
                        inner_ttl: packet.ttl - 1,
                    }),
                    ..packet
                };
                self.route(now, node, tunnelled, out);
                true
            }
            Some(Mip::Tunnel { to, inner_ttl, .. }) if to == node => {
                let inner = IpPacket {
                    ttl: inner_ttl,
                    len: packet.len - OUTER_HEADER,
                    mip: None,
                    ..packet
                };
                if mip.visitors.contains(&(node, inner.dst)) {
                    self.send_hop(now, node, inner.dst, inner, out);
                } else {
                    self.dropped(now, node, inner, DropReason::NoRoute, out);
                }
                true
            }
            Some(Mip::Tunnel { .. }) => false,
            Some(Mip::Message(m)) if packet.dst == node || packet.dst == BROADCAST => {
                self.on_message(now, node, packet.src, m, out);
                true
            }
            Some(Mip::Message(_)) => false,
        }
    }

    /// `node` received Mobile IP message `m` from `from`.
    fn on_message(
        &mut self,
        now: i64,
        node: NodeId,
        from: NodeId,
        m: Message,
        out: &mut Vec<NetEvent>,
    ) {
        let associated = self.associated_ap(node);
        let sender_ap = self.associated_ap(from);
        let Some(mip) = self.mobile_ip.as_mut() else {
            return;
        };
        match m {
            Message::Advertisement { agent, .. } => {
                let Some(mn) = mip.mobiles[node as usize].as_mut() else {
                    return;
                };
                if let Some(r) = mn.advertisement(agent, associated) {
                    self.send_request(now, r, 1, out);
                }
            }
            Message::Solicitation => {
                // Heard on the shared channel by every agent: the one whose cell the
                // station is in answers.
                if mip.is_agent(node) && sender_ap == Some(node) {
                    self.advertise(now, node, out);
                }
            }
            Message::Request(r) if node == r.home_agent => {
                // §3.8: the home agent accepts (no authentication is modelled) and
                // replies to where the request came from.
                mip.bindings[r.mobile as usize] = r.care_of;
                let reply = Message::Reply {
                    request: r,
                    accepted: true,
                };
                self.send_mip(now, node, from, reply, out);
            }
            Message::Request(r) if r.via == node => {
                // §3.7.2: the foreign agent relays it to the home agent.
                self.send_mip(now, node, r.home_agent, Message::Request(r), out);
            }
            Message::Reply { request, accepted } if node == request.mobile => {
                let Some(mn) = mip.mobiles[node as usize].as_mut() else {
                    return;
                };
                if mn.reply(request.id, accepted).is_some() {
                    out.push(NetEvent::MobileIp {
                        at_ns: now,
                        node,
                        event: MipEvent::ReplyReceived {
                            registration: request,
                            accepted,
                        },
                    });
                }
            }
            Message::Reply { request, accepted } if request.via == node => {
                // §3.7.3: the foreign agent adds the visitor and relays the reply.
                if accepted && !mip.visitors.contains(&(node, request.mobile)) {
                    mip.visitors.push((node, request.mobile));
                }
                self.send_mip(now, node, request.mobile, m, out);
            }
            Message::Request(_) | Message::Reply { .. } => {}
        }
    }
}
