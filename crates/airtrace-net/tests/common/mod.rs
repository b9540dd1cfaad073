//! What the IP-layer tests share: radio nodes on a line, a datagram, and the loop that
//! runs a network until nothing is left to happen.

use airtrace_net::arp::ArpConfig;
use airtrace_net::dcf::DcfConfig;
use airtrace_net::network::{IpPacket, NetEvent, Network};
use airtrace_net::radio::{PhyProfile, Position, Propagation};
use airtrace_net::{NodeId, Routes, Wireless};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Nodes at `xs` metres on a line, ns-2's WaveLAN and MAC; shortest-path routes over
/// the pairs `hears` says can talk.
pub fn line(
    xs: &[f64],
    arp: ArpConfig,
    hears: impl Fn(&Wireless, NodeId, NodeId) -> bool,
) -> Network {
    let mut w = Wireless::new(Propagation::wavelan(), PhyProfile::wavelan());
    for (i, &x) in xs.iter().enumerate() {
        w.add_station(
            Position { x, y: 0.0 },
            DcfConfig::ns2_wavelan(),
            ChaCha8Rng::seed_from_u64(i as u64),
        );
    }
    let routes = Routes::shortest_paths(xs.len(), |a, b| hears(&w, a, b));
    Network::new(w, routes, arp, vec![true; xs.len()])
}

/// An IP datagram of `len` bytes from `src` to `dst`, TTL 64, tagged `user`.
pub fn datagram(src: NodeId, dst: NodeId, len: u32, user: u64) -> IpPacket {
    IpPacket {
        src,
        dst,
        ttl: 64,
        len,
        user,
        dsr: None,
        mip: None,
        frag: None,
    }
}

/// Runs `net` until it has no deadline left, its events into `out`.
pub fn run(net: &mut Network, out: &mut Vec<NetEvent>) {
    while let Some(t) = net.next_deadline() {
        net.poll_into(t, out);
    }
}
