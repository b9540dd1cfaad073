//! Decoding of captured frames into a [`Decoded`] summary.
//!
//! Start at [`decode`]: give it a frame, its link type and its original length, and it
//! fills a [`Decoded`] with the radio header, the 802.11 header, the innermost IP header
//! and the TCP or UDP header. Decoding never panics, never allocates and never reads
//! past the captured bytes: a frame cut short by the snap length decodes as far as it
//! goes, and [`Decoded::stop`] records the layer where it stopped and why.
//!
//! ```
//! use airtrace_wire::{decode, Decoded, LinkType};
//! # let frame = [0u8; 0];
//! let mut d = Decoded::default();
//! decode(LinkType::ETHERNET, &frame, frame.len() as u32, &mut d);
//! if let Some(tcp) = d.tcp() {
//!     println!("{} -> {} seq {} len {}", tcp.src_port, tcp.dst_port, tcp.seq, tcp.payload_len);
//! }
//! ```
//!
//! Map of the code, one module per header, in the order a frame meets them:
//! - [`packet`]: the decoded value types (`Decoded`, `Ip`, `Tcp`, `Udp`, `Wlan`, `Radiotap`).
//! - `linktype`: [`LinkType`], its names, and the first header of each link type.
//! - `ethernet` (Ethernet II, 802.3, VLAN, MPLS, PPPoE, LLC/SNAP), `sll` (Linux cooked
//!   v1/v2), `loopback` (NULL, LOOP), `ppp`, `fddi`, `radiotap`, `ieee80211`.
//! - `ipv4`, `ipv6` (with extension headers), `gtp` (GTP-U tunnels), `gre` (GRE
//!   tunnels: IP, Ethernet, ERSPAN, Aruba's 802.11), `tcp` (with options), `udp`,
//!   `udp_tunnel` (VXLAN, Geneve, L2TPv2, AYIYA).
//! - `fast`: the fast path, which decodes the common stacks straight through before the
//!   general decoder is tried (see "Speed" below).
//! - `decoder`: the loop that runs the layers: each reads its header and names the next.
//! - `read`: bounds-checked field reads shared by all layers.
//! - [`reassembly`]: [`Reassembler`], IPv4 fragment reassembly with bounded memory.
//!
//! # Speed
//!
//! The analyzer must run at 10 million packets/s on one core: about 500 instructions
//! per packet for reading, decoding and TCP analysis together, of which decoding should
//! take at most about 120. `cargo run --release -p airtrace-wire --example decode_speed
//! [iterations [filter]]` times 10 million decodes per frame kind (best of 10 rounds).
//! Times on the shared 2-vCPU VM vary with its load, so the figures below are
//! instruction counts, which do not: the difference between two runs of the example
//! under cachegrind, divided by the difference in iterations (the example's loop, about
//! 17 instructions a frame, included):
//!
//! ```text
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decode_speed 100000 "decode: ethernet ipv4 tcp+ts 1448B"
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decode_speed 300000 "decode: ethernet ipv4 tcp+ts 1448B"
//! ```
//!
//! and, for a real capture, between reading it and reading and decoding it
//! (`examples/decode_capture.rs`, 200,000 frames of iperf3 bulk TCP, snap length 96):
//!
//! ```text
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decode_capture slice200k.pcap read
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decode_capture slice200k.pcap decode
//! ```
//!
//! Instructions per frame, before the fast path (the general decoder alone) and with it:
//!
//! | frame                                                  | before | after |
//! |--------------------------------------------------------|--------|-------|
//! | Ethernet + IPv4 + TCP (NOP, NOP, timestamps)           | 302    | 152   |
//! | the same, with NOP, NOP, SACK (3 blocks)               | 438    | 227   |
//! | the same, a SYN (MSS, SACK permitted, timestamps, WS)  | 451    | 216   |
//! | Ethernet + IPv4 + UDP                                  | 251    | 110   |
//! | Ethernet + IPv6 + TCP (timestamps)                     | 321    | 177   |
//! | Ethernet + 802.1Q + IPv6 + TCP (timestamps)            | 349    | 191   |
//! | Linux SLL + IPv4 + TCP (timestamps)                    | 311    | 185   |
//! | raw IPv4 + TCP (timestamps)                            | 303    | 184   |
//! | Linux SLL + IPv4 + UDP + GTP-U + IPv6 + TCP            | 545    | 272   |
//! | radiotap + 802.11 QoS data + LLC + IPv4 + TCP          | 858    | 833   |
//! | the real capture (decode alone: decode run − read run) | 310    | 156   |
//!
//! The fast path (module `fast`) gets there by doing only what those frames need: it
//! checks each header against the common case (whole, no IP options or extension
//! headers, no stop) and then writes every field of [`Decoded`] once, in place; the
//! general decoder first resets the whole value and passes a `Next` enum through its
//! loop between layers (each round trip spilled to the stack and dispatched by a jump
//! table, about 15 instructions), and checks bounds again at each layer. The common TCP
//! option layouts (NOP NOP TS, NOP NOP SACK, Linux's SYN options) are read without
//! walking the options. Resetting [`Decoded`] had cost only about 12 instructions: a
//! `None` writes just its tag, however large `Option<Radiotap>` is. The budget of 120
//! is not met yet: what remains of the 152 (about 135 in `decode` itself) is mostly the
//! ~40 field stores of [`Decoded`], with their loads and byte swaps, and the header
//! checks.
//!
//! Two things the code avoids on purpose, each measured at 10 to 15 instructions: building
//! an `Ip` or `Tcp` value whole before storing it (it is assembled in registers and
//! spilled), and an ordinary call in a function that may still hand the frame on to
//! the next decoder (the arguments must then be kept in callee-saved registers, so the
//! function saves and restores them on every frame). Hence [`decode`] is a chain of tail
//! calls: Ethernet + IPv4, inlined, with constant header offsets; other Ethernet (VLAN
//! tags, IPv6); the other link types and GTP-U; the general decoder, whose loop also
//! uses the fast path's IP and transport layers (so radiotap + 802.11, PPP or MPLS
//! frames share them).
//!
//! ## Why the hot path does not use etherparse
//!
//! Measured before the fast path, for Ethernet + IPv4 + TCP with timestamps and 1448
//! bytes of data (instructions counted as above; times from one run on the VM, which
//! double while the other vCPU is busy):
//!
//! | decoder                                                               | time    | instructions |
//! |-----------------------------------------------------------------------|---------|--------------|
//! | etherparse 0.21 `LaxSlicedPacket::from_ethernet` + TCP option iterator | 105 ns  | 733          |
//! | etherparse `Ethernet2Slice` + `LaxIpv4Slice` + `TcpSlice` + options    | 30 ns   | 308          |
//! | [`decode`], general decoder alone                                     | 21 ns   | 303          |
//!
//! and with three SACK blocks: 117 ns / 926, 42 ns / 501 and 30 ns / 439. etherparse's
//! lax slicing is four times over the budget; its per-layer slices miss it too, while
//! doing less than [`decode`] (no VLAN/MPLS/tunnel walking, no per-layer stop reasons, no
//! [`Decoded`] to fill). So the hot path (Ethernet, VLAN, IPv4, IPv6, TCP, UDP) reads the
//! headers directly, as do the layers etherparse does not cover (radiotap, 802.11, SLL,
//! FDDI, GTP-U...); etherparse builds the packets of the round-trip tests.

