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
//! - `ipv4`, `ipv6` (with extension headers), `gtp` (GTP-U tunnels), `tcp` (with
//!   options), `udp`.
//! - `decoder`: the loop that runs the layers: each reads its header and names the next.
//! - `read`: bounds-checked field reads shared by all layers.
//! - [`reassembly`]: [`Reassembler`], IPv4 fragment reassembly with bounded memory.
//!
//! # Speed, and why the hot path does not use etherparse
//!
//! The analyzer must run at 10 million packets/s on one core, which leaves about 25 ns
//! for decoding a typical frame. `cargo run --release -p airtrace-wire --example
//! decode_speed` times 10 million decodes per frame kind (best of 10 rounds); on the
//! 2-vCPU development VM one run gave, for Ethernet + IPv4 + TCP with timestamps and
//! 1448 bytes of data (instructions per frame counted with
//! `valgrind --tool=cachegrind`, which unlike time does not depend on the load):
//!
//! | decoder                                                               | time    | instructions |
//! |-----------------------------------------------------------------------|---------|--------------|
//! | etherparse 0.21 `LaxSlicedPacket::from_ethernet` + TCP option iterator | 105 ns  | 733          |
//! | etherparse `Ethernet2Slice` + `LaxIpv4Slice` + `TcpSlice` + options    | 30 ns   | 308          |
//! | [`decode`]                                                            | 21 ns   | 303          |
//!
//! and with three SACK blocks: 117 ns / 926, 42 ns / 501 and 30 ns / 439. Times
//! double while the other vCPU is busy. etherparse's lax slicing is four times over
//! the budget; its per-layer slices miss it too, while doing less than [`decode`]
//! (no VLAN/MPLS/tunnel walking, no per-layer stop reasons, no [`Decoded`] to fill). So
//! the hot path (Ethernet, VLAN, IPv4, IPv6, TCP, UDP) reads the headers directly, as
//! do the layers etherparse does not cover (radiotap, 802.11, SLL, FDDI, GTP-U...);
//! etherparse builds the packets of the round-trip tests. Other frames of the example:
//! VLAN + IPv6 26 ns / 350 instructions, SLL + GTP-U + IPv6 40 ns / 546, radiotap +
//! 802.11 + LLC 84 ns / 858.

mod decoder;
mod ethernet;
mod fddi;
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
pub fn decode(link: LinkType, frame: &[u8], orig_len: u32, out: &mut Decoded) {
    reset(out);
    let end = (orig_len as usize).max(frame.len());
    let mut cx = Cx { f: frame, end };
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
    let Decoded { radiotap, wlan, ip, tunnel_depth, transport, payload, ip_payload, stop } = out;
    *radiotap = None;
    *wlan = None;
    *ip = None;
    *tunnel_depth = 0;
    *transport = Transport::None;
    *payload = 0..0;
    *ip_payload = 0..0;
    *stop = None;
}
