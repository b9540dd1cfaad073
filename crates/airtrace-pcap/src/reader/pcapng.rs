//! pcapng (draft-ietf-opsawg-pcapng): a sequence of blocks, grouped in sections that
//! each start with a Section Header Block (SHB) setting the byte order, followed by the
//! Interface Description Blocks (IDB) of the section's interfaces and the packets.
//!
//! Framing is done here: every block is checked (length at least 12, a multiple of 4,
//! equal to the trailing copy, within [`MAX_BLOCK_LEN`]) and read whole before it is
//! parsed, so that a parser never sees a partial block. The SHB, IDB and Simple Packet
//! Block are then parsed by pcap-parser; the Enhanced Packet Block, the hot path, is
//! parsed here (see [`NgState::enhanced_packet_fast`]), as is the obsolete Packet Block, which
//! pcap-parser does not know. The Interface Statistics Block is read for its drop
//! counters (see [`NgState::statistics`]). Other blocks are skipped; Custom and systemd
//! Journal Export blocks still take a frame number, as in tshark.

use pcap_parser::pcapng::{
    parse_interfacedescriptionblock_be, parse_interfacedescriptionblock_le,
    parse_sectionheaderblock, parse_simplepacketblock_be, parse_simplepacketblock_le, OptionCode,
};

use super::{end_of_input, u32_at, Failure, Interface, Meta, MAX_CAPLEN};
use crate::error::Place;
use crate::input::Input;
use crate::time::{saturate_ns, Scale, TsResolution};

/// Section Header Block type; the same in both byte orders.
pub(super) const SHB_TYPE: u32 = 0x0A0D_0D0A;
const IDB_TYPE: u32 = 1;
/// The obsolete Packet Block (draft-ietf-opsawg-pcapng, Appendix A).
const PB_TYPE: u32 = 2;
const SPB_TYPE: u32 = 3;
/// Interface Statistics Block.
const ISB_TYPE: u32 = 5;
/// ISB options counting packets the capture lost: `isb_ifdrop` (dropped by the
/// interface, for lack of buffers) and `isb_osdrop` (dropped by the operating system)
/// (draft-ietf-opsawg-pcapng §4.6).
const ISB_IFDROP: u16 = 5;
const ISB_OSDROP: u16 = 7;
const EPB_TYPE: u32 = 6;
/// Systemd Journal Export Block.
const SJE_TYPE: u32 = 9;
/// Custom Blocks, copiable or not.
const CB_TYPES: [u32; 2] = [0x0000_0BAD, 0x4000_0BAD];
/// Byte-order magic of the SHB, as written by the file's writer.
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;

/// Largest block accepted: a record of [`MAX_CAPLEN`] bytes plus 1 MiB of headers and
/// options.
pub(crate) const MAX_BLOCK_LEN: u32 = MAX_CAPLEN + (1 << 20);
/// Largest number of interfaces in one file, so that a file of nothing but IDBs cannot
/// make the reader allocate without bound.
const MAX_INTERFACES: usize = 1 << 20;

/// An interface of the current section, ready for the hot path.
struct SectionInterface {
    /// Index in the file-wide interface list.
    global: u32,
    linktype: u32,
    snaplen: u32,
    scale: Scale,
    offset_ns: i128,
}

/// The current section's byte order and interfaces.
pub(crate) struct NgState {
    big_endian: bool,
    section: Vec<SectionInterface>,
    /// Per interface (file-wide index), the drops its latest statistics block counts
    /// (the counters run from the start of the capture, so the latest holds them all).
    isb_drops: Vec<(u32, u64)>,
    /// Drops counted by obsolete Packet Blocks (each since the previous packet).
    pb_drops: u64,
    /// Whether any block said how many packets were dropped.
    drops_known: bool,
}

/// A block read whole: its type, length and place; its bytes are the first `len`
/// available bytes of the input.
struct Block {
    block_type: u32,
    len: usize,
    place: Place,
}

/// Whether a block type takes a frame number (errors in it name a record).
fn is_frame(block_type: u32) -> bool {
    matches!(block_type, EPB_TYPE | SPB_TYPE | PB_TYPE | SJE_TYPE) || CB_TYPES.contains(&block_type)
}