mod decoder;
mod dsr;
mod ethernet;
mod fast;
mod fddi;
mod gre;
mod gtp;
mod ieee80211;
mod ipv4;
mod ipv6;
mod linktype;
mod loopback;
pub mod packet;
mod ppp;
mod radiotap;
mod read;
pub mod reassembly;
mod sll;
mod tcp;
#[cfg(test)]
mod testutil;
mod udp;
mod udp_tunnel;

pub use fast::peek_tcp;
pub use linktype::{linktype_name, LinkType};
pub use packet::*;
pub use reassembly::{Push, Reassembler};

use decoder::Cx;

/// Decode `frame`, captured with link type `link`, into `out` (overwritten).
///
/// `orig_len` is the frame's length on the wire (the pcap record's original length;
/// pass `frame.len()` if unknown). It is used where the headers themselves give no
/// length: an IPv4 total length of 0 (captures of TCP segmentation offload) and
/// locating a radiotap-announced FCS.
///
/// On return, `out.stop` is `None` if every header up to the transport payload was
/// decoded (or the frame simply has no more headers, e.g. an 802.11 ACK or an ICMP
/// packet, whose protocol is in [`Transport::Other`]).
#[inline(always)]
pub fn decode(link: LinkType, frame: &[u8], orig_len: u32, out: &mut Decoded) {
    // Each decoder below hands over to the next by a tail call, so that none needs to
    // keep the arguments aside (in callee-saved registers) for the next.
    if link != LinkType::ETHERNET {
        decode_other_stacks(link, frame, orig_len, out);
    } else if !fast::ethernet_ipv4(frame, out) {
        decode_ethernet(frame, orig_len, out);
    }
}

/// [`decode`] for Ethernet frames other than IPv4 + TCP/UDP: the fast path for VLAN
/// tags and IPv6, else [`decode_other_stacks`].
#[inline(never)]
fn decode_ethernet(frame: &[u8], orig_len: u32, out: &mut Decoded) {
    if !fast::ethernet(frame, out) {
        decode_other_stacks(LinkType::ETHERNET, frame, orig_len, out);
    }
}

/// [`decode`] for the other link types, and for Ethernet frames carrying GTP-U: the
/// rest of the fast path, else the general decoder.
#[inline(never)]
fn decode_other_stacks(link: LinkType, frame: &[u8], orig_len: u32, out: &mut Decoded) {
    if !fast::decode(link, frame, out) {
        decode_in_general(link, frame, orig_len, out);
    }
}

/// [`decode`] for the frames the fast path does not take: reset `out`, then run the
/// layers one by one through the decode loop.
#[inline(never)]
fn decode_in_general(link: LinkType, frame: &[u8], orig_len: u32, out: &mut Decoded) {
    reset(out);
    let end = (orig_len as usize).max(frame.len());
    let mut cx = Cx {
        f: frame,
        end,
        bound: usize::MAX,
    };
    match linktype::start(link, &mut cx, out) {
        Ok(next) => decoder::run(next, &mut cx, out),
        Err(stop) => out.stop = Some(stop),
    }
}

/// Overwrite `out` with the empty value, field by field (cheaper than building a whole
/// `Decoded` and moving it in: the `None` variants need only their tags written). The
/// destructuring makes a new field of `Decoded` a compile error here until it is reset.
#[inline(always)]
fn reset(out: &mut Decoded) {
    let Decoded {
        radiotap,
        wlan,
        ip,
        tunnel_depth,
        transport,
        payload,
        ip_payload,
        stop,
    } = out;
    *radiotap = None;
    *wlan = None;
    *ip = None;
    *tunnel_depth = 0;
    *transport = Transport::None;
    *payload = 0..0;
    *ip_payload = 0..0;
    *stop = None;
}
