//! [`Input`]: the bytes of a capture file (plain or gzip), as the parsers see them.
//!
//! Parsers ask for `n` contiguous bytes with [`Input::fill`], look at them with
//! [`Input::bytes`], and move past them with [`Input::consume`]. A parser may keep using
//! the range it consumed until its next call to `fill`, which is what lets records be
//! lent without a copy.
//!
//! The bytes are in one of two places ([`Store`]):
//!
//! - The map path: an uncompressed file opened by path ([`Input::open`]) is mapped into
//!   memory, read-only, whole ([`Mapped`]), and records are lent straight out of the
//!   page cache: no `read()` copies them. The kernel's copy into the buffer was 10-16 %
//!   of the analyzer's run on a 5 M-packet capture. The parsers see the map a window of
//!   [`WINDOW`] bytes at a time: `fill` moves the window on, and first checks that the
//!   file still holds it (see "A file that shrinks" below).
//! - The read path: gzip files, readers ([`Input::new`]), and files that do not map (a
//!   pipe, a terminal, an empty file, a `/proc` file) are read with `read()` into a
//!   refilled buffer. The buffer starts at 64 KiB and doubles at each refill up to
//!   256 KiB, so that small files cost little and big ones are read in big reads. Past
//!   that it only grows for a record larger than itself, and then only as the record's
//!   bytes arrive: memory is bounded by the largest record, whatever a length field
//!   claims.
//!
//! # A file that shrinks
//!
//! If another process truncates a mapped file while it is read, the pages past the new
//! end leave the map; [`Mapped`]'s SIGBUS handler turns a touch of one into zeros and
//! notes where the map was cut. Before the parsers see a new window, `fill` touches the
//! page after it (a file that still holds that page holds the whole window), and asks
//! whether the map was cut; at the last window, which has no page after it, it compares
//! the file's length. A window
//! that reaches past the cut, or past the file's new end, is cut short there, so the
//! parsers stop at the last whole record before it, and [`Input::changed`] tells the
//! reader why. This costs the hot path nothing: it is done once a window, where the
//! parsers already leave their fast path for the record that crosses the window's end.
//!
//! A truncation that falls inside the window being parsed, after it was checked, is
//! seen later: the parsers may read zeros past the new end (a pcap record header of
//! zeros is caught when the reader sees it, and a pcapng block of zeros is not a valid
//! block), and a record that the cut falls into may be lent with zeros for its tail.

use std::fs::{File, Metadata};
use std::io::{self, Chain, Cursor, Read};

use flate2::read::MultiGzDecoder;

use crate::error::ErrorKind;
use crate::mapped::{self, Mapped, PAGE};

/// Size the buffer grows to, and so of most reads. Timed with `examples/count.rs`
/// (median of 5 runs, 3 rounds, from page cache) on 5 M records of 96 bytes and 1 M of
/// 1500: 256 KiB gave 5.2 and 7.1 GB/s, 64 KiB 4.9 and 6.8, 1 MiB 5.0 and 6.5, 4 MiB 4.1
/// and 5.5: the buffer that stays in the L2 cache wins.
const BUF_SIZE: usize = 256 << 10;
/// Size of the first buffer.
const FIRST_BUF_SIZE: usize = 64 << 10;
/// The first two bytes of a gzip member (RFC 1952 §2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A reader that counts the bytes read through it.
pub(crate) struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// The raw file: the bytes already read to sniff the magic number, then the rest.
type Raw = Chain<Cursor<Vec<u8>>, Counted<Box<dyn Read + Send>>>;

/// What the read path reads from.
enum Source {
    Plain(Raw),
    Gzip(Box<MultiGzDecoder<Raw>>),
}

/// Where the bytes are.
enum Store {
    /// The read path: a buffer refilled from `source`.
    Buffer { source: Source, buf: Vec<u8> },
    /// The map path: the whole file, read a window at a time.
    Map(Mapped),
}

impl Store {
    #[inline(always)]
    fn as_slice(&self) -> &[u8] {
        match self {
            Store::Buffer { buf, .. } => buf,
            Store::Map(map) => map.bytes(),
        }
    }
}

/// The bytes of a capture file, decompressed, with the parsers' place in them.
pub(crate) struct Input {
    store: Store,
    /// Unconsumed bytes are `store[start..end]`.
    start: usize,
    end: usize,
    /// Stream offset of `store[start]`.
    offset: u64,
    /// No more bytes will come: the source returned end of file (or, for gzip, a cut-off
    /// stream), or the window reached the end of the map (or a cut).
    eof: bool,
    /// The gzip stream ended before its trailer.
    cut_short: bool,
    /// Map path: the pages of the map before this offset were handed back.
    released: usize,
    /// Map path: the window end at which [`Input::recheck`] last looked.
    rechecked: usize,
}

