//! Tunnels carried in UDP, told by their registered port: VXLAN (RFC 7348), Geneve
//! (RFC 8926), L2TP version 2 (RFC 2661) and AYIYA (draft-massar-v6ops-ayiya-02).
//! Without them a capture of a virtual network or a tunnelled access line reads as
//! "0 TCP" (issue 18: `ndpi_vxlan`, `tcpdump_geneve`, `ivre_nb6-http`, `zeek_ayiya3`).
//!
//! A datagram whose header is not what its port promises (a flag that must be set is
//! not, an unknown version) is left as plain UDP: the port may be someone's ephemeral
//! port. A tunnel whose header is right but whose payload airtrace does not decode
//! (L2TPv3, a Geneve protocol type other than Ethernet and IP, AYIYA carrying
//! something else than IP) stops with [`crate::StopReason::NotDecoded`], so the file's report
//! says how many frames hid their contents. GTP-U (`gtp`) is the other UDP tunnel.

use crate::decoder::{enter_tunnel, proto, Cx, Next};
use crate::packet::{Decoded, Layer, Stop};
use crate::read::{be16, need, not_decoded, unsupported};
use crate::{ethernet::ether_type, ppp};

/// The registered UDP ports (IANA "Service Name and Transport Protocol Port Number
/// Registry").
pub(crate) mod port {
    pub const L2TP: u16 = 1701;
    pub const VXLAN: u16 = 4789;
    pub const AYIYA: u16 = 5072;
    pub const GENEVE: u16 = 6081;
}

/// True if `p` is one of the ports above (the fast path leaves these to the decoder).
#[inline(always)]
pub(crate) fn is_tunnel_port(p: u16) -> bool {
    matches!(p, port::L2TP | port::VXLAN | port::AYIYA | port::GENEVE)
}

/// The tunnel port of a datagram from `src` to `dst`, the destination's first.
#[inline(always)]
pub(crate) fn tunnel_port(src: u16, dst: u16) -> Option<u16> {
    [dst, src].into_iter().find(|&p| is_tunnel_port(p))
}

/// Decode the tunnel header at `off` (a UDP payload to or from `port`) and enter it.
pub(crate) fn decode(
    port: u16,
    off: usize,
    cx: &mut Cx<'_>,
    out: &mut Decoded,
) -> Result<Next, Stop> {
    let next = match port {
        port::VXLAN => vxlan(off, cx)?,
        port::GENEVE => geneve(off, cx)?,
        port::L2TP => l2tp(off, cx)?,
        port::AYIYA => ayiya(off, cx)?,
        _ => return Err(unsupported(Layer::Tunnel)),
    };
    enter_tunnel(cx, out);
    Ok(next)
}

/// RFC 7348 section 5: flags (the I flag, 0x08, "MUST be set to 1 for a valid VNI"),
/// 24 reserved bits, the 24-bit VNI, 8 reserved bits; then the inner Ethernet frame.
fn vxlan(off: usize, cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<8>(cx.f, off, Layer::Tunnel)?;
    if h[0] & 0x08 == 0 {
        return Err(unsupported(Layer::Tunnel));
    }
    Ok(Next::Ethernet(off + 8))
}

/// RFC 8926 section 3.4: version (2 bits, 0; section 3.4 "MUST be dropped" otherwise),
/// option length (6 bits, in 4-byte words), O and C flags, the protocol type (an
/// EtherType, 0x6558 for an Ethernet frame), the VNI; then the options.
fn geneve(off: usize, cx: &Cx<'_>) -> Result<Next, Stop> {
    let h = need::<8>(cx.f, off, Layer::Tunnel)?;
    if h[0] >> 6 != 0 {
        return Err(unsupported(Layer::Tunnel));
    }
    let inner = off + 8 + usize::from(h[0] & 0x3F) * 4;
    match be16([h[2], h[3]]) {
        TRANSPARENT_ETHERNET => Ok(Next::Ethernet(inner)),
        ether_type::IPV4 => Ok(Next::Ipv4(inner)),
        ether_type::IPV6 => Ok(Next::Ipv6(inner)),
        _ => Err(not_decoded(
            Layer::Tunnel,
            "a Geneve payload of another protocol type",
        )),
    }
}

/// The protocol type of an Ethernet frame (RFC 1701 section 3.2.3, as in GRE).
const TRANSPARENT_ETHERNET: u16 = 0x6558;

