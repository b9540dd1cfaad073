//! TCP header and options: RFC 9293 section 3.1 (header, MSS, NOP, EOL), RFC 3168
//! (ECE, CWR), RFC 7323 (window scale, timestamps), RFC 2018 (SACK).

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Layer, Stop, Tcp, Transport, MAX_SACK_BLOCKS};
use crate::read::{arr, be16, be32, malformed, need, truncated};

/// Decode the TCP header at `off`. The segment length comes from the IP length
/// (`cx.end`), so a header-only capture still reports the full `payload_len`.
#[inline(always)]
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let declared = cx.declared_from(off);
    if declared < 20 {
        return Err(malformed(
            Layer::Tcp,
            "IP payload shorter than a TCP header",
        ));
    }
    let h = need::<20>(cx.f, off, Layer::Tcp)?;
    let header_len = usize::from(h[12] >> 4) * 4;
    if header_len < 20 {
        return Err(malformed(Layer::Tcp, "TCP data offset below 5"));
    }
    if header_len > declared {
        return Err(malformed(
            Layer::Tcp,
            "TCP data offset beyond the IP payload",
        ));
    }
    let captured = cx.f.len();
    let payload = (off + header_len).min(captured);
    out.payload = payload..captured;
    // Filled in place rather than built on the stack and moved in: no copy of the
    // whole value on the hot path.
    out.transport = Transport::Tcp(Tcp::default());
    let Transport::Tcp(tcp) = &mut out.transport else {
        return Ok(Next::Done);
    };
    tcp.src_port = be16([h[0], h[1]]);
    tcp.dst_port = be16([h[2], h[3]]);
    tcp.seq = be32([h[4], h[5], h[6], h[7]]);
    tcp.ack = be32([h[8], h[9], h[10], h[11]]);
    // The NS bit (RFC 3540, now historic) sits below the data offset.
    tcp.flags = u16::from(h[13]) | (u16::from(h[12] & 1) << 8);
    tcp.window = be16([h[14], h[15]]);
    tcp.checksum = be16([h[16], h[17]]);
    tcp.urgent = be16([h[18], h[19]]);
    tcp.header_len = header_len as u16;
    tcp.payload_len = (declared - header_len) as u32;
    let opts = cx.f.get(off + 20..payload).unwrap_or_default();
    let read = options(opts, header_len - 20, tcp);
    read.map(|()| Next::Done)
}

/// TCP option kinds (IANA "TCP Option Kind Numbers").
mod kind {
    pub const EOL: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WINDOW_SCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMPS: u8 = 8;
}

/// TSval and TSecr, if the options area (`declared` bytes, `opts` captured) is exactly
/// NOP, NOP, timestamps: the layout of nearly every segment of a timestamps-enabled
/// connection (RFC 7323 Appendix A). Reading it is then all [`options`] would do.
#[inline(always)]
pub(crate) fn only_timestamps(opts: &[u8], declared: usize) -> Option<(u32, u32)> {
    let o: &[u8; 12] = opts.try_into().ok()?;
    if declared != 12 || be32(arr(o, 0)) != NOP_NOP_TIMESTAMPS {
        return None;
    }
    Some((be32(arr(o, 4)), be32(arr(o, 8))))
}

/// NOP, NOP, then the kind and length of the timestamps option, as one big-endian word.
const NOP_NOP_TIMESTAMPS: u32 = u32::from_be_bytes([kind::NOP, kind::NOP, kind::TIMESTAMPS, 10]);

/// Read the options area: `opts` holds its captured bytes, `declared` its length from
/// the data offset. Options not read here are skipped by their length, as RFC 9293
/// section 3.2 asks of a receiver; an impossible length stops the walk as malformed,
/// keeping what was read before it.
///
/// The layouts Linux sends are read without the walk: NOP, NOP, timestamps (RFC 7323
/// Appendix A), then possibly NOP, NOP, SACK; and the options of its SYNs.
#[inline(always)]
pub(crate) fn options(opts: &[u8], declared: usize, tcp: &mut Tcp) -> Result<(), Stop> {
    let (mut rest, mut declared) = (opts, declared);
    if let Some((ts, after)) = opts.split_first_chunk::<12>() {
        if be32(arr(ts, 0)) == NOP_NOP_TIMESTAMPS {
            tcp.timestamps = Some((be32(arr(ts, 4)), be32(arr(ts, 8))));
            (rest, declared) = (after, declared - 12);
        }
    }
    if rest.len() == declared
        && (rest.is_empty() || only_sack(rest, tcp) || only_syn_options(rest, tcp))
    {
        return Ok(());
    }
    options_in_general(rest, declared, tcp)
}

