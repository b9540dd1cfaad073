//! TCP header and options: RFC 9293 section 3.1 (header, MSS, NOP, EOL), RFC 3168
//! (ECE, CWR), RFC 7323 (window scale, timestamps), RFC 2018 (SACK).

use crate::decoder::{Cx, Next};
use crate::packet::{Decoded, Layer, Stop, Tcp, Transport, MAX_SACK_BLOCKS};
use crate::read::{be16, be32, malformed, need, truncated};

/// Decode the TCP header at `off`. The segment length comes from the IP length
/// (`cx.end`), so a header-only capture still reports the full `payload_len`.
#[inline(always)]
pub(crate) fn decode(off: usize, cx: &mut Cx<'_>, out: &mut Decoded) -> Result<Next, Stop> {
    let declared = cx.declared_from(off);
    if declared < 20 {
        return Err(malformed(Layer::Tcp, "IP payload shorter than a TCP header"));
    }
    let h = need::<20>(cx.f, off, Layer::Tcp)?;
    let header_len = usize::from(h[12] >> 4) * 4;
    if header_len < 20 {
        return Err(malformed(Layer::Tcp, "TCP data offset below 5"));
    }
    if header_len > declared {
        return Err(malformed(Layer::Tcp, "TCP data offset beyond the IP payload"));
    }
    let captured = cx.f.len();
    let payload = (off + header_len).min(captured);
    out.payload = payload..captured;
    // Fill the value in place: building it on the stack and moving it in costs more
    // than the rest of the decode (narrow stores read back by wide loads).
    out.transport = Transport::Tcp(Tcp::default());
    let Transport::Tcp(tcp) = &mut out.transport else { return Ok(Next::Done) };
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

/// Read the options area: `opts` holds its captured bytes, `declared` its length from
/// the data offset. Unknown options are skipped by their length (RFC 9293 section
/// 3.2: "must be prepared to handle an illegal option length").
#[inline(always)]
fn options(opts: &[u8], declared: usize, tcp: &mut Tcp) -> Result<(), Stop> {
    // Fast path for the layout nearly every segment of a timestamps-enabled connection
    // starts with (RFC 7323 Appendix A): NOP, NOP, TS.
    if let Some(([1, 1, kind::TIMESTAMPS, 10, a, b, c, d, e, f, g, h], rest)) = opts.split_first_chunk() {
        tcp.timestamps = Some((be32([*a, *b, *c, *d]), be32([*e, *f, *g, *h])));
        if rest.is_empty() && declared == 12 {
            return Ok(());
        }
        return options_in_general(rest, declared - 12, tcp);
    }
    options_in_general(opts, declared, tcp)
}

/// The general case of [`options`]: walk the options one by one.
fn options_in_general(opts: &[u8], declared: usize, tcp: &mut Tcp) -> Result<(), Stop> {
    let bad = |what| Err(malformed(Layer::TcpOptions, what));
    let mut i = 0;
    while let Some(&k) = opts.get(i) {
        match k {
            kind::EOL => return Ok(()),
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
