//! Reading and writing capture files: the door through which packets enter airtrace.
//!
//! [`CaptureReader`] streams the packet records of a pcap file (either byte order,
//! micro- or nanosecond time stamps), a pcapng file (any number of sections, each in its
//! own byte order, with any number of interfaces, time stamp resolutions and offsets),
//! or a gzip-compressed file of either. It is built for speed and for bad input: records
//! are lent without copies, straight out of a memory map of the file when it is opened by
//! path and not compressed, else out of one refilled buffer whose size is bounded by the
//! largest record; and nothing in a file can make it panic. Every error is one line
//! naming the file and the place, and tells a cut-off tail from a corrupt record.
//!
//! [`PcapWriter`] and [`PcapNgWriter`] write captures: for the simulator's taps, and for
//! tests, which build their files with them rather than in hex.
//!
//! # Map of the code
//!
//! - `reader/mod.rs`: [`CaptureReader`], [`Record`], [`Interface`]; format detection.
//!   **Start here.**
//! - `reader/pcap.rs`: classic pcap, parsed by pcap-parser; refills, limits, messages.
//! - `reader/pcapng.rs`: pcapng block framing and checks, sections and interfaces; the
//!   Enhanced Packet Block by hand in the hot path, the other blocks by pcap-parser.
//! - `input.rs`: the bytes the parsers see: a memory map of a plain file, shown a window
//!   at a time, or a refilled buffer over a gzip file or a reader; and the progress count.
//! - `mapped.rs`: the memory map, and the SIGBUS handler that lets reading survive the
//!   file shrinking under it.
//! - `time.rs`: [`TsResolution`], raw time stamps to nanoseconds and back.
//! - `error.rs`: [`ReadError`], [`ErrorKind`], [`Place`].
//! - `writer.rs`: [`PcapWriter`], [`PcapNgWriter`].
//!
//! # Memory map
//!
//! [`CaptureReader::open`] maps an uncompressed regular file into memory, read-only, so
//! that records come straight from the page cache: `read()` would copy every byte into a
//! buffer first, which was 10-16 % of `airtrace analyze`'s time on a 5 M-packet capture.
//! Gzip files, [`CaptureReader::from_reader`], and files that cannot be mapped (pipes,
//! `/dev/stdin`, other special files, empty files) are read with `read()`. Both ways give
//! the same records, errors and progress.
//!
//! Mapping is the crate's main `unsafe` (`map` in `mapped.rs`), and it has a risk that
//! reading does not: another process may truncate the file while airtrace reads it (a
//! capture rotated or rewritten), and then touching a page past the new end makes the
//! kernel send SIGBUS, which kills the process. On Linux the crate catches it: a SIGBUS
//! handler, installed once, turns a fault inside one of the reader's maps into zeros
//! (and hands any other to the handler before it, or to the default action), and the
//! reader checks, once per 256 KiB window of the map, that the file still holds the
//! window. Reading then stops at the last whole record before the cut, with an
//! [`ErrorKind::Shrank`] error after the records before it:
//!
//! ```text
//! rotated.pcap: byte 2097172: the file shrank from 4194304 to 2097500 bytes while it was read
//! ```
//!
//! (see `mapped.rs` for the handler, and "A file that shrinks" in `input.rs` for what the
//! reader checks when, and the narrow case it sees late). On other Unix systems the
//! process still dies of the SIGBUS (Windows does not let a mapped file be truncated).
//! A process writing into the file in place can change
//! records as they are read; every index is still checked, so the worst is a wrong
//! record or a corrupt-record error. airtrace never writes to a capture it reads. A
//! capture still being written is only appended to, which is harmless: the reader stops
//! where the file ended when it was opened. Read such files through `from_reader` to see
//! what is appended.
//!
//! The map takes address space the size of the file; its pages are the page cache's,
//! shared and clean, and the kernel is told the file is read in order
//! (`MADV_SEQUENTIAL`), so it reads ahead. Every 16 MiB read, the pages behind are
//! handed back (`MADV_DONTNEED`, `release` in `mapped.rs`): they stay in the page cache
//! but leave the process's resident memory, which therefore stays around 20 MB whatever
//! the size of the file.
//!
//! What this crate does not do: decode the frames (that is `airtrace-wire`), read
//! pcapng comments, name resolution blocks, or statistics other than the drop counters
//! ([`CaptureReader::drops`]), or read formats other than
//! pcap and pcapng (snoop, ERF, modified "Kuznetzov" pcap).
//!
//! # Example
//!
//! ```
//! use airtrace_pcap::{CaptureReader, PcapWriter, Resolution};
//!
//! let mut writer = PcapWriter::new(Vec::new(), 1, 65535, Resolution::Nano)?;
//! writer.write_packet(1_700_000_000_000_000_001, &[0xff; 60], 60)?;
//! let file = writer.into_inner();
//!
//! let mut reader = CaptureReader::from_reader("example.pcap", std::io::Cursor::new(file))?;
//! let mut frames = 0;
//! while let Some(record) = reader.next_record() {
//!     let record = record?;
//!     assert_eq!((record.frame, record.data.len()), (1, 60));
//!     assert_eq!(record.ts_ns, 1_700_000_000_000_000_001);
//!     frames += 1;
//! }
//! assert_eq!(frames, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod input;
mod mapped;
mod reader;
mod time;
mod writer;

pub use error::{ErrorKind, Place, ReadError};
pub use reader::{CaptureReader, Format, Interface, Record, MAX_CAPLEN};
pub use time::TsResolution;
pub use writer::{ByteOrder, PcapNgWriter, PcapWriter, Resolution};
