//! Writers: [`PcapWriter`] (classic pcap) and [`PcapNgWriter`] (pcapng with sections,
//! several interfaces, `if_tsresol`/`if_tsoffset`, Enhanced Packet Blocks).
//!
//! Both write to any `Write`; wrap files in a `BufWriter`. Output depends only on the
//! calls made (no clock, no host information), so that a simulation writes
//! byte-identical files for the same seed.

use std::io::{self, Write};

use crate::reader::Interface;
use crate::time::TsResolution;

/// Time stamp resolution of a classic pcap file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Microseconds (magic number 0xA1B2C3D4).
    Micro,
    /// Nanoseconds (magic number 0xA1B23C4D).
    Nano,
}

/// Byte order of a written file (or pcapng section). Readers accept both; big-endian
/// output exists to test them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl ByteOrder {
    fn u16(self, v: u16) -> [u8; 2] {
        match self {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        }
    }

    fn u32(self, v: u32) -> [u8; 4] {
        match self {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        }
    }

    fn i64(self, v: i64) -> [u8; 8] {
        match self {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        }
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// The bytes of `data` a capture with this snapshot length keeps (0: no limit).
fn snap(data: &[u8], snaplen: u32) -> io::Result<&[u8]> {
    let data = match snaplen {
        0 => data,
        n => &data[..data.len().min(n as usize)],
    };
    if data.len() > u32::MAX as usize {
        return Err(invalid(format!(
            "packet of {} bytes is too long to record",
            data.len()
        )));
    }
    Ok(data)
}

/// Writes a classic pcap file (draft-ietf-opsawg-pcap).
///
/// ```
/// use airtrace_pcap::{PcapWriter, Resolution};
/// let mut w = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Nano)?;
/// w.write_packet(1_700_000_000_123_456_789, &[0u8; 60], 60)?;
/// assert_eq!(w.into_inner().len(), 24 + 16 + 60);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct PcapWriter<W: Write> {
    out: W,
    order: ByteOrder,
    resolution: Resolution,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header of a little-endian pcap file.
    pub fn new(out: W, linktype: u32, snaplen: u32, resolution: Resolution) -> io::Result<Self> {
        Self::with_byte_order(out, linktype, snaplen, resolution, ByteOrder::Little)
    }

    /// Writes the file header of a pcap file in the given byte order.
    pub fn with_byte_order(
        mut out: W,
        linktype: u32,
        snaplen: u32,
        resolution: Resolution,
        order: ByteOrder,
    ) -> io::Result<Self> {
        let magic: u32 = match resolution {
            Resolution::Micro => 0xa1b2_c3d4,
            Resolution::Nano => 0xa1b2_3c4d,
        };
        let mut header = [0u8; 24];
        header[0..4].copy_from_slice(&order.u32(magic));
        header[4..6].copy_from_slice(&order.u16(2));
        header[6..8].copy_from_slice(&order.u16(4));
        // thiszone and sigfigs stay 0.
        header[16..20].copy_from_slice(&order.u32(snaplen));
        header[20..24].copy_from_slice(&order.u32(linktype));
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            order,
            resolution,
            snaplen,
        })
    }

    /// Writes one record. `data` is cut to the snapshot length, as a capture would;
    /// `orig_len` is the packet's length on the wire. The time must lie between 1970
    /// and 2106 (pcap stores unsigned 32-bit seconds).
    pub fn write_packet(&mut self, ts_ns: i64, data: &[u8], orig_len: u32) -> io::Result<()> {
        let data = snap(data, self.snaplen)?;
        let secs = u32::try_from(ts_ns.div_euclid(1_000_000_000))
            .map_err(|_| invalid(format!("time stamp {ts_ns} ns is outside pcap's range")))?;
        let nanos = ts_ns.rem_euclid(1_000_000_000) as u32;
        let frac = match self.resolution {
            Resolution::Micro => nanos / 1000,
            Resolution::Nano => nanos,
        };
        let mut header = [0u8; 16];
        header[0..4].copy_from_slice(&self.order.u32(secs));
        header[4..8].copy_from_slice(&self.order.u32(frac));
        header[8..12].copy_from_slice(&self.order.u32(data.len() as u32));
        header[12..16].copy_from_slice(&self.order.u32(orig_len));
        self.out.write_all(&header)?;
        self.out.write_all(data)
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> W {
        // A flush error would show again on the caller's next write or flush.
        let _ = self.out.flush();
        self.out
    }
}