impl NgState {
    /// Reads the first SHB; the first four bytes are known to be its type.
    pub(super) fn open(input: &mut Input) -> Result<NgState, Failure> {
        let mut state = NgState {
            big_endian: false,
            section: Vec::new(),
            isb_drops: Vec::new(),
            pb_drops: 0,
            drops_known: false,
        };
        match state.frame(input, 0)? {
            Some(block) => {
                state.section_header(input, &block)?;
                Ok(state)
            }
            // Unreachable: the magic number was there.
            None => Err(Failure::truncated(
                Place::Byte(0),
                "the block header",
                12,
                0,
            )),
        }
    }

    /// The next packet record, reading and acting on the blocks before it. `last_frame`
    /// is the number of the last frame; it and `skipped` grow by one for each block that
    /// tshark lists as a frame but that holds no packet (see
    /// [`Record::frame`](super::Record)).
    #[inline]
    pub(super) fn next(
        &mut self,
        input: &mut Input,
        interfaces: &mut Vec<Interface>,
        last_frame: &mut u64,
        skipped: &mut u64,
    ) -> Result<Option<Meta>, Failure> {
        // Fast path: a well-formed Enhanced Packet Block, whole in the buffer, compiled
        // once per byte order. Anything else takes the general path, which checks
        // everything again.
        let fast = if self.big_endian {
            self.enhanced_packet_fast::<true>(input.bytes())
        } else {
            self.enhanced_packet_fast::<false>(input.bytes())
        };
        if let Some((len, meta)) = fast {
            let at = input.consume(len) + 28;
            return Ok(Some(Meta {
                data: at..at + meta.data.end,
                ..meta
            }));
        }
        self.next_slow(input, interfaces, last_frame, skipped)
    }

    /// If `bytes` start with a whole, well-formed Enhanced Packet Block for a known
    /// interface, its length and record, with `data` holding `0..caplen`. The same
    /// arithmetic as [`NgState::packet`], without its error reporting.
    ///
    /// Parsed here rather than with pcap-parser's `parse_enhancedpacketblock_le`: with
    /// `examples/count.rs` on 1 M Enhanced Packet Blocks of 96 bytes, valgrind counts 71
    /// instructions per record this way against 220 with pcap-parser, which also gathers
    /// the options into a `Vec` that nothing here reads.
    #[inline(always)]
    fn enhanced_packet_fast<const BIG: bool>(&self, bytes: &[u8]) -> Option<(usize, Meta)> {
        if bytes.len() < 32 || u32_at(bytes, 0, BIG) != EPB_TYPE {
            return None;
        }
        let len = u32_at(bytes, 4, BIG) as usize;
        let caplen = u32_at(bytes, 20, BIG) as usize;
        if len < 32
            || len % 4 != 0
            || len > MAX_BLOCK_LEN as usize
            || bytes.len() < len
            || u32_at(bytes, len - 4, BIG) as usize != len
            || caplen > len - 32
        {
            return None;
        }
        let interface = self.section.get(u32_at(bytes, 8, BIG) as usize)?;
        let units = (u64::from(u32_at(bytes, 12, BIG)) << 32) | u64::from(u32_at(bytes, 16, BIG));
        let meta = Meta {
            ts_ns: saturate_ns(interface.scale.to_ns(units) + interface.offset_ns),
            interface: interface.global,
            linktype: interface.linktype,
            orig_len: u32_at(bytes, 24, BIG),
            data: 0..caplen,
        };
        Some((len, meta))
    }

    #[cold]
    #[inline(never)]
    fn next_slow(
        &mut self,
        input: &mut Input,
        interfaces: &mut Vec<Interface>,
        last_frame: &mut u64,
        skipped: &mut u64,
    ) -> Result<Option<Meta>, Failure> {
        loop {
            let Some(block) = self.frame(input, *last_frame + 1)? else {
                return end_of_input(input);
            };
            match block.block_type {
                EPB_TYPE | PB_TYPE | SPB_TYPE => {
                    let packet = if block.block_type == SPB_TYPE {
                        self.simple_packet(input, &block)
                    } else {
                        self.packet(input, &block)
                    };
                    return packet.map(Some).map_err(|failure| {
                        // Its framing is sound, so the blocks after it can be read: the
                        // block is skipped, its frame number with it.
                        input.consume(block.len);
                        *last_frame += 1;
                        *skipped += 1;
                        Failure {
                            read_on: true,
                            ..failure
                        }
                    });
                }
                SHB_TYPE => self.section_header(input, &block)?,
                IDB_TYPE => self.interface(input, &block, interfaces)?,
                ISB_TYPE => self.statistics(input, &block),
                // tshark 4.0 lists these as frames, though they hold no packet: count them
                // so that frame numbers stay tshark's.
                t if t == SJE_TYPE || CB_TYPES.contains(&t) => {
                    input.consume(block.len);
                    *last_frame += 1;
                    *skipped += 1;
                }
                // NRB, ISB, DSB, custom and unknown blocks carry no packets.
                _ => {
                    input.consume(block.len);
                }
            }
        }
    }

