//! [`CaptureReader`]: opens a capture file, detects its format and lends out its packet
//! records one at a time.
//!
//! The container parsers live in [`pcap`] and [`pcapng`]; both pull bytes from an
//! [`Input`] and return a [`Meta`] (everything about a record but its bytes), which
//! `next_record` turns into a [`Record`] borrowing the input's buffer or memory map.

mod pcap;
mod pcapng;

use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{ErrorKind, Place, ReadError};
use crate::input::Input;
use crate::time::TsResolution;

/// Largest captured length accepted in a record: 256 MiB. Anything larger is taken for
/// corruption (no capture tool writes such records), so that a damaged length cannot
/// make the reader allocate gigabytes.
pub const MAX_CAPLEN: u32 = 256 << 20;

/// One packet record, borrowed from the reader's buffer (or memory map) until the next
/// call.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// 1-based frame number, as tshark numbers frames: every pcap record and pcapng
    /// packet block (Enhanced, Simple, obsolete Packet Block) is a frame. tshark 4.0 also
    /// lists pcapng Custom and systemd Journal Export blocks as frames; they hold no
    /// packet and are not returned, but their numbers are skipped, so that frame N here
    /// is frame N in tshark.
    pub frame: u64,
    /// Capture time in nanoseconds since the Unix epoch, the interface's `if_tsoffset`
    /// applied. Simple Packet Blocks carry no time: their records have 0.
    pub ts_ns: i64,
    /// Index of the record's interface in [`CaptureReader::interfaces`]: numbered across
    /// the whole file in the order of the Interface Description Blocks (0 for classic
    /// pcap). In a file of several sections this differs from tshark 4.0's
    /// `frame.interface_id`, which restarts at 0 in each section.
    pub interface: u32,
    /// LINKTYPE_* value of the record's interface.
    pub linktype: u32,
    /// Length of the packet on the wire.
    pub orig_len: u32,
    /// Captured bytes (`data.len()` is the captured length).
    pub data: &'a [u8],
}

/// Container format of a capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic libpcap format (draft-ietf-opsawg-pcap).
    Pcap,
    /// pcapng (draft-ietf-opsawg-pcapng).
    PcapNg,
}

/// A capture interface: for pcapng, what an Interface Description Block says; classic
/// pcap files have one, described by the file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interface {
    /// LINKTYPE_* value.
    pub linktype: u32,
    /// Largest number of bytes captured per packet; 0 means no limit (pcapng).
    pub snaplen: u32,
    /// Unit of the raw time stamps (`if_tsresol`).
    pub resolution: TsResolution,
    /// Seconds added to every time stamp (`if_tsoffset`).
    pub offset_s: i64,
}

/// Everything about a record but its bytes, which are `data` in the input's buffer.
pub(crate) struct Meta {
    ts_ns: i64,
    interface: u32,
    linktype: u32,
    orig_len: u32,
    data: Range<usize>,
}

/// An error found by a parser, before the reader adds the file name and frame count.
pub(crate) struct Failure {
    place: Place,
    kind: ErrorKind,
    /// The parser skipped the damaged unit and can read on (its framing was sound).
    read_on: bool,
}

impl Failure {
    fn corrupt(place: Place, message: String) -> Failure {
        Failure {
            place,
            kind: ErrorKind::Corrupt(message),
            read_on: false,
        }
    }

    fn truncated(place: Place, inside: &'static str, needed: usize, left: usize) -> Failure {
        let kind = ErrorKind::Truncated {
            inside,
            needed: Some(needed as u64),
            left: left as u64,
        };
        Failure {
            place,
            kind,
            read_on: false,
        }
    }

    fn io(place: Place, error: io::Error) -> Failure {
        Failure {
            place,
            kind: ErrorKind::Io(error),
            read_on: false,
        }
    }
}