/// The map path hands back the pages it has read every this many bytes, so that the
/// process's resident memory stays bounded however big the file (the pages stay in
/// the page cache; touching them again only faults them back in).
const RELEASE_EVERY: usize = 16 << 20;

/// The map path shows the parsers this many bytes more at each `fill` that needs more
/// (a multiple of [`PAGE`]). Each window costs one trip through the parsers' slow path
/// and a check of the file (see "A file that shrinks" in the module doc), a few hundred
/// instructions: 256 KiB holds 2,340 records of 96 captured bytes, so that is a fraction
/// of an instruction per record. A smaller window would see a truncation sooner.
const WINDOW: usize = 256 << 10;

impl Input {
    /// Reads `file`, whose metadata is `meta`: through a memory map if it is a non-empty
    /// regular file, not gzip-compressed, and mapping works; else as [`Input::new`] does.
    /// Returns the input and whether it is compressed.
    pub(crate) fn open(file: File, meta: &Metadata) -> io::Result<(Input, bool)> {
        if meta.is_file() && meta.len() > 0 {
            match Mapped::new(&file) {
                Ok(Some(map)) if map.len() > 0 && !map.bytes().starts_with(&GZIP_MAGIC) => {
                    let input = Input {
                        start: 0,
                        end: 0,
                        offset: 0,
                        eof: false,
                        cut_short: false,
                        released: 0,
                        rechecked: 0,
                        store: Store::Map(map),
                    };
                    return Ok((input, false));
                }
                // gzip, or the file did not map (or emptied itself since `meta`), or the
                // map could not be guarded against the file shrinking: read it.
                _ => {}
            }
        }
        Input::new(Box::new(file))
    }

    /// Wraps `reader`, sniffing the gzip magic (1f 8b). Returns the input and whether it
    /// is compressed.
    pub(crate) fn new(reader: Box<dyn Read + Send>) -> io::Result<(Input, bool)> {
        let mut raw = Counted {
            inner: reader,
            count: 0,
        };
        let mut head = [0u8; 2];
        let got = read_up_to(&mut raw, &mut head)?;
        let gzip = head[..got] == GZIP_MAGIC;
        let raw: Raw = Cursor::new(head[..got].to_vec()).chain(raw);
        let source = if gzip {
            Source::Gzip(Box::new(MultiGzDecoder::new(raw)))
        } else {
            Source::Plain(raw)
        };
        let input = Input {
            store: Store::Buffer {
                source,
                buf: Vec::new(),
            },
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
            cut_short: false,
            released: 0,
            rechecked: 0,
        };
        Ok((input, gzip))
    }

    /// Offset, in the (decompressed) stream, of the first unconsumed byte.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes read from the underlying file: for a plain file, the bytes consumed by the
    /// parser; for gzip, the compressed bytes the decoder has pulled in.
    pub(crate) fn position(&self) -> u64 {
        match &self.store {
            Store::Buffer {
                source: Source::Gzip(d),
                ..
            } => d.get_ref().get_ref().1.count,
            Store::Buffer { .. } | Store::Map(_) => self.offset,
        }
    }

    /// Whether a gzip stream ended before its end-of-stream trailer.
    pub(crate) fn cut_short(&self) -> bool {
        self.cut_short
    }

    /// Makes at least `need` unconsumed bytes available, unless the file ends first.
    /// Returns the number available (less than `need` only at end of file, or, mapped,
    /// where the file was cut while it was read).
    #[inline]
    pub(crate) fn fill(&mut self, need: usize) -> io::Result<usize> {
        let have = self.end - self.start;
        if have >= need || self.eof {
            return Ok(have);
        }
        self.fill_slow(need)
    }

