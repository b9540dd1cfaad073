//! Mobile IP for IPv4 (RFC 5944), as the network of nodes runs it: its messages, its
//! settings, and a mobile node's movement detection and registration (sans-IO; the
//! network sends and relays the messages and tunnels the packets,
//! `network/mobile_ip.rs`).
//!
//! The agents are access points that route (each one's cell is its own subnet): a home
//! agent on the mobile node's home network, foreign agents elsewhere. Each agent
//! broadcasts an Agent Advertisement (§2.1: an ICMP Router Advertisement with a
//! Mobility Agent Advertisement Extension) every `advertisement_interval` on its cell.
//! A mobile node hears those of the access point it is associated with (the others'
//! cells are other channels) and detects that it moved when it hears a new agent
//! (§2.4.2.2: the advertisement is from an agent other than the one it is registered
//! with); with `solicit` it also sends an Agent Solicitation (§2.4.1, RFC 1256) as soon
//! as it is associated with an access point, and the agent answers at once. It then
//! registers (§3.3, §3.6): a Registration Request (UDP 434) through the foreign agent,
//! which relays it to the home agent (§3.7.2), whose Registration Reply (§3.4) comes
//! back the same way; back home, it deregisters with its home agent directly (lifetime
//! 0, §3.6.1.2). A request unanswered is sent again after 1 s, then 2 s, 4 s ...
//! (§3.6.3). The home agent tunnels the packets for a registered mobile node to its
//! care-of address, the foreign agent, in IP-in-IP (RFC 2003, §4.2.3); the foreign
//! agent decapsulates them and sends them to the mobile node over its radio. The
//! mobile node sends directly (triangular routing).
//!
//! Not modelled: registrations renewed before their lifetime ends (give a lifetime
//! longer than the run), authentication (the Mobile-Home Authentication Extension is
//! written with its authenticator zero), co-located care-of addresses, reverse
//! tunnelling, the lifetime-based movement detection of §2.4.2.1.
//!
//! ```
//! use airtrace_net::mobile_ip::{MobileNode, Registration};
//! // Home agent 1; the mobile node associates with access point 2, a foreign agent.
//! let mut mn = MobileNode::new(4, 1, 1800);
//! assert_eq!(mn.advertisement(1, Some(1)), None, "at home, registered there");
//! let r = mn.advertisement(2, Some(2)).unwrap();
//! assert_eq!((r.via, r.care_of), (2, Some(2)));
//! assert_eq!(mn.reply(r.id, true), Some(Some(2)));
//! assert_eq!(mn.advertisement(2, Some(2)), None, "registered");
//! ```

use crate::frame::NodeId;

/// IPv4 header length, bytes.
const IP_HEADER: u32 = 20;
/// UDP header length, bytes.
const UDP_HEADER: u32 = 8;
/// The Mobile-Home Authentication Extension (§3.5.2): type, length, SPI, a 128-bit
/// authenticator.
pub const AUTH_EXTENSION_BYTES: u32 = 2 + 4 + 16;
/// A Registration Request's fixed part (§3.3).
pub const REQUEST_BYTES: u32 = 24;
/// A Registration Reply's fixed part (§3.4).
pub const REPLY_BYTES: u32 = 20;
/// The UDP port of registrations (§3.1).
pub const REGISTRATION_PORT: u16 = 434;
/// The first wait for a registration reply, ns (§3.6.3: at least the round trip; it
/// doubles at each retransmission).
pub const RETRY_NS: i64 = 1_000_000_000;

/// Mobile IP settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MipConfig {
    /// Time between an agent's advertisements, ns.
    pub advertisement_interval_ns: i64,
    /// A mobile node solicits an advertisement when it associates with an access point.
    pub solicit: bool,
    /// Registration lifetime asked for, s.
    pub lifetime_s: u16,
}

impl Default for MipConfig {
    /// 1 s advertisements (Bachmann's testbed), no solicitation, 1800 s registrations.
    fn default() -> Self {
        MipConfig {
            advertisement_interval_ns: 1_000_000_000,
            solicit: false,
            lifetime_s: 1800,
        }
    }
}

impl MipConfig {
    /// The advertisement's lifetime (RFC 1256: three intervals), s.
    pub fn advertisement_lifetime_s(&self) -> u16 {
        (self.advertisement_interval_ns * 3 / 1_000_000_000).clamp(1, 9000) as u16
    }
}