/// Read `opts` if it is exactly the options of Linux's SYN and SYN-ACK segments: MSS,
/// SACK permitted, timestamps, NOP, window scale; `false` if it is not.
#[inline(always)]
fn only_syn_options(opts: &[u8], tcp: &mut Tcp) -> bool {
    let Ok(o) = <&[u8; 20]>::try_from(opts) else {
        return false;
    };
    let mss = [kind::MSS, 4];
    let sack_permitted_timestamps = [kind::SACK_PERMITTED, 2, kind::TIMESTAMPS, 10];
    let nop_window_scale = [kind::NOP, kind::WINDOW_SCALE, 3];
    if o[..2] != mss || o[4..8] != sack_permitted_timestamps || o[16..19] != nop_window_scale {
        return false;
    }
    tcp.mss = Some(be16([o[2], o[3]]));
    tcp.sack_permitted = true;
    tcp.timestamps = Some((be32(arr(o, 8)), be32(arr(o, 12))));
    tcp.window_scale = Some(o[19]);
    true
}

/// [`options`], recording a stop in `stop` (which is left alone otherwise). Returning
/// the `Result` would take a stack slot in the caller, and so a stack frame in the
/// fast path.
#[inline(never)]
pub(crate) fn options_or_stop(
    opts: &[u8],
    declared: usize,
    tcp: &mut Tcp,
    stop: &mut Option<Stop>,
) {
    if let Err(s) = options(opts, declared, tcp) {
        *stop = Some(s);
    }
}

/// Read `opts` if it is exactly NOP, NOP, SACK with one to four blocks (RFC 2018
/// section 3), into a `tcp` that holds no SACK block yet; `false` if it is not.
#[inline(always)]
fn only_sack(opts: &[u8], tcp: &mut Tcp) -> bool {
    let Some((head, blocks)) = opts.split_first_chunk::<4>() else {
        return false;
    };
    let n = blocks.len() / 8;
    if blocks.len() % 8 != 0 || !(1..=MAX_SACK_BLOCKS).contains(&n) {
        return false;
    }
    // n <= 4: the option length 2 + 8n fits its byte.
    if be32(*head) != u32::from_be_bytes([kind::NOP, kind::NOP, kind::SACK, 2 + 8 * n as u8]) {
        return false;
    }
    for (edges, b) in tcp.sack.iter_mut().zip(blocks.chunks_exact(8)) {
        *edges = (
            be32([b[0], b[1], b[2], b[3]]),
            be32([b[4], b[5], b[6], b[7]]),
        );
    }
    tcp.sack_count = n as u8;
    true
}

