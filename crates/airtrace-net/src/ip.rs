//! The IP packet as the network layer sees it, and why a node may drop one.

use crate::dsr::DsrHeader;
use crate::frag::Fragment;
use crate::frame::NodeId;
use crate::mobile_ip::Mip;

/// `IpPacket::user` of a packet that carries no transport packet (DSR routing).
pub const NO_PACKET: u64 = u64::MAX;

/// A packet's IP header, as the network needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpPacket {
    /// Node that sent it.
    pub src: NodeId,
    /// Node it is for.
    pub dst: NodeId,
    /// Time to live: a router decrements it and drops the packet at 0 (RFC 791 §3.2,
    /// RFC 1812 §5.3.1).
    pub ttl: u8,
    /// IPv4 total length, bytes.
    pub len: u32,
    /// The transport's own id for the packet (for a route error, the id of the packet
    /// whose failed delivery it reports; [`NO_PACKET`] for other routing packets).
    pub user: u64,
    /// The DSR options header (RFC 4728 §6), in a network routed by DSR; `len`
    /// includes it.
    pub dsr: Option<DsrHeader>,
    /// Mobile IP: a message of its own, or the packet in an IP-in-IP tunnel
    /// ([`crate::mobile_ip`]).
    pub mip: Option<Mip>,
    /// The fragment of a larger datagram this packet is (RFC 791 §3.2; `len` is the
    /// fragment's), or `None` for a whole datagram ([`crate::frag`]).
    pub frag: Option<Fragment>,
}

impl IpPacket {
    /// A packet of routing only (a DSR request, reply or error; a Mobile IP message),
    /// no transport payload.
    pub fn is_control(&self) -> bool {
        self.dsr.is_some_and(|h| h.control) || matches!(self.mip, Some(Mip::Message(_)))
    }

    /// The node the packet is sent towards now: the tunnel's end while tunnelled,
    /// else its destination.
    pub fn hop_dst(&self) -> NodeId {
        match self.mip {
            Some(Mip::Tunnel { to, .. }) => to,
            _ => self.dst,
        }
    }

    /// The packet with `header` as its DSR header, its length adjusted.
    pub fn with_dsr(self, header: DsrHeader) -> IpPacket {
        let bare = self.len - self.dsr.map_or(0, |h| h.wire_len());
        IpPacket {
            len: bare + header.wire_len(),
            dsr: Some(header),
            ..self
        }
    }
}

/// Why a node dropped a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// No route to the destination.
    NoRoute,
    /// The TTL ran out at a router.
    TtlExpired,
    /// The interface queue was full.
    QueueFull,
    /// Displaced from ARP's one-packet hold queue by a newer packet.
    ArpHold,
    /// The next hop never answered ARP.
    ArpUnanswered,
    /// The MAC gave up after its last attempt.
    RetryLimit,
    /// A packet for another node reached a host, which does not forward.
    NotRouter,
    /// DSR: the packet waited in the send buffer longer than its timeout.
    SendBufferTimeout,
    /// DSR: the send buffer was full; the oldest packet made room.
    SendBufferFull,
    /// Roaming: the packet waited at an access point for a station that has since
    /// associated with another one.
    NotAssociated,
    /// The destination gave up on a datagram whose fragments did not all come within
    /// the reassembly timeout (RFC 791 §3.2), or a fragment came after it had.
    ReassemblyTimeout,
    /// Every fragment of the datagram still on its way was dropped before any reached
    /// the destination.
    FragmentsLost,
    /// A fragment whose datagram had already lost another, dropped at the interface
    /// queue instead of taking air time for nothing.
    PartialDatagram,
}

impl DropReason {
    /// The name used in logs.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::NoRoute => "no_route",
            DropReason::TtlExpired => "ttl_expired",
            DropReason::QueueFull => "queue",
            DropReason::ArpHold => "arp_hold",
            DropReason::ArpUnanswered => "arp_unanswered",
            DropReason::RetryLimit => "retry_limit",
            DropReason::NotRouter => "not_router",
            DropReason::SendBufferTimeout => "send_buffer_timeout",
            DropReason::SendBufferFull => "send_buffer_full",
            DropReason::NotAssociated => "not_associated",
            DropReason::ReassemblyTimeout => "reassembly_timeout",
            DropReason::FragmentsLost => "fragments_lost",
            DropReason::PartialDatagram => "partial_datagram",
        }
    }
}