/// A Mobile IP message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    /// An Agent Advertisement (§2.1) from agent `agent`, `home` for a home agent,
    /// else a foreign agent offering its own address as care-of address.
    Advertisement {
        /// The agent.
        agent: NodeId,
        /// It is a home agent (else foreign).
        home: bool,
        /// Its sequence number (§2.1.1).
        seq: u16,
        /// How long the advertisement holds (RFC 1256's Lifetime), s.
        lifetime_s: u16,
        /// The longest registration the agent accepts (§2.1.1), s.
        registration_lifetime_s: u16,
    },
    /// An Agent Solicitation (§2.4.1).
    Solicitation,
    /// A Registration Request (§3.3) of mobile node `mobile`.
    Request(Registration),
    /// A Registration Reply (§3.4) to mobile node `mobile`.
    Reply {
        /// The request answered.
        request: Registration,
        /// Accepted (code 0) or not.
        accepted: bool,
    },
}

impl Message {
    /// The IP packet's total length, bytes.
    pub fn ip_len(&self) -> u32 {
        IP_HEADER
            + match self {
                // ICMP header with one router address and its preference, then the
                // extension: type, length, sequence, lifetime, flags, care-of address.
                Message::Advertisement { home, .. } => 16 + 8 + if *home { 0 } else { 4 },
                Message::Solicitation => 8,
                Message::Request(_) => UDP_HEADER + REQUEST_BYTES + AUTH_EXTENSION_BYTES,
                Message::Reply { .. } => UDP_HEADER + REPLY_BYTES + AUTH_EXTENSION_BYTES,
            }
    }
}

/// What Mobile IP adds to an IP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mip {
    /// The packet is a Mobile IP message.
    Message(Message),
    /// The packet is tunnelled (IP in IP, RFC 2003) from `from` to `to`; the packet's
    /// `ttl` and `len` are the outer header's.
    Tunnel {
        /// The encapsulator (the home agent).
        from: NodeId,
        /// The decapsulator (the foreign agent).
        to: NodeId,
        /// The inner header's TTL.
        inner_ttl: u8,
    },
}

/// One registration of a mobile node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    /// The mobile node (its home address).
    pub mobile: NodeId,
    /// Its home agent.
    pub home_agent: NodeId,
    /// The agent it goes through: the foreign agent, or the home agent.
    pub via: NodeId,
    /// The care-of address registered: a foreign agent (`None`: home, a
    /// deregistration).
    pub care_of: Option<NodeId>,
    /// The Identification field (§3.3), which matches the reply to the request (a
    /// count per mobile node, not the RFC's timestamp).
    pub id: u64,
    /// The lifetime asked for, s (0: deregistration).
    pub lifetime_s: u16,
}

/// What a mobile node's Mobile IP did, for the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MipEvent {
    /// It sent a Registration Request (`attempt` from 1).
    RequestSent {
        /// The request.
        registration: Registration,
        /// Which transmission.
        attempt: u32,
    },
    /// A Registration Reply reached it.
    ReplyReceived {
        /// The request answered.
        registration: Registration,
        /// Accepted.
        accepted: bool,
    },
}

/// One mobile node's movement detection and registration state (see the [module
/// documentation](self)).
#[derive(Debug, Clone)]
pub struct MobileNode {
    mobile: NodeId,
    home_agent: NodeId,
    lifetime_s: u16,
    /// The care-of address registered (`None`: at home).
    care_of: Option<NodeId>,
    /// The registration waiting for its reply, and its transmissions so far.
    pending: Option<(Registration, u32)>,
    next_id: u64,
}

impl MobileNode {
    /// Mobile node `mobile`, at home, with home agent `home_agent`, asking for
    /// registrations of `lifetime_s`.
    pub fn new(mobile: NodeId, home_agent: NodeId, lifetime_s: u16) -> Self {
        MobileNode {
            mobile,
            home_agent,
            lifetime_s,
            care_of: None,
            pending: None,
            next_id: 1,
        }
    }

    /// The care-of address it is registered with (`None`: at home).
    pub fn care_of(&self) -> Option<NodeId> {
        self.care_of
    }

    /// The registration waiting for a reply, and how many times it was sent.
    pub fn pending(&self) -> Option<(Registration, u32)> {
        self.pending
    }

    /// An advertisement of `agent` reached it while associated with access point
    /// `associated`: a new agent of its own cell starts a registration (§2.4.2.2).
    pub fn advertisement(
        &mut self,
        agent: NodeId,
        associated: Option<NodeId>,
    ) -> Option<Registration> {
        if associated != Some(agent) {
            return None;
        }
        if self.pending.is_some_and(|(r, _)| r.via == agent) {
            return None;
        }
        let care_of = (agent != self.home_agent).then_some(agent);
        if self.pending.is_none() && care_of == self.care_of {
            return None;
        }
        let registration = Registration {
            mobile: self.mobile,
            home_agent: self.home_agent,
            via: agent,
            care_of,
            id: self.next_id,
            lifetime_s: if care_of.is_some() {
                self.lifetime_s
            } else {
                0
            },
        };
        self.next_id += 1;
        self.pending = Some((registration, 1));
        Some(registration)
    }

