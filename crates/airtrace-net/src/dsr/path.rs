//! Source routes and the DSR options header a packet carries (RFC 4728 §6).

use crate::frame::NodeId;

/// The longest source route, in nodes (ns-2's `MAX_SR_LEN`).
pub const MAX_SR_LEN: usize = 16;

/// Route errors one packet can carry (ns-2's `MAX_ROUTE_ERRORS`).
pub const MAX_ROUTE_ERRORS: usize = 3;

/// A route: the nodes from its first to its last, at most [`MAX_SR_LEN`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Path {
    nodes: [NodeId; MAX_SR_LEN],
    len: u8,
}

impl std::fmt::Debug for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Path {
    /// The empty path.
    pub const EMPTY: Path = Path {
        nodes: [0; MAX_SR_LEN],
        len: 0,
    };

    /// The path of `nodes` (at most [`MAX_SR_LEN`]; longer is cut).
    pub fn of(nodes: &[NodeId]) -> Path {
        let mut p = Path::EMPTY;
        for &n in nodes.iter().take(MAX_SR_LEN) {
            p.push(n);
        }
        p
    }

    /// The nodes.
    pub fn as_slice(&self) -> &[NodeId] {
        &self.nodes[..self.len as usize]
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No nodes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Hops (nodes − 1).
    pub fn hops(&self) -> usize {
        self.len().saturating_sub(1)
    }

    /// No room for another node.
    pub fn is_full(&self) -> bool {
        self.len() == MAX_SR_LEN
    }

    /// Appends `node`; false (and unchanged) when full.
    pub fn push(&mut self, node: NodeId) -> bool {
        if self.is_full() {
            return false;
        }
        self.nodes[self.len()] = node;
        self.len += 1;
        true
    }

    /// Keeps the first `len` nodes.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len as u8);
    }

    /// Whether `node` is on the path.
    pub fn contains(&self, node: NodeId) -> bool {
        self.as_slice().contains(&node)
    }

    /// Where `node` is on the path.
    pub fn position(&self, node: NodeId) -> Option<usize> {
        self.as_slice().iter().position(|&n| n == node)
    }

    /// The path backwards.
    pub fn reversed(&self) -> Path {
        let mut p = *self;
        p.nodes[..self.len()].reverse();
        p
    }

    /// The first node.
    pub fn first(&self) -> Option<NodeId> {
        self.as_slice().first().copied()
    }

    /// The last node.
    pub fn last(&self) -> Option<NodeId> {
        self.as_slice().last().copied()
    }

    /// Whether the path uses the link `from` → `to`.
    pub fn has_link(&self, from: NodeId, to: NodeId) -> bool {
        self.as_slice().windows(2).any(|w| w == [from, to])
    }

    /// `self` followed by `rest`, with any loop cut out (ns-2's `appendPath` then
    /// `compressPath`); `None` when longer than [`MAX_SR_LEN`].
    pub fn joined(&self, rest: &Path) -> Option<Path> {
        let mut all: Vec<NodeId> = self.as_slice().to_vec();
        all.extend_from_slice(rest.as_slice());
        let mut out: Vec<NodeId> = Vec::with_capacity(all.len());
        for n in all {
            if let Some(i) = out.iter().position(|&m| m == n) {
                out.truncate(i);
            }
            out.push(n);
        }
        (out.len() <= MAX_SR_LEN).then(|| Path::of(&out))
    }
}

/// A Route Request option (RFC 4728 §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteRequest {
    /// The initiator's request identification.
    pub id: u16,
    /// The node a route is sought to.
    pub target: NodeId,
    /// How many nodes besides the initiator may forward it (0: a neighbour search).
    pub max_propagation: u8,
}

/// A broken link reported in a Route Error option (RFC 4728 §6.4, NODE_UNREACHABLE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkError {
    /// The node that could not deliver (Error Source Address).
    pub from: NodeId,
    /// The neighbour it could not reach (Unreachable Node Address).
    pub to: NodeId,
    /// The node told (Error Destination Address).
    pub tell: NodeId,
}

