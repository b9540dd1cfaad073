//! Round trip: stacks built with etherparse's `PacketBuilder` decode to the values they
//! were built from.

mod common;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use airtrace_wire::{decode, tcp_flags, Decoded};
use common::{spec, Spec, Transport};
use etherparse::TcpOptionElement;
use proptest::prelude::*;

fn addr(spec: &Spec, a: [u8; 16]) -> IpAddr {
    if spec.ipv6 {
        IpAddr::V6(Ipv6Addr::from(a))
    } else {
        IpAddr::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3]))
    }
}

fn check(spec: &Spec, frame: &[u8], d: &Decoded) {
    assert_eq!(d.stop, None);
    assert_eq!(d.tunnel_depth, spec.link.tunnel_depth());
    let ip = d.ip.unwrap();
    assert_eq!(
        (ip.src, ip.dst, ip.ttl),
        (addr(spec, spec.src), addr(spec, spec.dst), spec.ttl)
    );
    let ip_start = spec.link.header_len() + spec.ip_header_len();
    assert_eq!(d.ip_payload, ip_start..frame.len());
    assert_eq!(&frame[d.payload.clone()], &spec.payload[..]);
    match &spec.transport {
        Transport::Udp(s, dst) => {
            let u = d.udp().unwrap();
            assert_eq!(
                (u.src_port, u.dst_port, u.payload_len),
                (*s, *dst, spec.payload.len() as u32)
            );
            assert_eq!(ip.protocol, 17);
        }
        Transport::Tcp(t) => {
            let got = d.tcp().unwrap();
            assert_eq!(ip.protocol, 6);
            assert_eq!(
                (got.src_port, got.dst_port),
                (t.source_port, t.destination_port)
            );
            assert_eq!(
                (got.seq, got.ack),
                (t.sequence_number, t.acknowledgment_number)
            );
            assert_eq!((got.window, got.urgent), (t.window_size, t.urgent_pointer));
            // The builder fills in the checksum.
            assert_eq!(
                got.checksum.to_be_bytes(),
                frame[ip_start + 16..ip_start + 18]
            );
            assert_eq!(usize::from(got.header_len), t.header_len());
            assert_eq!(got.payload_len as usize, spec.payload.len());
            let flags = [
                (t.fin, tcp_flags::FIN),
                (t.syn, tcp_flags::SYN),
                (t.rst, tcp_flags::RST),
                (t.psh, tcp_flags::PSH),
                (t.ack, tcp_flags::ACK),
                (t.urg, tcp_flags::URG),
                (t.ece, tcp_flags::ECE),
                (t.cwr, tcp_flags::CWR),
                (t.ns, tcp_flags::NS),
            ];
            for (set, bit) in flags {
                assert_eq!(got.has(bit), set, "flag {bit:#x}");
            }
            let (mut mss, mut ws, mut sack_ok, mut ts, mut sack) =
                (None, None, false, None, vec![]);
            for o in t.options_iterator() {
                match o.unwrap() {
                    TcpOptionElement::MaximumSegmentSize(v) => mss = Some(v),
                    TcpOptionElement::WindowScale(v) => ws = Some(v),
                    TcpOptionElement::SelectiveAcknowledgementPermitted => sack_ok = true,
                    TcpOptionElement::Timestamp(a, b) => ts = Some((a, b)),
                    TcpOptionElement::SelectiveAcknowledgement(first, more) => {
                        sack.push(first);
                        sack.extend(more.iter().flatten());
                    }
                    TcpOptionElement::Noop => {}
                }
            }
            assert_eq!(
                (
                    got.mss,
                    got.window_scale,
                    got.sack_permitted,
                    got.timestamps
                ),
                (mss, ws, sack_ok, ts)
            );
            assert_eq!(got.sack_blocks(), &sack[..]);
        }
    }
}

proptest! {
    #[test]
    fn built_stacks_decode_to_their_values(spec in spec()) {
        let frame = spec.build();
        let mut d = Decoded::default();
        decode(spec.link.link_type(), &frame, frame.len() as u32, &mut d);
        check(&spec, &frame, &d);
    }

    /// Decoding into a `Decoded` that holds another frame's values gives the same result.
    #[test]
    fn decode_overwrites_everything(a in spec(), b in spec()) {
        let (fa, fb) = (a.build(), b.build());
        let mut fresh = Decoded::default();
        decode(b.link.link_type(), &fb, fb.len() as u32, &mut fresh);
        let mut reused = Decoded::default();
        decode(a.link.link_type(), &fa, fa.len() as u32, &mut reused);
        decode(b.link.link_type(), &fb, fb.len() as u32, &mut reused);
        prop_assert_eq!(fresh, reused);
    }
}
