//! Hand-built headers for the unit tests. Each builder writes the fields in the order of
//! the cited layout, with fixed, recognisable values.

use crate::{decode, Decoded, LinkType};

/// Decode `frame` as captured whole.
pub fn dec(link: LinkType, frame: &[u8]) -> Decoded {
    let mut d = Decoded::default();
    decode(link, frame, frame.len() as u32, &mut d);
    d
}

/// Concatenate byte strings.
pub fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// Ethernet II header (IEEE 802.3 clause 3.2): destination 02:00:00:00:00:02, source
/// 02:00:00:00:00:01, then `ty`.
pub fn eth(ty: u16, payload: &[u8]) -> Vec<u8> {
    cat(&[
        &[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1],
        &ty.to_be_bytes(),
        payload,
    ])
}

/// IPv4 header without options (RFC 791 section 3.1): 0x45, TOS 0, total length, ID
/// 0x1234, no fragmentation, TTL 64, `proto`, checksum 0 (not checked), 10.0.0.1 ->
/// 10.0.0.2.
pub fn ipv4(proto: u8, payload: &[u8]) -> Vec<u8> {
    let total = (20 + payload.len()) as u16;
    cat(&[
        &[0x45, 0],
        &total.to_be_bytes(),
        &[0x12, 0x34, 0, 0, 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2],
        payload,
    ])
}

/// IPv6 header (RFC 8200 section 3): version 6, traffic class 0, flow label 0, payload
/// length, `next`, hop limit 64, 2001:db8::1 -> 2001:db8::2.
pub fn ipv6(next: u8, payload: &[u8]) -> Vec<u8> {
    let mut addr = [0u8; 16];
    addr[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    let (mut src, mut dst) = (addr, addr);
    src[15] = 1;
    dst[15] = 2;
    cat(&[
        &[0x60, 0, 0, 0],
        &(payload.len() as u16).to_be_bytes(),
        &[next, 64],
        &src,
        &dst,
        payload,
    ])
}

/// TCP header (RFC 9293 section 3.1): ports 1234 -> 80, seq 1000, ack 2000, data offset
/// from `options` (which must be a multiple of 4 bytes), flags ACK|PSH, window 4096,
/// checksum 0, urgent 0.
pub fn tcp(options: &[u8], payload: &[u8]) -> Vec<u8> {
    assert_eq!(options.len() % 4, 0);
    let offset = ((20 + options.len()) / 4) as u8;
    cat(&[
        &[
            0x04,
            0xD2,
            0,
            80,
            0,
            0,
            0x03,
            0xE8,
            0,
            0,
            0x07,
            0xD0,
            offset << 4,
            0x18,
            0x10,
            0,
            0,
            0,
            0,
            0,
        ],
        options,
        payload,
    ])
}

/// UDP header (RFC 768): ports, length, checksum 0.
pub fn udp(src: u16, dst: u16, payload: &[u8]) -> Vec<u8> {
    cat(&[
        &src.to_be_bytes(),
        &dst.to_be_bytes(),
        &((8 + payload.len()) as u16).to_be_bytes(),
        &[0, 0],
        payload,
    ])
}

/// An IPv4 + TCP packet with `payload_len` bytes of payload (0xAB), no options.
pub fn ipv4_tcp(payload_len: usize) -> Vec<u8> {
    ipv4(6, &tcp(&[], &vec![0xAB; payload_len]))
}

/// LLC/SNAP header with the RFC 1042 OUI (RFC 1042; IEEE 802-2014 clause 10.3).
pub fn snap(ty: u16) -> Vec<u8> {
    cat(&[&[0xAA, 0xAA, 0x03, 0, 0, 0], &ty.to_be_bytes()])
}

/// Bytes from hexadecimal digits (spaces ignored), for frames copied from captures.
pub fn hex(digits: &str) -> Vec<u8> {
    let d: Vec<u8> = digits
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    d.chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}