/// RFC 2661 section 3.1: flags and version (T: control message, L: length present,
/// S: Ns and Nr present, O: offset size present; version 2), the optional length, the
/// tunnel and session IDs, the optional Ns and Nr, the optional offset size and its
/// padding; a data message then carries a PPP frame (section 5.4 on its framing).
/// L2TPv3 (RFC 3931) shares the port; its data sessions have a cookie and a layer 2
/// format set up by its control messages, which the capture may not hold.
fn l2tp(off: usize, cx: &mut Cx<'_>) -> Result<Next, Stop> {
    const CONTROL: u8 = 0x80;
    const LENGTH: u8 = 0x40;
    const SEQUENCE: u8 = 0x08;
    const OFFSET: u8 = 0x02;
    let h = need::<2>(cx.f, off, Layer::Tunnel)?;
    match h[1] & 0x0F {
        2 => {}
        3 => return Err(not_decoded(Layer::Tunnel, "L2TPv3")),
        _ => return Err(unsupported(Layer::Tunnel)),
    }
    if h[0] & CONTROL != 0 {
        // Control messages carry attribute-value pairs, nothing to analyse.
        return Err(unsupported(Layer::Tunnel));
    }
    let mut pos = off + 2;
    if h[0] & LENGTH != 0 {
        let len = need::<2>(cx.f, pos, Layer::Tunnel)?;
        cx.stated(off + usize::from(be16(*len)));
        pos += 2;
    }
    // Tunnel ID, session ID, then Ns and Nr.
    pos += 4;
    if h[0] & SEQUENCE != 0 {
        pos += 4;
    }
    if h[0] & OFFSET != 0 {
        let size = need::<2>(cx.f, pos, Layer::Tunnel)?;
        pos += 2 + usize::from(be16(*size));
    }
    ppp::frame(cx.f, pos)
}

