//! Mobile IP's packets as bytes, for the captures (`<node>.pcap` and the air
//! captures): Agent Advertisements and Solicitations as ICMP (RFC 1256 with RFC 5944
//! §2.1.1's Mobility Agent Advertisement Extension), Registration Requests and Replies
//! as UDP to port 434 laid out as RFC 5944 §3.3 and §3.4 (so tshark decodes them as
//! "mip"), each with a Mobile-Home Authentication Extension (§3.5.2, SPI 256) whose
//! authenticator is zero (authentication is not modelled), and IP-in-IP tunnels (RFC
//! 2003: protocol 4, the outer header's TTL and the tunnel's ends).

use airtrace_net::mobile_ip::{Message, Mip, Registration, REGISTRATION_PORT};
use airtrace_net::{IpPacket, NodeId, BROADCAST};

use crate::netsim::address;
use crate::packet::{fold, sum16, Encoder, Packet};

/// IP-in-IP's outer header, bytes.
const OUTER_HEADER: u32 = 20;
/// IPv4 protocol numbers.
const PROTO_ICMP: u8 = 1;
const PROTO_IP_IN_IP: u8 = 4;
const PROTO_UDP: u8 = 17;

/// ICMP types (RFC 1256) and the extension type (RFC 5944 §2.1.1).
const ROUTER_ADVERTISEMENT: u8 = 9;
const ROUTER_SOLICITATION: u8 = 10;
const MOBILITY_AGENT_EXTENSION: u8 = 16;
/// Registration message types (§3.3, §3.4) and the authentication extension (§3.5.2).
const REQUEST: u8 = 1;
const REPLY: u8 = 3;
const MOBILE_HOME_AUTH: u8 = 32;
/// The extension's flags (§2.1.1): registration required, home agent, foreign agent.
const FLAG_R: u8 = 0x80;
const FLAG_H: u8 = 0x20;
const FLAG_F: u8 = 0x10;

/// A node's address on the wire (the limited broadcast for [`BROADCAST`]).
fn host(node: NodeId) -> [u8; 4] {
    if node == BROADCAST {
        [255; 4]
    } else {
        address(node)
    }
}

/// Appends the Mobile-Home Authentication Extension (§3.5.2).
fn auth_extension(out: &mut Vec<u8>) {
    out.extend_from_slice(&[MOBILE_HOME_AUTH, 20]);
    out.extend_from_slice(&256u32.to_be_bytes());
    out.extend_from_slice(&[0; 16]);
}

/// The ICMP message or UDP datagram of `m`, from `src` to `dst`, into `out`; returns
/// its IPv4 protocol.
fn body(m: &Message, src: [u8; 4], dst: [u8; 4], out: &mut Vec<u8>) -> u8 {
    out.clear();
    match *m {
        Message::Advertisement {
            agent,
            home,
            seq,
            lifetime_s,
            registration_lifetime_s,
        } => {
            out.extend_from_slice(&[ROUTER_ADVERTISEMENT, 0, 0, 0, 1, 2]);
            out.extend_from_slice(&lifetime_s.to_be_bytes());
            out.extend_from_slice(&address(agent));
            out.extend_from_slice(&0u32.to_be_bytes());
            let care_of = if home { 0 } else { 4 };
            out.extend_from_slice(&[MOBILITY_AGENT_EXTENSION, 6 + care_of]);
            out.extend_from_slice(&seq.to_be_bytes());
            out.extend_from_slice(&registration_lifetime_s.to_be_bytes());
            out.push(if home { FLAG_H } else { FLAG_R | FLAG_F });
            out.push(0);
            if !home {
                out.extend_from_slice(&address(agent));
            }
            icmp_checksum(out)
        }
        Message::Solicitation => {
            out.extend_from_slice(&[ROUTER_SOLICITATION, 0, 0, 0, 0, 0, 0, 0]);
            icmp_checksum(out)
        }
        Message::Request(r) => {
            udp_header(out);
            out.extend_from_slice(&[REQUEST, 0]);
            out.extend_from_slice(&r.lifetime_s.to_be_bytes());
            out.extend_from_slice(&address(r.mobile));
            out.extend_from_slice(&address(r.home_agent));
            out.extend_from_slice(&address(r.care_of.unwrap_or(r.mobile)));
            out.extend_from_slice(&r.id.to_be_bytes());
            auth_extension(out);
            udp_checksum(out, src, dst)
        }
        Message::Reply { request, accepted } => {
            let Registration {
                mobile,
                home_agent,
                id,
                lifetime_s,
                ..
            } = request;
            udp_header(out);
            // Code 0: accepted; 128: reason unspecified (§3.4).
            out.extend_from_slice(&[REPLY, if accepted { 0 } else { 128 }]);
            out.extend_from_slice(&lifetime_s.to_be_bytes());
            out.extend_from_slice(&address(mobile));
            out.extend_from_slice(&address(home_agent));
            out.extend_from_slice(&id.to_be_bytes());
            auth_extension(out);
            udp_checksum(out, src, dst)
        }
    }
}

