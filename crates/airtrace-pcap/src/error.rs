//! [`ReadError`]: what went wrong reading a capture file, and where.
//!
//! Every error names the file and the place (a byte offset, and the frame number when
//! the problem is in a packet record), and displays as one line:
//!
//! ```text
//! capture.pcap: record 1234 at byte 56789: file ends inside the record (needs 1530 bytes, 700 left)
//! x.pcap: byte 0: not a capture file (magic number 0x3c68746d)
//! x.pcap.gz: record 3 at byte 1234 of the decompressed data: captured length 300000000 exceeds the limit of 268435456 bytes
//! rotated.pcap: byte 2097172: the file shrank from 4194304 to 2097500 bytes while it was read
//! ```
//!
//! Callers that read as much as they can tell a cut-off tail ([`ErrorKind::Truncated`],
//! or [`ErrorKind::Shrank`] for a file cut while it was read) from damage inside the file
//! ([`ErrorKind::Corrupt`]) by the [`ReadError::kind`].

use std::fmt;
use std::io;

/// An error reading a capture file. After it the reader is finished.
#[derive(Debug)]
pub struct ReadError {
    /// The file's name, as given to [`CaptureReader::open`](crate::CaptureReader::open)
    /// or [`CaptureReader::from_reader`](crate::CaptureReader::from_reader).
    pub file: String,
    /// Where in the file the problem is.
    pub place: Place,
    /// Whether the offsets in `place` count bytes of decompressed (gzip) data.
    pub decompressed: bool,
    /// What went wrong.
    pub kind: ErrorKind,
    /// How many packet records were returned before the error.
    pub frames_read: u64,
}

/// Where in a capture file an error was found. Offsets count bytes from the start of
/// the (decompressed) capture data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The file as a whole (an empty file, an error opening it).
    File,
    /// A byte offset outside any packet record: the file header, a block header whose
    /// type is not yet known.
    Byte(u64),
    /// A packet record (pcap record, or pcapng packet block) that would have been frame
    /// number `frame`, starting at byte `offset`.
    Record {
        /// 1-based frame number the record would have had.
        frame: u64,
        /// Offset of the record's first byte.
        offset: u64,
    },
    /// A pcapng block that does not hold a packet (section header, interface description...).
    Block {
        /// The block type, as read in the section's byte order.
        block_type: u32,
        /// Offset of the block's first byte.
        offset: u64,
    },
}

/// What went wrong, so that callers can tell a cut-off tail from a corrupt record.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// The file is empty (after decompression, for gzip).
    #[error("empty file")]
    Empty,
    /// The file does not start with a pcap, pcapng or gzip magic number. The value is the
    /// first four bytes read as a big-endian number, so that text files show their
    /// characters (`0x3c68746d` is `<htm`).
    #[error("not a capture file (magic number {0:#010x})")]
    BadMagic(u32),
    /// The file ends before the unit (file header, record, block) that starts at the place:
    /// the unit needs `needed` bytes from there, and only `left` remain. `needed` is
    /// `None` when a gzip stream is cut between two records.
    #[error("file ends inside {inside}{}", detail(*.needed, *.left))]
    Truncated {
        /// What the file ends inside of: "the record", "the file header", ...
        inside: &'static str,
        /// Bytes the unit needs, counted from the place.
        needed: Option<u64>,
        /// Bytes left in the file, counted from the place.
        left: u64,
    },
    /// The data breaks a rule of the format; the text states the rule and the value.
    #[error("{0}")]
    Corrupt(String),
    /// Another process cut the file short while it was read (it truncated, rotated or
    /// rewrote it): it had `from` bytes when it was opened, `to` when the reader saw the
    /// cut. The place is where the reader stopped; the records before it were returned.
    #[error("the file shrank from {from} to {to} bytes while it was read")]
    Shrank {
        /// The file's length when it was opened.
        from: u64,
        /// Its length when the cut was seen.
        to: u64,
    },
    /// The operating system (or the gzip decoder) failed to read.
    #[error("{0}")]
    Io(io::Error),
}