/// Writes a pcapng file (draft-ietf-opsawg-pcapng): Section Header Blocks,
/// Interface Description Blocks with `if_tsresol` and `if_tsoffset`, and Enhanced
/// Packet Blocks. No other options are written.
///
/// ```
/// use airtrace_pcap::{ByteOrder, Interface, PcapNgWriter, TsResolution};
/// let mut w = PcapNgWriter::new(Vec::new(), ByteOrder::Little)?;
/// let wifi = w.add_interface(&Interface {
///     linktype: 127, // IEEE 802.11 + radiotap
///     snaplen: 0,
///     resolution: TsResolution::NANO,
///     offset_s: 0,
/// })?;
/// w.write_packet(wifi, 1_700_000_000_000_000_000, &[0u8; 40], 40)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct PcapNgWriter<W: Write> {
    out: W,
    order: ByteOrder,
    /// Interfaces of the current section.
    interfaces: Vec<Interface>,
    /// Reused block buffer.
    block: Vec<u8>,
}

impl<W: Write> PcapNgWriter<W> {
    /// Starts the file with a Section Header Block in the given byte order.
    pub fn new(out: W, order: ByteOrder) -> io::Result<Self> {
        let mut writer = PcapNgWriter {
            out,
            order,
            interfaces: Vec::new(),
            block: Vec::new(),
        };
        writer.new_section(order)?;
        Ok(writer)
    }

    /// Starts a new section (a Section Header Block), which may change the byte order.
    /// Interfaces of the previous section can no longer be used.
    pub fn new_section(&mut self, order: ByteOrder) -> io::Result<()> {
        self.order = order;
        self.interfaces.clear();
        let mut body = Vec::with_capacity(16);
        body.extend_from_slice(&order.u32(0x1A2B_3C4D));
        body.extend_from_slice(&order.u16(1));
        body.extend_from_slice(&order.u16(0));
        // Section length: -1, not specified.
        body.extend_from_slice(&order.i64(-1));
        self.write_block(0x0A0D_0D0A, &body, &[])
    }