/// The DSR options header of a packet (RFC 4728 §6).
///
/// `route` is the whole route of the packet from its first node to its last, and
/// `index` the position on it of the node holding the packet now (the Source Route
/// option's Segments Left, counted from the front). For a Route Request, `route` is
/// the route record so far, starting at the initiator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DsrHeader {
    /// The source route, or a request's route record.
    pub route: Path,
    /// Where on `route` the packet is.
    pub index: u8,
    /// A Route Request option.
    pub request: Option<RouteRequest>,
    /// A Route Reply option: the route found, from the initiator to the target.
    pub reply: Option<Path>,
    /// Route Error options.
    pub errors: [Option<LinkError>; MAX_ROUTE_ERRORS],
    /// Times the packet was salvaged (the Source Route option's Salvage field).
    pub salvaged: u8,
    /// The packet carries routing only, no transport payload.
    pub control: bool,
}

impl DsrHeader {
    /// A data packet's header: `route` from its source, at the source.
    pub fn source_route(route: Path) -> DsrHeader {
        DsrHeader {
            route,
            index: 0,
            request: None,
            reply: None,
            errors: [None; MAX_ROUTE_ERRORS],
            salvaged: 0,
            control: false,
        }
    }

    /// The node the packet goes to next on its source route.
    pub fn next_hop(&self) -> Option<NodeId> {
        self.route.as_slice().get(self.index as usize + 1).copied()
    }