fn icmp_checksum(out: &mut [u8]) -> u8 {
    let c = fold(sum16(out));
    out[2..4].copy_from_slice(&c.to_be_bytes());
    PROTO_ICMP
}

/// Ports 434 to 434, length and checksum filled in by [`udp_checksum`].
fn udp_header(out: &mut Vec<u8>) {
    out.extend_from_slice(&REGISTRATION_PORT.to_be_bytes());
    out.extend_from_slice(&REGISTRATION_PORT.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
}

/// Fills in the UDP length and checksum (RFC 768, over the IPv4 pseudo-header).
fn udp_checksum(out: &mut [u8], src: [u8; 4], dst: [u8; 4]) -> u8 {
    let len = out.len() as u16;
    out[4..6].copy_from_slice(&len.to_be_bytes());
    let sum = sum16(&src) + sum16(&dst) + u64::from(PROTO_UDP) + u64::from(len) + sum16(out);
    let c = match fold(sum) {
        0 => 0xffff,
        c => c,
    };
    out[6..8].copy_from_slice(&c.to_be_bytes());
    PROTO_UDP
}

/// Writes Mobile IP packets, reusing its buffers.
#[derive(Debug, Default)]
pub struct MipWriter {
    body: Vec<u8>,
    inner: Vec<u8>,
}

impl MipWriter {
    /// The IPv4 bytes of `ip`, which carries Mobile IP message `m`, with its TTL.
    pub fn message<'a>(
        &mut self,
        encoder: &'a mut Encoder,
        ip: &IpPacket,
        m: &Message,
    ) -> &'a [u8] {
        let (src, dst) = (host(ip.src), host(ip.dst));
        let proto = body(m, src, dst, &mut self.body);
        encoder.encode_ip(ip.ttl, (src, dst), proto, &self.body)
    }

    /// The bytes of `ip` when it is Mobile IP's: a message, or transport packet
    /// `packet` (its first payload byte at `stream_offset`, `dsr` its DSR header) in a
    /// tunnel; `None` for any other packet.
    pub fn packet<'a>(
        &mut self,
        encoder: &'a mut Encoder,
        ip: &IpPacket,
        packet: Option<(&Packet, u64)>,
        dsr: &[u8],
    ) -> Option<&'a [u8]> {
        match ip.mip? {
            Mip::Message(m) => Some(self.message(encoder, ip, &m)),
            Mip::Tunnel {
                from,
                to,
                inner_ttl,
            } => {
                let (p, offset) = packet?;
                let inner = Packet {
                    ttl: inner_ttl,
                    ..*p
                };
                // A fragment cut before the tunnel travels in it as it is.
                let inner_len = ip.len.saturating_sub(OUTER_HEADER);
                let bytes = match ip.frag {
                    Some(f) => {
                        let piece = (
                            f.offset as usize,
                            inner_len.saturating_sub(20) as usize,
                            f.more,
                        );
                        encoder.encode_fragment(&inner, offset, dsr, piece)
                    }
                    None => encoder
                        .encode_routed(&inner, offset, inner_len, dsr)
                        .next()?,
                };
                let mut held = std::mem::take(&mut self.inner);
                held.clear();
                held.extend_from_slice(bytes);
                let out = self.tunnel(encoder, ip.ttl, from, to, &held);
                self.inner = held;
                Some(out)
            }
        }
    }

    /// `inner` (an IPv4 packet) in an IP-in-IP tunnel from `from` to `to`, outer TTL
    /// `ttl` (RFC 2003 §3.1).
    pub fn tunnel<'a>(
        &mut self,
        encoder: &'a mut Encoder,
        ttl: u8,
        from: NodeId,
        to: NodeId,
        inner: &[u8],
    ) -> &'a [u8] {
        self.body.clear();
        self.body.extend_from_slice(inner);
        encoder.encode_ip(
            ttl,
            (address(from), address(to)),
            PROTO_IP_IN_IP,
            &self.body,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(src: NodeId, dst: NodeId, m: Message) -> IpPacket {
        IpPacket {
            src,
            dst,
            ttl: 64,
            len: m.ip_len(),
            user: airtrace_net::ip::NO_PACKET,
            dsr: None,
            mip: Some(Mip::Message(m)),
            frag: None,
        }
    }

    fn verifies(data: &[u8]) -> bool {
        fold(sum16(data)) == 0
    }

    #[test]
    fn a_foreign_agents_advertisement_offers_its_own_address() {
        let m = Message::Advertisement {
            agent: 3,
            home: false,
            seq: 7,
            lifetime_s: 3,
            registration_lifetime_s: 1800,
        };
        let (mut enc, mut w) = (Encoder::default(), MipWriter::default());
        let p = w.message(&mut enc, &ip(3, BROADCAST, m), &m).to_vec();
        assert_eq!(p.len() as u32, m.ip_len());
        assert_eq!((p[9], &p[16..20]), (PROTO_ICMP, &[255u8; 4][..]));
        let icmp = &p[20..];
        assert!(verifies(icmp));
        assert_eq!(&icmp[..2], &[9, 0]);
        assert_eq!(&icmp[8..12], &address(3));
        // The extension: type 16, length 10, sequence 7, 1800 s, R and F, care-of.
        assert_eq!(&icmp[16..24], &[16, 10, 0, 7, 0x07, 0x08, 0x90, 0]);
        assert_eq!(&icmp[24..28], &address(3));
    }

    #[test]
    fn a_registration_request_is_laid_out_as_section_3_3() {
        let r = Registration {
            mobile: 4,
            home_agent: 2,
            via: 3,
            care_of: Some(3),
            id: 9,
            lifetime_s: 1800,
        };
        let m = Message::Request(r);
        let (mut enc, mut w) = (Encoder::default(), MipWriter::default());
        let p = w.message(&mut enc, &ip(4, 3, m), &m).to_vec();
        assert_eq!(p.len() as u32, m.ip_len());
        let udp = &p[20..];
        assert_eq!(&udp[..4], &[1, 178, 1, 178], "port 434 to 434");
        let mut pseudo = p[12..20].to_vec();
        pseudo.extend_from_slice(&[0, 17]);
        pseudo.extend_from_slice(&(udp.len() as u16).to_be_bytes());
        pseudo.extend_from_slice(udp);
        assert!(verifies(&pseudo), "UDP checksum");
        let req = &udp[8..];
        assert_eq!(&req[..4], &[1, 0, 0x07, 0x08]);
        assert_eq!(&req[4..8], &address(4));
        assert_eq!(&req[8..12], &address(2));
        assert_eq!(&req[12..16], &address(3));
        assert_eq!(&req[16..24], &9u64.to_be_bytes());
        assert_eq!(&req[24..26], &[32, 20]);
    }

    #[test]
    fn a_fragment_in_the_tunnel_is_the_fragment_the_sender_cut() {
        use crate::packet::{Body, Datagram, Packet, RpcKind, ADDR_A, ADDR_B};
        let (mut enc, mut w) = (Encoder::default(), MipWriter::default());
        let d = Datagram {
            xid: 1,
            kind: RpcKind::Stream,
            offset: 0,
            data: 2024,
        };
        let p = Packet {
            id: 8,
            flow: 0,
            from_a: true,
            ip_id: 5,
            ports: (700, 800),
            hosts: (ADDR_A, ADDR_B),
            ttl: 64,
            ecn: 0,
            vj: None,
            body: Body::Udp(d),
        };
        let whole = IpPacket {
            src: 0,
            dst: 3,
            ttl: 64,
            len: 2076,
            user: 8,
            dsr: None,
            mip: None,
            frag: None,
        };
        let tunnel = Mip::Tunnel {
            from: 1,
            to: 2,
            inner_ttl: 63,
        };
        let inner: Vec<(u16, u16)> = airtrace_net::frag::split(whole, 1500, 0)
            .into_iter()
            .map(|piece| {
                let ip = IpPacket {
                    len: piece.len + OUTER_HEADER,
                    mip: Some(tunnel),
                    ..piece
                };
                let bytes = w.packet(&mut enc, &ip, Some((&p, 0)), &[]).unwrap();
                assert_eq!(bytes.len() as u32, ip.len);
                let inner = &bytes[20..];
                assert!(verifies(&inner[..20]));
                let total = u16::from_be_bytes([inner[2], inner[3]]);
                (total, u16::from_be_bytes([inner[6], inner[7]]))
            })
            .collect();
        // 1500 bytes with MF at offset 0; 596 at offset 185 (× 8 = 1480).
        assert_eq!(inner, [(1500, 0x2000), (596, 185)]);
    }

    #[test]
    fn a_tunnel_wraps_the_inner_packet_whole() {
        let (mut enc, mut w) = (Encoder::default(), MipWriter::default());
        let inner = [
            0x45u8, 0, 0, 20, 0, 0, 0, 0, 63, 6, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
        ];
        let p = w.tunnel(&mut enc, 64, 2, 3, &inner).to_vec();
        assert_eq!((p.len(), p[8], p[9]), (40, 64, PROTO_IP_IN_IP));
        assert_eq!((&p[12..16], &p[16..20]), (&address(2)[..], &address(3)[..]));
        assert_eq!(&p[20..], &inner);
        assert!(verifies(&p[..20]));
    }
}