    #[cold]
    fn fill_slow(&mut self, need: usize) -> io::Result<usize> {
        let Store::Buffer { source, buf } = &mut self.store else {
            self.next_window(need);
            return Ok(self.end - self.start);
        };
        // Move the partial record to the front, so that the read is a big one.
        buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        // Start small, for small files, and double at each refill up to BUF_SIZE.
        if buf.len() < BUF_SIZE {
            grow(buf, (buf.len() * 2).clamp(FIRST_BUF_SIZE, BUF_SIZE));
        }
        while self.end < need {
            if self.end == buf.len() {
                // A record larger than the buffer: grow by doubling, up to what it needs,
                // so that a length field claiming 200 MiB in a small (or decompression
                // bomb) file costs only what is there.
                grow(buf, (buf.len() * 2).clamp(BUF_SIZE, need.max(BUF_SIZE)));
            }
            let room = &mut buf[self.end..];
            let read = match source {
                Source::Plain(r) => r.read(room),
                Source::Gzip(r) => r.read(room),
            };
            match read {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if e.kind() == io::ErrorKind::UnexpectedEof
                        && matches!(source, Source::Gzip(_)) =>
                {
                    self.eof = true;
                    self.cut_short = true;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(self.end - self.start)
    }

    /// The unconsumed bytes (as many as the last `fill` made available, or more).
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.store.as_slice()[self.start..self.end]
    }

    /// Moves past `n` bytes, returning the index where they start, valid for
    /// [`Input::buffer`] until the next call to `fill`. `n` must be at most the number
    /// of available bytes.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) -> usize {
        debug_assert!(n <= self.end - self.start);
        let at = self.start;
        self.start += n;
        self.offset += n as u64;
        at
    }

    /// The whole buffer or map, to index with a range returned by [`Input::consume`].
    #[inline]
    pub(crate) fn buffer(&self) -> &[u8] {
        self.store.as_slice()
    }

    /// Map path: shows the parsers the next window, at least up to `need` unconsumed
    /// bytes, once the file is known to still hold it; cut short where the file was cut
    /// (see "A file that shrinks" in the module doc). Hands back the pages behind.
    #[cold]
    #[inline(never)]
    fn next_window(&mut self, need: usize) {
        let Store::Map(map) = &self.store else { return };
        let len = map.len();
        let to = (self.start.saturating_add(need))
            .max(self.end + WINDOW)
            .next_multiple_of(PAGE)
            .min(len);
        mapped::test_stop(self.end, to);
        // The file holds the whole window if it still holds the page after it.
        if to < len {
            map.probe(to);
        }
        let cut = map.cut();
        let trusted = if cut.is_some() || to == len {
            // The map was cut (at a page: the file's end may be before it, with zeros
            // in between), or this is the last window, with no page after it: ask the
            // file's length.
            let now = map
                .file_len()
                .map_or(len, |n| usize::try_from(n).unwrap_or(len));
            cut.unwrap_or(len).min(now)
        } else {
            len
        };
        if self.start - self.released >= RELEASE_EVERY {
            // Everything before `start` has been parsed, and the parsers let go of it
            // when they called `fill`: its pages can go.
            let upto = self.start & !(PAGE - 1);
            map.release(self.released, upto);
            self.released = upto;
        }
        if trusted < to {
            self.cut_at(to, trusted);
        } else {
            self.end = to;
            self.eof = to == len;
        }
    }

    /// Map path: the bytes from `trusted` on are no longer the file's: the window, which
    /// would end at `end`, stops there, and nothing past it is shown to the parsers.
    fn cut_at(&mut self, end: usize, trusted: usize) {
        self.end = end.min(trusted).max(self.start);
        self.eof = true;
    }

    /// Map path: looks again whether the file still holds the window (whether the map
    /// was cut, and the file's length), at most once a window; cuts the window short if
    /// not. For the parsers, when what they read looks like zeros the file may have left
    /// behind: a pcap record of no bytes.
    #[cold]
    #[inline(never)]
    pub(crate) fn recheck(&mut self) {
        let Store::Map(map) = &self.store else { return };
        if self.rechecked == self.end {
            return;
        }
        self.rechecked = self.end;
        let len = map.len();
        let now = map
            .file_len()
            .map_or(len, |n| usize::try_from(n).unwrap_or(len));
        let trusted = map.cut().unwrap_or(len).min(now);
        if trusted < self.end {
            self.cut_at(self.end, trusted);
        }
    }

    /// Map path: whether the file changed under the map while it was read, as the error
    /// that ends the reading: it shrank (its length now is below the map's), or a page
    /// of the map faulted though the file is as long as it was (it was cut and grew
    /// again, or the storage failed). For the reader at the end of the records or at an
    /// error, which the change explains better.
    pub(crate) fn changed(&self) -> Option<ErrorKind> {
        let Store::Map(map) = &self.store else {
            return None;
        };
        let len = map.len() as u64;
        let now = map.file_len();
        match (map.cut(), now) {
            (_, Some(now)) if now < len => Some(ErrorKind::Shrank { from: len, to: now }),
            (Some(cut), _) => Some(ErrorKind::Io(io::Error::other(format!(
                "the map of the file lost its bytes from byte {cut} on while they were \
                 read, though the file still has {} bytes (it was cut and written again, \
                 or the storage failed)",
                now.unwrap_or(len)
            )))),
            (None, _) => None,
        }
    }
}

/// Grows the read path's buffer to `len` bytes.
fn grow(buf: &mut Vec<u8>, len: usize) {
    if buf.is_empty() {
        // Zeroed by the allocator, so pages never reached are never touched.
        *buf = vec![0; len];
    } else {
        buf.resize(len, 0);
    }
}

/// Reads until `buf` is full or the reader ends; returns the number of bytes read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per call.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn fill_gathers_short_reads_and_grows_for_big_records() {
        let data: Vec<u8> = (0..3 * BUF_SIZE as u32).map(|i| i as u8).collect();
        let trickle = Trickle {
            data: data.clone(),
            pos: 0,
            step: 7,
        };
        let (mut input, gzip) = Input::new(Box::new(trickle)).unwrap();
        assert!(!gzip);
        assert!(input.fill(10).unwrap() >= 10);
        assert_eq!(input.bytes()[..10], data[..10]);
        input.consume(3);
        // Larger than the buffer: it grows.
        let need = 2 * BUF_SIZE + 5;
        assert!(input.fill(need).unwrap() >= need);
        assert_eq!(input.offset(), 3);
        assert_eq!(input.bytes()[..need], data[3..3 + need]);
        let at = input.consume(need);
        assert_eq!(input.buffer()[at..at + 4], data[3..7]);
        // Only what is left comes back at the end.
        let left = data.len() - 3 - need;
        assert_eq!(input.fill(BUF_SIZE).unwrap(), left);
        assert_eq!(input.position(), input.offset());
        assert!(!input.cut_short());
    }

    /// `open` maps a plain, non-empty regular file and reads anything else.
    #[test]
    fn open_maps_plain_files_only() {
        let dir = std::env::temp_dir().join(format!("airtrace-pcap-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let open = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            let file = File::open(&path).unwrap();
            let meta = file.metadata().unwrap();
            Input::open(file, &meta).unwrap()
        };

        let data: Vec<u8> = (0..3 * BUF_SIZE as u32 + 5)
            .map(|i| (i % 251) as u8)
            .collect();
        let (mut input, gzip) = open("plain", &data);
        assert!(!gzip);
        assert!(matches!(input.store, Store::Map(_)));
        // A window at a time; what a record needs at once; no more than there is.
        assert_eq!(input.fill(10).unwrap(), WINDOW);
        assert_eq!(input.fill(WINDOW + 1).unwrap(), 2 * WINDOW);
        assert_eq!(input.fill(data.len() + 1).unwrap(), data.len());
        assert!(input.changed().is_none());
        let at = input.consume(BUF_SIZE + 3);
        assert_eq!(at, 0);
        assert_eq!(
            (input.offset(), input.position()),
            (BUF_SIZE as u64 + 3, BUF_SIZE as u64 + 3)
        );
        assert_eq!(input.bytes(), &data[BUF_SIZE + 3..]);
        assert_eq!(input.buffer(), &data[..]);
        input.consume(input.bytes().len());
        assert_eq!(input.fill(1).unwrap(), 0);
        assert!(!input.cut_short());

        let (input, gzip) = open("gzip", &[0x1f, 0x8b, 8, 0]);
        assert!(gzip);
        assert!(matches!(input.store, Store::Buffer { .. }));
        let (mut input, gzip) = open("empty", &[]);
        assert!(!gzip);
        assert!(matches!(input.store, Store::Buffer { .. }));
        assert_eq!(input.fill(1).unwrap(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A page of the map that faulted, in a file that is as long again as it was (cut
    /// and written again): zeros are read in its place, and the change is an I/O error
    /// naming the byte where the map was cut.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_map_cut_and_grown_again() {
        let path =
            std::env::temp_dir().join(format!("airtrace-pcap-regrown-{}", std::process::id()));
        let data = vec![7u8; 2 * WINDOW];
        std::fs::write(&path, &data).unwrap();
        let file = File::open(&path).unwrap();
        let (mut input, _) = Input::open(file, &std::fs::metadata(&path).unwrap()).unwrap();
        assert_eq!(input.fill(10).unwrap(), WINDOW);
        let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        writer.set_len(0).unwrap();
        assert_eq!(input.bytes()[WINDOW - 1], 0);
        writer.set_len(data.len() as u64).unwrap();
        let Some(ErrorKind::Io(e)) = input.changed() else {
            panic!("not an I/O error")
        };
        assert_eq!(
            e.to_string(),
            format!(
                "the map of the file lost its bytes from byte {} on while they were read, \
                 though the file still has {} bytes (it was cut and written again, or the \
                 storage failed)",
                WINDOW - PAGE,
                2 * WINDOW
            )
        );
        // The window after it, checked, is cut where the map was.
        assert_eq!(input.fill(WINDOW + 1).unwrap(), WINDOW - PAGE);
        std::fs::remove_file(&path).unwrap();
    }
}