    /// Reads the next block whole and checks its framing; `None` at a clean end of file.
    #[inline]
    fn frame(&mut self, input: &mut Input, frame: u64) -> Result<Option<Block>, Failure> {
        let offset = input.offset();
        let have = input
            .fill(12)
            .map_err(|e| Failure::io(Place::Byte(offset), e))?;
        if have < 12 {
            if have == 0 {
                return Ok(None);
            }
            return Err(Failure::truncated(
                Place::Byte(offset),
                "the block header",
                12,
                have,
            ));
        }
        let head = input.bytes();
        let block_type = u32_at(head, 0, self.big_endian);
        let place = if is_frame(block_type) {
            Place::Record { frame, offset }
        } else {
            Place::Block { block_type, offset }
        };
        if block_type == SHB_TYPE {
            // A new section may change the byte order: "Byte-Order Magic [...] 0x1A2B3C4D.
            // This number can be used to distinguish sections that have been saved on
            // little-endian machines from the ones saved on big-endian machines"
            // (draft-ietf-opsawg-pcapng §4.1).
            self.big_endian = match u32_at(head, 8, false) {
                BYTE_ORDER_MAGIC => false,
                m if m == BYTE_ORDER_MAGIC.swap_bytes() => true,
                m => {
                    return Err(Failure::corrupt(
                        place,
                        format!(
                            "byte-order magic {m:#010x} is not 0x1a2b3c4d in either byte order"
                        ),
                    ))
                }
            };
        }
        let len = u32_at(head, 4, self.big_endian);
        // The fixed part of each block type, with the type, the two lengths and, for
        // packets, the fields before the data.
        let min = match block_type {
            SHB_TYPE => 28,
            IDB_TYPE => 20,
            SPB_TYPE => 16,
            EPB_TYPE | PB_TYPE => 32,
            _ => 12,
        };
        if len < min || len % 4 != 0 || len > MAX_BLOCK_LEN {
            let rule = if len < min {
                format!("is less than {min}")
            } else if len % 4 != 0 {
                "is not a multiple of 4".to_string()
            } else {
                format!("exceeds the limit of {MAX_BLOCK_LEN} bytes")
            };
            return Err(Failure::corrupt(
                place,
                format!("block length {len} {rule}"),
            ));
        }
        let len = len as usize;
        let have = input.fill(len).map_err(|e| Failure::io(place, e))?;
        if have < len {
            return Err(Failure::truncated(place, "the block", len, have));
        }
        let trailing = u32_at(input.bytes(), len - 4, self.big_endian);
        if trailing as usize != len {
            return Err(Failure::corrupt(
                place,
                format!("trailing block length {trailing} differs from the leading one, {len}"),
            ));
        }
        Ok(Some(Block {
            block_type,
            len,
            place,
        }))
    }

    /// Starts a section: checks the version and forgets the previous section's interfaces.
    fn section_header(&mut self, input: &mut Input, block: &Block) -> Result<(), Failure> {
        let bytes = &input.bytes()[..block.len];
        let (_, shb) = parse_sectionheaderblock(bytes).map_err(|_| malformed(block))?;
        // "Major Version [...] 1 [...] A change to the major version number indicates that
        // the format of the blocks is not compatible" (draft-ietf-opsawg-pcapng §4.1).
        if shb.major_version != 1 {
            return Err(Failure::corrupt(
                block.place,
                format!(
                    "unsupported pcapng version {}.{}",
                    shb.major_version, shb.minor_version
                ),
            ));
        }
        self.section.clear();
        input.consume(block.len);
        Ok(())
    }