/// What a parser does when no bytes are left where the next record would start: a clean
/// end of file, unless a gzip stream was cut short, or a mapped file was cut while it
/// was read.
fn end_of_input(input: &Input) -> Result<Option<Meta>, Failure> {
    if let Some(failure) = changed(input) {
        return Err(failure);
    }
    if input.cut_short() {
        let kind = ErrorKind::Truncated {
            inside: "the gzip stream",
            needed: None,
            left: 0,
        };
        return Err(Failure {
            place: Place::Byte(input.offset()),
            kind,
            read_on: false,
        });
    }
    Ok(None)
}

/// If the file changed under its map while it was read (another process truncated
/// it), the failure that says so, at the place where reading stopped (see
/// [`Input::changed`]).
#[cold]
#[inline(never)]
fn changed(input: &Input) -> Option<Failure> {
    input.changed().map(|kind| Failure {
        place: Place::Byte(input.offset()),
        kind,
        read_on: false,
    })
}

/// Reads a `u32` at `at` in `bytes`, in the given byte order.
#[inline(always)]
fn u32_at(bytes: &[u8], at: usize, big_endian: bool) -> u32 {
    let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
    if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

enum Parser {
    Pcap(pcap::PcapState),
    PcapNg(pcapng::NgState),
    /// After the end of the file or an error.
    Done,
}

/// A streaming reader of capture files: pcap (either byte order, micro- or nanosecond
/// time stamps), pcapng (any number of sections and interfaces), or either compressed
/// with gzip. No record is copied: an uncompressed file opened by path is read through a
/// memory map (see "Memory map" in the crate doc), anything else through a buffer bounded
/// by the largest record.
///
/// ```no_run
/// use airtrace_pcap::CaptureReader;
/// # fn main() -> Result<(), airtrace_pcap::ReadError> {
/// let mut reader = CaptureReader::open("capture.pcapng.gz".as_ref())?;
/// while let Some(record) = reader.next_record() {
///     let record = record?;
///     println!("{} {} {}", record.frame, record.ts_ns, record.data.len());
/// }
/// # Ok(()) }
/// ```
pub struct CaptureReader {
    file: String,
    /// The regular file it was opened from, if it was ([`CaptureReader::regular_file`]).
    regular_file: Option<PathBuf>,
    input: Input,
    compressed: bool,
    file_len: Option<u64>,
    parser: Parser,
    interfaces: Vec<Interface>,
    format: Format,
    /// Number of the last frame (returned or skipped).
    last_frame: u64,
    /// Number of frames skipped (not packets).
    skipped: u64,
    /// [`CaptureReader::drops`] once the parser is done.
    final_drops: Option<u64>,
    /// [`CaptureReader::damaged`].
    damaged: Option<(u64, ReadError)>,
}

impl CaptureReader {
    /// Opens `path`, detecting gzip compression and the container format by magic number.
    /// An uncompressed regular file is memory-mapped; anything else is read.
    /// Fails at once if the file is empty, is not a capture, or its file header (pcap) or
    /// first Section Header Block (pcapng) is cut off or corrupt.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let name = path.display().to_string();
        let opened = File::open(path).and_then(|file| {
            let meta = file.metadata()?;
            if meta.is_dir() {
                return Err(io::Error::other(
                    "a directory, not a capture file (pcap or pcapng, gzipped or not; \
                     a simulation bundle's captures are its .pcap files)",
                ));
            }
            Ok((file, meta))
        });
        match opened {
            Ok((file, meta)) => {
                let mut reader = Self::start(name, Input::open(file, &meta), Some(meta.len()))?;
                reader.regular_file = meta.is_file().then(|| path.to_path_buf());
                Ok(reader)
            }
            Err(e) => Err(ReadError {
                file: name,
                place: Place::File,
                decompressed: false,
                kind: ErrorKind::Io(e),
                frames_read: 0,
            }),
        }
    }

    /// Reads a capture from `reader`, as [`CaptureReader::open`] does from a file; `name`
    /// names it in errors. For tests, fuzzing, and captures that are not files.
    pub fn from_reader(name: &str, reader: impl Read + Send + 'static) -> Result<Self, ReadError> {
        Self::start(name.to_string(), Input::new(Box::new(reader)), None)
    }

    /// Sniffs the format of `input`, as [`Input::open`] or [`Input::new`] returned it.
    fn start(
        file: String,
        input: io::Result<(Input, bool)>,
        file_len: Option<u64>,
    ) -> Result<Self, ReadError> {
        let fail = |file: String, compressed: bool, failure: Failure| ReadError {
            file,
            place: failure.place,
            decompressed: compressed,
            kind: classify(failure.kind, compressed),
            frames_read: 0,
        };
        let (mut input, compressed) = match input {
            Ok(x) => x,
            Err(e) => return Err(fail(file, false, Failure::io(Place::File, e))),
        };
        let mut interfaces = Vec::new();
        let parser = match sniff(&mut input, &mut interfaces) {
            Ok(parser) => parser,
            Err(failure) => return Err(fail(file, compressed, failure)),
        };
        Ok(CaptureReader {
            file,
            regular_file: None,
            input,
            compressed,
            file_len,
            format: match parser {
                Parser::PcapNg(_) => Format::PcapNg,
                _ => Format::Pcap,
            },
            parser,
            interfaces,
            last_frame: 0,
            skipped: 0,
            final_drops: None,
            damaged: None,
        })
    }

    /// The path of the regular file this reader was opened from, if it was one (not a
    /// stream, a pipe or a device): a file that can be opened again, to read ahead.
    pub fn regular_file(&self) -> Option<&Path> {
        self.regular_file.as_deref()
    }

    /// The next packet record, `None` at the end of the file. After an error the reader
    /// is finished: further calls return `None`. Every whole record before a cut-off
    /// tail is returned before the [`ErrorKind::Truncated`] error; when another process
    /// truncates a mapped file while it is read, the records before the cut are returned
    /// before the [`ErrorKind::Shrank`] error. A pcapng packet block damaged inside
    /// sound framing is skipped, and reading goes on (see [`CaptureReader::damaged`]).
    #[inline]
    pub fn next_record(&mut self) -> Option<Result<Record<'_>, ReadError>> {
        loop {
            let next = match &mut self.parser {
                Parser::Pcap(p) => p.next(&mut self.input, self.last_frame + 1),
                Parser::PcapNg(p) => p.next(
                    &mut self.input,
                    &mut self.interfaces,
                    &mut self.last_frame,
                    &mut self.skipped,
                ),
                Parser::Done => return None,
            };
            match next {
                Ok(Some(meta)) => {
                    self.last_frame += 1;
                    let frame = self.last_frame;
                    return Some(Ok(Record {
                        frame,
                        ts_ns: meta.ts_ns,
                        interface: meta.interface,
                        linktype: meta.linktype,
                        orig_len: meta.orig_len,
                        data: &self.input.buffer()[meta.data],
                    }));
                }
                Ok(None) => {
                    self.done();
                    return None;
                }
                Err(failure) if failure.read_on => self.note_damaged(failure),
                Err(failure) => {
                    self.done();
                    return Some(Err(self.error(failure)));
                }
            }
        }
    }

    /// Counts a packet block the parser skipped for damage inside it.
    #[cold]
    #[inline(never)]
    fn note_damaged(&mut self, failure: Failure) {
        match &mut self.damaged {
            Some((count, _)) => *count += 1,
            None => self.damaged = Some((1, self.error(failure))),
        }
    }

    /// The packet blocks skipped so far for damage inside them, their framing sound so
    /// that the blocks after them could be read (pcapng: a block for an interface its
    /// section does not have, a captured length that does not fit in the block): how
    /// many, and the first, as the error it would have been. Their frame numbers are
    /// not given to other records.
    pub fn damaged(&self) -> Option<(u64, &ReadError)> {
        self.damaged.as_ref().map(|(count, first)| (*count, first))
    }

    /// No more records: the parser's state goes, what it counted stays.
    fn done(&mut self) {
        self.final_drops = self.drops();
        self.parser = Parser::Done;
    }

    fn error(&self, failure: Failure) -> ReadError {
        // Zeros where a mapped file was cut are no valid record: the cut, not what the
        // parser made of them, is the error.
        let failure = changed(&self.input).unwrap_or(failure);
        ReadError {
            file: self.file.clone(),
            place: failure.place,
            decompressed: self.compressed,
            kind: classify(failure.kind, self.compressed),
            frames_read: self.frames_read(),
        }
    }

    /// The container format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether the file is gzip-compressed.
    pub fn compressed(&self) -> bool {
        self.compressed
    }

    /// Bytes of the file consumed so far, for a progress bar against
    /// [`CaptureReader::file_len`]. For gzip, the compressed bytes the decoder has read.
    pub fn position(&self) -> u64 {
        self.input.position()
    }

    /// Length of the file, when opened from a path.
    pub fn file_len(&self) -> Option<u64> {
        self.file_len
    }

    /// The interfaces seen so far (pcapng: those whose description blocks have been read),
    /// indexed by [`Record::interface`].
    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// Packets the capture itself dropped, as far as the file says: for pcapng, the
    /// `isb_ifdrop` and `isb_osdrop` counters of each interface's latest Interface
    /// Statistics Block (written at the end of a capture by dumpcap and tcpdump), plus
    /// the drop counts of obsolete Packet Blocks. Known once the blocks have been read
    /// (at the end of the file, usually); `None` when no block said (classic pcap never
    /// does). Per-packet `epb_dropcount` options are not read.
    pub fn drops(&self) -> Option<u64> {
        match &self.parser {
            Parser::PcapNg(p) => p.drops(),
            _ => self.final_drops,
        }
    }

    /// Number of records returned so far.
    pub fn frames_read(&self) -> u64 {
        self.last_frame - self.skipped
    }
}

