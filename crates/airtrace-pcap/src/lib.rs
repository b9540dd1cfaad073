//! Reading and writing capture files: the door through which packets enter airtrace.
//!
//! [`CaptureReader`] streams the packet records of a pcap file (either byte order,
//! micro- or nanosecond time stamps), a pcapng file (any number of sections, each in its
//! own byte order, with any number of interfaces, time stamp resolutions and offsets),
//! or a gzip-compressed file of either. It is built for speed and for bad input: records
//! are lent out of one refilled buffer without copies, memory is bounded by the largest
//! record, and nothing in a file can make it panic. Every error is one line naming the
//! file and the place, and tells a cut-off tail from a corrupt record.
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
//! - `input.rs`: the refillable buffer over a plain or gzip file, and the progress count.
//! - `time.rs`: [`TsResolution`], raw time stamps to nanoseconds and back.
//! - `error.rs`: [`ReadError`], [`ErrorKind`], [`Place`].
//! - `writer.rs`: [`PcapWriter`], [`PcapNgWriter`].
//!
//! What this crate does not do: decode the frames (that is `airtrace-wire`), read
//! pcapng comments, name resolution or statistics blocks, or read formats other than
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
mod reader;
mod time;
mod writer;

pub use error::{ErrorKind, Place, ReadError};
pub use reader::{CaptureReader, Format, Interface, Record, MAX_CAPLEN};
pub use time::TsResolution;
pub use writer::{ByteOrder, PcapNgWriter, PcapWriter, Resolution};