    /// Adds an interface to the section and to the file-wide list.
    fn interface(
        &mut self,
        input: &mut Input,
        block: &Block,
        interfaces: &mut Vec<Interface>,
    ) -> Result<(), Failure> {
        let bytes = &input.bytes()[..block.len];
        let parsed = if self.big_endian {
            parse_interfacedescriptionblock_be(bytes)
        } else {
            parse_interfacedescriptionblock_le(bytes)
        };
        let (_, idb) = parsed.map_err(|_| malformed(block))?;
        // pcap-parser's own `if_tsresol`/`if_tsoffset` fields are not used: it rejects
        // every power-of-2 resolution, and reads the offset little-endian in big-endian
        // sections. The options themselves are parsed right.
        let mut resolution = TsResolution::MICRO;
        let mut offset_s = 0i64;
        for option in &idb.options {
            let value = option.value();
            match option.code {
                OptionCode::EndOfOpt => break,
                OptionCode::IfTsresol if option.len == 1 && !value.is_empty() => {
                    resolution = TsResolution::from_option(value[0]).ok_or_else(|| {
                        Failure::corrupt(
                            block.place,
                            format!(
                                "if_tsresol {:#04x} is too fine to count in 64 bits",
                                value[0]
                            ),
                        )
                    })?;
                }
                OptionCode::IfTsoffset if option.len == 8 && value.len() >= 8 => {
                    let b = [
                        value[0], value[1], value[2], value[3], value[4], value[5], value[6],
                        value[7],
                    ];
                    offset_s = if self.big_endian {
                        i64::from_be_bytes(b)
                    } else {
                        i64::from_le_bytes(b)
                    };
                }
                _ => {}
            }
        }
        if interfaces.len() >= MAX_INTERFACES {
            return Err(Failure::corrupt(
                block.place,
                format!("more than {MAX_INTERFACES} interfaces"),
            ));
        }
        let interface = Interface {
            // The IDB's link type field is 16 bits wide.
            linktype: u32::from(idb.linktype.0 as u16),
            snaplen: idb.snaplen,
            resolution,
            offset_s,
        };
        self.section.push(SectionInterface {
            global: interfaces.len() as u32,
            linktype: interface.linktype,
            snaplen: interface.snaplen,
            scale: resolution.scale(),
            offset_ns: i128::from(offset_s) * 1_000_000_000,
        });
        interfaces.push(interface);
        input.consume(block.len);
        Ok(())
    }

    /// An Interface Statistics Block: keeps its drop counters (`isb_ifdrop` plus
    /// `isb_osdrop`) for its interface. A block without them, or for an interface the
    /// section does not have, says nothing and is skipped like any other; malformed
    /// options end the reading of the block, never the file.
    fn statistics(&mut self, input: &mut Input, block: &Block) {
        let bytes = &input.bytes()[..block.len];
        let big = self.big_endian;
        let interface = self
            .section
            .get(u32_at(bytes, 8, big) as usize)
            .map(|i| i.global);
        let u16_at = |at: usize| {
            let b = [bytes[at], bytes[at + 1]];
            if big {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        };
        // Options: code (2 bytes), length (2), value padded to 4 bytes, from byte 20 to
        // the trailing length.
        let (mut at, end) = (20, block.len - 4);
        let mut drops = None;
        while at + 4 <= end {
            let (code, len) = (u16_at(at), usize::from(u16_at(at + 2)));
            let value = at + 4;
            if code == 0 || value + len > end {
                break;
            }
            if matches!(code, ISB_IFDROP | ISB_OSDROP) && len == 8 {
                // A 64-bit integer in the section's byte order (unlike the time
                // stamps of packet blocks, which are two 32-bit words, high first).
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes[value..value + 8]);
                let v = if big {
                    u64::from_be_bytes(b)
                } else {
                    u64::from_le_bytes(b)
                };
                drops = Some(drops.unwrap_or(0u64).saturating_add(v));
            }
            at = value + len.next_multiple_of(4);
        }
        if let (Some(interface), Some(drops)) = (interface, drops) {
            self.drops_known = true;
            match self.isb_drops.iter_mut().find(|(i, _)| *i == interface) {
                Some(entry) => entry.1 = drops,
                None => self.isb_drops.push((interface, drops)),
            }
        }
        input.consume(block.len);
    }