/// Reads the magic number and the file header (pcap) or first section header (pcapng).
fn sniff(input: &mut Input, interfaces: &mut Vec<Interface>) -> Result<Parser, Failure> {
    let have = input.fill(4).map_err(|e| Failure::io(Place::Byte(0), e))?;
    if have == 0 {
        return match end_of_input(input) {
            Err(cut_short) => Err(cut_short),
            Ok(_) => Err(Failure {
                place: Place::File,
                kind: ErrorKind::Empty,
                read_on: false,
            }),
        };
    }
    if have < 4 {
        return Err(Failure::truncated(
            Place::Byte(0),
            "the magic number",
            4,
            have,
        ));
    }
    let head = input.bytes();
    let magic = [head[0], head[1], head[2], head[3]];
    match u32::from_le_bytes(magic) {
        pcap::MAGIC_MICRO
        | pcap::MAGIC_NANO
        | pcap::MAGIC_MICRO_SWAPPED
        | pcap::MAGIC_NANO_SWAPPED => {
            let (state, interface) = pcap::PcapState::open(input)?;
            interfaces.push(interface);
            Ok(Parser::Pcap(state))
        }
        pcapng::SHB_TYPE => Ok(Parser::PcapNg(pcapng::NgState::open(input)?)),
        _ => Err(Failure {
            place: Place::Byte(0),
            kind: ErrorKind::BadMagic(u32::from_be_bytes(magic)),
            read_on: false,
        }),
    }
}

/// Errors of the gzip decoder come through `io::Error`; data errors among them mean the
/// compressed file is corrupt, not that reading failed.
fn classify(kind: ErrorKind, compressed: bool) -> ErrorKind {
    match kind {
        ErrorKind::Io(e)
            if compressed
                && matches!(
                    e.kind(),
                    io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData
                ) =>
        {
            ErrorKind::Corrupt(format!("gzip data: {e}"))
        }
        kind => kind,
    }
}
