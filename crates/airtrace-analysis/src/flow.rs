//! Connection keys: the address/port pairs of a TCP connection, in either direction.

use std::net::IpAddr;

/// One endpoint: an address (IPv4 mapped into IPv6 form, as a number so that
/// comparing and hashing are a few instructions) and a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    pub addr: u128,
    pub port: u16,
}

impl Endpoint {
    pub fn new(ip: IpAddr, port: u16) -> Self {
        let addr = match ip {
            IpAddr::V4(v4) => 0xffff_0000_0000u128 | u32::from(v4) as u128,
            IpAddr::V6(v6) => u128::from(v6),
        };
        Endpoint { addr, port }
    }

    pub fn ip(&self) -> IpAddr {
        let v6 = std::net::Ipv6Addr::from_bits(self.addr);
        match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ip() {
            IpAddr::V4(a) => write!(f, "{a}:{}", self.port),
            IpAddr::V6(a) => write!(f, "[{a}]:{}", self.port),
        }
    }
}

/// The unordered pair of endpoints that names a connection: the same key for
/// packets in both directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub lo: Endpoint,
    pub hi: Endpoint,
}

impl FlowKey {
    /// The key of a packet from `src` to `dst` (the same for `dst` to `src`).
    #[inline]
    pub fn of(src: Endpoint, dst: Endpoint) -> FlowKey {
        if src <= dst {
            FlowKey { lo: src, hi: dst }
        } else {
            FlowKey { lo: dst, hi: src }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_share_a_key() {
        let a = Endpoint::new("198.18.0.1".parse().unwrap(), 40000);
        let b = Endpoint::new("198.18.0.2".parse().unwrap(), 80);
        assert_eq!(FlowKey::of(a, b), FlowKey::of(b, a));
        assert_eq!(a.to_string(), "198.18.0.1:40000");
        assert_eq!(a.ip(), "198.18.0.1".parse::<IpAddr>().unwrap());
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        assert_eq!(Endpoint::new(v6, 1).ip(), v6);
    }
}
