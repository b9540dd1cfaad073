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
//!   memory, read-only, whole. `fill` has nothing to do, and records are lent straight
//!   out of the page cache: no `read()` copies them. The kernel's copy into the buffer
//!   was 10-16 % of the analyzer's run on a 5 M-packet capture.
//! - The read path: gzip files, readers ([`Input::new`]), and files that do not map (a
//!   pipe, a terminal, an empty file, a `/proc` file) are read with `read()` into a
//!   refilled buffer. The buffer starts at 64 KiB and doubles at each refill up to
//!   256 KiB, so that small files cost little and big ones are read in big reads. Past
//!   that it only grows for a record larger than itself, and then only as the record's
//!   bytes arrive: memory is bounded by the largest record, whatever a length field
//!   claims.

use std::fs::{File, Metadata};
use std::io::{self, Chain, Cursor, Read};

use flate2::read::MultiGzDecoder;
use memmap2::Mmap;

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
    /// The map path: the whole file, never refilled.
    Map(Mmap),
}

impl Store {
    #[inline(always)]
    fn as_slice(&self) -> &[u8] {
        match self {
            Store::Buffer { buf, .. } => buf,
            Store::Map(map) => map,
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
    /// stream), or the file is mapped.
    eof: bool,
    /// The gzip stream ended before its trailer.
    cut_short: bool,
    /// Map path: the pages of the map before this offset were handed back.
    released: usize,
}

/// The map path hands back the pages it has read every this many bytes, so that the
/// process's resident memory stays bounded however big the file (the pages stay in
/// the page cache; touching them again only faults them back in).
const RELEASE_EVERY: usize = 16 << 20;

impl Input {
    /// Reads `file`, whose metadata is `meta`: through a memory map if it is a non-empty
    /// regular file, not gzip-compressed, and mapping works; else as [`Input::new`] does.
    /// Returns the input and whether it is compressed.
    pub(crate) fn open(file: File, meta: &Metadata) -> io::Result<(Input, bool)> {
        if meta.is_file() && meta.len() > 0 {
            match map(&file) {
                Ok(map) if !map.is_empty() && !map.starts_with(&GZIP_MAGIC) => {
                    let input = Input {
                        start: 0,
                        end: map.len(),
                        offset: 0,
                        eof: true,
                        cut_short: false,
                        released: 0,
                        store: Store::Map(map),
                    };
                    return Ok((input, false));
                }
                // gzip, or the file did not map (or emptied itself since `meta`): read it.
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
    /// Returns the number available (less than `need` only at end of file). A mapped
    /// file has all its bytes available from the start.
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
            // Mapped: `eof` is set, `fill` never comes here.
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
        if let Store::Map(map) = &self.store {
            if at - self.released >= RELEASE_EVERY {
                // Everything before this record has been parsed; its pages can go.
                let upto = at & !(PAGE - 1);
                release(map, self.released, upto);
                self.released = upto;
            }
        }
        at
    }

    /// The whole buffer or map, to index with a range returned by [`Input::consume`].
    #[inline]
    pub(crate) fn buffer(&self) -> &[u8] {
        self.store.as_slice()
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

/// Maps `file` into memory, read-only, and tells the kernel it will be read in order.
/// The crate's one `unsafe` (see "Memory map" in the crate doc).
#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<Mmap> {
    // SAFETY: `Mmap::map` is unsafe because Rust takes the bytes behind the `&[u8]` it
    // lends to be unchanging, and only the users of the file can promise that. airtrace
    // never writes to a capture it reads: the file is opened read-only and mapped
    // read-only. Another process could. If it truncates the file, touching a page past
    // the new end makes the kernel send SIGBUS, and the process dies (no error message,
    // no partial report). If it writes into the file in place, records may change under
    // the parsers; every index they use is checked against the map's fixed length, so
    // the worst expected is a wrong record or a corrupt-record error. ripgrep maps the
    // files it searches and accepts the same risk. Capture files are written once and
    // then read; one still being written is only appended to, which is harmless (the map
    // ends where the file ended when it was mapped).
    let map = unsafe { Mmap::map(file) }?;
    // Read-ahead, and pages behind may be dropped early. Only a hint: errors are ignored.
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok(map)
}

/// A page size that divides every real one (4 KiB); releasing whole multiples of it
/// is always page-aligned.
const PAGE: usize = 4096;

/// Hands the pages of `map[from..to]` back to the kernel (`madvise(MADV_DONTNEED)`).
/// The map stays valid: the next touch of those bytes faults them in again from the
/// page cache (a read-only shared file mapping has no private copy to lose).
#[allow(unsafe_code)]
fn release(map: &Mmap, from: usize, to: usize) {
    if to > from {
        // SAFETY: `unchecked_advise_range` is unsafe because MADV_DONTNEED discards a
        // private mapping's modified pages. This map is read-only and shared with the
        // file: there are no such pages, and later reads see the file's bytes as before.
        #[cfg(unix)]
        let _ = unsafe {
            map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
        };
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

        let data: Vec<u8> = (0..3 * BUF_SIZE as u32).map(|i| (i % 251) as u8).collect();
        let (mut input, gzip) = open("plain", &data);
        assert!(!gzip);
        assert!(matches!(input.store, Store::Map(_)));
        // All of it at once, and no more than there is.
        assert_eq!(input.fill(10).unwrap(), data.len());
        assert_eq!(input.fill(data.len() + 1).unwrap(), data.len());
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
}