    /// The route errors carried.
    pub fn route_errors(&self) -> impl Iterator<Item = LinkError> + '_ {
        self.errors.iter().flatten().copied()
    }

    /// How many route errors are carried.
    pub fn error_count(&self) -> usize {
        self.errors.iter().flatten().count()
    }

    /// Adds a route error; false when there is no room.
    pub fn push_error(&mut self, e: LinkError) -> bool {
        match self.errors.iter_mut().find(|s| s.is_none()) {
            Some(slot) => {
                *slot = Some(e);
                true
            }
            None => false,
        }
    }

    /// Addresses a Source Route option lists: the route between the packet's source
    /// and its destination, and the salvaging node first when the packet was salvaged
    /// (RFC 4728 §6.7, §8.4.1).
    fn listed(&self) -> &[NodeId] {
        let nodes = self.route.as_slice();
        if nodes.len() < 2 || self.request.is_some() {
            return &[];
        }
        let from = if self.salvaged > 0 { 0 } else { 1 };
        &nodes[from..nodes.len() - 1]
    }

    /// Writes the header as RFC 4728 §6 lays it out: the fixed part (`next_header`:
    /// the protocol that follows, 59 for none), then a Route Request, Route Reply,
    /// Route Error or Source Route option as the header carries; `address` gives a
    /// node's IPv4 address.
    pub fn write(&self, next_header: u8, address: impl Fn(NodeId) -> [u8; 4], out: &mut Vec<u8>) {
        let start = out.len();
        let options = (self.wire_len() - 4) as u16;
        out.push(next_header);
        out.push(0); // F flag clear, reserved
        out.extend_from_slice(&options.to_be_bytes());
        if let Some(req) = &self.request {
            let record = &self.route.as_slice()[1.min(self.route.len())..];
            out.push(1);
            out.push((6 + 4 * record.len()) as u8);
            out.extend_from_slice(&req.id.to_be_bytes());
            out.extend_from_slice(&address(req.target));
            for &n in record {
                out.extend_from_slice(&address(n));
            }
        }
        if let Some(reply) = &self.reply {
            let listed = &reply.as_slice()[1.min(reply.len())..];
            out.push(2);
            out.push((1 + 4 * listed.len()) as u8);
            out.push(0); // L flag clear, reserved
            for &n in listed {
                out.extend_from_slice(&address(n));
            }
        }
        for e in self.route_errors() {
            out.push(3);
            out.push(14);
            out.push(1); // NODE_UNREACHABLE
            out.push(self.salvaged.min(15));
            out.extend_from_slice(&address(e.from));
            out.extend_from_slice(&address(e.tell));
            out.extend_from_slice(&address(e.to));
        }
        if self.request.is_none() && self.route.len() >= 2 {
            let listed = self.listed();
            let segments_left = (self.route.len() - 2).saturating_sub(self.index as usize);
            out.push(96);
            out.push((2 + 4 * listed.len()) as u8);
            // F, L clear; Salvage (4 bits) across the two bytes; Segments Left (6 bits).
            let salvage = u16::from(self.salvaged.min(15));
            let bits = (salvage << 6) | (segments_left.min(63) as u16);
            out.extend_from_slice(&bits.to_be_bytes());
            for &n in listed {
                out.extend_from_slice(&address(n));
            }
        }
        debug_assert_eq!(out.len() - start, self.wire_len() as usize);
    }

    /// Length of the header on the wire, bytes: the 4-byte fixed part and each
    /// option's type, length and data (RFC 4728 §6.1–§6.7). The addresses of the
    /// packet's IP source and destination are not repeated in a Source Route option,
    /// nor the initiator's in a request's route record.
    pub fn wire_len(&self) -> u32 {
        let mut len = 4;
        if self.request.is_some() {
            // Identification, Target Address, the route record after the initiator.
            len += 2 + 6 + 4 * self.route.hops() as u32;
        } else if self.route.len() >= 2 {
            // Flags/Salvage, Segments Left, the addresses between source and dest.
            len += 2 + 2 + 4 * self.listed().len() as u32;
        }
        if let Some(reply) = &self.reply {
            // Flags, then the route after the initiator.
            len += 2 + 1 + 4 * reply.hops() as u32;
        }
        // Type, Salvage, Error Source, Error Destination, Unreachable Node.
        len += 16 * self.error_count() as u32;
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joining_paths_cuts_loops() {
        let a = Path::of(&[1, 2, 3]);
        let b = Path::of(&[3, 2, 5]);
        assert_eq!(a.joined(&b).unwrap().as_slice(), &[1, 2, 5]);
        let c = Path::of(&[3, 4]);
        assert_eq!(a.joined(&c).unwrap().as_slice(), &[1, 2, 3, 4]);
        let d = Path::of(&[4, 5]);
        assert_eq!(a.joined(&d).unwrap().as_slice(), &[1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_data_packet_over_four_hops_carries_twenty_bytes_of_dsr() {
        // 4 fixed + 4 option header + 3 intermediate addresses: as ns-2 counts it.
        let h = DsrHeader::source_route(Path::of(&[0, 1, 2, 3, 4]));
        assert_eq!(h.wire_len(), 20);
        assert_eq!(h.next_hop(), Some(1));
    }

    #[test]
    fn the_written_header_has_its_length_and_rfc_4728_layout() {
        let addr = |n: NodeId| [198, 18, 0, n as u8 + 1];
        let mut h = DsrHeader::source_route(Path::of(&[0, 1, 2, 3, 4]));
        h.index = 1;
        let mut out = Vec::new();
        h.write(6, addr, &mut out);
        assert_eq!(out.len(), 20);
        assert_eq!(&out[..4], &[6, 0, 0, 16]);
        // Source Route: type 96, 14 bytes of data, Segments Left 2 (n2, n3 ahead).
        assert_eq!(&out[4..8], &[96, 14, 0, 2]);
        assert_eq!(&out[8..12], &[198, 18, 0, 2]);
        let mut req = DsrHeader::source_route(Path::of(&[0, 1]));
        req.request = Some(RouteRequest {
            id: 0x0102,
            target: 4,
            max_propagation: 16,
        });
        out.clear();
        req.write(59, addr, &mut out);
        assert_eq!(
            out,
            [59, 0, 0, 12, 1, 10, 1, 2, 198, 18, 0, 5, 198, 18, 0, 2]
        );
    }

    #[test]
    fn a_route_error_adds_sixteen_bytes() {
        let mut h = DsrHeader::source_route(Path::of(&[3, 2, 1, 0]));
        h.control = true;
        let before = h.wire_len();
        assert!(h.push_error(LinkError {
            from: 3,
            to: 4,
            tell: 0
        }));
        assert_eq!(h.wire_len(), before + 16);
    }
}