    /// The registration waiting is sent again: returns it and its attempt number.
    pub fn retry(&mut self) -> Option<(Registration, u32)> {
        let (r, n) = self.pending.as_mut()?;
        *n += 1;
        Some((*r, *n))
    }

    /// The reply to request `id` came, `accepted` or not: returns the care-of address
    /// now registered when it was accepted, `None` for a reply to no request waiting.
    pub fn reply(&mut self, id: u64, accepted: bool) -> Option<Option<NodeId>> {
        let (r, _) = self.pending.filter(|(r, _)| r.id == id)?;
        self.pending = None;
        if accepted {
            self.care_of = r.care_of;
        }
        Some(self.care_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- movement detection by advertisement ---

    #[test]
    fn at_home_no_registration_and_other_cells_advertisements_are_not_heard() {
        let mut mn = MobileNode::new(4, 1, 1800);
        assert_eq!(mn.advertisement(1, Some(1)), None);
        assert_eq!(
            mn.advertisement(2, Some(1)),
            None,
            "agent 2's cell is not its own"
        );
        assert_eq!(mn.advertisement(2, None), None, "in a handoff gap");
    }

    #[test]
    fn a_new_foreign_agent_starts_one_registration_and_its_reply_ends_it() {
        let mut mn = MobileNode::new(4, 1, 1800);
        let r = mn.advertisement(2, Some(2)).unwrap();
        assert_eq!((r.home_agent, r.via, r.care_of, r.id), (1, 2, Some(2), 1));
        assert_eq!((r.mobile, r.lifetime_s), (4, 1800));
        assert_eq!(mn.advertisement(2, Some(2)), None, "waiting for the reply");
        assert_eq!(mn.reply(99, true), None, "not its request");
        assert_eq!(mn.reply(r.id, true), Some(Some(2)));
        assert_eq!((mn.care_of(), mn.pending()), (Some(2), None));
    }

    #[test]
    fn back_home_it_deregisters_through_its_home_agent() {
        let mut mn = MobileNode::new(4, 1, 1800);
        let away = mn.advertisement(2, Some(2)).unwrap();
        mn.reply(away.id, true);
        let home = mn.advertisement(1, Some(1)).unwrap();
        assert_eq!((home.via, home.care_of, home.lifetime_s), (1, None, 0));
        assert_eq!(mn.reply(home.id, true), Some(None));
    }

    // --- registration retransmission and refusal ---

    #[test]
    fn an_unanswered_request_is_sent_again_with_its_identification() {
        let mut mn = MobileNode::new(4, 1, 1800);
        let r = mn.advertisement(2, Some(2)).unwrap();
        assert_eq!(mn.retry(), Some((r, 2)));
        assert_eq!(mn.retry(), Some((r, 3)));
        assert_eq!(mn.reply(r.id, false), Some(None), "refused: still home");
        assert_eq!(mn.retry(), None);
    }

    #[test]
    fn moving_on_before_the_reply_registers_with_the_newest_agent() {
        let mut mn = MobileNode::new(4, 1, 1800);
        let first = mn.advertisement(2, Some(2)).unwrap();
        let second = mn.advertisement(3, Some(3)).unwrap();
        assert_eq!(second.care_of, Some(3));
        assert_eq!(mn.reply(first.id, true), None, "a stale reply");
        assert_eq!(mn.reply(second.id, true), Some(Some(3)));
    }

    #[test]
    fn message_lengths_follow_the_rfc_layouts() {
        let r = Registration {
            mobile: 4,
            home_agent: 1,
            via: 2,
            care_of: Some(2),
            id: 1,
            lifetime_s: 1800,
        };
        // IP 20 + ICMP 8 + one router address 8 + extension 8 (+ one care-of address).
        let adv = |home| {
            let m = Message::Advertisement {
                agent: 1,
                home,
                seq: 0,
                lifetime_s: 3,
                registration_lifetime_s: 1800,
            };
            m.ip_len()
        };
        assert_eq!((adv(true), adv(false)), (44, 48));
        assert_eq!(Message::Solicitation.ip_len(), 28);
        // IP 20 + UDP 8 + 24 (§3.3) + 22 (§3.5.2).
        assert_eq!(Message::Request(r).ip_len(), 74);
        let reply = Message::Reply {
            request: r,
            accepted: true,
        };
        assert_eq!(reply.ip_len(), 70);
    }
}