/// draft-massar-v6ops-ayiya-02 section 6 (as Wireshark and Zeek read it): identity
/// length (log2 of its bytes) and type, signature length (in 4-byte words) and hash
/// method, authentication method and opcode (1: forward, a packet follows), the next
/// header (an IP protocol number), the epoch time; then the identity, the signature
/// and the packet. Other opcodes (heartbeats, queries) carry no packet.
fn ayiya(off: usize, cx: &Cx<'_>) -> Result<Next, Stop> {
    const FORWARD: u8 = 1;
    let h = need::<8>(cx.f, off, Layer::Tunnel)?;
    if h[2] & 0x0F != FORWARD {
        return Err(unsupported(Layer::Tunnel));
    }
    let inner = off + 8 + (1usize << (h[0] >> 4)) + usize::from(h[1] >> 4) * 4;
    match h[3] {
        proto::IPV4 => Ok(Next::Ipv4(inner)),
        proto::IPV6 => Ok(Next::Ipv6(inner)),
        _ => Err(not_decoded(Layer::Tunnel, "an AYIYA payload other than IP")),
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Layer, StopReason};
    use crate::testutil::*;
    use crate::{Decoded, LinkType};

    const E: LinkType = LinkType::ETHERNET;

    /// A frame of a corpus capture decodes to its inner SYN, from `src_port` to `dst_port`.
    fn inner_syn(d: &Decoded, src_port: u16, dst_port: u16) {
        assert_eq!(d.stop, None);
        assert_eq!(d.tunnel_depth, 1);
        let t = d.tcp().expect("the inner TCP header");
        assert_eq!(
            (t.src_port, t.dst_port, t.flags),
            (src_port, dst_port, 0x002)
        );
        assert_eq!(t.payload_len, 0);
    }

    /// Add `by` bytes to the lengths of the IPv4 header at `ip` and of its UDP header.
    fn lengthen(f: &mut [u8], ip: usize, by: u16) {
        for at in [ip + 2, ip + 20 + 4] {
            let n = u16::from_be_bytes([f[at], f[at + 1]]) + by;
            f[at..at + 2].copy_from_slice(&n.to_be_bytes());
        }
    }

    #[test]
    fn vxlan_carries_an_ethernet_frame() {
        // ndpi_vxlan.pcap, frame 5: VLAN 5, IPv4, UDP 49762 -> 4789, VXLAN (I flag, VNI
        // 0x457), Ethernet, IPv4, a SYN to port 443.
        let f = hex(concat!(
            "000cbd063a74000cbd063a7581000005080045000",
            "06e034a00004011c9dbc0a81604c0a81605c26212b5005a0371",
            "0800000000045700",
            "667a50aaff9a1eea692a6fcf0800",
            "4500003c7351400040062b490a0a14049df0e023",
            "b0aa01bb466bd3df00000000a002fd5cbaaa0000020405820402080af50c324b0000000001030307",
        ));
        inner_syn(&dec(E, &f), 45226, 443);
    }

    #[test]
    fn geneve_carries_an_ethernet_frame_after_its_options() {
        // tcpdump_geneve.pcap, frame 3: UDP 43443 -> 6081, Geneve (no options, protocol
        // type 0x6558, VNI 11), Ethernet, IPv4, a SYN to port 22.
        let f = hex(concat!(
            "001b213cab64001b213cac300800",
            "4500006e8806400040118a761400000214000001",
            "a9b317c1005a0000",
            "0000655800000b00",
            "b69ed2495148fe71d883724f0800",
            "4500003c5a1140004006a4a81e0000021e000001",
            "c819001617b30caf00000000a0023908e4370000020405b40402080aab6d56be0000000001030307",
        ));
        inner_syn(&dec(E, &f), 51225, 22);
        // The same frame with one 4-byte option word (option length 1) before the
        // Ethernet frame; and with a protocol type airtrace does not decode.
        let mut with_option = f[..50].to_vec();
        with_option[50 - 8] = 0x01;
        with_option.extend([0x01, 0x02, 0x03, 0x00]);
        with_option.extend(&f[50..]);
        lengthen(&mut with_option, 14, 4);
        inner_syn(&dec(E, &with_option), 51225, 22);
        let mut other = f.clone();
        other[44..46].copy_from_slice(&0x894Fu16.to_be_bytes());
        let stop = dec(E, &other).stop.unwrap();
        assert_eq!(stop.layer, Layer::Tunnel);
        assert!(matches!(stop.reason, StopReason::NotDecoded(_)));
    }

    #[test]
    fn l2tp_v2_carries_a_ppp_frame() {
        // ivre_nb6-http.pcap, frame 53: PPPoE, IPv4, UDP 1701 -> 1701, L2TPv2 data
        // (no length, sequence or offset), PPP FF 03 0057, IPv6, a SYN to port 80.
        let f = hex(concat!(
            "001733610000e0a1d718c273886411003b1a00780021",
            "450000765b5d000040115ee05f88f2636d060148",
            "06a506a500620000",
            "0002 05f7 206a",
            "ff030057",
            "600000000028063f2a005e800101212d050407b12572db222606f200000000070badf00dd00d0001",
            "90aa00501496479e00000000a0026cd41e9c0000020405710402080a000633ce0000000001030307",
        ));
        inner_syn(&dec(E, &f), 37034, 80);
        assert!(dec(E, &f).ip.unwrap().src.is_ipv6());
        // With a length (L), Ns and Nr (S) and an offset of 2 (O): 0x4A02.
        let ppp_at = 22 + 20 + 8 + 6;
        let g = cat(&[
            &f[..22 + 20 + 8],
            &[0x4A, 0x02, 0x00, 0x00],
            &f[22 + 20 + 8 + 2..ppp_at],
            &[0, 1, 0, 2, 0, 2, 0xEE, 0xEE],
            &f[ppp_at..],
        ]);
        let mut g = g;
        let len = (g.len() - (22 + 20 + 8)) as u16;
        g[22 + 20 + 8 + 2..22 + 20 + 8 + 4].copy_from_slice(&len.to_be_bytes());
        lengthen(&mut g, 22, 10);
        // The PPPoE length, too.
        g[18..20].copy_from_slice(&(0x78u16 + 10).to_be_bytes());
        inner_syn(&dec(E, &g), 37034, 80);
        // A control message is plain UDP; L2TPv3 is named as not decoded.
        let mut control = f.clone();
        control[22 + 20 + 8] = 0xC8;
        let d = dec(E, &control);
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
        assert_eq!(d.udp().unwrap().dst_port, 1701);
        let mut v3 = f.clone();
        v3[22 + 20 + 8 + 1] = 0x03;
        assert_eq!(
            dec(E, &v3).stop.unwrap().reason,
            StopReason::NotDecoded("L2TPv3")
        );
    }

    #[test]
    fn ayiya_forwards_an_ip_packet() {
        // zeek_ayiya3.pcap, frame 12: UDP 53859 -> 5072, AYIYA (identity of 2^4 bytes,
        // signature of 5 words, opcode forward, next header 41), IPv6, a SYN to port 80.
        let f = hex(concat!(
            "00062559a2200017f24c7a350800",
            "4500009c45570000401136c8c0a80365d80e6216",
            "d26313d00088a20e",
            "41521129 4af64c05",
            "20014978000f004c0000000000000002",
            "72da85ee3665328a9e17c1f4efb6bbf034211d54",
            "60000000002c064020014978000f004c000000000000000220014860b002000000000000000000",
            "68",
            "d08600505b2abe4900000000b002ffff6e530000020404c4010303010101080a3aa022110000000004020000",
        ));
        inner_syn(&dec(E, &f), 53382, 80);
        // A heartbeat (opcode 0) carries no packet; a payload other than IP is named.
        let mut beat = f.clone();
        beat[42 + 2] = 0x10;
        assert_eq!(dec(E, &beat).stop.unwrap().reason, StopReason::Unsupported);
        let mut other = f.clone();
        other[42 + 3] = 47;
        assert!(matches!(
            dec(E, &other).stop.unwrap().reason,
            StopReason::NotDecoded(_)
        ));
    }

    #[test]
    fn a_tunnel_port_with_a_foreign_header_stays_udp() {
        // VXLAN without its I flag: someone's datagram to port 4789.
        let d = dec(E, &eth(0x0800, &ipv4(17, &udp(40000, 4789, &[0; 16]))));
        assert_eq!(d.udp().unwrap().dst_port, 4789);
        assert_eq!(d.stop.unwrap().reason, StopReason::Unsupported);
        assert_eq!(d.tunnel_depth, 0);
    }
}