/// The general case of [`options`]: walk the options one by one.
fn options_in_general(opts: &[u8], declared: usize, tcp: &mut Tcp) -> Result<(), Stop> {
    let bad = |what| Err(malformed(Layer::TcpOptions, what));
    let mut i = 0;
    while let Some(&k) = opts.get(i) {
        match k {
            // The rest of the area is padding; it still has to be captured for the
            // header to be whole.
            kind::EOL => break,
            kind::NOP => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(&len) = opts.get(i + 1) else {
            return if i + 1 < declared {
                Err(truncated(Layer::TcpOptions))
            } else {
                bad("TCP option without a length byte")
            };
        };
        let len = usize::from(len);
        if len < 2 {
            return bad("TCP option length below 2");
        }
        if i + len > declared {
            return bad("TCP option runs past the header");
        }
        let Some(body) = opts.get(i + 2..i + len) else {
            return Err(truncated(Layer::TcpOptions));
        };
        match (k, body) {
            (kind::MSS, &[a, b]) => tcp.mss = Some(be16([a, b])),
            (kind::MSS, _) => return bad("TCP MSS option length is not 4"),
            (kind::WINDOW_SCALE, &[shift]) => tcp.window_scale = Some(shift),
            (kind::WINDOW_SCALE, _) => return bad("TCP window scale option length is not 3"),
            (kind::SACK_PERMITTED, []) => tcp.sack_permitted = true,
            (kind::SACK_PERMITTED, _) => return bad("TCP SACK-permitted option length is not 2"),
            (kind::SACK, _) => {
                if body.is_empty() || body.len() % 8 != 0 {
                    return bad("TCP SACK option length is not 2 + 8n");
                }
                for block in body.chunks_exact(8) {
                    let n = usize::from(tcp.sack_count);
                    if n == MAX_SACK_BLOCKS {
                        break;
                    }
                    tcp.sack[n] = (
                        be32([block[0], block[1], block[2], block[3]]),
                        be32([block[4], block[5], block[6], block[7]]),
                    );
                    tcp.sack_count += 1;
                }
            }
            (kind::TIMESTAMPS, &[a, b, c, d, e, f, g, h]) => {
                tcp.timestamps = Some((be32([a, b, c, d]), be32([e, f, g, h])))
            }
            (kind::TIMESTAMPS, _) => return bad("TCP timestamps option length is not 10"),
            _ => {}
        }
        i += len;
    }
    if opts.len() < declared {
        return Err(truncated(Layer::TcpOptions));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::packet::{tcp_flags, Decoded, Layer, StopReason, Tcp};
    use crate::testutil::*;
    use crate::{decode, LinkType};

    const RAW: LinkType = LinkType::IPV4;

    fn with_options(options: &[u8]) -> Decoded {
        dec(RAW, &ipv4(6, &tcp(options, &[7; 3])))
    }

    fn tcp_of(d: &Decoded) -> Tcp {
        *d.tcp().unwrap()
    }

    #[test]
    fn header_fields() {
        let mut p = ipv4(6, &tcp(&[], &[]));
        p[20 + 12] |= 1; // NS
        p[20 + 13] = 0xFF; // every flag
        p[20 + 16..20 + 20].copy_from_slice(&[0xAB, 0xCD, 0x00, 0x07]);
        let t = tcp_of(&dec(RAW, &p));
        assert_eq!(
            (t.src_port, t.dst_port, t.seq, t.ack),
            (1234, 80, 1000, 2000)
        );
        assert_eq!(
            (t.window, t.checksum, t.urgent, t.header_len, t.payload_len),
            (4096, 0xABCD, 7, 20, 0)
        );
        assert_eq!(t.flags, 0x1FF);
        assert!(t.has(tcp_flags::NS) && t.has(tcp_flags::CWR) && t.has(tcp_flags::FIN));
    }

    #[test]
    fn every_option_kind() {
        // MSS (RFC 9293 3.2), NOP, window scale (RFC 7323 2.2), SACK-permitted (RFC 2018
        // 2), timestamps (RFC 7323 3.2), an unknown kind 30 of length 4, EOL, padding.
        let opts = [
            2, 4, 0x05, 0xB4, 1, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 30, 4, 0, 0, 0, 0,
            0, 0,
        ];
        let d = with_options(&opts);
        assert_eq!(d.stop, None);
        let t = tcp_of(&d);
        assert_eq!(
            (t.mss, t.window_scale, t.sack_permitted, t.timestamps),
            (Some(1460), Some(7), true, Some((1, 2)))
        );
        assert_eq!((t.header_len, t.payload_len), (48, 3));
        assert_eq!(d.payload.len(), 3);
    }

    #[test]
    fn sack_blocks_one_to_four() {
        for n in 1..=4u32 {
            let mut opts = vec![1, 1, 5, (2 + 8 * n) as u8];
            for i in 0..n {
                opts.extend_from_slice(&(100 * i).to_be_bytes());
                opts.extend_from_slice(&(100 * i + 50).to_be_bytes());
            }
            let t = tcp_of(&with_options(&opts));
            let want: Vec<(u32, u32)> = (0..n).map(|i| (100 * i, 100 * i + 50)).collect();
            assert_eq!(t.sack_blocks(), &want[..]);
        }
        // The usual Linux layout: NOP NOP TS NOP NOP SACK.
        let opts = [
            1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8, 1, 1, 5, 10, 0, 0, 1, 0, 0, 0, 2, 0,
        ];
        let t = tcp_of(&with_options(&opts));
        assert_eq!(
            (t.timestamps, t.sack_blocks()),
            (Some((9, 8)), &[(256, 512)][..])
        );
    }

    #[test]
    fn malformed_options_keep_the_header() {
        for (opts, what) in [
            (&[1, 1, 30, 1][..], "TCP option length below 2"),
            (&[1, 1, 30, 9][..], "TCP option runs past the header"),
            (&[2, 3, 0, 1][..], "TCP MSS option length is not 4"),
            (&[3, 2, 1, 1][..], "TCP window scale option length is not 3"),
            (
                &[4, 3, 0, 1][..],
                "TCP SACK-permitted option length is not 2",
            ),
            (
                &[5, 6, 0, 0, 0, 0, 1, 1][..],
                "TCP SACK option length is not 2 + 8n",
            ),
            (
                &[8, 6, 0, 0, 0, 0, 1, 1][..],
                "TCP timestamps option length is not 10",
            ),
            (&[1, 1, 1, 30][..], "TCP option without a length byte"),
        ] {
            let d = with_options(opts);
            assert_eq!(d.stop.unwrap().layer, Layer::TcpOptions, "{opts:?}");
            assert_eq!(
                d.stop.unwrap().reason,
                StopReason::Malformed(what),
                "{opts:?}"
            );
            assert_eq!(tcp_of(&d).dst_port, 80);
            assert_eq!(tcp_of(&d).payload_len, 3);
        }
    }

    #[test]
    fn options_cut_by_the_snap_length() {
        // 12 bytes of options, 6 captured: the MSS option is read, then the capture ends.
        let p = ipv4(
            6,
            &tcp(&[2, 4, 0x05, 0xB4, 1, 1, 8, 10, 0, 0, 0, 1], &[0; 100]),
        );
        let mut d = Decoded::default();
        decode(RAW, &p[..46], p.len() as u32, &mut d);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::TcpOptions, StopReason::Truncated)
        );
        let t = tcp_of(&d);
        assert_eq!((t.mss, t.payload_len), (Some(1460), 100));
        assert_eq!(d.payload, 46..46);
    }

    #[test]
    fn header_only_capture_reports_the_full_segment_length() {
        let p = ipv4(6, &tcp(&[], &[0; 1448]));
        let mut d = Decoded::default();
        decode(RAW, &p[..54], p.len() as u32, &mut d);
        assert_eq!(d.stop, None);
        assert_eq!(tcp_of(&d).payload_len, 1448);
        assert_eq!(d.payload, 40..54);
    }

    #[test]
    fn impossible_data_offsets() {
        let mut p = ipv4(6, &tcp(&[], &[]));
        p[32] = 4 << 4;
        let d = dec(RAW, &p);
        assert_eq!(
            d.stop.unwrap().reason,
            StopReason::Malformed("TCP data offset below 5")
        );
        assert!(d.tcp().is_none());
        let mut p = ipv4(6, &tcp(&[], &[0; 8]));
        p[32] = 8 << 4; // 32-byte header in a 28-byte IP payload
        let d = dec(RAW, &p);
        assert_eq!(
            d.stop.unwrap().reason,
            StopReason::Malformed("TCP data offset beyond the IP payload")
        );
        let d = dec(RAW, &ipv4(6, &[0; 12]));
        assert_eq!(
            d.stop.unwrap().reason,
            StopReason::Malformed("IP payload shorter than a TCP header")
        );
    }

    #[test]
    fn the_layout_readers_agree_with_the_walk() {
        // `options` reads the usual layouts without walking them: it must give what
        // the walk gives, whatever the bytes and the declared and captured lengths.
        let ts = [1u8, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8];
        let sack = |n: usize| {
            let mut o = vec![1, 1, 5, (2 + 8 * n) as u8];
            o.extend((0..8 * n as u8).map(|b| b.wrapping_mul(37)));
            o
        };
        let syn = [
            2u8, 4, 5, 0xB4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ];
        let mut layouts: Vec<Vec<u8>> = vec![ts.to_vec(), syn.to_vec()];
        // Five blocks fit in the options area only without timestamps; the walk keeps
        // the first four.
        for n in 1..=5 {
            layouts.push(sack(n));
            layouts.push(cat(&[&ts, &sack(n)]));
        }
        let same = |opts: &[u8], declared: usize| {
            let (mut a, mut b) = (Tcp::default(), Tcp::default());
            let ra = super::options(opts, declared, &mut a);
            let rb = super::options_in_general(opts, declared, &mut b);
            assert_eq!((ra, a), (rb, b), "options {opts:?}, declared {declared}");
        };
        for o in &layouts {
            for declared in [o.len(), o.len() + 4, o.len().saturating_sub(4)] {
                for cut in 0..=o.len().min(declared) {
                    same(&o[..cut], declared);
                }
            }
            for at in 0..o.len() {
                for value in [
                    0,
                    1,
                    2,
                    3,
                    4,
                    5,
                    8,
                    9,
                    10,
                    11,
                    17,
                    18,
                    26,
                    34,
                    42,
                    0xFF,
                    o[at] ^ 0x80,
                ] {
                    let mut m = o.clone();
                    m[at] = value;
                    same(&m, m.len());
                }
            }
        }
    }

    #[test]
    fn truncated_fixed_header() {
        let p = ipv4_tcp(0);
        let mut d = Decoded::default();
        decode(RAW, &p[..39], p.len() as u32, &mut d);
        assert_eq!(
            (d.stop.unwrap().layer, d.stop.unwrap().reason),
            (Layer::Tcp, StopReason::Truncated)
        );
        assert!(d.tcp().is_none() && d.ip.is_some());
    }
}