    /// Describes an interface of the current section; returns its interface id, to pass
    /// to [`PcapNgWriter::write_packet`]. The link type must fit 16 bits, and the
    /// resolution must be one `if_tsresol` can state (10^-19 s to 1 s, 2^-63 s to 1 s).
    pub fn add_interface(&mut self, interface: &Interface) -> io::Result<u32> {
        let linktype = u16::try_from(interface.linktype).map_err(|_| {
            invalid(format!(
                "link type {} does not fit 16 bits",
                interface.linktype
            ))
        })?;
        let resolution = interface.resolution;
        if TsResolution::from_option(resolution.to_option()) != Some(resolution) {
            return Err(invalid(format!(
                "time stamp resolution {resolution:?} is out of range"
            )));
        }
        let order = self.order;
        let mut body = Vec::with_capacity(32);
        body.extend_from_slice(&order.u16(linktype));
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&order.u32(interface.snaplen));
        if interface.resolution != TsResolution::MICRO {
            // if_tsresol: code 9, length 1, padded to 4.
            body.extend_from_slice(&order.u16(9));
            body.extend_from_slice(&order.u16(1));
            body.extend_from_slice(&[interface.resolution.to_option(), 0, 0, 0]);
        }
        if interface.offset_s != 0 {
            // if_tsoffset: code 14, length 8.
            body.extend_from_slice(&order.u16(14));
            body.extend_from_slice(&order.u16(8));
            body.extend_from_slice(&order.i64(interface.offset_s));
        }
        if body.len() > 8 {
            // opt_endofopt
            body.extend_from_slice(&[0; 4]);
        }
        self.write_block(1, &body, &[])?;
        self.interfaces.push(*interface);
        Ok(self.interfaces.len() as u32 - 1)
    }

    /// Writes one Enhanced Packet Block. `data` is cut to the interface's snapshot length
    /// (0: no limit); the time is stored in the interface's unit, rounded down, after
    /// subtracting its offset.
    pub fn write_packet(
        &mut self,
        interface: u32,
        ts_ns: i64,
        data: &[u8],
        orig_len: u32,
    ) -> io::Result<()> {
        let Some(iface) = self.interfaces.get(interface as usize) else {
            return Err(invalid(format!("no interface {interface} in this section")));
        };
        let data = snap(data, iface.snaplen)?;
        let since_offset = i128::from(ts_ns) - i128::from(iface.offset_s) * 1_000_000_000;
        let units = iface.resolution.ns_to_units(since_offset).ok_or_else(|| {
            invalid(format!(
                "time stamp {ts_ns} ns cannot be stored for interface {interface}"
            ))
        })?;
        let order = self.order;
        let mut head = [0u8; 20];
        head[0..4].copy_from_slice(&order.u32(interface));
        head[4..8].copy_from_slice(&order.u32((units >> 32) as u32));
        head[8..12].copy_from_slice(&order.u32(units as u32));
        head[12..16].copy_from_slice(&order.u32(data.len() as u32));
        head[16..20].copy_from_slice(&order.u32(orig_len));
        self.write_block(6, &head, data)
    }

    /// The underlying writer, to add blocks this writer does not write (name resolution,
    /// statistics, custom blocks), in the current section's byte order.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Writes a block: type, length, `head`, `data` padded to 4 bytes, length.
    fn write_block(&mut self, block_type: u32, head: &[u8], data: &[u8]) -> io::Result<()> {
        let padded = data.len().next_multiple_of(4);
        let len = u32::try_from(12 + head.len() + padded).map_err(|_| {
            invalid(format!(
                "packet of {} bytes is too long for a block",
                data.len()
            ))
        })?;
        let order = self.order;
        self.block.clear();
        self.block.extend_from_slice(&order.u32(block_type));
        self.block.extend_from_slice(&order.u32(len));
        self.block.extend_from_slice(head);
        self.block.extend_from_slice(data);
        self.block.resize(8 + head.len() + padded, 0);
        self.block.extend_from_slice(&order.u32(len));
        self.out.write_all(&self.block)
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> W {
        let _ = self.out.flush();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcap_header_and_record_bytes() {
        let mut w =
            PcapWriter::with_byte_order(Vec::new(), 105, 4, Resolution::Micro, ByteOrder::Big)
                .unwrap();
        w.write_packet(2_000_000_123, &[1, 2, 3, 4, 5, 6], 6)
            .unwrap();
        let bytes = w.into_inner();
        assert_eq!(bytes[..4], [0xa1, 0xb2, 0xc3, 0xd4]);
        assert_eq!(bytes[16..24], [0, 0, 0, 4, 0, 0, 0, 105]);
        // 2 s and 0 µs (123 ns rounded down), caplen cut to 4, orig_len 6.
        assert_eq!(
            bytes[24..40],
            [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 6]
        );
        assert_eq!(bytes[40..], [1, 2, 3, 4]);
    }

    #[test]
    fn pcap_rejects_times_it_cannot_store() {
        let mut w = PcapWriter::new(Vec::new(), 1, 0, Resolution::Nano).unwrap();
        assert!(w.write_packet(-1, &[], 0).is_err());
        assert!(w.write_packet((1 << 32) * 1_000_000_000, &[], 0).is_err());
        assert!(w
            .write_packet((1 << 32) * 1_000_000_000 - 1, &[], 0)
            .is_ok());
    }

    #[test]
    fn pcapng_blocks_are_padded_and_framed() {
        let mut w = PcapNgWriter::new(Vec::new(), ByteOrder::Little).unwrap();
        let iface = Interface {
            linktype: 1,
            snaplen: 0,
            resolution: TsResolution::Binary(10),
            offset_s: -5,
        };
        assert_eq!(w.add_interface(&iface).unwrap(), 0);
        w.write_packet(0, 0, &[9; 5], 5).unwrap();
        assert!(w.write_packet(1, 0, &[], 0).is_err());
        assert!(w
            .add_interface(&Interface {
                linktype: 70000,
                ..iface
            })
            .is_err());
        for resolution in [
            TsResolution::Decimal(20),
            TsResolution::Binary(64),
            TsResolution::Decimal(147),
        ] {
            assert!(w
                .add_interface(&Interface {
                    resolution,
                    ..iface
                })
                .is_err());
        }
        let bytes = w.into_inner();
        // SHB: 28 bytes.
        assert_eq!(bytes[..8], [0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0]);
        // IDB: 20 + if_tsresol (8) + if_tsoffset (12) + end (4) = 44 bytes.
        let idb = &bytes[28..72];
        assert_eq!(idb[..8], [1, 0, 0, 0, 44, 0, 0, 0]);
        assert_eq!(idb[16..24], [9, 0, 1, 0, 0x8a, 0, 0, 0]);
        assert_eq!(idb[24..28], [14, 0, 8, 0]);
        assert_eq!(idb[28..36], (-5i64).to_le_bytes());
        assert_eq!(idb[40..], [44, 0, 0, 0]);
        // EPB: 32 + 8 (5 bytes padded) = 40; time 0 is 5 s after the offset: 5120 units.
        let epb = &bytes[72..];
        assert_eq!(epb.len(), 40);
        assert_eq!(epb[..8], [6, 0, 0, 0, 40, 0, 0, 0]);
        assert_eq!(epb[12..20], [0, 0, 0, 0, 0, 20, 0, 0]);
        assert_eq!(epb[28..36], [9, 9, 9, 9, 9, 0, 0, 0]);
        assert_eq!(epb[36..], [40, 0, 0, 0]);
    }
}