fn detail(needed: Option<u64>, left: u64) -> String {
    match needed {
        Some(n) => format!(" (needs {n} bytes, {left} left)"),
        None => String::new(),
    }
}

impl ReadError {
    /// Whether the file was cut short, before or while it was read (as opposed to
    /// corrupt, not a capture, or unreadable).
    pub fn is_truncated(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Truncated { .. } | ErrorKind::Shrank { .. }
        )
    }
}

/// Human name of a pcapng block type, for error messages.
fn block_name(block_type: u32) -> Option<&'static str> {
    Some(match block_type {
        0x0A0D_0D0A => "Section Header Block",
        0x0000_0001 => "Interface Description Block",
        0x0000_0002 => "Packet Block",
        0x0000_0003 => "Simple Packet Block",
        0x0000_0004 => "Name Resolution Block",
        0x0000_0005 => "Interface Statistics Block",
        0x0000_0006 => "Enhanced Packet Block",
        0x0000_000A => "Decryption Secrets Block",
        0x0000_0BAD | 0x4000_0BAD => "Custom Block",
        _ => return None,
    })
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Place::File => Ok(()),
            Place::Byte(offset) => write!(f, "byte {offset}"),
            Place::Record { frame, offset } => write!(f, "record {frame} at byte {offset}"),
            Place::Block { block_type, offset } => match block_name(block_type) {
                Some(name) => write!(f, "{name} at byte {offset}"),
                None => write!(f, "block of type {block_type:#010x} at byte {offset}"),
            },
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if self.place != Place::File {
            write!(f, "{}", self.place)?;
            if self.decompressed {
                write!(f, " of the decompressed data")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.kind)
    }
}

/// The message already includes any underlying I/O error, so there is no `source`
/// (match on [`ErrorKind::Io`] to get at it).
impl std::error::Error for ReadError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(place: Place, decompressed: bool, kind: ErrorKind) -> String {
        ReadError {
            file: "x.pcap".into(),
            place,
            decompressed,
            kind,
            frames_read: 0,
        }
        .to_string()
    }

    #[test]
    fn display_is_one_line_naming_file_and_place() {
        assert_eq!(
            err(Place::File, false, ErrorKind::Empty),
            "x.pcap: empty file"
        );
        assert_eq!(
            err(Place::Byte(0), false, ErrorKind::BadMagic(0x3c68_746d)),
            "x.pcap: byte 0: not a capture file (magic number 0x3c68746d)"
        );
        let truncated = ErrorKind::Truncated {
            inside: "the record",
            needed: Some(1530),
            left: 700,
        };
        assert_eq!(
            err(
                Place::Record {
                    frame: 1234,
                    offset: 56789
                },
                false,
                truncated
            ),
            "x.pcap: record 1234 at byte 56789: file ends inside the record \
             (needs 1530 bytes, 700 left)"
        );
        let cut = ErrorKind::Truncated {
            inside: "the gzip stream",
            needed: None,
            left: 0,
        };
        assert_eq!(
            err(Place::Byte(24), true, cut),
            "x.pcap: byte 24 of the decompressed data: file ends inside the gzip stream"
        );
        assert_eq!(
            err(
                Place::Byte(2_097_172),
                false,
                ErrorKind::Shrank {
                    from: 4_194_304,
                    to: 2_097_500
                }
            ),
            "x.pcap: byte 2097172: the file shrank from 4194304 to 2097500 bytes while it \
             was read"
        );
        assert_eq!(
            err(
                Place::Block {
                    block_type: 1,
                    offset: 28
                },
                false,
                ErrorKind::Corrupt("x".into())
            ),
            "x.pcap: Interface Description Block at byte 28: x"
        );
        assert_eq!(
            err(
                Place::Block {
                    block_type: 0x99,
                    offset: 8
                },
                false,
                ErrorKind::Corrupt("y".into())
            ),
            "x.pcap: block of type 0x00000099 at byte 8: y"
        );
    }
}