    /// Packets the capture dropped, as its statistics blocks (the latest of each
    /// interface) and obsolete Packet Blocks count them; `None` when no block said.
    pub(super) fn drops(&self) -> Option<u64> {
        self.drops_known.then(|| {
            self.isb_drops
                .iter()
                .fold(self.pb_drops, |sum, &(_, d)| sum.saturating_add(d))
        })
    }

    /// An Enhanced Packet Block, or an obsolete Packet Block: the same fields, but the
    /// latter has a 16-bit interface id followed by a 16-bit drop count.
    fn packet(&mut self, input: &mut Input, block: &Block) -> Result<Meta, Failure> {
        let bytes = &input.bytes()[..block.len];
        let big = self.big_endian;
        let if_id = if block.block_type == EPB_TYPE {
            u32_at(bytes, 8, big)
        } else {
            let id = u32_at(bytes, 8, big);
            let (if_id, dropped) = if big {
                (id >> 16, id & 0xffff)
            } else {
                (id & 0xffff, id >> 16)
            };
            // "Drops Count: [...] the number of packets lost (by the interface and the
            // operating system) between this packet and the preceding one"
            // (draft-ietf-opsawg-pcapng, Appendix A); 0xFFFF: not available.
            if dropped != 0xffff {
                self.drops_known = true;
                self.pb_drops += u64::from(dropped);
            }
            if_id
        };
        let units = (u64::from(u32_at(bytes, 12, big)) << 32) | u64::from(u32_at(bytes, 16, big));
        let caplen = u32_at(bytes, 20, big);
        let orig_len = u32_at(bytes, 24, big);
        let room = block.len - 32;
        if caplen as usize > room {
            return Err(Failure::corrupt(
                block.place,
                format!(
                    "captured length {caplen} does not fit in the block ({room} bytes of room)"
                ),
            ));
        }
        let Some(interface) = self.section.get(if_id as usize) else {
            return Err(self.unknown_interface(block, if_id));
        };
        let ts_ns = saturate_ns(interface.scale.to_ns(units) + interface.offset_ns);
        let meta = Meta {
            ts_ns,
            interface: interface.global,
            linktype: interface.linktype,
            orig_len,
            data: 0..0,
        };
        let at = input.consume(block.len) + 28;
        Ok(Meta {
            data: at..at + caplen as usize,
            ..meta
        })
    }

    /// A Simple Packet Block: interface 0, no time stamp, and a captured length that is
    /// "the minimum value among the Original Packet Length and the snapshot length for
    /// the interface" (draft-ietf-opsawg-pcapng §4.4), and the room in the block.
    fn simple_packet(&mut self, input: &mut Input, block: &Block) -> Result<Meta, Failure> {
        let bytes = &input.bytes()[..block.len];
        let parsed = if self.big_endian {
            parse_simplepacketblock_be(bytes)
        } else {
            parse_simplepacketblock_le(bytes)
        };
        let (_, spb) = parsed.map_err(|_| malformed(block))?;
        let Some(interface) = self.section.first() else {
            return Err(self.unknown_interface(block, 0));
        };
        let room = spb.data.len();
        let snaplen = if interface.snaplen == 0 {
            u32::MAX
        } else {
            interface.snaplen
        };
        let caplen = (spb.origlen.min(snaplen).min(MAX_CAPLEN) as usize).min(room);
        let meta = Meta {
            ts_ns: 0,
            interface: interface.global,
            linktype: interface.linktype,
            orig_len: spb.origlen,
            data: 0..0,
        };
        let at = input.consume(block.len) + 12;
        Ok(Meta {
            data: at..at + caplen,
            ..meta
        })
    }

    fn unknown_interface(&self, block: &Block, if_id: u32) -> Failure {
        let name = match block.block_type {
            EPB_TYPE => "Enhanced Packet Block",
            SPB_TYPE => "Simple Packet Block",
            _ => "Packet Block",
        };
        let n = self.section.len();
        Failure::corrupt(
            block.place,
            format!(
                "{name} refers to interface {if_id}, but the section has {n} interface{}",
                if n == 1 { "" } else { "s" }
            ),
        )
    }
}

/// A block whose framing is right but whose content pcap-parser rejects. (The framing
/// checks leave it nothing to reject in the blocks it is given; this is a safety net.)
fn malformed(block: &Block) -> Failure {
    Failure::corrupt(block.place, "malformed block content".to_string())
}
